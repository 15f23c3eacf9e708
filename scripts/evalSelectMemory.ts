/**
 * The use memory on a replayed history, for eval:select's ablation. The set's requests are put in one
 * fixed pseudo-random order (as if one user had typed them over weeks, servers mixed) and replayed in
 * time order: each request is ranked with a memory holding only the requests before it, each recorded
 * with the tools it needed as the tools the model called, an hour apart. This is the honest version of
 * "learning from use": the memory never sees the request it is asked about.
 */
import type { DataQuery } from '../src/core/selection/retrievalData';
import { UsageMemory } from '../src/core/learning/usageMemory';
import type { UsageHints } from '../src/core/selection/toolSelector';

/** Simulated time between two requests of the history. */
const STEP_MS = 60 * 60 * 1000;
/** Fixed, so that every run replays the same history. */
const SEED = 20261122;

export interface ReplayedHistory {
  readonly label: string;
  /** The memory as it stands before query `i` (call with i = 0, 1, 2… in order). */
  readonly hintsAt: (i: number) => UsageHints;
}

/** A fixed permutation of 0…n−1 (mulberry32-driven Fisher–Yates). */
function permutation(n: number, seed: number): number[] {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

/**
 * The queries in replay order, and the memory before each: `hintsAt(i)` must be called for i = 0, 1, 2…
 * in order (the evaluation's order); it records query i − 1 (its prompt, its vector when given, and its
 * needed tools as the tools the model called) before answering for query i.
 */
export function replayedHistory(queries: readonly DataQuery[], vectors?: readonly Float32Array[]): ReplayedHistory & { readonly queries: DataQuery[] } {
  const order = permutation(queries.length, SEED);
  const replay = order.map((i) => queries[i]!);
  const replayVectors = vectors ? order.map((i) => vectors[i]!) : undefined;
  const start = Date.UTC(2026, 0, 1);
  let now = start;
  const memory = new UsageMemory({ clock: () => now, modelId: 'eval' });
  let recorded = 0;
  return {
    queries: replay,
    label: `time-ordered replay, earlier requests only${vectors ? '' : ', words only'}`,
    hintsAt: (i: number) => {
      for (; recorded < i; recorded++) {
        const q = replay[recorded]!;
        const vector = replayVectors?.[recorded];
        memory.record({ prompt: q.query, called: q.gold, at: start + recorded * STEP_MS, ...(vector ? { vector } : {}) });
      }
      now = start + i * STEP_MS;
      return memory;
    },
  };
}
