/**
 * `npm run bench:embed`: the default model through the real onnxruntime path, measured in one run:
 * query latency, throughput on 1,000 tool texts, cold and warm (cached) start for 1,000 tools, and the
 * cache's size on disk. Then the model in a worker thread, as the extension runs it: a query's latency
 * through the worker beside the same in-process figure, and the time to embed 1,000 tools while this
 * thread stays busy, one batch at a time against WORKER_BATCHES_IN_FLIGHT and against every batch at once,
 * alternating; and how long a query sent as a fill starts waits behind it, for the last two.
 * The last line is JSON: {"query_p50_ms", "query_p95_ms", "embed_1000_ms", "warm_start_1000_ms",
 * "model_bytes", "worker_query_p50_ms", "busy_fill_1000_ms": {"one_batch", "in_flight", "all"}, "in_flight_ratio", "all_ratio",
 * "query_during_fill_ms": {"in_flight", "all"}}.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { percentile } from '../src/core/router/callStatistics';
import { CachedEmbedder, EmbeddingCache } from '../src/core/embedding/embeddingCache';
import { OnnxEmbedder } from '../src/core/embedding/onnxEmbedder';
import { loadQueriesFile, loadToolsFile } from '../src/core/evaluation/retrievalData';
import { toolEmbeddingText } from '../src/core/selection/toolDocument';
import { ToolIndex } from '../src/core/selection/toolIndex';
import type { Embedder } from '../src/core/embedding/embedder';
import { WORKER_BATCHES_IN_FLIGHT, WorkerEmbedder } from '../src/core/embedding/workerEmbedder';

const ROOT = path.resolve(__dirname, '..', '..');
const MODEL = path.join(ROOT, 'media', 'model');
const DATA = path.join(ROOT, 'data', 'benchmarks');
const TOOLS = 1000;
/** Queries timed one at a time, after a warm-up; 2,000 gives a stable p95. */
const QUERY_SAMPLES = 2000;
const WARMUP = 200;
/** Rounds of the busy-thread fill, each timing both depths. */
const FILL_ROUNDS = 5;
/** How the host's thread is kept busy meanwhile: slices of this length, a turn of the event loop between. */
const BUSY_SLICE_MS = 50;
const BUSY_SLICES = 8;

/** `inner` with another number of calls in flight. */
function withDepth(inner: Embedder, concurrentCalls: number): Embedder {
  return { modelId: inner.modelId, dimension: inner.dimension, concurrentCalls, embed: (texts, signal) => inner.embed(texts, signal), dispose: async () => undefined };
}

/**
 * Fills an index with `texts` through `embedder` while this thread works in slices; returns the ms until
 * every text has a vector, as seen between slices (the thread can see it no sooner).
 */
async function busyFill(embedder: Embedder, texts: readonly string[]): Promise<number> {
  const index = new ToolIndex(embedder);
  const t0 = performance.now();
  let readyAt: number | undefined;
  index.update(texts);
  for (let i = 0; i < BUSY_SLICES; i++) {
    const end = performance.now() + BUSY_SLICE_MS;
    while (performance.now() < end);
    await new Promise((resolve) => setImmediate(resolve));
    const { ready, total } = index.readiness();
    if (ready === total) readyAt ??= performance.now();
  }
  await index.whenReady();
  return (readyAt ?? performance.now()) - t0;
}

/** Starts filling an index through `embedder`, sends one query through `prompts` at once, and returns when it was answered (ms). */
async function queryDuringFill(embedder: Embedder, prompts: Embedder, texts: readonly string[], query: string): Promise<number> {
  const index = new ToolIndex(embedder);
  index.update(texts);
  // Let the index send its first batches before the query goes out, as a prompt that comes mid-fill would.
  await new Promise((resolve) => setImmediate(resolve));
  const t0 = performance.now();
  await prompts.embed([query]);
  const ms = performance.now() - t0;
  await index.whenReady();
  return ms;
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return total;
}

async function main(): Promise<void> {
  const tools = loadToolsFile(path.join(DATA, 'bfcl', 'tools.jsonl.gz')).slice(0, TOOLS);
  const texts = tools.map(toolEmbeddingText);
  const queries = loadQueriesFile(path.join(DATA, 'bfcl', 'queries.jsonl.gz')).map((q) => q.query);

  let t0 = performance.now();
  const model = await OnnxEmbedder.load(MODEL);
  await model.warmUp();
  const loadMs = performance.now() - t0;

  for (let i = 0; i < WARMUP; i++) await model.embed([queries[i % queries.length]!]);
  const latencies: number[] = [];
  for (let i = 0; i < QUERY_SAMPLES; i++) {
    const q = queries[(i * 7) % queries.length]!;
    const t = performance.now();
    await model.embed([q]);
    latencies.push(performance.now() - t);
  }

  t0 = performance.now();
  await model.embed(texts);
  const embed1000 = performance.now() - t0;

  // Cold start: an empty cache; every text goes through the model, then the cache is written.
  const cacheDir = mkdtempSync(path.join(tmpdir(), 'embed-bench-'));
  t0 = performance.now();
  const cold = new CachedEmbedder(model, new EmbeddingCache(cacheDir));
  await cold.embed(texts);
  await cold.flush();
  const coldMs = performance.now() - t0;
  const cacheBytes = folderBytes(cacheDir);

  // Warm start: a fresh cache object reads the file; no text reaches the model.
  t0 = performance.now();
  const warm = new CachedEmbedder(model, new EmbeddingCache(cacheDir));
  const vectors = await warm.embed(texts);
  const warmMs = performance.now() - t0;
  if (vectors.length !== texts.length) throw new Error('the warm cache returned the wrong number of vectors');
  rmSync(cacheDir, { recursive: true, force: true });

  // The model in a worker thread, as the extension runs it (dist/embedWorker.js, built with the benches).
  const worker = await WorkerEmbedder.load(MODEL, { script: path.join(ROOT, 'dist', 'embedWorker.js') });
  await worker.warmUp();
  const workerLatencies: number[] = [];
  for (let i = 0; i < WARMUP + QUERY_SAMPLES / 4; i++) {
    const t = performance.now();
    await worker.embed([queries[(i * 7) % queries.length]!]);
    if (i >= WARMUP) workerLatencies.push(performance.now() - t);
  }
  const fills = { one_batch: [] as number[], in_flight: [] as number[], all: [] as number[] };
  const queryDuring = { in_flight: [] as number[], all: [] as number[] };
  // Every batch at once: the worker never waits for this thread, but a query waits behind all of them.
  const allAtOnce = Math.ceil(TOOLS / 64);
  for (let round = 0; round < FILL_ROUNDS; round++) {
    // New texts each round, so nothing is reused between the variants.
    fills.one_batch.push(await busyFill(withDepth(worker, 1), texts.map((t) => `${t} (${round}a)`)));
    fills.in_flight.push(await busyFill(withDepth(worker, WORKER_BATCHES_IN_FLIGHT), texts.map((t) => `${t} (${round}b)`)));
    fills.all.push(await busyFill(withDepth(worker, allAtOnce), texts.map((t) => `${t} (${round}c)`)));
    queryDuring.in_flight.push(await queryDuringFill(withDepth(worker, WORKER_BATCHES_IN_FLIGHT), worker, texts.map((t) => `${t} (${round}d)`), queries[round]!));
    queryDuring.all.push(await queryDuringFill(withDepth(worker, allAtOnce), worker, texts.map((t) => `${t} (${round}e)`), queries[round]!));
  }
  await worker.dispose();
  const oneBatch = percentile(fills.one_batch, 50);
  const inFlight = percentile(fills.in_flight, 50);
  const allFill = percentile(fills.all, 50);
  const queryInFlight = percentile(queryDuring.in_flight, 50);
  const queryAll = percentile(queryDuring.all, 50);
  const workerP50 = percentile(workerLatencies, 50);

  const modelBytes = folderBytes(MODEL);
  const p50 = percentile(latencies, 50);
  const p95 = percentile(latencies, 95);
  console.log(`default model: ${MODEL} (${(modelBytes / 1e6).toFixed(2)} MB on disk, ${model.dimension} dimensions), loaded in ${loadMs.toFixed(0)} ms`);
  console.log(`one query:              p50 ${p50.toFixed(3)} ms   p95 ${p95.toFixed(3)} ms   (${QUERY_SAMPLES} bfcl queries)`);
  console.log(`1,000 tool texts:       ${embed1000.toFixed(0)} ms   (${(TOOLS / (embed1000 / 1000)).toFixed(0)} texts/s)`);
  console.log(`start for 1,000 tools:  cold ${coldMs.toFixed(0)} ms (model + write cache)   warm ${warmMs.toFixed(1)} ms (cache only)   ratio ${(coldMs / warmMs).toFixed(1)}×`);
  console.log(`cache on disk:          ${(cacheBytes / 1024).toFixed(0)} KiB for ${TOOLS} vectors`);
  console.log(`in a worker thread:     one query p50 ${workerP50.toFixed(3)} ms (${(workerP50 / p50).toFixed(2)}× in-process)`);
  console.log(`1,000 tools, this thread busy ${BUSY_SLICES} × ${BUSY_SLICE_MS} ms: one batch at a time ${oneBatch.toFixed(0)} ms, ${WORKER_BATCHES_IN_FLIGHT} in flight ${inFlight.toFixed(0)} ms, all ${allAtOnce} at once ${allFill.toFixed(0)} ms (medians of ${FILL_ROUNDS}, alternating; ratio ${(inFlight / oneBatch).toFixed(2)}, all ÷ ${WORKER_BATCHES_IN_FLIGHT} ${(allFill / inFlight).toFixed(2)})`);
  console.log(`a query sent as the fill starts (thread idle): answered after ${queryInFlight.toFixed(0)} ms with ${WORKER_BATCHES_IN_FLIGHT} in flight, ${queryAll.toFixed(0)} ms with all at once`);
  await model.dispose();
  console.log(JSON.stringify({ query_p50_ms: round(p50, 4), query_p95_ms: round(p95, 4), embed_1000_ms: round(embed1000, 1), warm_start_1000_ms: round(warmMs, 2), model_bytes: modelBytes, worker_query_p50_ms: round(workerP50, 4), busy_fill_1000_ms: { one_batch: round(oneBatch, 0), in_flight: round(inFlight, 0), all: round(allFill, 0) }, in_flight_ratio: round(inFlight / oneBatch, 2), all_ratio: round(allFill / inFlight, 2), query_during_fill_ms: { in_flight: round(queryInFlight, 0), all: round(queryAll, 0) } }));
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
