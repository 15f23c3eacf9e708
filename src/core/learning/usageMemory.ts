import { cosine } from '../embedding/embedder';
import { lexicalTerms } from '../selection/lexicalTerms';
import type { UsageHints } from '../selection/toolSelector';

/**
 * Learning from use: a small nearest-neighbour memory over past prompts on this machine. Each record is a
 * prompt with the tools the model then needed; for a new prompt, the tools its nearest past prompts needed
 * get a hint in [0, 1], weighted by how similar the prompt is and how recent the record is. The selector
 * adds the hints to its scores (toolSelector.ts, USAGE_HINT_WEIGHT). Nothing here touches the disk or the
 * network: usageStore.ts saves records to a folder the caller chooses.
 *
 * API: `new UsageMemory(options)`, `record(input)`, `hintsFor(prompt, vector)`, `clear()`, `records()`,
 * `replace(records)`; coverageReplay.ts replays records through a selector.
 */

/** Where a record came from: a `@router` turn, or an agent's `toolRouter_searchTools` query. */
export type UsageSource = 'chat' | 'agent';

export interface UsageRecord {
  /** When the turn ended, in ms since the epoch. */
  readonly at: number;
  /** The chat prompt (or, for an agent, its search query): stored as typed, on this machine only. */
  readonly prompt: string;
  /** The prompt's embedding (unit length), when the embedder ran. */
  readonly vector?: Float32Array;
  /** The embedder that made `vector`: vectors of another model are never compared. */
  readonly modelId?: string;
  /** Tool names sent to the model for this prompt (empty for an agent: nothing is offered up front). */
  readonly offered: readonly string[];
  /** Tool names the model called. */
  readonly called: readonly string[];
  /** Tools it needed that were not offered: called by a name not offered, or reached through search. */
  readonly misses: readonly string[];
  readonly source?: UsageSource;
}

export interface UsageRecordInput {
  readonly prompt: string;
  readonly offered?: readonly string[];
  readonly called?: readonly string[];
  readonly misses?: readonly string[];
  /** Defaults to the vector `hintsFor` last saw for this very prompt (so the prompt is not embedded twice). */
  readonly vector?: Float32Array;
  /** Defaults to the memory's `modelId`. */
  readonly modelId?: string;
  /** Defaults to the clock. */
  readonly at?: number;
  readonly source?: UsageSource;
  /**
   * Records of the same turn id are merged into one (tool lists joined, the first time kept): an agent's
   * several calls after one search are one turn. Held in memory only, never stored.
   */
  readonly turnId?: string;
}

/** On by default: records stay on this machine, in the workspace's own storage, and only raise tools. */
export const DEFAULT_LEARNING_ENABLED = true;
/** Records kept, oldest out: months of a busy user's prompts, still cheap to scan in full on every prompt. */
export const DEFAULT_USAGE_CAPACITY = 2000;
/** Half-life of a record's weight: a workspace's habits change over weeks, not days or months. */
export const DEFAULT_USAGE_HALF_LIFE_MS = 14 * 24 * 60 * 60 * 1000;
/**
 * Past prompts whose tools count: a handful of close neighbours; more would admit weaker matches, whose
 * tools add noise to the ranking.
 */
export const DEFAULT_USAGE_NEIGHBOURS = 5;
/** Below this cosine between two prompts' vectors, a past prompt is not evidence: lower neighbours are mostly noise. */
export const DEFAULT_MIN_VECTOR_SIMILARITY = 0.5;
/**
 * The same for word overlap. Overlap counts even when vectors can be compared (the better of the two wins):
 * the default model is trained to match prompts with tools, not prompts with prompts.
 */
export const DEFAULT_MIN_TEXT_SIMILARITY = 0.4;
/** Prompt vectors remembered from `hintsFor` for `record` to reuse: a turn records its prompt soon after. */
const RECENT_PROMPT_VECTORS = 32;
/** Turn ids remembered for merging: an agent's calls follow its search within one request. */
const RECENT_TURN_IDS = 64;

export interface UsageMemoryOptions {
  readonly enabled?: boolean;
  readonly capacity?: number;
  readonly halfLifeMs?: number;
  readonly neighbours?: number;
  readonly minVectorSimilarity?: number;
  readonly minTextSimilarity?: number;
  /** The embedder whose vectors `hintsFor` receives; settable later (`modelId`), when the model loads. */
  readonly modelId?: string;
  /** Milliseconds since the epoch; injected by tests and by time-ordered replay. */
  readonly clock?: () => number;
  /** Called after every change (a record, a clear): the store saves soon after. */
  readonly onChange?: () => void;
}

const EMPTY_HINTS: ReadonlyMap<string, number> = new Map();

/** The tools a record shows were needed: what was called, and what was missed, once each. */
export function neededTools(record: Pick<UsageRecord, 'called' | 'misses'>): string[] {
  return [...new Set([...record.called, ...record.misses])];
}

export class UsageMemory implements UsageHints {
  /** The current embedder's id; `hintsFor` compares vectors only with records of the same model. */
  modelId: string | undefined;
  private on: boolean;
  private list: UsageRecord[] = [];
  private readonly capacity: number;
  private readonly halfLifeMs: number;
  private readonly neighbours: number;
  private readonly minVector: number;
  private readonly minText: number;
  private readonly clock: () => number;
  private readonly onChange: () => void;
  /** Each record's prompt terms, computed once. */
  private readonly terms = new WeakMap<UsageRecord, ReadonlySet<string>>();
  private readonly recentVectors = new Map<string, { vector: Float32Array; modelId: string | undefined }>();
  private readonly turns = new Map<string, UsageRecord>();

  constructor(options: UsageMemoryOptions = {}) {
    this.on = options.enabled ?? DEFAULT_LEARNING_ENABLED;
    this.capacity = Math.max(1, options.capacity ?? DEFAULT_USAGE_CAPACITY);
    this.halfLifeMs = options.halfLifeMs ?? DEFAULT_USAGE_HALF_LIFE_MS;
    this.neighbours = Math.max(1, options.neighbours ?? DEFAULT_USAGE_NEIGHBOURS);
    this.minVector = options.minVectorSimilarity ?? DEFAULT_MIN_VECTOR_SIMILARITY;
    this.minText = options.minTextSimilarity ?? DEFAULT_MIN_TEXT_SIMILARITY;
    this.modelId = options.modelId;
    this.clock = options.clock ?? Date.now;
    this.onChange = options.onChange ?? (() => undefined);
  }

  /** Off: records nothing and hints nothing (what is held stays until `clear`). */
  get enabled(): boolean {
    return this.on;
  }

  set enabled(value: boolean) {
    this.on = value;
    if (!value) this.recentVectors.clear();
  }

  get size(): number {
    return this.list.length;
  }

  /** A copy of every record, oldest first. */
  records(): readonly UsageRecord[] {
    return [...this.list];
  }

  /** Records one turn; returns the stored record (merged, for a known turn id), or undefined when off. */
  record(input: UsageRecordInput): UsageRecord | undefined {
    if (!this.on) return undefined;
    const prompt = input.prompt.trim();
    if (!prompt) return undefined;
    const recent = input.vector ? undefined : this.recentVectors.get(prompt);
    const vector = input.vector ?? recent?.vector;
    const modelId = input.modelId ?? (recent ? recent.modelId : this.modelId);
    const earlier = input.turnId !== undefined ? this.turns.get(input.turnId) : undefined;
    const at = input.at ?? this.clock();
    let stored: UsageRecord;
    if (earlier && this.list.includes(earlier)) {
      stored = {
        ...earlier,
        offered: unique([...earlier.offered, ...(input.offered ?? [])]),
        called: unique([...earlier.called, ...(input.called ?? [])]),
        misses: unique([...earlier.misses, ...(input.misses ?? [])]),
      };
      this.list[this.list.indexOf(earlier)] = stored;
    } else {
      stored = {
        at,
        prompt,
        ...(vector ? { vector, ...(modelId !== undefined ? { modelId } : {}) } : {}),
        offered: unique(input.offered ?? []),
        called: unique(input.called ?? []),
        misses: unique(input.misses ?? []),
        ...(input.source ? { source: input.source } : {}),
      };
      this.insert(stored);
    }
    if (input.turnId !== undefined) remember(this.turns, input.turnId, stored, RECENT_TURN_IDS);
    this.onChange();
    return stored;
  }

  /** Replaces every record (loading from disk): the newest `capacity` are kept, oldest first. */
  replace(records: readonly UsageRecord[]): void {
    this.list = [...records].sort((a, b) => a.at - b.at).slice(-this.capacity);
    this.turns.clear();
  }

  /** Forgets every record (the store deletes its file on the same command). */
  clear(): void {
    this.list = [];
    this.turns.clear();
    this.recentVectors.clear();
    this.onChange();
  }

  /**
   * Tool name → hint in [0, 1]: over the `neighbours` most relevant past prompts (the better of cosine and
   * word overlap, each above its minimum and rescaled to 0..1, times the decay by age), each tool's best
   * evidence.
   */
  hintsFor(prompt: string, vector: Float32Array | undefined): ReadonlyMap<string, number> {
    if (!this.on) return EMPTY_HINTS;
    const text = prompt.trim();
    if (vector) remember(this.recentVectors, text, { vector, modelId: this.modelId }, RECENT_PROMPT_VECTORS);
    if (this.list.length === 0) return EMPTY_HINTS;
    const now = this.clock();
    let queryTerms: ReadonlySet<string> | undefined;
    const evidence: Array<{ weight: number; record: UsageRecord }> = [];
    for (const record of this.list) {
      if (record.called.length === 0 && record.misses.length === 0) continue;
      let relevance: number;
      if (record.prompt === text) relevance = 1;
      else {
        relevance = 0;
        if (vector && record.vector && record.modelId === this.modelId && record.vector.length === vector.length) {
          relevance = rescale(cosine(vector, record.vector), this.minVector);
        }
        if (relevance < 1) {
          queryTerms ??= new Set(lexicalTerms(text));
          relevance = Math.max(relevance, rescale(termOverlap(queryTerms, this.termsOf(record)), this.minText));
        }
      }
      if (relevance <= 0) continue;
      const weight = relevance * this.decay(now - record.at);
      if (weight > 0) evidence.push({ weight, record });
    }
    if (evidence.length === 0) return EMPTY_HINTS;
    evidence.sort((a, b) => b.weight - a.weight);
    const hints = new Map<string, number>();
    for (const { weight, record } of evidence.slice(0, this.neighbours)) {
      for (const tool of neededTools(record)) if (weight > (hints.get(tool) ?? 0)) hints.set(tool, weight);
    }
    return hints;
  }

  /** 1 now, ½ after one half-life; a record from the future (a clock change) counts as now. */
  private decay(ageMs: number): number {
    if (!(this.halfLifeMs > 0)) return 1;
    return Math.pow(0.5, Math.max(0, ageMs) / this.halfLifeMs);
  }

  private termsOf(record: UsageRecord): ReadonlySet<string> {
    let terms = this.terms.get(record);
    if (!terms) {
      terms = new Set(lexicalTerms(record.prompt));
      this.terms.set(record, terms);
    }
    return terms;
  }

  /** Keeps the list in time order (records normally arrive in order) and within capacity. */
  private insert(record: UsageRecord): void {
    let i = this.list.length;
    while (i > 0 && this.list[i - 1]!.at > record.at) i--;
    this.list.splice(i, 0, record);
    if (this.list.length > this.capacity) this.list.splice(0, this.list.length - this.capacity);
  }
}

/**
 * Word overlap of two prompts: shared terms over the geometric mean of their counts (the cosine of their
 * term sets), after stop words and suffixes are dropped as for lexical ranking. 0 when either is empty.
 */
export function termOverlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / Math.sqrt(a.size * b.size);
}

/** A similarity at or above `minimum` mapped onto 0..1 (1: identical); below it, 0. */
function rescale(similarity: number, minimum: number): number {
  if (similarity < minimum) return 0;
  return minimum >= 1 ? 1 : Math.min(1, (similarity - minimum) / (1 - minimum));
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names.filter((n) => typeof n === 'string' && n.length > 0))];
}

/** Map as a small LRU: the key moves to the end, the oldest goes past `max`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}
