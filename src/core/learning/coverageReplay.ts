import type { ToolIndex } from '../selection/toolIndex';
import type { ToolSelector, UsageHints } from '../selection/toolSelector';
import { neededTools, UsageMemory, type UsageMemoryOptions, type UsageRecord, type UsageSource } from './usageMemory';

/**
 * Coverage replay: recorded prompts run through a selector, to see whether a change to selection would
 * have offered the model every tool it went on to use. A turn is covered when every tool it needed
 * (called or missed) that is still in the catalogue was offered. "Before" is what was offered at the
 * time (from the record); "after" is what the selector given offers now.
 *
 * In the time-ordered mode the replay builds its own use memory as it goes, from the records before the
 * one being replayed only, as of that record's time: the memory's gain is then measured honestly, never
 * with the answer in it.
 */

/** Returns the tool names a selector offers for a recorded prompt; `hints` is the replay's memory, if any. */
export type OfferedFor = (record: UsageRecord, hints: UsageHints | undefined) => Promise<readonly string[]>;

export interface ReplayOptions {
  /** Today's tool names; needed tools no server offers any more are left out of both sides. */
  readonly catalogue?: Iterable<string>;
  /**
   * Time-ordered mode: a fresh use memory with these options (set `modelId` to the selector's embedder),
   * holding only the earlier records, is handed to `offeredFor` for each record.
   */
  readonly timeOrdered?: boolean | Omit<UsageMemoryOptions, 'clock' | 'enabled' | 'onChange'>;
  readonly signal?: AbortSignal;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface ReplayTurn {
  /** Position in the records given. */
  readonly index: number;
  readonly at: number;
  readonly prompt: string;
  readonly source?: UsageSource;
  /** Called ∪ missed, still in the catalogue. */
  readonly needed: readonly string[];
  readonly missingBefore: readonly string[];
  readonly missingAfter: readonly string[];
  readonly offeredAfter: number;
}

export interface CoverageReport {
  /** Records with at least one needed tool still in the catalogue: the turns coverage is over. */
  readonly turns: number;
  /** Records left out: no tool was needed, or none of them is in the catalogue any more. */
  readonly skipped: number;
  readonly coveredBefore: number;
  readonly coveredAfter: number;
  /** Share of turns covered, 0..1 (0 with no turns). */
  readonly coverageBefore: number;
  readonly coverageAfter: number;
  /** Share of needed tools offered, over all turns, 0..1. */
  readonly recallBefore: number;
  readonly recallAfter: number;
  readonly meanOfferedAfter: number;
  /** Turns from agent searches, where nothing was offered up front (so "before" never covers them). */
  readonly agentTurns: number;
  readonly timeOrdered: boolean;
  /** Covered before, not after. */
  readonly lost: readonly ReplayTurn[];
  /** Covered after, not before. */
  readonly gained: readonly ReplayTurn[];
  /** Covered neither time. */
  readonly stillMissing: readonly ReplayTurn[];
  readonly details: readonly ReplayTurn[];
}

export async function replayCoverage(records: readonly UsageRecord[], offeredFor: OfferedFor, options: ReplayOptions = {}): Promise<CoverageReport> {
  const inCatalogue = options.catalogue ? new Set(options.catalogue) : undefined;
  const timeOrdered = options.timeOrdered !== undefined && options.timeOrdered !== false;
  const order = records.map((_, i) => i);
  // Time-ordered: oldest first, so each record sees only what came before it.
  if (timeOrdered) order.sort((a, b) => records[a]!.at - records[b]!.at || a - b);
  let now = 0;
  const memoryOptions = typeof options.timeOrdered === 'object' ? options.timeOrdered : {};
  const memory = timeOrdered ? new UsageMemory({ ...memoryOptions, enabled: true, clock: () => now }) : undefined;

  const details: ReplayTurn[] = [];
  let skipped = 0;
  let done = 0;
  for (const index of order) {
    if (options.signal?.aborted) throw new Error('The replay was cancelled.');
    const record = records[index]!;
    now = record.at;
    const needed = neededTools(record).filter((name) => !inCatalogue || inCatalogue.has(name));
    if (needed.length === 0) skipped++;
    else {
      const offeredNow = new Set(await offeredFor(record, memory));
      const offeredThen = new Set(record.offered);
      details.push({
        index,
        at: record.at,
        prompt: record.prompt,
        ...(record.source ? { source: record.source } : {}),
        needed,
        missingBefore: needed.filter((n) => !offeredThen.has(n)),
        missingAfter: needed.filter((n) => !offeredNow.has(n)),
        offeredAfter: offeredNow.size,
      });
    }
    if (memory) {
      // The replayed record joins the memory for later ones; a vector of another model is left for the
      // memory to replace with the one the selector just made for this prompt.
      const sameModel = record.modelId === memory.modelId;
      memory.record({
        prompt: record.prompt,
        offered: record.offered,
        called: record.called,
        misses: record.misses,
        at: record.at,
        ...(record.source ? { source: record.source } : {}),
        ...(sameModel && record.vector ? { vector: record.vector, ...(record.modelId !== undefined ? { modelId: record.modelId } : {}) } : {}),
      });
    }
    options.onProgress?.(++done, records.length);
  }
  details.sort((a, b) => a.index - b.index);

  const turns = details.length;
  const covered = (missing: readonly string[]): boolean => missing.length === 0;
  const coveredBefore = details.filter((t) => covered(t.missingBefore)).length;
  const coveredAfter = details.filter((t) => covered(t.missingAfter)).length;
  const neededTotal = details.reduce((sum, t) => sum + t.needed.length, 0);
  const share = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole);
  return {
    turns,
    skipped,
    coveredBefore,
    coveredAfter,
    coverageBefore: share(coveredBefore, turns),
    coverageAfter: share(coveredAfter, turns),
    recallBefore: share(details.reduce((sum, t) => sum + t.needed.length - t.missingBefore.length, 0), neededTotal),
    recallAfter: share(details.reduce((sum, t) => sum + t.needed.length - t.missingAfter.length, 0), neededTotal),
    meanOfferedAfter: share(details.reduce((sum, t) => sum + t.offeredAfter, 0), turns),
    agentTurns: details.filter((t) => t.source === 'agent').length,
    timeOrdered,
    lost: details.filter((t) => covered(t.missingBefore) && !covered(t.missingAfter)),
    gained: details.filter((t) => !covered(t.missingBefore) && covered(t.missingAfter)),
    stillMissing: details.filter((t) => !covered(t.missingBefore) && !covered(t.missingAfter)),
    details,
  };
}

/** The one-line JSON summary the CLI ends with (and the evaluation script can print). */
export function coverageSummary(report: CoverageReport): Record<string, number | boolean> {
  const pct = (x: number): number => Math.round(x * 1000) / 10;
  return {
    turns: report.turns,
    coverage_before: pct(report.coverageBefore),
    coverage_after: pct(report.coverageAfter),
    covered_before: report.coveredBefore,
    covered_after: report.coveredAfter,
    lost: report.lost.length,
    gained: report.gained.length,
    still_missing: report.stillMissing.length,
    recall_before: pct(report.recallBefore),
    recall_after: pct(report.recallAfter),
    mean_offered_after: Math.round(report.meanOfferedAfter * 10) / 10,
    skipped: report.skipped,
    agent_turns: report.agentTurns,
    time_ordered_memory: report.timeOrdered,
  };
}

/** A plain-text account: the figures, then each turn that lost coverage and each that gained it. */
export function formatCoverageReport(report: CoverageReport, label = 'after'): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const lines = [
    `${report.turns} turns with tool calls${report.skipped ? ` (${report.skipped} other records skipped: no tool needed, or none still in the catalogue)` : ''}${report.agentTurns ? `; ${report.agentTurns} from agent searches, where nothing was offered up front` : ''}`,
    `coverage  before ${pct(report.coverageBefore)} (${report.coveredBefore}/${report.turns})   ${label} ${pct(report.coverageAfter)} (${report.coveredAfter}/${report.turns})`,
    `tools offered of those needed  before ${pct(report.recallBefore)}   ${label} ${pct(report.recallAfter)}   (mean offered ${label}: ${report.meanOfferedAfter.toFixed(1)})`,
  ];
  const turn = (t: ReplayTurn, missing: readonly string[], when: string): string =>
    `  [${new Date(t.at).toISOString().slice(0, 16).replace('T', ' ')}] ${oneLine(t.prompt)}\n      needed ${t.needed.join(', ')}; not offered ${when}: ${missing.join(', ')}`;
  if (report.lost.length) lines.push('', `Lost coverage (${report.lost.length}):`, ...report.lost.map((t) => turn(t, t.missingAfter, label)));
  if (report.gained.length) lines.push('', `Gained coverage (${report.gained.length}):`, ...report.gained.map((t) => turn(t, t.missingBefore, 'before')));
  if (report.stillMissing.length) lines.push('', `Still not covered (${report.stillMissing.length}):`, ...report.stillMissing.map((t) => turn(t, t.missingAfter, label)));
  return `${lines.join('\n')}\n`;
}

/**
 * A UsageHints whose source can be swapped: a selector is built once with this as its `usage`, and a
 * replay sets `current` for each record (undefined: no hints).
 */
export class SwitchableUsageHints implements UsageHints {
  current: UsageHints | undefined;
  hintsFor(prompt: string, vector: Float32Array | undefined): ReadonlyMap<string, number> {
    return this.current?.hintsFor(prompt, vector) ?? new Map<string, number>();
  }
}

export interface SelectorReplayOptions {
  /** Replay with the use memory rebuilt in time order from the earlier records (else the selector alone). */
  readonly memory: boolean;
  /** The selector's embedding index: the memory compares only vectors of its model. */
  readonly index?: ToolIndex;
  readonly signal?: AbortSignal;
  readonly onProgress?: (done: number, total: number) => void;
}

/**
 * Replays `records` through `selector` over its catalogue, the selector having been built with `slot` as
 * its usage hints (the Replay command and the CLI's `replay` both run this).
 */
export function replayThroughSelector(records: readonly UsageRecord[], selector: ToolSelector, slot: SwitchableUsageHints, options: SelectorReplayOptions): Promise<CoverageReport> {
  const modelId = options.index && !options.index.error ? options.index.modelId : undefined;
  const offeredFor: OfferedFor = async (record, hints) => {
    slot.current = hints;
    const selection = await selector.select({ prompt: record.prompt, ...(options.signal ? { signal: options.signal } : {}) });
    return selection.tools.map((t) => t.name);
  };
  return replayCoverage(records, offeredFor, {
    catalogue: selector.catalogue.map((t) => t.name),
    ...(options.memory ? { timeOrdered: modelId !== undefined ? { modelId } : true } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}

const PROMPT_CHARS = 140;

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > PROMPT_CHARS ? `${line.slice(0, PROMPT_CHARS - 1)}…` : line;
}
