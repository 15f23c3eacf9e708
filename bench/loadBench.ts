/**
 * `npm run bench:load`: the router under load, then a compressed soak. Run node with --expose-gc.
 *
 * 1. Load: server-everything's `echo` over stdio through the ToolRouter at 1, 10, 100 and 1,000 calls in
 *    flight (a pool of that many workers, each calling again as soon as its call returns). Throughput,
 *    p50/p95/p99 latency, and lost calls: a call is lost unless it returns an ok envelope whose text is
 *    exactly `Echo: <its own message>`.
 *    The server's `router.maxConcurrentCalls` is set to 1,000 (the default is 4): with the default, every
 *    level above 4 would measure the router's wait queue (996 of 1,000 calls parked) rather than calls
 *    in flight on the pipe. The queue's own fairness and limits are the reliability suite's job.
 *
 * 2. Soak, a "30-minute equivalent" of heavy use, done as fast as possible. The equivalence:
 *      1 tool call per second                      → 1,800 echo calls
 *      1 tool selection per 10 s                   →   180 selections (default model, router's catalogue)
 *      1 tool-list change per minute (add_tool)    →    30 list changes, each followed by a call to the new tool
 *      1 config re-apply per 5 minutes             →     6 restarts of the scripted server (a changed
 *                                                        toolsDenied means a new fingerprint), tools reset
 *    Work runs in blocks of 10 simulated seconds: the block's 10 calls and its selection go out together.
 *    SOAK_SCALE=n repeats the 30 minutes n times. Heap used (after global.gc()) and open handles
 *    (process.getActiveResourcesInfo()) are taken after a warm-up (one of each kind of work, then 30
 *    simulated minutes of it: WARMUP_SECONDS) and again after the soak, in the same state: both servers
 *    up, the selection engine loaded. The heap is also sampled every simulated 5 minutes, and V8's code
 *    space (JIT output) is reported apart from the rest.
 *
 * The last line is JSON: {"calls_per_s": {"1", "10", "100", "1000"}, "p99_ms": {…}, "lost", "heap_growth_mb", …}.
 */
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { parseMcpConfig } from '../src/core/config/mcpConfigParser';
import { percentile } from '../src/core/router/callStatistics';
import { createSelectionEngine } from '../src/core/selection/selectionEngine';
import { ToolRouter } from '../src/core/router/toolRouter';
import { loadInProcess } from '../src/core/embedding/onnxEmbedder';

const ROOT = path.resolve(__dirname, '..', '..');
const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const SCRIPTED = path.join(ROOT, 'test/fixtures/servers/scriptedServer.mjs');
const LEVELS = [1, 10, 100, 1000] as const;
/** Router concurrency limit for server-everything: the highest level, so no level measures queue wait. */
const MAX_CONCURRENT = 1000;
/** Calls per level: at least 2,000 (a p99 from 20 tail samples), and 10 per worker at 1,000 in flight. */
const callsAt = (level: number): number => Math.max(Number(process.env['BENCH_CALLS'] ?? 2000), level * 10);
const WARMUP_CALLS = 300;

/** The soak's equivalence, in simulated seconds. */
const SOAK_SECONDS = 30 * 60 * Number(process.env['SOAK_SCALE'] ?? 1);
/**
 * Simulated seconds of the same work before the heap is first measured. Sampling a 2-hour soak showed the
 * heap without V8's code space rising 0.29 MB in the first hour and 0.08 MB in the second: JIT feedback
 * and bytecode for paths that run once per 5 minutes, levelling off; a heap-snapshot diff between minutes
 * 30 and 60 found only 1.4 KB more JS objects. SOAK_WARMUP_MINUTES=0 measures from the start.
 */
const WARMUP_SECONDS = 60 * Number(process.env['SOAK_WARMUP_MINUTES'] ?? 30);
const CALL_EVERY_S = 1;
const SELECT_EVERY_S = 10;
const LIST_CHANGE_EVERY_S = 60;
const REAPPLY_EVERY_S = 300;
const BLOCK_S = 10;
/** The scripted server forgets added tools when it restarts, which a re-apply does every 5 list changes. */
const LIST_CHANGES_PER_REAPPLY = REAPPLY_EVERY_S / LIST_CHANGE_EVERY_S;
/**
 * By default the tools a list change adds come from a fixed set of names (soak_0…soak_4), as on real
 * servers, whose tools come and go under the names they had. SOAK_FRESH_NAMES=1 gives every list change a
 * name never seen before: the worst case, where per-tool state (call statistics, cached vectors, compiled
 * validators' code) grows until its cap (MAX_TRACKED_TOOLS, the cache's byte limit) is reached.
 */
const FRESH_NAMES = process.env['SOAK_FRESH_NAMES'] === '1';
/** Heap is sampled every simulated 5 minutes (right after each config re-apply) to show its course. */
const SAMPLE_EVERY_S = 300;
const PROMPTS = [
  'echo this message back to me',
  'add two numbers together',
  'print the environment variables',
  'give me a tiny test image',
  'run a long operation and report progress',
  'sleep for a while then answer',
  'sample text from the language model',
  'list the resources the server has',
];
const TOOL_WAIT_MS = 30_000;

type Gc = () => void;

async function main(): Promise<void> {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (!gc) throw new Error('run with node --expose-gc (npm run bench:load does)');

  let denyFail = false;
  const config = async () =>
    (
      await parseMcpConfig(
        JSON.stringify({
          servers: {
            everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], router: { maxConcurrentCalls: MAX_CONCURRENT } },
            // Toggling toolsDenied changes the fingerprint, so re-applying the config restarts this server.
            scripted: { command: process.execPath, args: [SCRIPTED], router: { toolsDenied: denyFail ? ['fail'] : [] } },
          },
        }),
        { file: 'bench' },
      )
    ).servers;
  const router = new ToolRouter();
  await router.applyConfig(await config());
  await router.whenSettled(30_000);
  for (const name of ['everything_echo', 'scripted_add_tool', 'scripted_echo']) {
    if (!router.getTool(name)) throw new Error(`${name} is missing: a server did not start under the router`);
  }

  let seq = 0;
  /** One echo call; resolves to whether it came back whole (an ok envelope with its own text). */
  const echo = async (tool = 'everything_echo'): Promise<boolean> => {
    const message = `m${seq++}`;
    const r = await router.call(tool, { message }).catch(() => undefined);
    return !!r && r.ok && r.content.length === 1 && r.content[0]?.['text'] === `Echo: ${message}`;
  };

  for (let i = 0; i < WARMUP_CALLS; i++) await echo();

  // 1. Load.
  const perSecond: Record<string, number> = {};
  const p50: Record<string, number> = {};
  const p95: Record<string, number> = {};
  const p99: Record<string, number> = {};
  let loadLost = 0;
  console.log(`load: server-everything echo over stdio through the router (maxConcurrentCalls ${MAX_CONCURRENT})`);
  console.log(`  ${'in flight'.padStart(9)} ${'calls'.padStart(7)} ${'calls/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'lost'.padStart(5)}`);
  for (const level of LEVELS) {
    const total = callsAt(level);
    const times: number[] = [];
    let next = 0;
    let lost = 0;
    const worker = async (): Promise<void> => {
      while (next < total) {
        next++;
        const t = performance.now();
        const ok = await echo();
        times.push(performance.now() - t);
        if (!ok) lost++;
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: level }, worker));
    const seconds = (performance.now() - t0) / 1000;
    const key = String(level);
    perSecond[key] = Math.round(total / seconds);
    p50[key] = round3(percentile(times, 50));
    p95[key] = round3(percentile(times, 95));
    p99[key] = round3(percentile(times, 99));
    loadLost += lost;
    console.log(
      `  ${key.padStart(9)} ${String(total).padStart(7)} ${String(perSecond[key]).padStart(9)} ${p50[key]!.toFixed(3).padStart(9)} ${p95[key]!.toFixed(3).padStart(9)} ${p99[key]!.toFixed(3).padStart(9)} ${String(lost).padStart(5)}`,
    );
  }

  // 2. Soak.
  const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: ROOT });
  if (engine.embedderProblem) throw new Error(`the default model did not load: ${engine.embedderProblem}`);
  engine.selector.setCatalogue(router.listTools());
  const offTools = router.onDidChangeTools((tools) => engine.selector.setCatalogue(tools));

  /** Resolves true once `name` is in (or, with present = false, out of) the catalogue. */
  const waitForTool = (name: string, present = true): Promise<boolean> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!!router.getTool(name) === present) done(true);
      };
      const done = (ok: boolean): void => {
        off();
        clearTimeout(timer);
        resolve(ok);
      };
      const off = router.onDidChangeTools(check);
      const timer = setTimeout(() => done(false), TOOL_WAIT_MS);
      check();
    });

  const soak = { calls: 0, lost: 0, selections: 0, selectionFallbacks: 0, listChanges: 0, reapplies: 0 };
  let added = 0;
  let turn = 0;
  const select = async (): Promise<void> => {
    await engine.index?.whenReady();
    const selection = await engine.selector.select({ prompt: PROMPTS[turn % PROMPTS.length]!, turn: turn++ });
    soak.selections++;
    if (selection.method !== 'embedding+keyword' || selection.tools.length === 0) soak.selectionFallbacks++;
  };
  const call = async (tool?: string): Promise<void> => {
    soak.calls++;
    if (!(await echo(tool))) soak.lost++;
  };
  /** A list change: the scripted server adds a tool and says so; the new tool must appear and answer. */
  const listChange = async (): Promise<void> => {
    const name = FRESH_NAMES ? `soak_${added++}` : `soak_${added++ % LIST_CHANGES_PER_REAPPLY}`;
    soak.listChanges++;
    const r = await router.call('scripted_add_tool', { name });
    soak.calls++;
    const appeared = r.ok && (await waitForTool(`scripted_${name}`));
    if (!appeared) {
      soak.lost++;
      return;
    }
    soak.calls++;
    const ran = await router.call(`scripted_${name}`, {});
    if (!(ran.ok && ran.content[0]?.['text'] === `${name} ran`)) soak.lost++;
  };
  /** A config re-apply: the scripted server restarts with a new fingerprint; its echo must answer again. */
  const reapply = async (): Promise<void> => {
    denyFail = !denyFail;
    soak.reapplies++;
    await router.applyConfig(await config());
    const ready = (await waitForTool('scripted_echo')) && (await waitForTool('scripted_fail', !denyFail));
    if (!ready) {
      soak.lost++;
      soak.calls++;
      return;
    }
    await call('scripted_echo');
  };
  const block = async (start: number): Promise<void> => {
    const work: Array<Promise<void>> = [];
    for (let s = start; s < start + BLOCK_S; s++) {
      if (s % CALL_EVERY_S === 0) work.push(call());
      if (s % SELECT_EVERY_S === 0) work.push(select());
    }
    await Promise.all(work);
    for (let s = start; s < start + BLOCK_S; s++) {
      if (s % LIST_CHANGE_EVERY_S === LIST_CHANGE_EVERY_S - 1) await listChange();
      if (s % REAPPLY_EVERY_S === REAPPLY_EVERY_S - 1) await reapply();
    }
  };

  // Warm-up: one of each kind of work, so lazily built state (the index, the scripted server's new
  // process after a restart) exists before the first measurement; then back to the starting config.
  await block(0);
  await listChange();
  await reapply();
  await reapply();
  // Then a warm-up half hour of the same work, unmeasured: V8 keeps compiling rarely-run paths (a
  // restart every 5 minutes) for a while, which is start-up cost, not a leak (see the soak note above).
  const warmupSeries: number[] = [];
  for (let s = 0; s < WARMUP_SECONDS; s += BLOCK_S) {
    await block(s);
    if ((s + BLOCK_S) % SAMPLE_EVERY_S === 0) warmupSeries.push(await settledHeap(gc));
  }
  if (denyFail) await reapply();
  const warm = { ...soak };
  const heapBefore = await settledHeap(gc);
  const codeBefore = codeSpace();
  const handlesBefore = process.getActiveResourcesInfo();

  const t0 = performance.now();
  const series: number[] = [];
  const codeSeries: number[] = [];
  for (let s = 0; s < SOAK_SECONDS; s += BLOCK_S) {
    await block(s);
    if ((s + BLOCK_S) % SAMPLE_EVERY_S === 0) {
      series.push(await settledHeap(gc));
      codeSeries.push(codeSpace());
    }
  }
  const soakSeconds = (performance.now() - t0) / 1000;
  // Leave the state as it was measured before: the starting config (restarting if the count was odd).
  if (denyFail) await reapply();

  const heapAfter = await settledHeap(gc);
  const codeAfter = codeSpace();
  const dataGrowth = heapAfter - codeAfter - (heapBefore - codeBefore);
  const handlesAfter = process.getActiveResourcesInfo();
  for (const k of Object.keys(soak) as Array<keyof typeof soak>) soak[k] -= warm[k];

  console.log(`soak: ${SOAK_SECONDS / 60} simulated minutes in ${soakSeconds.toFixed(1)} s`);
  console.log(`  calls ${soak.calls} (lost ${soak.lost})   selections ${soak.selections} (not embedding+keyword: ${soak.selectionFallbacks})`);
  console.log(`  list changes ${soak.listChanges} (add_tool)   config re-applies ${soak.reapplies} (server restarts)`);
  console.log(`  heap used   before ${mb(heapBefore).toFixed(2)} MB   after ${mb(heapAfter).toFixed(2)} MB   growth ${mb(heapAfter - heapBefore).toFixed(2)} MB`);
  console.log(`  of which V8 code space (JIT output) ${mb(codeBefore).toFixed(2)} → ${mb(codeAfter).toFixed(2)} MB; the rest (objects, strings, bytecode) grew ${mb(dataGrowth).toFixed(2)} MB`);
  console.log(`  warm-up (${WARMUP_SECONDS / 60} simulated min, unmeasured), heap every ${SAMPLE_EVERY_S / 60} min: ${warmupSeries.map((b) => mb(b).toFixed(2)).join(' ')} MB`);
  console.log(`  heap every ${SAMPLE_EVERY_S / 60} simulated min: ${series.map((b) => mb(b).toFixed(2)).join(' ')} MB`);
  console.log(`  without code  ${series.map((b, i) => mb(b - codeSeries[i]!).toFixed(2)).join(' ')} MB`);
  console.log(`  handles     before ${handlesBefore.length} ${describeHandles(handlesBefore)}`);
  console.log(`              after  ${handlesAfter.length} ${describeHandles(handlesAfter)}`);

  offTools();
  await engine.dispose();
  await router.dispose();
  console.log(
    JSON.stringify({
      calls_per_s: perSecond,
      p99_ms: p99,
      lost: loadLost + soak.lost,
      heap_growth_mb: round3(mb(heapAfter - heapBefore)),
      p50_ms: p50,
      p95_ms: p95,
      soak_calls: soak.calls,
      soak_selections: soak.selections,
      soak_list_changes: soak.listChanges + soak.reapplies,
      soak_seconds: round3(soakSeconds),
      heap_growth_without_code_mb: round3(mb(dataGrowth)),
      heap_before_mb: round3(mb(heapBefore)),
      heap_after_mb: round3(mb(heapAfter)),
      handles_before: handlesBefore.length,
      handles_after: handlesAfter.length,
    }),
  );
}

/** Bytes used in V8's code space: machine code from the JIT, which grows as functions tier up. */
function codeSpace(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'code_space')?.space_used_size ?? 0;
}

/** Heap used after full collections, with a turn of the event loop between them for finalizers. */
async function settledHeap(gc: Gc): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

function describeHandles(handles: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const h of handles) counts.set(h, (counts.get(h) ?? 0) + 1);
  return `(${[...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([h, n]) => `${h} ${n}`).join(', ')})`;
}

function mb(bytes: number): number {
  return bytes / (1024 * 1024);
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
