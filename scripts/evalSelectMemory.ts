/**
 * The use memory on a replayed history, for eval:select's ablation. The set's requests are put in one
 * fixed pseudo-random order (as if one user had typed them over weeks, servers mixed), an hour apart, each
 * recorded with the tools it needed as the tools the model called. eval:select replays them through the
 * core's time-ordered replay (src/core/learning/coverageReplay.ts, the same code as the Replay command),
 * so each request is ranked with a memory of the requests before it only: the memory never sees the
 * request it is asked about.
 */
import type { UsageRecord } from '../src/core/learning/usageMemory';
import type { DataQuery } from '../src/core/evaluation/retrievalData';
import { SeededRandom } from './model/staticEmbeddingModel';

/** Simulated time between two requests of the history. */
const STEP_MS = 60 * 60 * 1000;
/** Fixed, so that every run replays the same history. */
const SEED = 20261122;
/** The model id the records and the replay's memory share (the vectors are the default model's). */
export const REPLAY_MODEL_ID = 'eval';

/** One usage record per query (`records[i]` is `queries[i]`), timed in the fixed replay order. */
export function historyRecords(queries: readonly DataQuery[], vectors: readonly Float32Array[]): UsageRecord[] {
  const order = new SeededRandom(SEED).shuffle(Array.from({ length: queries.length }, (_, i) => i));
  const placeOf = new Map(order.map((q, place) => [q, place]));
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
