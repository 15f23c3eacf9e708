import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { percentile } from '../core/router/callStatistics';
import { loadQueriesFile, loadToolsFile, retrievalMetrics, METRIC_NAMES, type DataTool } from '../core/evaluation/retrievalData';
import { catalogueFromData, evaluateSelection, selectedRecall, type QueryOutcome } from '../core/evaluation/selectionEvaluation';
import { createSelectionEngine, type EmbeddingProvider, type EmbeddingSettings } from '../core/selection/selectionEngine';
import { readAsText, type SelectableTool, type Selection } from '../core/selection/selectionTypes';
import { nearMissLines } from '../core/selection/selectionText';
import type { CallPolicy } from '../core/policy/callPolicy';
import { loadInProcess } from '../core/embedding/onnxEmbedder';

/**
 * `select` and `eval`: selection from the command line, on a live config or on any catalogue file in the
 * shared data format. `eval` is how selection quality is measured, on sets it has never seen too.
 */

/** `eval` writes at least this many ranked ids per query (more tools than that: the top 50). */
export const EVAL_RANKED_IDS = 50;

export interface SelectCliOptions {
  readonly embeddings: EmbeddingSettings;
  readonly cacheDir?: string;
  readonly json: boolean;
  /** Which tools may be offered (destructive ones under `never` are dropped, with the reason). */
  readonly callPolicy?: CallPolicy;
}

/** The folder holding package.json and media/: two levels up from src/cli, one from dist/. */
export function projectRoot(): string {
  for (let dir = __dirname, i = 0; i < 4; i++, dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'mcp-tool-router') return dir;
  }
  return path.resolve(__dirname, '..');
}

/** The CLI's embedding cache: $XDG_CACHE_HOME/mcp-tool-router/embeddings, else ~/.cache/… */
export function defaultCacheDir(): string {
  return path.join(process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'), 'mcp-tool-router', 'embeddings');
}

export function parseProvider(value: string): EmbeddingProvider {
  if (value === 'local' || value === 'ollama' || value === 'openai' || value === 'none') return value;
  throw new Error(`--embeddings must be local, ollama, openai or none; got "${value}".`);
}

export const catalogueFromFile = (tools: readonly DataTool[]): SelectableTool[] => catalogueFromData(tools);

async function buildSelector(catalogue: readonly SelectableTool[], opts: SelectCliOptions, err: (s: string) => void) {
  const engine = await createSelectionEngine({ loadModel: loadInProcess,
    embeddings: opts.embeddings,
    root: projectRoot(),
    cacheFolder: opts.cacheDir ?? defaultCacheDir(),
    log: (m) => err(`${m}\n`),
    ...(opts.callPolicy ? { selection: { callPolicy: opts.callPolicy } } : {}),
  });
  engine.selector.setCatalogue(catalogue);
  // A one-shot command can afford to wait for the index; the extension never does.
  await engine.index?.whenReady();
  return engine;
}

export async function runSelect(prompt: string, catalogue: readonly SelectableTool[], opts: SelectCliOptions, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const engine = await buildSelector(catalogue, opts, err);
  try {
    const selection = await engine.selector.select({ prompt });
    out(opts.json ? `${JSON.stringify(selection, null, 2)}\n` : formatSelection(selection));
    return 0;
  } finally {
    await engine.dispose();
  }
}

export function formatSelection(s: Selection): string {
  const lines = [`method: ${s.method}${s.methodNote ? ` (${s.methodNote})` : ''}`, ...(s.readAs?.length ? [`spelling: ${readAsText(s)}`] : []), `tools (${s.tools.length}, ~${s.tokens.selected} of ${s.tokens.catalogue} tokens):`];
  for (const t of s.tools) {
    const score = t.score !== undefined ? ` score ${t.score.toFixed(2)}` : '';
    const cos = t.cosine !== undefined ? ` cos ${t.cosine.toFixed(2)}` : '';
    lines.push(`  ${t.name}  [${t.stages.join(', ')}]${score}${cos}  ${t.reason}`);
  }
  if (s.dropped.length) {
    lines.push('dropped:');
    for (const d of s.dropped) lines.push(`  ${d.name}  (${d.by}) ${d.reason}`);
  }
  if (s.nearMisses.length) lines.push(`not sent (the best ${s.nearMisses.length} ranked tools left out):`, ...nearMissLines(s, '  '));
  for (const issue of s.issues) lines.push(`issue: ${issue}`);
  lines.push(`timings (ms): ${Object.entries(s.timingsMs).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
  return `${lines.join('\n')}\n`;
}

export interface EvalCliOptions extends SelectCliOptions {
  readonly toolsFile: string;
  readonly queriesFile: string;
  readonly split?: string;
  readonly outFile: string;
}

export async function runEval(opts: EvalCliOptions, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const tools = loadToolsFile(opts.toolsFile);
  const queries = loadQueriesFile(opts.queriesFile, opts.split);
  if (queries.length === 0) {
    err(`No queries in ${opts.queriesFile}${opts.split ? ` with split "${opts.split}"` : ''}.\n`);
    return 1;
  }
  const engine = await buildSelector(catalogueFromFile(tools), opts, err);
  let outcomes: QueryOutcome[];
  try {
    outcomes = await evaluateSelection(engine.selector, queries, EVAL_RANKED_IDS);
  } finally {
    await engine.dispose();
  }
  const lines = outcomes.map((o) => JSON.stringify({ id: o.id, ranked: o.ranked, selected: o.selected }));
  const rankings = outcomes.map((o) => o.ranked);
  const latencies = outcomes.map((o) => o.latencyMs);
  const selectedTotal = outcomes.reduce((sum, o) => sum + o.selected.length, 0);
  writeFileSync(opts.outFile, `${lines.join('\n')}\n`);
  const metrics = retrievalMetrics(queries, rankings);
  const summary = {
    queries: queries.length,
    tools: tools.length,
    ...metrics,
    selected_recall: selectedRecall(queries, outcomes),
    mean_selected: Math.round((selectedTotal / queries.length) * 10) / 10,
    latency_p50_ms: Math.round(percentile(latencies, 50) * 100) / 100,
    latency_p95_ms: Math.round(percentile(latencies, 95) * 100) / 100,
  };
  out(`${queries.length} queries over ${tools.length} tools → ${opts.outFile}\n`);
  out(`${METRIC_NAMES.map((m) => `${m} ${metrics[m].toFixed(1)}`).join('  ')}\n`);
  out(`selected recall ${summary.selected_recall}  mean selected ${summary.mean_selected}  latency p50 ${summary.latency_p50_ms} ms  p95 ${summary.latency_p95_ms} ms\n`);
  out(`${JSON.stringify(summary)}\n`);
  return 0;
}
