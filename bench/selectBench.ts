/**
 * `npm run bench:select`: selection latency, prompt embedding included, with the default model, for
 * catalogues of 100, 1,000 and 10,000 tools, in one run. Catalogues are drawn from every tool in
 * data/benchmarks (and OpenAPI operations to reach 10,000); prompts are the sets' queries.
 * The last line is JSON: {"p50_ms": {"100", "1000", "10000"}, "p95_ms": {…}}.
 */
import * as path from 'node:path';
import { percentile } from '../src/core/router/callStatistics';
import { loadQueriesFile, loadToolsFile, readJsonl } from '../src/core/evaluation/retrievalData';
import { createSelectionEngine } from '../src/core/selection/selectionEngine';
import type { SelectableTool } from '../src/core/selection/selectionTypes';

const ROOT = path.resolve(__dirname, '..', '..');
const DATA = path.join(ROOT, 'data', 'benchmarks');
const SIZES = [100, 1000, 10000] as const;
/** Prompts timed per catalogue size, after a warm-up. */
const PROMPTS = 500;
const WARMUP = 50;

interface Operation {
  api: string;
  operationId?: string;
  method: string;
  path: string;
  summary?: string;
  description?: string;
  params?: Array<{ name?: string; description?: string }>;
}

function allTools(): SelectableTool[] {
  const out: SelectableTool[] = [];
  for (const folder of ['metatool', 'seal-tools', 'bfcl']) {
    for (const t of loadToolsFile(path.join(DATA, folder, 'tools.jsonl.gz'))) {
      out.push({ name: `${folder}:${t.id}`, originalName: t.name, server: folder, description: t.description, inputSchema: t.inputSchema });
    }
  }
  const ops = readJsonl<Operation>(path.join(DATA, 'openapi', 'operations.jsonl.gz'));
  for (let i = 0; out.length < 12_000 && i < ops.length; i++) {
    const op = ops[i]!;
    const properties = Object.fromEntries((op.params ?? []).filter((p) => p.name).map((p) => [p.name!, { type: 'string', description: p.description ?? '' }]));
    out.push({ name: `openapi:${i}`, originalName: op.operationId ?? `${op.method} ${op.path}`, server: op.api, description: op.summary ?? op.description ?? '', inputSchema: { type: 'object', properties } });
  }
  return out;
}

/** A fixed shuffle (seeded), so every run times the same catalogues. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function main(): Promise<void> {
  const tools = shuffled(allTools(), 42);
  const prompts = shuffled(
    ['metatool', 'seal-tools', 'bfcl'].flatMap((f) => loadQueriesFile(path.join(DATA, f, 'queries.jsonl.gz')).map((q) => q.query)),
    7,
  ).slice(0, PROMPTS + WARMUP);
  const p50: Record<string, number> = {};
  const p95: Record<string, number> = {};
  for (const size of SIZES) {
    const engine = await createSelectionEngine({ embeddings: { provider: 'local', model: 'default' }, root: ROOT });
    if (engine.embedderProblem) throw new Error(`the default model did not load: ${engine.embedderProblem}`);
    engine.selector.setCatalogue(tools.slice(0, size));
    const t0 = performance.now();
    await engine.index?.whenReady();
    const indexMs = performance.now() - t0;
    const times: number[] = [];
    for (let i = 0; i < prompts.length; i++) {
      const t = performance.now();
      const selection = await engine.selector.select({ prompt: prompts[i]! });
      if (i >= WARMUP) times.push(performance.now() - t);
      if (selection.method !== 'embedding+keyword') throw new Error(`selection fell back to ${selection.method}: ${selection.methodNote ?? ''}`);
    }
    p50[String(size)] = Math.round(percentile(times, 50) * 1000) / 1000;
    p95[String(size)] = Math.round(percentile(times, 95) * 1000) / 1000;
    console.log(`${String(size).padStart(6)} tools: p50 ${p50[String(size)]!.toFixed(3)} ms   p95 ${p95[String(size)]!.toFixed(3)} ms   (index built in ${indexMs.toFixed(0)} ms, ${PROMPTS} prompts)`);
    await engine.dispose();
  }
  console.log(JSON.stringify({ p50_ms: p50, p95_ms: p95 }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
