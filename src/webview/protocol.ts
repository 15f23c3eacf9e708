import type { ToolCallStats } from '../core/router/callStatistics';
import type { FoundTool, TurnCall, TurnWarning } from '../core/chat/chatTurn';
import type { ServerStatus } from '../core/connection/serverConnection';
import type { CostSnapshot } from '../core/guards/costMonitor';
import type { LoopTurnHistory } from '../core/guards/loopDetector';
import type { NearMiss, NearMissWhy, Selection } from '../core/selection/selectionTypes';
import { isRecord } from '../core/util/isRecord';

/**
 * The Tool Router panel's one message protocol, imported by the extension (routerPanel.ts) and the
 * webview (main.ts). Every message is plain JSON. Messages from the webview are untrusted input: the
 * extension checks each with {@link isWebviewMessage} and drops the rest. The webview checks what it
 * receives with {@link isExtensionMessage} too, so a stale or foreign message cannot break the view.
 *
 * Handshake: the webview posts `ready`; the extension answers with one `state` snapshot, then only
 * updates (`turnAdded`, `cost`, `servers`, `loops`), batched so a busy turn sends a few messages, not many.
 * Replies (`explained`, `explainFailed`, `turn`, `pinned`) answer one request each and are never dropped.
 */

/** Longest prompt the webview may ask to explain: a chat prompt, not a document. */
export const MAX_EXPLAIN_PROMPT_CHARS = 10_000;
/** Longest tool name the webview may ask to pin: MCP names are at most 128 characters, plus the server prefix. */
export const MAX_TOOL_NAME_CHARS = 256;

// ---------------------------------------------------------------------------------------------------
// Data carried by the messages

/** One tool call of a turn, as the panel lists it (results are not sent: they can be large). */
export interface CallView {
  readonly name: string;
  readonly ok: boolean;
  readonly errorType?: string;
  readonly latencyMs: number;
  /** For a tool that asks first: confirmed or declined by the user, unanswered, or refused by the policy. */
  readonly confirmation?: TurnCall['confirmation'];
}

/** One finished `@router` turn (the participant's TurnRecord, without the answer and results). */
export interface TurnView {
  readonly turn: number;
  readonly prompt: string;
  readonly at: number;
  readonly selection: Selection;
  readonly calls: readonly CallView[];
  readonly warnings: readonly TurnWarning[];
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number };
  readonly paused: boolean;
  /** Tools the model found with the search tool during the turn (absent in turns saved before it existed). */
  readonly found?: readonly FoundTool[];
}

export interface ServersView {
  readonly statuses: readonly ServerStatus[];
  /** Exposed tool name → latency and size percentiles of its recent calls. */
  readonly stats: Readonly<Record<string, ToolCallStats>>;
  /** Exposed tool name → server, so per-tool rows can sit under their server. */
  readonly toolServers: Readonly<Record<string, string>>;
  /** Exposed tool name → its poisoning flags (flagged tools only); absent when nothing is flagged. */
  readonly flags?: Readonly<Record<string, readonly ToolFlagView[]>>;
}

/** One poisoning flag of a tool (src/core/security/toolPoisoning.ts); `reason` quotes untrusted text. */
export interface ToolFlagView {
  readonly kind: string;
  readonly severity: 'high' | 'medium' | 'low';
  readonly reason: string;
  /** Set when the flag keeps the tool out of selection (high severity, setting on). */
  readonly quarantined?: boolean;
}

/** Everything the panel draws; also what the webview keeps with setState. */
export interface PanelState {
  /** The latest turns, oldest first (older ones are fetched with `selectTurn`). */
  readonly turns: readonly TurnView[];
  /** Every turn number the participant has, for the history picker. */
  readonly turnNumbers: readonly number[];
  readonly cost: CostSnapshot;
  readonly loops: readonly LoopTurnHistory[];
  readonly servers: ServersView;
  /** Exposed tool name → its description (untrusted text from the server; always rendered as text). */
  readonly descriptions: Readonly<Record<string, string>>;
}

// ---------------------------------------------------------------------------------------------------
// Webview → extension

export type WebviewMessage =
  | { readonly type: 'ready' }
  /** `id` is echoed in the answer, so an answer to an earlier question is never taken for the latest one's. */
  | { readonly type: 'explain'; readonly id: number; readonly prompt: string }
  | { readonly type: 'resume' }
  | { readonly type: 'resetCostWindow' }
  | { readonly type: 'selectTurn'; readonly turn: number }
  | { readonly type: 'showServerLog'; readonly server: string }
  /** Adds a tool the selection did not send to the workspace's core tools (`toolRouter.selection.coreTools`). */
  | { readonly type: 'pinTool'; readonly tool: string };


function hasType(value: unknown, type: string): value is Record<string, unknown> {
  return isRecord(value) && value['type'] === type;
}

export function isReady(m: unknown): m is Extract<WebviewMessage, { type: 'ready' }> {
  return hasType(m, 'ready');
}

export function isExplain(m: unknown): m is Extract<WebviewMessage, { type: 'explain' }> {
  if (!hasType(m, 'explain')) return false;
  const prompt = m['prompt'];
  return isRequestId(m['id']) && typeof prompt === 'string' && prompt.trim().length > 0 && prompt.length <= MAX_EXPLAIN_PROMPT_CHARS;
}

export function isResume(m: unknown): m is Extract<WebviewMessage, { type: 'resume' }> {
  return hasType(m, 'resume');
}

export function isResetCostWindow(m: unknown): m is Extract<WebviewMessage, { type: 'resetCostWindow' }> {
  return hasType(m, 'resetCostWindow');
}

export function isSelectTurn(m: unknown): m is Extract<WebviewMessage, { type: 'selectTurn' }> {
  if (!hasType(m, 'selectTurn')) return false;
  const turn = m['turn'];
  return typeof turn === 'number' && Number.isInteger(turn) && turn >= 0;
}

export function isShowServerLog(m: unknown): m is Extract<WebviewMessage, { type: 'showServerLog' }> {
  if (!hasType(m, 'showServerLog')) return false;
  const server = m['server'];
  return typeof server === 'string' && server.length > 0 && server.length <= 200;
}

export function isPinTool(m: unknown): m is Extract<WebviewMessage, { type: 'pinTool' }> {
  if (!hasType(m, 'pinTool')) return false;
  const tool = m['tool'];
  return typeof tool === 'string' && tool.trim().length > 0 && tool.length <= MAX_TOOL_NAME_CHARS;
}

/** The run-time check the extension applies to every message from the webview. */
export function isWebviewMessage(m: unknown): m is WebviewMessage {
  return isReady(m) || isExplain(m) || isResume(m) || isResetCostWindow(m) || isSelectTurn(m) || isShowServerLog(m) || isPinTool(m);
}

/** A short, safe description of a rejected message for the log (never its whole content). */
export function describeRejected(m: unknown): string {
  if (!isRecord(m)) return `a ${m === null ? 'null' : Array.isArray(m) ? 'array' : typeof m}, not a message object`;
  const type = m['type'];
  if (typeof type !== 'string') return 'a message without a string "type"';
  return `a "${type.slice(0, 40)}" message that is unknown or has missing or invalid fields`;
}

// ---------------------------------------------------------------------------------------------------
// Extension → webview

/**
 * How a pin request ended: `added` to the settings of `scope`, `already` a core tool, `refused` (the
 * extension would not write it, e.g. no such tool), or `failed` to write; `detail` says why for the last two.
 */
export interface PinReply {
  readonly tool: string;
  readonly outcome: 'added' | 'already' | 'refused' | 'failed';
  /** Where the setting was written: the workspace, or the user's settings when no folder is open. */
  readonly scope: 'workspace' | 'user';
  readonly detail?: string;
}

export type ExtensionMessage =
  | { readonly type: 'state'; readonly state: PanelState }
  | { readonly type: 'turnAdded'; readonly turn: TurnView; readonly loops: readonly LoopTurnHistory[] }
  | { readonly type: 'turn'; readonly turn: TurnView }
  | { readonly type: 'cost'; readonly cost: CostSnapshot }
  | { readonly type: 'servers'; readonly servers: ServersView; readonly descriptions: Readonly<Record<string, string>> }
  | { readonly type: 'explained'; readonly id: number; readonly selection: Selection }
  | { readonly type: 'explainFailed'; readonly id: number; readonly prompt: string; readonly message: string }
  | ({ readonly type: 'pinned' } & PinReply);

/** A request id: a positive whole number the webview counts up. */
function isRequestId(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

function isSelectionShape(s: unknown): s is Selection {
  return isRecord(s) && typeof s['prompt'] === 'string' && typeof s['method'] === 'string' && Array.isArray(s['tools']) && Array.isArray(s['dropped']) && typeof s['threshold'] === 'number' && isRecord(s['tokens']) && isReadAs(s['readAs']) && isNearMisses(s['nearMisses']);
}

const NEAR_MISS_WHYS: ReadonlySet<unknown> = new Set<NearMissWhy>(['below-count', 'below-cutoff', 'over-cap', 'policy']);

function isOptionalNumber(v: unknown): boolean {
  return v === undefined || (typeof v === 'number' && Number.isFinite(v));
}

/** The tools a selection did not send: absent (older selections), or a list of well-formed near misses. */
function isNearMisses(n: unknown): boolean {
  return n === undefined || (Array.isArray(n) && n.every(isNearMissShape));
}

function isNearMissShape(n: unknown): n is NearMiss {
  return (
    isRecord(n) &&
    typeof n['name'] === 'string' &&
    typeof n['score'] === 'number' &&
    Number.isFinite(n['score']) &&
    isOptionalNumber(n['cosine']) &&
    isOptionalNumber(n['lexical']) &&
    NEAR_MISS_WHYS.has(n['why']) &&
    typeof n['reason'] === 'string'
  );
}

/** The typos a selection read as other words: absent, or a list of {from, to} strings. */
function isReadAs(r: unknown): boolean {
  return r === undefined || (Array.isArray(r) && r.every((f) => isRecord(f) && typeof f['from'] === 'string' && typeof f['to'] === 'string'));
}

const CONFIRMATIONS: ReadonlySet<unknown> = new Set([undefined, 'confirmed', 'declined', 'unanswered', 'refused']);

function isCallShape(c: unknown): c is CallView {
  return isRecord(c) && typeof c['name'] === 'string' && typeof c['ok'] === 'boolean' && typeof c['latencyMs'] === 'number' && CONFIRMATIONS.has(c['confirmation']);
}

function isFoundShape(f: unknown): f is FoundTool {
  return (
    isRecord(f) &&
    typeof f['name'] === 'string' &&
    typeof f['query'] === 'string' &&
    typeof f['step'] === 'number' &&
    typeof f['offered'] === 'boolean' &&
    (f['replaced'] === undefined || typeof f['replaced'] === 'string')
  );
}

function isTurnShape(t: unknown): t is TurnView {
  return (
    isRecord(t) &&
    typeof t['turn'] === 'number' &&
    typeof t['prompt'] === 'string' &&
    isSelectionShape(t['selection']) &&
    Array.isArray(t['calls']) &&
    t['calls'].every(isCallShape) &&
    Array.isArray(t['warnings']) &&
    (t['found'] === undefined || (Array.isArray(t['found']) && t['found'].every(isFoundShape)))
  );
}

function isCostShape(c: unknown): c is CostSnapshot {
  return isRecord(c) && Array.isArray(c['buckets']) && isRecord(c['limits']) && isRecord(c['totals']) && Array.isArray(c['topTools']);
}

const FLAG_SEVERITIES: ReadonlySet<unknown> = new Set(['high', 'medium', 'low']);

function isFlagShape(f: unknown): f is ToolFlagView {
  return isRecord(f) && typeof f['kind'] === 'string' && FLAG_SEVERITIES.has(f['severity']) && typeof f['reason'] === 'string' && (f['quarantined'] === undefined || typeof f['quarantined'] === 'boolean');
}

function isFlagsShape(flags: unknown): boolean {
  return flags === undefined || (isRecord(flags) && Object.values(flags).every((list) => Array.isArray(list) && list.every(isFlagShape)));
}

function isServersShape(s: unknown): s is ServersView {
  return isRecord(s) && Array.isArray(s['statuses']) && isRecord(s['stats']) && isRecord(s['toolServers']) && isFlagsShape(s['flags']);
}

export function isStateMessage(m: unknown): m is Extract<ExtensionMessage, { type: 'state' }> {
  if (!hasType(m, 'state') || !isRecord(m['state'])) return false;
  const s = m['state'];
  return Array.isArray(s['turns']) && s['turns'].every(isTurnShape) && Array.isArray(s['turnNumbers']) && isCostShape(s['cost']) && Array.isArray(s['loops']) && isServersShape(s['servers']) && isRecord(s['descriptions']);
}

export function isTurnAddedMessage(m: unknown): m is Extract<ExtensionMessage, { type: 'turnAdded' }> {
  return hasType(m, 'turnAdded') && isTurnShape(m['turn']) && Array.isArray(m['loops']);
}

export function isTurnMessage(m: unknown): m is Extract<ExtensionMessage, { type: 'turn' }> {
  return hasType(m, 'turn') && isTurnShape(m['turn']);
}

export function isCostMessage(m: unknown): m is Extract<ExtensionMessage, { type: 'cost' }> {
  return hasType(m, 'cost') && isCostShape(m['cost']);
}

export function isServersMessage(m: unknown): m is Extract<ExtensionMessage, { type: 'servers' }> {
  return hasType(m, 'servers') && isServersShape(m['servers']) && isRecord(m['descriptions']);
}

export function isExplainedMessage(m: unknown): m is Extract<ExtensionMessage, { type: 'explained' }> {
  return hasType(m, 'explained') && isRequestId(m['id']) && isSelectionShape(m['selection']);
}

export function isExplainFailedMessage(m: unknown): m is Extract<ExtensionMessage, { type: 'explainFailed' }> {
  return hasType(m, 'explainFailed') && isRequestId(m['id']) && typeof m['prompt'] === 'string' && typeof m['message'] === 'string';
}

const PIN_OUTCOMES: ReadonlySet<unknown> = new Set<PinReply['outcome']>(['added', 'already', 'refused', 'failed']);
const PIN_SCOPES: ReadonlySet<unknown> = new Set<PinReply['scope']>(['workspace', 'user']);

export function isPinnedMessage(m: unknown): m is Extract<ExtensionMessage, { type: 'pinned' }> {
  return hasType(m, 'pinned') && typeof m['tool'] === 'string' && PIN_OUTCOMES.has(m['outcome']) && PIN_SCOPES.has(m['scope']) && (m['detail'] === undefined || typeof m['detail'] === 'string');
}

export function isExtensionMessage(m: unknown): m is ExtensionMessage {
  return isStateMessage(m) || isTurnAddedMessage(m) || isTurnMessage(m) || isCostMessage(m) || isServersMessage(m) || isExplainedMessage(m) || isExplainFailedMessage(m) || isPinnedMessage(m);
}

// ---------------------------------------------------------------------------------------------------
// Batching

/**
 * Coalesces updates within one flush window: the latest cost and servers snapshots replace earlier
 * ones, while turns and one-off replies keep their order. Pure, so it is unit-tested.
 */
export function coalesce(messages: readonly ExtensionMessage[]): ExtensionMessage[] {
  const lastIndex = new Map<string, number>();
  messages.forEach((m, i) => {
    if (m.type === 'cost' || m.type === 'servers' || m.type === 'state') lastIndex.set(m.type, i);
  });
  const stateAt = lastIndex.get('state');
  return messages.filter((m, i) => {
    // A full state makes every earlier update redundant.
    if (stateAt !== undefined && i < stateAt && m.type !== 'explained' && m.type !== 'explainFailed' && m.type !== 'turn' && m.type !== 'pinned') return false;
    if (m.type === 'cost' || m.type === 'servers' || m.type === 'state') return lastIndex.get(m.type) === i;
    return true;
  });
}
