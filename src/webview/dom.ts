/**
 * The panel's DOM helpers: builders that only ever set text and attributes (never HTML), and `patch`,
 * which brings the live page in line with a freshly built tree by changing only what differs. Patching
 * instead of replacing keeps keyboard focus, the caret, scroll positions and opened sections.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

export type Child = Node | string | undefined | false;

export interface ElementProps {
  readonly class?: string;
  readonly text?: string;
  readonly attrs?: Readonly<Record<string, string>>;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: ElementProps = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.class) e.className = props.class;
  if (props.text !== undefined) e.textContent = props.text;
  for (const [k, v] of Object.entries(props.attrs ?? {})) e.setAttribute(k, v);
  for (const c of children) if (c !== undefined && c !== false) e.append(c);
  return e;
}

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Child[]): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) if (c !== undefined && c !== false) e.append(c);
  return e;
}

/** A horizontal bar, 0..1, on a visible track, with an optional marker line (the threshold). */
export function bar(fraction: number, label: string, options: { marker?: number; className?: string } = {}): HTMLElement {
  const outer = el('div', { class: `bar ${options.className ?? ''}`.trim(), attrs: { role: 'img', 'aria-label': label, title: label } });
  // Styles go through the CSSOM: the page's CSP refuses style attributes written as text.
  const fill = el('div', { class: 'bar-fill' });
  fill.style.width = `${(Math.max(0, Math.min(1, fraction)) * 100).toFixed(1)}%`;
  outer.append(fill);
  if (options.marker !== undefined) {
    const marker = el('div', { class: 'bar-marker' });
    marker.style.left = `${(options.marker * 100).toFixed(1)}%`;
    outer.append(marker);
  }
  return outer;
}

export function section(id: string, title: string, ...children: Child[]): HTMLElement {
  const headingId = `${id}-heading`;
  return el('section', { class: 'section', attrs: { id, 'aria-labelledby': headingId } }, el('h2', { text: title, attrs: { id: headingId } }), ...children);
}

/**
 * A button that says what it does in `data-action` (main.ts handles clicks on the whole panel, so a
 * patched button never keeps a stale listener). `label`, when given, must start with the visible text.
 * An unavailable button is `aria-disabled`, not `disabled`, so it keeps the focus when it turns off.
 */
export function button(text: string, action: string, options: { label?: string; id?: string; unavailable?: boolean; primary?: boolean; data?: Readonly<Record<string, string>> } = {}): HTMLButtonElement {
  const attrs: Record<string, string> = { type: 'button', 'data-action': action };
  if (options.label !== undefined) attrs['aria-label'] = options.label;
  if (options.id !== undefined) attrs['id'] = options.id;
  if (options.unavailable) attrs['aria-disabled'] = 'true';
  for (const [k, v] of Object.entries(options.data ?? {})) attrs[`data-${k}`] = v;
  return el('button', { text, class: options.primary ? 'primary' : 'secondary', attrs });
}

// ---------------------------------------------------------------------------------------------------
// Patching

/** A node's identity across updates: `data-key`, else its id; unkeyed nodes are matched by position. */
function keyOf(node: Node): string | undefined {
  if (!(node instanceof Element)) return undefined;
  return node.getAttribute('data-key') ?? (node.id || undefined);
}

function sameKind(a: Node, b: Node): boolean {
  if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) return false;
  return !(a instanceof HTMLInputElement && b instanceof HTMLInputElement) || a.type === b.type;
}

/**
 * Makes `live`'s children match `next`'s, reusing live nodes where they match (by key, else by kind
 * and position). Nodes of `next` that have no match are moved into the page as they are.
 */
export function patch(live: Element, next: Element): void {
  const active = live.ownerDocument.activeElement;
  patchChildren(live, next);
  // Moving a focused node (a reordered list) blurs it; give the focus back if it is still on the page.
  if (active instanceof HTMLElement && active !== live.ownerDocument.activeElement && active.isConnected) active.focus({ preventScroll: true });
}

function patchChildren(live: Node, next: Node): void {
  const wantedNodes = [...next.childNodes];
  const wantedKeys = new Set(wantedNodes.map(keyOf).filter((k) => k !== undefined));
  const keyed = new Map<string, Node>();
  const unkeyed: Node[] = [];
  for (const c of live.childNodes) {
    const k = keyOf(c);
    if (k === undefined) unkeyed.push(c);
    else keyed.set(k, c);
  }
  let cursor: ChildNode | null = live.firstChild;
  let nextUnkeyed = 0;
  for (const wanted of wantedNodes) {
    // Keyed nodes that are going away go now, so the nodes after them need not move (moving blurs).
    while (cursor && !wantedKeys.has(keyOf(cursor) ?? '') && keyOf(cursor) !== undefined) {
      const after: ChildNode | null = cursor.nextSibling;
      live.removeChild(cursor);
      cursor = after;
    }
    const k = keyOf(wanted);
    let match = k !== undefined ? keyed.get(k) : unkeyed[nextUnkeyed];
    if (match && !sameKind(match, wanted)) match = undefined;
    if (!match) {
      live.insertBefore(wanted, cursor);
      continue;
    }
    if (k !== undefined) keyed.delete(k);
    else nextUnkeyed++;
    if (match === cursor) cursor = cursor.nextSibling;
    else live.insertBefore(match, cursor);
    patchNode(match, wanted);
  }
  while (cursor) {
    const after: ChildNode | null = cursor.nextSibling;
    live.removeChild(cursor);
    cursor = after;
  }
}

function patchNode(live: Node, next: Node): void {
  if (!(live instanceof Element) || !(next instanceof Element)) {
    if (live.nodeValue !== next.nodeValue) live.nodeValue = next.nodeValue;
    return;
  }
  patchAttributes(live, next);
  patchChildren(live, next);
  if (live instanceof HTMLInputElement && next instanceof HTMLInputElement && live.value !== next.value && live !== live.ownerDocument.activeElement) live.value = next.value;
  // A select's choice is its `data-value`: option attributes stop counting once someone has picked.
  if (live instanceof HTMLSelectElement) {
    const value = next.getAttribute('data-value');
    if (value !== null && live.value !== value) live.value = value;
  }
}

function patchAttributes(live: Element, next: Element): void {
  // Whether a section is open is the person's choice once it is on the page. Styles are copied through
  // the CSSOM, which the CSP allows, unlike a style attribute set as text.
  const keep = (name: string): boolean => (name === 'open' && live instanceof HTMLDetailsElement) || name === 'style';
  if ((live instanceof HTMLElement || live instanceof SVGElement) && (next instanceof HTMLElement || next instanceof SVGElement) && live.style.cssText !== next.style.cssText) live.style.cssText = next.style.cssText;
  for (const { name } of [...live.attributes]) if (!next.hasAttribute(name) && !keep(name)) live.removeAttribute(name);
  for (const { name, value } of [...next.attributes]) if (live.getAttribute(name) !== value && !keep(name)) live.setAttribute(name, value);
}
