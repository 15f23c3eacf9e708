/**
 * `npm run bench:select`: selection latency, prompt embedding included, with the default model, for
 * catalogues of 100, 1,000 and 10,000 tools, in one run. Catalogues are drawn from every tool in
 * data/benchmarks (and OpenAPI operations to reach 10,000); prompts are the sets' queries.
 *
 * Beside each selection it times, on the same prompt and catalogue, the floor any hybrid selector pays: a
 * plain scan that embeds the prompt, takes one cosine per tool and scores BM25F over the same index. The
 * ratio of the two medians holds from one machine to the next better than the milliseconds do.
 * The last line is JSON: {"p50_ms", "p95_ms", "floor_p50_ms", "ratio_to_floor"}, each by catalogue size.
 */
import * as path from 'node:path';
import { percentile } from '../src/core/router/callStatistics';
import { loadQueriesFile, loadToolsFile, readJsonl } from '../src/core/evaluation/retrievalData';
import { LexicalRanker } from '../src/core/selection/lexicalRanker';
import { PackedVectors } from '../src/core/selection/cosineScan';
import { createSelectionEngine, type SelectionEngine } from '../src/core/selection/selectionEngine';
import type { SelectableTool } from '../src/core/selection/selectionTypes';
import { embeddingTextFor, rankableFor, type ToolIndex } from '../src/core/selection/toolIndex';
import { loadInProcess } from '../src/core/embedding/onnxEmbedder';

const ROOT = path.resolve(__dirname, '..', '..');
const DATA = path.join(ROOT, 'data', 'benchmarks');
/** Sizes timed; `--sizes 1000` times fewer. */
const SIZES = sizesFromArgs() ?? [100, 1000, 10000];
/** Prompts timed per catalogue size, after a warm-up. */
const PROMPTS = 500;
const WARMUP = 50;
/** The stages whose medians are printed for the 1,000-tool catalogue: where a selection's time goes. */
const STAGES_SHOWN_AT = 1000;

interface Operation {
  api: string;
  operationId?: string;
  method: string;
  path: string;
  summary?: string;
  description?: string;
  params?: Array<{ name?: string; description?: string }>;
}

function sizesFromArgs(): number[] | undefined {
  const at = process.argv.indexOf('--sizes');
  if (at < 0) return undefined;
  const sizes = (process.argv[at + 1] ?? '').split(',').map(Number);
  if (!sizes.length || sizes.some((s) => !Number.isInteger(s) || s < 1)) throw new Error('--sizes takes whole numbers separated by commas, e.g. --sizes 1000,10000');
  return sizes;
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

/**
 * The plain scan: the prompt embedded, one cosine per tool over the same vectors (with the same kernel
 * selection uses, so the floor is as fast as it can be), and BM25F over the same tools.
 */
function plainScan(index: ToolIndex, catalogue: readonly SelectableTool[]): (prompt: string) => Promise<number> {
  const lexical = new LexicalRanker(catalogue.map(rankableFor));
  const rows = catalogue.map((t) => index.get(embeddingTextFor(t))!);
  const vectors = new PackedVectors(rows.length, rows[0]!.length);
  rows.forEach((v, i) => vectors.matrix.set(v, i * vectors.dimension));
  const present = new Uint8Array(rows.length).fill(1);
  return async (prompt) => {
    const cosine = vectors.scan(await index.embedQuery(prompt), present);
    return lexical.score(prompt)[0]! + cosine[0]!;
  };
}

interface SizeResult {
  readonly select: number[];
  readonly floor: number[];
  readonly stages: Map<string, number[]>;
}

/** Times every prompt through selection and through the plain scan, alternating which goes first. */
async function timeSize(engine: SelectionEngine, catalogue: readonly SelectableTool[], prompts: readonly string[]): Promise<SizeResult> {
  const scan = plainScan(engine.index!, catalogue);
  const result: SizeResult = { select: [], floor: [], stages: new Map() };
  for (let i = 0; i < prompts.length; i++) {
    const prompt = prompts[i]!;
    const timeFloor = async (): Promise<number> => {
      const t = performance.now();
      await scan(prompt);
      return performance.now() - t;
    };
    const floorFirst = i % 2 === 0;
    const floor = floorFirst ? await timeFloor() : 0;
    const t = performance.now();
    const selection = await engine.selector.select({ prompt });
    const selectMs = performance.now() - t;
    const floorAfter = floorFirst ? floor : await timeFloor();
    if (selection.method !== 'embedding+keyword') throw new Error(`selection fell back to ${selection.method}: ${selection.methodNote ?? ''}`);
    if (i < WARMUP) continue;
    result.select.push(selectMs);
    result.floor.push(floorAfter);
    for (const [stage, ms] of Object.entries(selection.timingsMs)) result.stages.set(stage, [...(result.stages.get(stage) ?? []), ms]);
  }
  return result;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  const tools = shuffled(allTools(), 42);
  const prompts = shuffled(
    ['metatool', 'seal-tools', 'bfcl'].flatMap((f) => loadQueriesFile(path.join(DATA, f, 'queries.jsonl.gz')).map((q) => q.query)),
    7,
  ).slice(0, PROMPTS + WARMUP);
  const p50: Record<string, number> = {};
  const p95: Record<string, number> = {};
  const floorP50: Record<string, number> = {};
  const ratio: Record<string, number> = {};
  for (const size of SIZES) {
    const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: ROOT });
    if (engine.embedderProblem || !engine.index) throw new Error(`the default model did not load: ${engine.embedderProblem ?? 'no index'}`);
    const catalogue = tools.slice(0, size);
    engine.selector.setCatalogue(catalogue);
    const t0 = performance.now();
    await engine.index.whenReady();
    const indexMs = performance.now() - t0;
    const r = await timeSize(engine, catalogue, prompts);
    const key = String(size);
    p50[key] = round3(percentile(r.select, 50));
    p95[key] = round3(percentile(r.select, 95));
    floorP50[key] = round3(percentile(r.floor, 50));
    ratio[key] = Math.round((percentile(r.select, 50) / percentile(r.floor, 50)) * 100) / 100;
    console.log(
      `${key.padStart(6)} tools: p50 ${p50[key]!.toFixed(3)} ms   p95 ${p95[key]!.toFixed(3)} ms   plain scan p50 ${floorP50[key]!.toFixed(3)} ms, ×${ratio[key]!.toFixed(2)}   (index built in ${indexMs.toFixed(0)} ms, ${PROMPTS} prompts)`,
    );
    if (size === STAGES_SHOWN_AT) console.log(`        stage medians (ms): ${[...r.stages].map(([s, ms]) => `${s} ${percentile(ms, 50).toFixed(3)}`).join(', ')}`);
    await engine.dispose();
  }
  console.log(JSON.stringify({ p50_ms: p50, p95_ms: p95, floor_p50_ms: floorP50, ratio_to_floor: ratio }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
