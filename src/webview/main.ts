/**
 * The Tool Router panel's script (bundled to media/panel.js; plain TypeScript and the DOM, no framework).
 * Everything from servers (tool names, descriptions, arguments, reasons, prompts) is untrusted: it is
 * only ever put on the page with textContent or as an attribute value, never as HTML.
 */
import {
  isExplainFailedMessage,
  isExplainedMessage,
  isExtensionMessage,
  isStateMessage,
  MAX_EXPLAIN_PROMPT_CHARS,
  type ExtensionMessage,
  type PanelState,
  type TurnView,
  type WebviewMessage,
} from './protocol';
import type { Selection } from '../core/selection/selectionTypes';
import { callOutcomeText, costChart, costSummary, foundRows, rateView, selectionView, serverRows, topTools, turnLabel, warningRows } from './viewModel';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What the webview keeps across reloads (getState/setState). */
interface SavedState {
  readonly version: 1;
  readonly state?: PanelState;
  /** 'explain' or a turn number; undefined follows the newest turn. */
  readonly shown?: 'explain' | number;
  readonly explained?: Selection;
  readonly explainPrompt?: string;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const CHART_SIZE = { width: 600, height: 140 } as const;
/** As many full turns as the extension sends with the state (PANEL_STATE_TURNS). */
const MAX_KEPT_TURNS = 20;

const vscode = acquireVsCodeApi();
let state: PanelState | undefined;
let shown: 'explain' | number | undefined;
let explained: Selection | undefined;
let explainPrompt = '';
let explainError = '';
let explaining = false;
/** The id of the latest explain request; answers to earlier ones are ignored. */
let explainRequest = 0;
/** Turns fetched with selectTurn that are older than the state's window. */
const fetchedTurns = new Map<number, TurnView>();

// ---------------------------------------------------------------------------------------------------
// Tiny DOM helpers: text only.

type Child = Node | string | undefined | false;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: { class?: string; text?: string; attrs?: Record<string, string> } = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.class) e.className = props.class;
  if (props.text !== undefined) e.textContent = props.text;
  for (const [k, v] of Object.entries(props.attrs ?? {})) e.setAttribute(k, v);
  for (const c of children) if (c !== undefined && c !== false) e.append(c);
  return e;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Child[]): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) if (c !== undefined && c !== false) e.append(c);
  return e;
}

/** A horizontal bar, 0..1, with an optional marker line (the threshold). */
function bar(fraction: number, label: string, options: { marker?: number; className?: string } = {}): HTMLElement {
  const outer = el('div', { class: `bar ${options.className ?? ''}`, attrs: { role: 'img', 'aria-label': label, title: label } });
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

function section(id: string, title: string, ...children: Child[]): HTMLElement {
  const headingId = `${id}-heading`;
  return el('section', { class: 'section', attrs: { id, 'aria-labelledby': headingId } }, el('h2', { text: title, attrs: { id: headingId } }), ...children);
}

function button(text: string, label: string, onClick: () => void, options: { id?: string; disabled?: boolean; primary?: boolean } = {}): HTMLButtonElement {
  const b = el('button', { text, class: options.primary ? 'primary' : 'secondary', attrs: { type: 'button', 'aria-label': label, ...(options.id ? { id: options.id } : {}) } });
  b.disabled = options.disabled ?? false;
  b.addEventListener('click', onClick);
  return b;
}

// ---------------------------------------------------------------------------------------------------
// Sections

function allTurns(): TurnView[] {
  const byNumber = new Map<number, TurnView>(fetchedTurns);
  for (const t of state?.turns ?? []) byNumber.set(t.turn, t);
  return [...byNumber.values()].sort((a, b) => a.turn - b.turn);
}

function renderSelection(): HTMLElement {
  const turns = allTurns();
  const numbers = state?.turnNumbers ?? [];
  const picker = el('select', { attrs: { id: 'turn-picker', 'aria-label': 'Turn to show' } });
  if (explained) picker.append(el('option', { text: `Explained: ${turnLabel({ turn: 0, prompt: explained.prompt }).replace(/^Turn 0: /, '')}`, attrs: { value: 'explain' } }));
  for (const n of [...numbers].reverse()) {
    const t = turns.find((x) => x.turn === n);
    picker.append(el('option', { text: t ? turnLabel(t) : `Turn ${n}`, attrs: { value: String(n) } }));
  }
  if (!explained && numbers.length === 0) picker.append(el('option', { text: 'No turns yet', attrs: { value: '' } }));
  const current = currentShown();
  picker.value = current === undefined ? '' : String(current);
  picker.addEventListener('change', () => {
    const v = picker.value;
    if (v === 'explain') shown = 'explain';
    else if (v !== '') {
      shown = Number(v);
      if (!turns.some((t) => t.turn === shown)) vscode.postMessage({ type: 'selectTurn', turn: shown });
    }
    save();
    render();
  });

  const input = el('input', { attrs: { id: 'explain-input', type: 'text', placeholder: 'Explain a prompt…', 'aria-label': 'Prompt to explain: runs tool selection without calling a model', maxlength: String(MAX_EXPLAIN_PROMPT_CHARS) } });
  input.value = explainPrompt;
  input.addEventListener('input', () => {
    explainPrompt = input.value;
    save();
  });
  const run = (): void => {
    const prompt = input.value.trim();
    if (!prompt) return;
    explaining = true;
    explainError = '';
    vscode.postMessage({ type: 'explain', id: ++explainRequest, prompt });
    render();
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') run();
  });
  const form = el('div', { class: 'explain' }, input, button(explaining ? 'Explaining…' : 'Explain', 'Explain the prompt', run, { id: 'explain-button', primary: true, disabled: explaining }));

  let body: HTMLElement;
  if (current === 'explain' && explained) body = renderSelectionBody(explained, undefined);
  else {
    const turn = typeof current === 'number' ? turns.find((t) => t.turn === current) : undefined;
    body = turn ? renderSelectionBody(turn.selection, turn) : el('p', { class: 'muted', text: typeof current === 'number' ? `Loading turn ${current}…` : 'No @router turn yet. Ask @router in the chat, or explain a prompt above.' });
  }
  return section('selection', 'Selection', el('div', { class: 'row' }, picker), form, explainError ? el('p', { class: 'error', text: explainError, attrs: { role: 'alert' } }) : undefined, body);
}

function currentShown(): 'explain' | number | undefined {
  if (shown === 'explain' && explained) return 'explain';
  if (typeof shown === 'number') return shown;
  const numbers = state?.turnNumbers ?? [];
  return numbers.length ? numbers[numbers.length - 1] : explained ? 'explain' : undefined;
}

function renderSelectionBody(selection: Selection, turn: TurnView | undefined): HTMLElement {
  const v = selectionView(selection, state?.descriptions ?? {});
  const box = el('div', { class: 'selection-body', attrs: { id: 'selection-body' } });
  box.append(
    el('p', { class: 'prompt' }, el('span', { class: 'label', text: turn ? `Turn ${turn.turn} · ` : 'Explained · ' }), el('q', { text: v.prompt })),
    el('p', {}, el('span', { class: 'badge', text: v.method, attrs: { id: 'selection-method' } }), v.methodNote ? el('span', { class: 'muted', text: ` ${v.methodNote}` }) : undefined),
    ...(v.readAs ? [el('p', { class: 'muted', text: `Spelling: ${v.readAs}.`, attrs: { id: 'selection-read-as' } })] : []),
    el('div', { class: 'tokens' }, el('span', { text: v.tokens.text }), bar(v.tokens.ratio, v.tokens.text, { className: 'tokens-bar' })),
    el('p', { class: 'muted', text: `Bars: ${v.scaleLabel}${v.thresholdText ? `; the line marks the ${v.thresholdText}` : ''}.` }),
  );
  const list = el('ol', { class: 'tools', attrs: { 'aria-label': 'Chosen tools' } });
  for (const t of v.tools) {
    const stages = el('span', { class: 'stages' }, ...t.stages.map((s) => el('span', { class: 'chip', text: s })));
    const head = el('div', { class: 'tool-head' }, el('code', { class: 'tool-name', text: t.name }), stages, el('span', { class: 'score', text: t.scoreText }));
    const row = el(
      'li',
      { class: `tool-row tier-${t.tier}`, attrs: { tabindex: '0', 'aria-label': `${t.name}: ${t.reason}` } },
      head,
      t.bar !== undefined ? bar(t.bar, `${t.name} ${t.scoreText}`, { ...(v.thresholdLine !== undefined ? { marker: v.thresholdLine } : {}), className: t.aboveThreshold === false ? 'below' : '' }) : undefined,
      el('div', { class: 'tool-reason', text: t.reason }),
      t.description ? el('div', { class: 'tool-description muted', text: t.description }) : undefined,
    );
    list.append(row);
  }
  box.append(el('h3', { text: `Chosen (${v.tools.length})` }), list);
  const found = turn ? foundRows(turn, state?.descriptions ?? {}) : [];
  if (found.length) {
    const rows = el('ul', { class: 'found', attrs: { 'aria-label': 'Tools found during the turn', id: 'found-tools' } });
    for (const f of found) {
      rows.append(
        el(
          'li',
          { class: 'found-row' },
          el('code', { text: f.name }),
          el('span', { class: 'chip', text: f.called ? 'called' : 'not called' }),
          el('span', { class: 'muted', text: ` ${f.text}` }),
          f.description ? el('div', { class: 'tool-description muted', text: f.description }) : undefined,
        ),
      );
    }
    box.append(el('h3', { text: `Found during the turn (${found.length})` }), el('p', { class: 'muted', text: 'The model searched for these; the ones it called are recorded as misses, so similar prompts offer them sooner.' }), rows);
  }
  if (v.dropped.length) {
    const dropped = el('ul', { class: 'dropped', attrs: { 'aria-label': 'Tools left out' } });
    for (const d of v.dropped) dropped.append(el('li', { class: 'dropped-row' }, el('code', { text: d.name }), el('span', { class: 'chip', text: d.by }), el('span', { class: 'muted', text: ` ${d.reason}${d.scoreText ? ` (${d.scoreText})` : ''}` })));
    box.append(el('details', { attrs: { open: '' } }, el('summary', { text: `Left out (${v.dropped.length})` }), dropped));
  }
  if (turn && turn.calls.length) {
    const calls = el('ul', { class: 'calls', attrs: { 'aria-label': 'Tool calls of the turn' } });
    for (const c of turn.calls) calls.append(el('li', {}, el('code', { text: c.name }), el('span', { class: c.ok ? 'ok' : 'bad', text: ` ${callOutcomeText(c)}` }), el('span', { class: 'muted', text: ` ${c.latencyMs.toFixed(0)} ms` })));
    box.append(el('h3', { text: `Calls (${turn.calls.length}) · ${turn.usage.promptTokens + turn.usage.completionTokens} tokens` }), calls);
  }
  if (v.timings.length) {
    const timings = el('table', { class: 'timings', attrs: { 'aria-label': 'Stage timings' } });
    for (const t of v.timings) timings.append(el('tr', {}, el('th', { text: t.stage, attrs: { scope: 'row' } }), el('td', { text: t.text }), el('td', { class: 'wide' }, bar(t.fraction, `${t.stage} ${t.text}`))));
    box.append(el('details', {}, el('summary', { text: 'Stage timings' }), timings));
  }
  if (v.issues.length) box.append(el('ul', { class: 'issues' }, ...v.issues.map((i) => el('li', { class: 'warning', text: i }))));
  return box;
}

function renderCost(): HTMLElement | undefined {
  if (!state) return undefined;
  const snapshot = state.cost;
  const summary = costSummary(snapshot);
  const rate = rateView(snapshot);
  const chart = costChart(snapshot, CHART_SIZE);
  const controls = el(
    'div',
    { class: 'row buttons' },
    button('Resume', 'Resume the router', () => vscode.postMessage({ type: 'resume' }), { id: 'resume-button', primary: true, disabled: !summary.paused }),
    button('Reset window', 'Reset the cost window: forget this hour of usage', () => vscode.postMessage({ type: 'resetCostWindow' }), { id: 'reset-button' }),
  );
  const paused = summary.paused
    ? el('div', { class: 'paused', attrs: { id: 'cost-paused', role: 'alert' } }, el('strong', { text: summary.pausedTitle ?? 'Paused' }), el('p', { text: summary.pausedMessage ?? '' }))
    : el('p', { class: 'ok', text: 'Running: @router is not paused.', attrs: { id: 'cost-running' } });

  const { width, height } = chart;
  const graphic = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': `Tokens per minute over the last hour. ${summary.totalText}`, preserveAspectRatio: 'none' });
  graphic.append(svg('rect', { x: chart.shortWindowX, y: 0, width: Math.max(0, width - chart.shortWindowX), height, class: 'short-window' }, svg('title', {}, `last ${snapshot.limits.shortWindowMinutes} minutes (the spike rule's short window)`)));
  for (const b of chart.bars) {
    if (b.promptHeight + b.completionHeight <= 0) continue;
    graphic.append(
      svg('g', {}, svg('title', {}, b.label), svg('rect', { x: b.x, y: b.promptY, width: b.width, height: b.promptHeight, class: 'prompt' }), svg('rect', { x: b.x, y: b.completionY, width: b.width, height: b.completionHeight, class: 'completion' })),
    );
  }
  if (chart.cumulativePoints) graphic.append(svg('polyline', { points: chart.cumulativePoints, class: 'cumulative' }, svg('title', {}, 'running total this hour (right scale)')));
  for (const [line, cls] of [
    [chart.capLine, 'cap'],
    [chart.spikeLine, 'spike'],
    [chart.baseline, 'baseline'],
  ] as const) {
    if (line) graphic.append(svg('line', { x1: 0, x2: width, y1: line.y, y2: line.y, class: `line ${cls}` }, svg('title', {}, line.label)));
  }
  const legend = el(
    'ul',
    { class: 'legend' },
    el('li', {}, el('span', { class: 'swatch prompt' }), 'prompt'),
    el('li', {}, el('span', { class: 'swatch completion' }), 'completion'),
    el('li', {}, el('span', { class: 'swatch cumulative' }), 'hour total'),
    chart.capLine ? el('li', {}, el('span', { class: 'swatch cap' }), chart.capLine.label) : undefined,
    chart.spikeLine ? el('li', {}, el('span', { class: 'swatch spike' }), chart.spikeLine.label) : undefined,
    chart.baseline ? el('li', {}, el('span', { class: 'swatch baseline' }), chart.baseline.label) : undefined,
  );
  const tops = topTools(snapshot);
  const topList = el('ol', { class: 'top-tools', attrs: { 'aria-label': 'Tools by tokens this hour' } });
  for (const t of tops) topList.append(el('li', {}, el('div', { class: 'tool-head' }, el('code', { text: t.name }), el('span', { class: 'score', text: t.text })), bar(t.fraction, `${t.name} ${t.text}`), t.parts ? el('div', { class: 'muted', text: t.parts }) : undefined));
  return section(
    'cost',
    'Cost window',
    paused,
    controls,
    el('p', { text: summary.totalText, attrs: { id: 'cost-total' } }),
    bar(summary.capFraction, `cap used ${(summary.capFraction * 100).toFixed(0)}%`, { className: 'cap-bar' }),
    el('p', { text: rate.text, attrs: { id: 'cost-rate' } }),
    el('p', { class: 'muted', text: rate.ruleText }),
    graphic,
    legend,
    el('h3', { text: 'Tools by tokens this hour' }),
    tops.length ? topList : el('p', { class: 'muted', text: 'No tool has used tokens this hour.' }),
  );
}

function renderWarnings(): HTMLElement | undefined {
  if (!state) return undefined;
  const rows = warningRows(allTurns(), state.loops);
  if (rows.length === 0) return section('warnings', 'Loop and guard warnings', el('p', { class: 'muted', text: 'No guard has fired.' }));
  const table = el('table', { class: 'warnings', attrs: { 'aria-label': 'Loop and guard warnings' } });
  table.append(el('thead', {}, el('tr', {}, ...['Turn', 'Tool', 'Arguments', 'Rule', 'What the model was told'].map((h) => el('th', { text: h, attrs: { scope: 'col' } })))));
  const body = el('tbody');
  for (const r of rows) {
    body.append(el('tr', { class: `warning-row ${r.kind}` }, el('td', { text: String(r.turn) }), el('td', {}, el('code', { text: r.tool })), el('td', {}, el('code', { text: r.arguments })), el('td', { text: r.rule }), el('td', { class: 'told', text: r.told })));
  }
  table.append(body);
  return section('warnings', 'Loop and guard warnings', table);
}

function renderServers(): HTMLElement | undefined {
  if (!state) return undefined;
  const rows = serverRows(state.servers);
  const list = el('ul', { class: 'servers' });
  for (const s of rows) {
    const item = el(
      'li',
      { class: 'server-row' },
      el('div', { class: 'tool-head' }, el('strong', { text: s.name }), el('span', { class: `chip state ${s.tone}`, text: s.state }), el('span', { class: 'muted', text: s.detail }), button('Log', `Show the log of ${s.name}`, () => vscode.postMessage({ type: 'showServerLog', server: s.name }))),
      s.reason ? el('div', { class: 'warning', text: s.reason }) : undefined,
    );
    if (s.flags.length) {
      // Flag reasons quote the server's own text: always set as text, never as markup.
      const tools = new Set(s.flags.map((f) => f.tool)).size;
      const flags = el('ul', { class: 'flags', attrs: { 'aria-label': `Possible tool poisoning in ${s.name}` } });
      for (const f of s.flags) flags.append(el('li', { class: f.severity === 'high' ? 'bad' : 'warning' }, el('code', { text: f.tool }), el('span', { text: ` ${f.text}` })));
      item.append(el('div', { class: 'warning', text: `⚠ ${tools} tool${tools === 1 ? '' : 's'} flagged as possibly poisoned` }), flags);
    }
    if (s.tools.length) {
      const t = el('table', { class: 'tool-stats', attrs: { 'aria-label': `Calls to the tools of ${s.name}` } });
      t.append(el('tr', {}, ...['Tool', 'Calls', 'Latency', 'Size'].map((h) => el('th', { text: h, attrs: { scope: 'col' } }))));
      for (const r of s.tools) t.append(el('tr', {}, el('td', {}, el('code', { text: r.name })), el('td', { text: r.errors ? `${r.calls} (${r.errors} failed)` : String(r.calls) }), el('td', { text: r.latency }), el('td', { text: r.size })));
      item.append(t);
    }
    list.append(item);
  }
  return section('servers', 'Servers', rows.length ? list : el('p', { class: 'muted', text: 'No servers are configured.' }));
}

// ---------------------------------------------------------------------------------------------------

function render(): void {
  const app = document.getElementById('app');
  if (!app) return;
  // Keep focus and the caret in the prompt box across re-renders.
  const active = document.activeElement?.id;
  const caret = active === 'explain-input' ? (document.getElementById('explain-input') as HTMLInputElement | null)?.selectionStart : null;
  app.replaceChildren(...[renderSelection(), renderCost(), renderWarnings(), renderServers()].filter((x): x is HTMLElement => x !== undefined));
  if (active) {
    const again = document.getElementById(active);
    if (again instanceof HTMLElement && !(again instanceof HTMLButtonElement && again.disabled)) {
      again.focus();
      if (again instanceof HTMLInputElement && caret !== null && caret !== undefined) again.setSelectionRange(caret, caret);
    }
  }
}

let renderQueued = false;
/** Messages arrive in batches; one render per frame. */
function scheduleRender(): void {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

function save(): void {
  const saved: SavedState = { version: 1, ...(state ? { state } : {}), ...(shown !== undefined ? { shown } : {}), ...(explained ? { explained } : {}), explainPrompt };
  vscode.setState(saved);
}

function apply(message: ExtensionMessage): void {
  if (isStateMessage(message)) {
    state = message.state;
    return;
  }
  if (isExplainedMessage(message)) {
    if (message.id !== explainRequest) return;
    explained = message.selection;
    explaining = false;
    explainError = '';
    shown = 'explain';
    return;
  }
  if (isExplainFailedMessage(message)) {
    if (message.id !== explainRequest) return;
    explaining = false;
    explainError = `Selection failed for this prompt: ${message.message}`;
    return;
  }
  if (!state) return;
  switch (message.type) {
    case 'turnAdded':
      state = { ...state, turns: [...state.turns.filter((t) => t.turn !== message.turn.turn), message.turn].slice(-MAX_KEPT_TURNS), turnNumbers: [...state.turnNumbers.filter((n) => n !== message.turn.turn), message.turn.turn], loops: message.loops };
      // The panel follows the newest turn, unless the person picked an older turn on purpose.
      if (typeof shown !== 'number') shown = undefined;
      break;
    case 'turn':
      fetchedTurns.set(message.turn.turn, message.turn);
      break;
    case 'cost':
      state = { ...state, cost: message.cost };
      break;
    case 'servers':
      state = { ...state, servers: message.servers, descriptions: message.descriptions };
      break;
  }
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  if (!isExtensionMessage(event.data)) return;
  apply(event.data);
  save();
  scheduleRender();
});

function restore(): void {
  const saved = vscode.getState() as Partial<SavedState> | undefined;
  if (!saved || saved.version !== 1) return;
  if (saved.state && isStateMessage({ type: 'state', state: saved.state })) state = saved.state;
  if (saved.explained && isExplainedMessage({ type: 'explained', id: 1, selection: saved.explained })) explained = saved.explained;
  if (saved.shown === 'explain' || typeof saved.shown === 'number') shown = saved.shown;
  if (typeof saved.explainPrompt === 'string') explainPrompt = saved.explainPrompt;
}

restore();
if (state) render();
vscode.postMessage({ type: 'ready' });
