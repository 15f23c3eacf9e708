/**
 * The Tool Router panel's script (bundled to media/panel.js; plain TypeScript and the DOM, no framework).
 * Everything from servers (tool names, descriptions, arguments, reasons, prompts) is untrusted: it is
 * only ever put on the page with textContent or as an attribute value, never as HTML.
 *
 * Each update builds the panel afresh and patches the page to match (dom.ts), so focus and opened
 * sections survive the minute's cost update. Short news goes to one `role="status"` line.
 */
import {
  isExplainFailedMessage,
  isExplainedMessage,
  isExtensionMessage,
  isPinnedMessage,
  isStateMessage,
  MAX_EXPLAIN_PROMPT_CHARS,
  type ExtensionMessage,
  type PanelState,
  type PinReply,
  type TurnView,
  type WebviewMessage,
} from './protocol';
import type { Selection } from '../core/selection/selectionTypes';
import { bar, button, el, patch, section } from './dom';
import { explainedText, nearMissRows, pinStatusText } from './nearMissView';
import { renderCost, renderServers, renderWarnings } from './panelSections';
import { callOutcomeText, foundRows, selectionView, turnLabel, type SelectionView } from './viewModel';

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
/** Answers to Pin, by tool: the row then says it is pinned. */
const pinReplies = new Map<string, PinReply>();

// ---------------------------------------------------------------------------------------------------
// The selection section

function allTurns(): TurnView[] {
  const byNumber = new Map<number, TurnView>(fetchedTurns);
  for (const t of state?.turns ?? []) byNumber.set(t.turn, t);
  return [...byNumber.values()].sort((a, b) => a.turn - b.turn);
}

function currentShown(): 'explain' | number | undefined {
  if (shown === 'explain' && explained) return 'explain';
  if (typeof shown === 'number') return shown;
  const numbers = state?.turnNumbers ?? [];
  return numbers.length ? numbers[numbers.length - 1] : explained ? 'explain' : undefined;
}

function renderSelection(): HTMLElement {
  const turns = allTurns();
  const numbers = state?.turnNumbers ?? [];
  const current = currentShown();
  const picker = el('select', { attrs: { id: 'turn-picker', 'aria-label': 'Turn to show', 'data-value': current === undefined ? '' : String(current) } });
  if (explained) picker.append(el('option', { text: `Explained: ${turnLabel({ turn: 0, prompt: explained.prompt }).replace(/^Turn 0: /, '')}`, attrs: { value: 'explain' } }));
  for (const n of [...numbers].reverse()) {
    const t = turns.find((x) => x.turn === n);
    picker.append(el('option', { text: t ? turnLabel(t) : `Turn ${n}`, attrs: { value: String(n) } }));
  }
  if (!explained && numbers.length === 0) picker.append(el('option', { text: 'No turns yet', attrs: { value: '' } }));
  picker.value = current === undefined ? '' : String(current);

  const input = el('input', { attrs: { id: 'explain-input', type: 'text', placeholder: 'Explain a prompt…', 'aria-label': 'Prompt to explain: runs tool selection without calling a model', maxlength: String(MAX_EXPLAIN_PROMPT_CHARS) } });
  input.value = explainPrompt;
  const form = el('div', { class: 'explain' }, input, button(explaining ? 'Explaining…' : 'Explain', 'explain', { id: 'explain-button', primary: true, unavailable: explaining }));

  let body: HTMLElement;
  if (current === 'explain' && explained) body = renderSelectionBody(explained, undefined);
  else {
    const turn = typeof current === 'number' ? turns.find((t) => t.turn === current) : undefined;
    body = turn ? renderSelectionBody(turn.selection, turn) : el('p', { class: 'muted', text: typeof current === 'number' ? `Loading turn ${current}…` : 'No @router turn yet. Ask @router in the chat, or explain a prompt above.' });
  }
  // Keyed by request, so each failure is a new alert and an old one is not read again.
  const error = explainError ? el('p', { class: 'error', text: explainError, attrs: { role: 'alert', 'data-key': `explain-error-${explainRequest}` } }) : undefined;
  return section('selection', 'Selection', el('div', { class: 'row' }, picker), form, error, body);
}

function renderSelectionBody(selection: Selection, turn: TurnView | undefined): HTMLElement {
  const descriptions = state?.descriptions ?? {};
  const v = selectionView(selection, descriptions);
  const box = el('div', { class: 'selection-body', attrs: { id: 'selection-body' } });
  box.append(
    el('p', { class: 'prompt' }, el('span', { class: 'label', text: turn ? `Turn ${turn.turn} · ` : 'Explained · ' }), el('q', { text: v.prompt })),
    el('p', {}, el('span', { class: 'badge', text: v.method, attrs: { id: 'selection-method' } }), v.methodNote ? el('span', { class: 'muted', text: ` ${v.methodNote}` }) : undefined),
    ...(v.readAs ? [el('p', { class: 'muted', text: `Spelling: ${v.readAs}.`, attrs: { id: 'selection-read-as' } })] : []),
    el('div', { class: 'tokens' }, el('span', { text: v.tokens.text }), bar(v.tokens.ratio, v.tokens.text, { className: 'tokens-bar' })),
    el('p', { class: 'muted', text: `Bars: ${v.scaleLabel}${v.thresholdText ? `; the line marks the ${v.thresholdText}` : ''}.` }),
    el('h3', { text: `Chosen (${v.tools.length})` }),
    chosenList(v),
    ...nearMissSection(selection, descriptions),
    ...foundSection(turn, descriptions),
    ...droppedSection(v),
    ...callsSection(turn),
  );
  if (v.timings.length) {
    const timings = el('table', { class: 'timings', attrs: { 'aria-label': 'Stage timings' } });
    for (const t of v.timings) timings.append(el('tr', { attrs: { 'data-key': `timing-${t.stage}` } }, el('th', { text: t.stage, attrs: { scope: 'row' } }), el('td', { text: t.text }), el('td', { class: 'wide' }, bar(t.fraction, `${t.stage} ${t.text}`))));
    box.append(el('details', { attrs: { 'data-key': 'timings', id: 'stage-timings' } }, el('summary', { text: 'Stage timings' }), timings));
  }
  if (v.issues.length) box.append(el('ul', { class: 'issues' }, ...v.issues.map((i) => el('li', { class: 'warning', text: i }))));
  return box;
}

function chosenList(v: SelectionView): HTMLElement {
  const list = el('ol', { class: 'tools', attrs: { 'aria-label': 'Chosen tools' } });
  for (const t of v.tools) {
    // Rows only show things: they are not tab stops.
    const stages = el('span', { class: 'stages' }, ...t.stages.map((s) => el('span', { class: 'chip', text: s })));
    const head = el('div', { class: 'tool-head' }, el('code', { class: 'tool-name', text: t.name }), stages, el('span', { class: 'score', text: t.scoreText }));
    list.append(
      el(
        'li',
        { class: `tool-row tier-${t.tier}`, attrs: { 'data-key': `tool-${t.name}` } },
        head,
        t.bar !== undefined ? bar(t.bar, `${t.name} ${t.scoreText}`, { ...(v.thresholdLine !== undefined ? { marker: v.thresholdLine } : {}), className: t.aboveThreshold === false ? 'below' : '' }) : undefined,
        el('div', { class: 'tool-reason', text: t.reason }),
        t.description ? el('div', { class: 'tool-description muted', text: t.description }) : undefined,
      ),
    );
  }
  return list;
}

/** The best tools left out, each with why, and a Pin button where pinning would send it. */
function nearMissSection(selection: Selection, descriptions: Readonly<Record<string, string>>): HTMLElement[] {
  const rows = nearMissRows(selection, descriptions);
  if (!rows.length) return [];
  const list = el('ul', { class: 'near-misses', attrs: { id: 'near-misses', 'aria-label': 'Tools not sent' } });
  for (const r of rows) {
    const pinned = pinReplies.get(r.name);
    const done = pinned?.outcome === 'added' || pinned?.outcome === 'already';
    const action = r.pinnable
      ? button(done ? 'Pinned' : 'Pin', 'pin', { label: done ? `Pinned ${r.name}: a core tool now` : `Pin ${r.name}: always send it`, unavailable: done, data: { tool: r.name } })
      : undefined;
    list.append(
      el(
        'li',
        { class: 'near-miss-row', attrs: { 'data-key': `miss-${r.name}` } },
        el('div', { class: 'tool-head' }, el('code', { class: 'tool-name', text: r.name }), el('span', { class: 'chip', text: r.whyText }), el('span', { class: 'score', text: r.scoreText }), action),
        r.bar !== undefined ? bar(r.bar, `${r.name} ${r.scoreText}`, { className: 'below' }) : undefined,
        el('div', { class: 'tool-reason', text: r.reason }),
        r.description ? el('div', { class: 'tool-description muted', text: r.description }) : undefined,
      ),
    );
  }
  const note = el('p', { class: 'muted', text: 'The best tools that were not sent, and why. Pin adds one to the core tools, which are sent with every prompt.' });
  return [el('details', { attrs: { open: '', 'data-key': 'near-misses-box', id: 'not-sent' } }, el('summary', { text: `Not sent (${rows.length})` }), note, list)];
}

function foundSection(turn: TurnView | undefined, descriptions: Readonly<Record<string, string>>): HTMLElement[] {
  const found = turn ? foundRows(turn, descriptions) : [];
  if (!found.length) return [];
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
  return [el('h3', { text: `Found during the turn (${found.length})` }), el('p', { class: 'muted', text: 'The model searched for these; the ones it called are recorded as misses, so similar prompts offer them sooner.' }), rows];
}

function droppedSection(v: SelectionView): HTMLElement[] {
  if (!v.dropped.length) return [];
  const dropped = el('ul', { class: 'dropped', attrs: { 'aria-label': 'Tools left out' } });
  for (const d of v.dropped) dropped.append(el('li', { class: 'dropped-row', attrs: { 'data-key': `dropped-${d.name}` } }, el('code', { text: d.name }), el('span', { class: 'chip', text: d.by }), el('span', { class: 'muted', text: ` ${d.reason}${d.scoreText ? ` (${d.scoreText})` : ''}` })));
  return [el('details', { attrs: { open: '', 'data-key': 'dropped-box' } }, el('summary', { text: `Left out (${v.dropped.length})` }), dropped)];
}

function callsSection(turn: TurnView | undefined): HTMLElement[] {
  if (!turn || !turn.calls.length) return [];
  const calls = el('ul', { class: 'calls', attrs: { 'aria-label': 'Tool calls of the turn' } });
  for (const c of turn.calls) calls.append(el('li', {}, el('code', { text: c.name }), el('span', { class: c.ok ? 'ok' : 'bad', text: ` ${callOutcomeText(c)}` }), el('span', { class: 'muted', text: ` ${c.latencyMs.toFixed(0)} ms` })));
  return [el('h3', { text: `Calls (${turn.calls.length}) · ${turn.usage.promptTokens + turn.usage.completionTokens} tokens` }), calls];
}

// ---------------------------------------------------------------------------------------------------
// Rendering, saving, announcing

function render(): void {
  const app = document.getElementById('app');
  if (!app) return;
  const next = el('div', {}, renderSelection(), state && renderCost(state.cost), state && renderWarnings(allTurns(), state.loops), state && renderServers(state.servers));
  patch(app, next);
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

/** Says `text` on the status line (screen readers read it once, politely). */
function announce(text: string): void {
  const status = document.getElementById('status');
  if (!status) return;
  // The same words again are still news: clear first so the change is noticed.
  if (status.textContent === text) status.textContent = '';
  requestAnimationFrame(() => (status.textContent = text));
}

// ---------------------------------------------------------------------------------------------------
// What the person does (one listener each for the whole panel: patched nodes keep no stale handlers)

function post(message: WebviewMessage): void {
  vscode.postMessage(message);
}

function runExplain(): void {
  const prompt = explainPrompt.trim();
  if (!prompt || explaining) return;
  explaining = true;
  explainError = '';
  post({ type: 'explain', id: ++explainRequest, prompt });
  render();
}

function onClick(event: MouseEvent): void {
  const target = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
  if (!(target instanceof HTMLButtonElement) || target.getAttribute('aria-disabled') === 'true') return;
  const action = target.dataset['action'];
  if (action === 'explain') runExplain();
  else if (action === 'resume') post({ type: 'resume' });
  else if (action === 'resetCostWindow') post({ type: 'resetCostWindow' });
  else if (action === 'showServerLog' && target.dataset['server']) post({ type: 'showServerLog', server: target.dataset['server'] });
  else if (action === 'pin' && target.dataset['tool']) {
    post({ type: 'pinTool', tool: target.dataset['tool'] });
    announce(`Pinning ${target.dataset['tool']}…`);
  }
}

function onChange(event: Event): void {
  const picker = event.target;
  if (!(picker instanceof HTMLSelectElement) || picker.id !== 'turn-picker') return;
  const v = picker.value;
  if (v === 'explain') shown = 'explain';
  else if (v !== '') {
    const turn = Number(v);
    shown = turn;
    if (!allTurns().some((t) => t.turn === turn)) post({ type: 'selectTurn', turn });
  }
  save();
  render();
}

function onInput(event: Event): void {
  if (event.target instanceof HTMLInputElement && event.target.id === 'explain-input') {
    explainPrompt = event.target.value;
    save();
  }
}

function onKeyDown(event: KeyboardEvent): void {
  if (event.key === 'Enter' && event.target instanceof HTMLInputElement && event.target.id === 'explain-input') runExplain();
}

// ---------------------------------------------------------------------------------------------------
// Messages from the extension

function applyReply(message: ExtensionMessage): boolean {
  if (isExplainedMessage(message)) {
    if (message.id !== explainRequest) return true;
    explained = message.selection;
    explaining = false;
    explainError = '';
    shown = 'explain';
    announce(explainedText(message.selection));
    return true;
  }
  if (isExplainFailedMessage(message)) {
    if (message.id !== explainRequest) return true;
    explaining = false;
    explainError = `Selection failed for this prompt: ${message.message}`;
    return true;
  }
  if (isPinnedMessage(message)) {
    const { type: _type, ...reply } = message;
    pinReplies.set(reply.tool, reply);
    announce(pinStatusText(reply));
    return true;
  }
  return false;
}

function apply(message: ExtensionMessage): void {
  if (isStateMessage(message)) {
    state = message.state;
    return;
  }
  if (applyReply(message) || !state) return;
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
      if (state.cost.paused && !message.cost.paused) announce('Running again: @router is not paused.');
      state = { ...state, cost: message.cost };
      break;
    case 'servers':
      state = { ...state, servers: message.servers, descriptions: message.descriptions };
      break;
  }
}

function restore(): void {
  const saved = vscode.getState() as Partial<SavedState> | undefined;
  if (!saved || saved.version !== 1) return;
  if (saved.state && isStateMessage({ type: 'state', state: saved.state })) state = saved.state;
  if (saved.explained && isExplainedMessage({ type: 'explained', id: 1, selection: saved.explained })) explained = saved.explained;
  if (saved.shown === 'explain' || typeof saved.shown === 'number') shown = saved.shown;
  if (typeof saved.explainPrompt === 'string') explainPrompt = saved.explainPrompt;
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  if (!isExtensionMessage(event.data)) return;
  apply(event.data);
  save();
  scheduleRender();
});
const app = document.getElementById('app');
app?.addEventListener('click', onClick);
app?.addEventListener('change', onChange);
app?.addEventListener('input', onInput);
app?.addEventListener('keydown', onKeyDown);

restore();
if (state) render();
post({ type: 'ready' });
