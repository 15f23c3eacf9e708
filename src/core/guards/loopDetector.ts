import { createHash } from 'node:crypto';
import picomatch from 'picomatch';
import type { CallEnvelope, CallMeta, ContentBlock } from '../router/callEnvelope';
import { describeError } from '../errors/describeError';

/**
 * The loop detector: within one chat turn, a call that keeps coming back the same, or a tool that keeps
 * finding nothing, is answered with a `LOOP_DETECTED` error instead of being executed, and the message
 * tells the model what to do instead.
 *
 * Wiring, per tool call of a turn:
 *
 *     detector.startTurn(turn);                       // once per chat request
 *     const decision = detector.check(name, args);    // before calling
 *     if (!decision.allow) return loopDetectedEnvelope(decision, meta);   // not executed, not recorded
 *     const envelope = await router.callTool(name, args);
 *     const { digest, isEmpty } = resultFactsFor(envelope);
 *     detector.record(name, args, digest, isEmpty);   // every executed call, errors included
 *
 * One detector serves one conversation; its rules look at the current turn only, and the last
 * {@link DEFAULT_LOOP_HISTORY_TURNS} turns are kept for the panel.
 */

/** A third identical call in one turn is where agents start to spin. */
export const DEFAULT_SAME_ARGS_THRESHOLD = 3;
/** Two empty answers in a turn suggest the data does not exist. */
export const DEFAULT_EMPTY_RESULTS_THRESHOLD = 2;
/** History is kept for the last 5 turns, then pruned: loops show within a turn or two, and memory stays bounded. */
export const DEFAULT_LOOP_HISTORY_TURNS = 5;
/** The call log kept per turn for the panel; the rules use counters, so this only bounds memory. */
export const MAX_LOGGED_CALLS_PER_TURN = 200;
/** Texts longer than this are never read as "no results": a real answer can mention no results in passing. */
const MAX_NO_RESULTS_TEXT_LENGTH = 300;
/** Nesting depth beyond which values are not inspected (arguments and results come from JSON; this bounds recursion). */
const MAX_DEPTH = 64;

export interface LoopThresholds {
  /**
   * Calls with the same (canonical) arguments that returned the same result, after which the next such
   * call is refused. 0 turns the rule off for the tool.
   */
  readonly sameArgs: number;
  /** Empty results in a row from one tool, after which its next call is refused. 0 turns the rule off. */
  readonly emptyResults: number;
}

export const DEFAULT_LOOP_THRESHOLDS: LoopThresholds = {
  sameArgs: DEFAULT_SAME_ARGS_THRESHOLD,
  emptyResults: DEFAULT_EMPTY_RESULTS_THRESHOLD,
};

export interface LoopDetectorOptions {
  /** Thresholds for tools no entry of `perTool` matches; unset fields keep the defaults above. */
  readonly defaults?: Partial<LoopThresholds>;
  /**
   * Exposed tool name or glob (`"github_*"`) → thresholds. An exact name wins over globs; among globs the
   * first matching entry (in object order) wins. Fields it leaves unset come from `defaults`.
   */
  readonly perTool?: Readonly<Record<string, Partial<LoopThresholds>>>;
  readonly historyTurns?: number;
  /** For the timestamps in the history; the rules themselves never look at the time. */
  readonly now?: () => number;
}

export type LoopRule = 'same-arguments' | 'empty-results';

export type LoopDecision =
  | { readonly allow: true }
  | {
      readonly allow: false;
      readonly rule: LoopRule;
      readonly tool: string;
      /** How many calls made the rule fire (identical calls with the same result, or empty results in a row). */
      readonly count: number;
      readonly threshold: number;
      /** For the model: what happened and what to do instead. */
      readonly message: string;
    };

export type LoopBlock = Extract<LoopDecision, { allow: false }>;

export interface LoggedCall {
  readonly tool: string;
  readonly argsKey: string;
  readonly resultDigest: string;
  readonly isEmpty: boolean;
  readonly at: number;
}

export interface LoggedBlock {
  readonly tool: string;
  readonly rule: LoopRule;
  readonly count: number;
  readonly at: number;
}

export interface LoopTurnHistory {
  readonly turn: number;
  readonly calls: readonly LoggedCall[];
  /** Calls refused in this turn. */
  readonly blocked: readonly LoggedBlock[];
}

interface SameArgsRun {
  lastDigest: string;
  /** Calls in a row (with these arguments) that returned `lastDigest`. */
  run: number;
}

interface TurnState {
  readonly turn: number;
  /** `tool \0 argsKey` → the current run of identical results. */
  readonly sameArgs: Map<string, SameArgsRun>;
  /** tool → empty results in a row. */
  readonly emptyStreak: Map<string, number>;
  readonly calls: LoggedCall[];
  readonly blocked: LoggedBlock[];
}

export class LoopDetector {
  /** Problems in the options (bad thresholds or globs); they are ignored, never thrown. */
  readonly issues: string[] = [];
  private readonly defaults: LoopThresholds;
  private readonly exact = new Map<string, LoopThresholds>();
  private readonly globs: Array<{ readonly matches: (name: string) => boolean; readonly thresholds: LoopThresholds }> = [];
  private readonly historyTurns: number;
  private readonly now: () => number;
  private readonly turns = new Map<number, TurnState>();
  /** Created by the first `startTurn`, or as turn 0 by a call made before any. */
  private current: TurnState | undefined;

  constructor(options: LoopDetectorOptions = {}) {
    this.now = options.now ?? Date.now;
    this.historyTurns = positiveInteger(options.historyTurns, DEFAULT_LOOP_HISTORY_TURNS, 'historyTurns', this.issues, 1);
    this.defaults = this.thresholds(options.defaults, DEFAULT_LOOP_THRESHOLDS, 'defaults');
    for (const [pattern, value] of Object.entries(options.perTool ?? {})) {
      const thresholds = this.thresholds(value, this.defaults, `perTool["${pattern}"]`);
      if (!/[*?[\]{}!()+@]/.test(pattern)) {
        this.exact.set(pattern, thresholds);
        continue;
      }
      try {
        this.globs.push({ matches: picomatch(pattern), thresholds });
      } catch (error) {
        this.issues.push(`perTool["${pattern}"] is not a valid glob (${describeError(error)}); it is ignored.`);
      }
    }
  }

  /** The thresholds that apply to `tool` (an exposed name). */
  thresholdsFor(tool: string): LoopThresholds {
    return this.exact.get(tool) ?? this.globs.find((g) => g.matches(tool))?.thresholds ?? this.defaults;
  }

  /**
   * Starts (or returns to) turn `turn`; the rules then count only this turn's calls. Turns older than the
   * history window are dropped, and so are turns numbered after `turn` (a lower number means a new chat).
   */
  startTurn(turn: number): void {
    for (const t of [...this.turns.keys()]) if (t <= turn - this.historyTurns || t > turn) this.turns.delete(t);
    this.current = this.turnState(turn);
  }

  get currentTurn(): number {
    return this.current?.turn ?? 0;
  }

  /** Before a call: may it run? A refused call must not be executed, nor recorded. */
  check(tool: string, args: unknown): LoopDecision {
    const thresholds = this.thresholdsFor(tool);
    const state = this.state();
    const run = state.sameArgs.get(sameArgsKey(tool, argumentsKey(args)));
    let block: LoopBlock | undefined;
    if (thresholds.sameArgs > 0 && run && run.run >= thresholds.sameArgs) {
      block = { allow: false, rule: 'same-arguments', tool, count: run.run, threshold: thresholds.sameArgs, message: sameArgsMessage(tool, run.run) };
    } else {
      const empties = state.emptyStreak.get(tool) ?? 0;
      if (thresholds.emptyResults > 0 && empties >= thresholds.emptyResults) {
        block = { allow: false, rule: 'empty-results', tool, count: empties, threshold: thresholds.emptyResults, message: emptyResultsMessage(tool, empties) };
      }
    }
    if (!block) return { allow: true };
    state.blocked.push({ tool, rule: block.rule, count: block.count, at: this.now() });
    return block;
  }

  /**
   * After a call ran (whatever its outcome): `resultDigest` identifies the result, so the same arguments
   * with a new result count as progress, not as a repeat; `isEmpty` says it found nothing (see
   * {@link isEmptyToolResult}). {@link resultFactsFor} gives both for an envelope.
   */
  record(tool: string, args: unknown, resultDigest: string, isEmpty: boolean): void {
    const state = this.state();
    const argsKey = argumentsKey(args);
    const key = sameArgsKey(tool, argsKey);
    const run = state.sameArgs.get(key);
    if (run && run.lastDigest === resultDigest) run.run++;
    else state.sameArgs.set(key, { lastDigest: resultDigest, run: 1 });
    // A result with something in it proves the tool works and the model is narrowing down: the streak ends.
    state.emptyStreak.set(tool, isEmpty ? (state.emptyStreak.get(tool) ?? 0) + 1 : 0);
    if (state.calls.length < MAX_LOGGED_CALLS_PER_TURN) state.calls.push({ tool, argsKey, resultDigest, isEmpty, at: this.now() });
  }

  /** The kept turns, oldest first, for the panel. */
  history(): LoopTurnHistory[] {
    return [...this.turns.values()]
      .sort((a, b) => a.turn - b.turn)
      .map((t) => ({ turn: t.turn, calls: [...t.calls], blocked: [...t.blocked] }));
  }

  clear(): void {
    this.turns.clear();
    this.current = undefined;
  }

  private state(): TurnState {
    return (this.current ??= this.turnState(0));
  }

  private turnState(turn: number): TurnState {
    let state = this.turns.get(turn);
    if (!state) {
      state = { turn, sameArgs: new Map(), emptyStreak: new Map(), calls: [], blocked: [] };
      this.turns.set(turn, state);
    }
    return state;
  }

  private thresholds(value: Partial<LoopThresholds> | undefined, fallback: LoopThresholds, where: string): LoopThresholds {
    return {
      sameArgs: positiveInteger(value?.sameArgs, fallback.sameArgs, `${where}.sameArgs`, this.issues, 0),
      emptyResults: positiveInteger(value?.emptyResults, fallback.emptyResults, `${where}.emptyResults`, this.issues, 0),
    };
  }
}

function positiveInteger(value: unknown, fallback: number, where: string, issues: string[], min: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min) return value;
  issues.push(`${where} must be a whole number of at least ${min}, got ${JSON.stringify(value)}; using ${fallback}.`);
  return fallback;
}

function sameArgsKey(tool: string, argsKey: string): string {
  return `${tool}\u0000${argsKey}`;
}

function times(n: number): string {
  return n === 1 ? 'once' : `${n} times`;
}

function sameArgsMessage(tool: string, count: number): string {
  return (
    `Loop detected: ${tool} was already called ${times(count)} in this turn with these same arguments and returned the same result each time, so it was not called again. ` +
    'Do not repeat this call. Instead: change the arguments (a different query, id, path or range), use another tool, or answer the user with what you have.'
  );
}

function emptyResultsMessage(tool: string, count: number): string {
  return (
    `Loop detected: ${tool} returned an empty result ${times(count)} in a row in this turn, so it was not called again. ` +
    'The data may not exist. Instead: use another tool, or answer the user with what you have and say what was not found.'
  );
}

/** The error envelope for a refused call; the server was not called, so latency and size are 0. */
export function loopDetectedEnvelope(block: LoopBlock, meta: Pick<CallMeta, 'server' | 'tool' | 'exposedName'>): CallEnvelope {
  return {
    ok: false,
    error: { type: 'LOOP_DETECTED', message: block.message, retryable: false },
    meta: { latencyMs: 0, bytes: 0, server: meta.server, tool: meta.tool, ...(meta.exposedName !== undefined ? { exposedName: meta.exposedName } : {}) },
  };
}

// ---------------------------------------------------------------------------------------------------
// Canonical arguments

/**
 * Arguments as the detector compares them: object keys sorted (recursively), strings trimmed with runs
 * of whitespace collapsed to one space, and a JSON-text argument object parsed (the router accepts both
 * forms). Nothing else changes: `"5"` stays a string, array order is kept, case is kept.
 */
export function canonicalArgs(args: unknown): unknown {
  if (typeof args === 'string') {
    const text = args.trim();
    if (text.startsWith('{')) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (typeof parsed === 'object' && parsed !== null) return canonicalValue(parsed, true, 0);
      } catch {
        // Not JSON after all: compare it as a string.
      }
    }
  }
  return canonicalValue(args, true, 0);
}

/** A short, stable key for the canonical arguments. */
export function argumentsKey(args: unknown): string {
  return hash(canonicalArgs(args));
}

/** A stable digest of a result: key order does not matter, everything else (including whitespace) does. */
export function digestResult(result: unknown): string {
  return hash(canonicalValue(result, false, 0));
}

function hash(canonical: unknown): string {
  return createHash('sha256').update(JSON.stringify(canonical) ?? 'undefined').digest('hex').slice(0, 32);
}

function canonicalValue(value: unknown, collapseStrings: boolean, depth: number): unknown {
  if (typeof value === 'string') return collapseStrings ? value.trim().replace(/\s+/g, ' ') : value;
  if (typeof value !== 'object' || value === null) return typeof value === 'bigint' ? value.toString() : value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.map((v) => canonicalValue(v, collapseStrings, depth + 1) ?? null);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = canonicalValue(v, collapseStrings, depth + 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Empty results

/** What a tool can find none of. */
const NOTHING_NOUNS = String.raw`(?:results?|matches|hits|items|entries|records|rows|documents|files|data|messages|emails|events|issues|objects|values)`;
/**
 * Whole texts that mean "nothing": `no results`, `No matches found.`, `0 items found for "x"`,
 * `Nothing found`, `Not found`, `The search returned no results`. A short tail introduced by
 * for/matching/in/with/under/on/at is allowed (`No files found in /tmp`); other words after the phrase
 * make it a real answer (`No files changed, 3 added` is not empty).
 */
const NO_RESULTS_TEXT = new RegExp(
  String.raw`^(?:` +
    String.raw`(?:no|0|zero)\s+(?:matching\s+)?${NOTHING_NOUNS}(?:\s+(?:were\s+|was\s+)?(?:found|returned|available))?` +
    String.raw`|(?:(?:the\s+)?(?:search|query|request|lookup)\s+)?(?:found|returned)\s+(?:no|0|zero)\s+(?:matching\s+)?${NOTHING_NOUNS}` +
    String.raw`|nothing(?:\s+was)?\s+found|not\s+found` +
    String.raw`)(?:\s+(?:for|matching|in|with|under|on|at)\s+.{1,120})?[.!]?$`,
  'i',
);
/** Whole texts that are a JSON or placeholder nothing. */
const NOTHING_WORDS = new Set(['null', 'undefined', 'none', 'nil', 'empty', 'n/a', '[]', '{}', '""', "''"]);

/**
 * What "empty" means for a text: nothing but whitespace; a placeholder (`null`, `undefined`, `none`,
 * `nil`, `empty`, `n/a`, `[]`, `{}`, `""`); JSON text whose value is empty by {@link isEmptyValue}; or a
 * short "no results" sentence (see {@link NO_RESULTS_TEXT}).
 */
export function isEmptyText(text: string): boolean {
  const t = text.trim();
  if (t === '') return true;
  if (NOTHING_WORDS.has(t.toLowerCase().replace(/[.!]$/, ''))) return true;
  if (/^[[{"]/.test(t)) {
    try {
      return isEmptyValue(JSON.parse(t) as unknown);
    } catch {
      // Not JSON: fall through to the sentence check.
    }
  }
  return t.length <= MAX_NO_RESULTS_TEXT_LENGTH && NO_RESULTS_TEXT.test(t);
}

/**
 * What "empty" means for a JSON value: `null`/`undefined`; an empty text by {@link isEmptyText}; an array
 * or object with nothing but empty values in it (`[]`, `{}`, `{"results": []}`, `{"items": [], "next": null}`).
 * Numbers and booleans are information, so `{"results": [], "total": 0}` is not empty.
 */
export function isEmptyValue(value: unknown, depth = 0): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return isEmptyText(value);
  if (typeof value !== 'object') return false;
  if (depth >= MAX_DEPTH) return false;
  const values = Array.isArray(value) ? value : Object.values(value);
  return values.every((v) => isEmptyValue(v, depth + 1));
}

/**
 * What "empty" means for a tool result: every content block is a text block with an empty text (no
 * blocks at all counts), and the structured content is absent or empty. Any image, audio or resource
 * block makes the result non-empty.
 */
export function isEmptyToolResult(result: { readonly content?: readonly ContentBlock[]; readonly structuredContent?: unknown }): boolean {
  const blocksEmpty = (result.content ?? []).every((b) => b.type === 'text' && typeof b['text'] === 'string' && isEmptyText(b['text']));
  return blocksEmpty && (result.structuredContent === undefined || isEmptyValue(result.structuredContent));
}

/**
 * The two facts {@link LoopDetector.record} needs from an envelope. Timing and size (`meta`) are left out,
 * so the same answer twice has the same digest. An error is never empty: it is a result, and repeating it
 * counts under the same-arguments rule.
 */
export function resultFactsFor(envelope: CallEnvelope): { readonly digest: string; readonly isEmpty: boolean } {
  if (!envelope.ok) return { digest: digestResult({ error: envelope.error.type, message: envelope.error.message, content: envelope.content }), isEmpty: false };
  return {
    digest: digestResult({ content: envelope.content, structuredContent: envelope.structuredContent }),
    isEmpty: isEmptyToolResult(envelope),
  };
}
