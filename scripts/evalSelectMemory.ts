/**
 * The use memory on a replayed history, for eval:select's ablation. The set's requests are put in one
 * fixed pseudo-random order (as if one user had typed them over weeks, servers mixed), an hour apart, each
 * recorded with the tools it needed as the tools the model called. eval:select replays them through the
 * core's time-ordered replay (src/core/learning/coverageReplay.ts, the same code as the Replay command),
 * so each request is ranked with a memory of the requests before it only: the memory never sees the
 * request it is asked about.
 */
import type { UsageRecord } from '../src/core/learning/usageMemory';
import type { DataQuery } from '../src/core/selection/retrievalData';

/** Simulated time between two requests of the history. */
const STEP_MS = 60 * 60 * 1000;
/** Fixed, so that every run replays the same history. */
const SEED = 20261122;
/** The model id the records and the replay's memory share (the vectors are the default model's). */
export const REPLAY_MODEL_ID = 'eval';

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

/** One usage record per query (`records[i]` is `queries[i]`), timed in the fixed replay order. */
export function historyRecords(queries: readonly DataQuery[], vectors: readonly Float32Array[]): UsageRecord[] {
  const placeOf = new Map(permutation(queries.length, SEED).map((q, place) => [q, place]));
  const start = Date.UTC(2026, 0, 1);
  return queries.map((q, i) => ({
    at: start + placeOf.get(i)! * STEP_MS,
    prompt: q.query,
    vector: vectors[i]!,
    modelId: REPLAY_MODEL_ID,
    offered: [],
    called: q.gold,
    misses: [],
  }));
}
