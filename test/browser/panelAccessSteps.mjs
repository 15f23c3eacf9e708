// @ts-check
/* global window, document, getComputedStyle, HTMLElement */
/**
 * The panel's accessibility checks, used by test/browser/panel.mjs inside the real webview: axe-core
 * (a test-only devDependency; the VSIX never carries it) in four themes, the keyboard focus ring, the
 * bar tracks, and updates that must keep the focus and opened sections.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { TestFailure } from './browserTestSupport.mjs';

const require = createRequire(import.meta.url);

/** VS Code's default light and dark themes and both high-contrast ones; `name` is the label the webview is told. */
export const THEMES = Object.freeze([
  { id: 'Light Modern', name: 'Light Modern', kind: 'vscode-light', slug: 'light' },
  { id: 'Dark Modern', name: 'Dark Modern', kind: 'vscode-dark', slug: 'dark' },
  { id: 'Default High Contrast', name: 'Dark High Contrast', kind: 'vscode-high-contrast', slug: 'hc-dark' },
  { id: 'Default High Contrast Light', name: 'Light High Contrast', kind: 'vscode-high-contrast-light', slug: 'hc-light' },
]);

/** WCAG 2.2's least contrast for parts of controls and graphics (a focus ring, a bar's track) against their surroundings. */
const MIN_NON_TEXT_CONTRAST = 3;
const THEME_TIMEOUT_MS = 20_000;
const POLL_MS = 250;

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Merges `patch` into the workspace's .vscode/settings.json (VS Code applies it as it would an edit).
 * @param {string} workspace  @param {Record<string, unknown>} patch
 */
export async function mergeWorkspaceSettings(workspace, patch) {
  const file = path.join(workspace, '.vscode', 'settings.json');
  const current = existsSync(file) ? JSON.parse(await readFile(file, 'utf8')) : {};
  await writeFile(file, `${JSON.stringify({ ...current, ...patch }, null, 2)}\n`);
}

/** @param {string} workspace  @returns {Promise<Record<string, unknown>>} */
export async function readWorkspaceSettings(workspace) {
  const file = path.join(workspace, '.vscode', 'settings.json');
  return existsSync(file) ? JSON.parse(await readFile(file, 'utf8')) : {};
}

/**
 * The panel's own document (the webview's active frame), for evaluating scripts in it.
 * @param {import('playwright-core').Page} page
 */
export async function panelFrame(page) {
  const handle = await page.frameLocator('iframe.webview.ready').locator('iframe#active-frame').elementHandle({ timeout: 5000 });
  const frame = await handle?.contentFrame();
  if (!frame) throw new TestFailure('the panel webview has no active frame');
  return frame;
}

/**
 * Switches the colour theme and waits until the panel's webview has it.
 * @param {import('playwright-core').Page} page  @param {string} workspace  @param {(typeof THEMES)[number]} theme
 */
export async function useTheme(page, workspace, theme) {
  await mergeWorkspaceSettings(workspace, { 'workbench.colorTheme': theme.id });
  let seen = '';
  for (const until = Date.now() + THEME_TIMEOUT_MS; Date.now() < until; await sleep(POLL_MS)) {
    const frame = await panelFrame(page);
    seen = await frame.evaluate(() => `${document.body.dataset['vscodeThemeKind']}|${document.body.dataset['vscodeThemeName']}`).catch(() => '');
    if (seen === `${theme.kind}|${theme.name}`) return;
  }
  throw new TestFailure(`the panel did not take the theme "${theme.id}" within ${THEME_TIMEOUT_MS / 1000} s (it shows kind|name "${seen}")`);
}

/**
 * Runs axe-core in the panel's document and returns its violations, shortened for a report.
 * @param {import('playwright-core').Frame} frame
 */
export async function axeViolations(frame) {
  const hasAxe = await frame.evaluate(() => 'axe' in window);
  // Evaluated through the debugging protocol, so the page's CSP (nonce-only scripts) does not apply.
  if (!hasAxe) await frame.evaluate(await readFile(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return frame.evaluate(async () => {
    const axe = /** @type {any} -- axe-core's global, added by the script above */ (window)['axe'];
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((/** @type {any} */ v) => ({
      id: String(v.id),
      impact: String(v.impact),
      help: String(v.help),
      nodes: v.nodes.slice(0, 4).map((/** @type {any} */ n) => `${n.target.join(' ')}: ${String(n.failureSummary).replace(/\s+/g, ' ')}`),
    }));
  });
}

/** @param {{ id: string, impact: string, help: string, nodes: string[] }[]} violations */
export function describeViolations(violations) {
  return violations.map((v) => `- ${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `    ${n}`).join('\n')}`).join('\n');
}

// ---------------------------------------------------------------------------------------------------
// Colours

/**
 * A computed CSS colour as [r, g, b] on 0..1 with alpha: `rgb(…)`/`rgba(…)`, or `color(srgb …)` (color-mix).
 * @param {string} text @returns {{ rgb: number[], alpha: number }}
 */
export function parseColor(text) {
  const rgb = /^rgba?\(([^)]+)\)$/.exec(text.trim());
  if (rgb) {
    const [r = 0, g = 0, b = 0, a = 1] = (rgb[1] ?? '').split(/[\s,/]+/).filter(Boolean).map(Number);
    return { rgb: [r / 255, g / 255, b / 255], alpha: a };
  }
  const srgb = /^color\(srgb ([^)]+)\)$/.exec(text.trim());
  if (srgb) {
    const [r = 0, g = 0, b = 0, a = 1] = (srgb[1] ?? '').split(/[\s/]+/).filter(Boolean).map(Number);
    return { rgb: [r, g, b], alpha: a };
  }
  throw new TestFailure(`cannot read the colour "${text}"`);
}

/** `top` painted over the opaque `bottom`. @param {{ rgb: number[], alpha: number }} top @param {{ rgb: number[] }} bottom */
function over(top, bottom) {
  return { rgb: top.rgb.map((c, i) => c * top.alpha + (bottom.rgb[i] ?? 0) * (1 - top.alpha)), alpha: 1 };
}

/** WCAG contrast ratio of two opaque colours. @param {{ rgb: number[] }} a @param {{ rgb: number[] }} b */
export function contrast(a, b) {
  const luminance = (/** @type {{ rgb: number[] }} */ c) => {
    const [r = 0, g = 0, bl = 0] = c.rgb.map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return ((hi ?? 0) + 0.05) / ((lo ?? 0) + 0.05);
}

/** The page's background colour: the body's, else the root's. @param {import('playwright-core').Frame} frame */
async function pageBackground(frame) {
  const [body, root] = await frame.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.documentElement).backgroundColor]);
  const b = parseColor(body);
  return b.alpha > 0 ? over(b, parseColor(root)) : parseColor(root);
}

/**
 * The focused element shows a ring outside itself, in a colour that stands out from the page.
 * @param {import('playwright-core').Frame} frame  @returns {Promise<string>} a note for the log
 */
export async function checkFocusRing(frame) {
  const ring = await frame.evaluate(() => {
    const a = document.activeElement;
    if (!(a instanceof HTMLElement) || a === document.body) return undefined;
    const s = getComputedStyle(a);
    return { what: `${a.tagName.toLowerCase()}#${a.id}`, visible: a.matches(':focus-visible'), style: s.outlineStyle, width: parseFloat(s.outlineWidth), offset: parseFloat(s.outlineOffset), color: s.outlineColor };
  });
  if (!ring) throw new TestFailure('nothing in the panel has the keyboard focus');
  const background = await pageBackground(frame);
  const ratio = contrast(over(parseColor(ring.color), background), background);
  const note = `${ring.what}: ${ring.style} ${ring.width}px at +${ring.offset}px, ${ring.color}, ${ratio.toFixed(1)}:1 against the page`;
  if (!ring.visible) throw new TestFailure(`the keyboard focus on ${ring.what} does not match :focus-visible`);
  if (ring.style === 'none' || ring.width < 1 || ring.offset < 1 || ratio < MIN_NON_TEXT_CONTRAST) throw new TestFailure(`the focus ring is not clearly visible (${note}); it needs a solid outline of 1px or more, outside the control, at ${MIN_NON_TEXT_CONTRAST}:1`);
  return note;
}

/**
 * A score bar's track stands out from the page, so an empty bar still reads as a bar.
 * @param {import('playwright-core').Frame} frame  @returns {Promise<string>}
 */
export async function checkBarTrack(frame) {
  const track = await frame.evaluate(() => {
    const bar = document.querySelector('.bar');
    if (!bar) return undefined;
    const s = getComputedStyle(bar);
    return { border: s.borderTopColor, width: parseFloat(s.borderTopWidth), fill: s.backgroundColor };
  });
  if (!track) throw new TestFailure('the panel shows no bar to check');
  const background = await pageBackground(frame);
  const edge = track.width >= 1 ? contrast(over(parseColor(track.border), background), background) : 1;
  const fill = contrast(over(parseColor(track.fill), background), background);
  const note = `edge ${track.width}px ${edge.toFixed(1)}:1, fill ${fill.toFixed(1)}:1 against the page`;
  if (Math.max(edge, fill) < MIN_NON_TEXT_CONTRAST) throw new TestFailure(`the bar track is hard to see (${note})`);
  return note;
}
