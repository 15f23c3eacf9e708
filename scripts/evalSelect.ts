/**
 * `npm run eval:select`: ranked and selected quality of the router's selection with its default
 * configuration (the bundled model fused with BM25F), next to plain BM25 (the README floor of
 * ../shared/data) and to the lexical ranker alone, in one run, on MetaTool multi, Seal-Tools
 * test_out_domain, and BFCL live_multiple and parallel_multiple.
 *
 * With --sweep it also prints how the fusion weight and the cosine threshold move the figures (what the
 * defaults were chosen from). The last line is JSON: {SET: {"router": {metrics}, "bm25": {metrics}}}.
 */
import * as path from 'node:path';
import { LexicalRanker } from '../src/core/selection/lexicalRanker';
import { loadQueriesFile, loadToolsFile, METRIC_NAMES, retrievalMetrics, SELECTION_DEV_SETS, type DataQuery, type Metrics } from '../src/core/selection/retrievalData';
import { createSelectionEngine } from '../src/core/selection/selectionEngine';
import { catalogueFromData, evaluateSelection, selectedRecall } from '../src/core/selection/selectionEvaluation';
import { rankableFor } from '../src/core/selection/toolIndex';
import type { SelectionOptions } from '../src/core/selection/toolSelector';

const ROOT = path.resolve(__dirname, '..');
const DATA = path.resolve(ROOT, '..', 'shared', 'data');
const SETS = SELECTION_DEV_SETS;
const RANKED = 50;

interface Row {
  readonly method: string;
  readonly metrics: Metrics;
  readonly selectedRecall?: number;
  readonly meanSelected?: number;
}

function lexicalRankings(ranker: LexicalRanker, queries: readonly DataQuery[]): string[][] {
  return queries.map((q) => ranker.rank(q.query, RANKED).map((r) => r.id));
}

async function runRouter(tools: ReturnType<typeof loadToolsFile>, queries: readonly DataQuery[], selection: Partial<SelectionOptions> = {}): Promise<Row & { latencyP50: number }> {
  const engine = await createSelectionEngine({ embeddings: { provider: 'local', model: 'default' }, root: ROOT, selection });
  if (engine.embedderProblem) throw new Error(`the default model did not load: ${engine.embedderProblem}`);
  engine.selector.setCatalogue(catalogueFromData(tools));
  await engine.index?.whenReady();
  const outcomes = await evaluateSelection(engine.selector, queries, RANKED);
  await engine.dispose();
  const latencies = outcomes.map((o) => o.latencyMs).sort((a, b) => a - b);
  return {
    method: 'router',
    metrics: retrievalMetrics(queries, outcomes.map((o) => o.ranked)),
    selectedRecall: selectedRecall(queries, outcomes),
    meanSelected: Math.round((10 * outcomes.reduce((s, o) => s + o.selected.length, 0)) / outcomes.length) / 10,
    latencyP50: latencies[Math.floor(latencies.length / 2)] ?? 0,
  };
}

function table(rows: readonly Row[]): string {
  const head = ['method'.padEnd(26), ...METRIC_NAMES.map((m) => m.padStart(10)), 'sel.recall'.padStart(11), 'mean sel.'.padStart(10)].join('');
  const lines = rows.map((r) =>
    [r.method.padEnd(26), ...METRIC_NAMES.map((m) => r.metrics[m].toFixed(1).padStart(10)), (r.selectedRecall?.toFixed(1) ?? '').padStart(11), (r.meanSelected?.toFixed(1) ?? '').padStart(10)].join(''),
  );
  return [head, ...lines].join('\n');
}

async function main(): Promise<void> {
  const sweep = process.argv.includes('--sweep');
  const summary: Record<string, { router: Metrics; bm25: Metrics }> = {};
  for (const set of SETS) {
    const tools = loadToolsFile(path.join(DATA, set.folder, 'tools.jsonl'));
    const queries = loadQueriesFile(path.join(DATA, set.folder, 'queries.jsonl'), set.split);
    const rankable = catalogueFromData(tools).map(rankableFor);
    const bm25 = retrievalMetrics(queries, lexicalRankings(new LexicalRanker(rankable, { plainBm25: true }), queries));
    const lexical = retrievalMetrics(queries, lexicalRankings(new LexicalRanker(rankable), queries));
    const router = await runRouter(tools, queries);
    const rows: Row[] = [{ method: 'BM25 (README floor)', metrics: bm25 }, { method: 'lexical BM25F alone', metrics: lexical }, router];
    if (sweep) {
      for (const w of [0.2, 0.3, 0.5, 0.6]) rows.push({ ...(await runRouter(tools, queries, { lexicalWeight: w })), method: `router, lexical weight ${w}` });
      for (const t of [0.1, 0.2, 0.4]) rows.push({ ...(await runRouter(tools, queries, { threshold: t })), method: `router, threshold ${t}` });
    }
    console.log(`\n${set.key}: ${queries.length} queries, ${tools.length} tools (router p50 ${router.latencyP50.toFixed(2)} ms per query)`);
    console.log(table(rows));
    summary[set.key] = { router: router.metrics, bm25 };
  }
  console.log(JSON.stringify(summary));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
