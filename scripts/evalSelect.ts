/**
 * `npm run eval:select`: ranked and selected quality of the router's selection with its default
 * configuration (the bundled model fused with BM25F, clause matching, server boost), next to plain BM25
 * (the floor data/benchmarks/README.md gives) and to the lexical ranker alone, in one run, on:
 *   - MetaTool multi, Seal-Tools test_out_domain, BFCL live_multiple and parallel_multiple (data/benchmarks);
 *   - the team-written request set (data/requests): its dev catalogues and its held-out test catalogues,
 *     each ranked against every other catalogue, as a user with many servers would have, with the split's
 *     own general-purpose servers (team_dev, team_test) or every split's (team_dev_every_general, …).
 *
 * Ablation (printed per set, one change at a time from the defaults): the model trained without the team
 * pairs (trained here, into a temporary folder), no server boost, no clause matching, the head-then-server
 * policy, and on the team sets the use memory on a replayed history (see replayedHistory below).
 *
 * With --sweep it also prints how the fusion weight, the threshold, the server boost and the clause weight
 * move the figures (what the defaults were chosen from). --quick skips the retrained-model row.
 * The last line is JSON: {SET: {"router": {metrics}, "bm25": {metrics}}}.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LexicalRanker } from '../src/core/selection/lexicalRanker';
import { loadQueriesFile, loadToolsFile, METRIC_NAMES, retrievalMetrics, SELECTION_DEV_SETS, type DataQuery, type DataTool, type Metrics } from '../src/core/evaluation/retrievalData';
import { createSelectionEngine } from '../src/core/selection/selectionEngine';
import { catalogueFromData, creditAlternatives, creditList, evaluateSelection, needRecall, selectedAt, selectedRecall, sentAll, type QueryOutcome } from '../src/core/evaluation/selectionEvaluation';
import { rankableFor } from '../src/core/selection/toolIndex';
import { opensPage } from '../src/core/selection/generalLift';
import { DEFAULT_SELECTION_OPTIONS, type SelectionOptions } from '../src/core/selection/toolSelector';
import { replayCoverage, SwitchableUsageHints } from '../src/core/learning/coverageReplay';
import { historyRecords, REPLAY_MODEL_ID } from './evalSelectMemory';
import { otherSplitsGeneralServers, readKindLabels, serverOfId } from './data/generalKinds';
import { CATALOGUES, NON_ENGLISH_SERVERS } from './data/catalogueList';
import { roundFourFigures, roundFourTable, type RoundFourFigures } from './evalRoundFour';
import { loadInProcess } from '../src/core/embedding/onnxEmbedder';

const ROOT = path.resolve(__dirname, '..');
const DATA = path.join(ROOT, 'data', 'benchmarks');
const TEAM = path.join(ROOT, 'data', 'requests');
const RANKED = 50;
/**
 * --selection key=value (repeatable): a selection option set for every row, for trying a setting against
 * the defaults without editing code (numbers only, e.g. --selection clauseHead=3).
 */
const SELECTION_OVERRIDES: Partial<SelectionOptions> = Object.fromEntries(
  process.argv.flatMap((a, i) => (a === '--selection' ? [process.argv[i + 1] ?? ''] : [])).map((kv) => {
    const [key, value] = kv.split('=');
    if (!key || value === undefined || !Number.isFinite(Number(value))) throw new Error(`--selection needs key=number, got "${kv}"`);
    return [key, Number(value)];
  }),
);
/** The path given after `flag` on the command line, resolved; undefined without the flag. */
function pathAfter(flag: string): string | undefined {
  const at = process.argv.indexOf(flag);
  return at >= 0 ? path.resolve(process.argv[at + 1] ?? '') : undefined;
}
/** --model DIR: measure another model folder in place of the bundled one (for comparing trained variants). */
const MODEL_OVERRIDE = pathAfter('--model');
/** --needs FILE: the unnamed-needs models trained for that model (npm run train:needs -- --model DIR --out FILE). */
const NEEDS_OVERRIDE = pathAfter('--needs');

interface EvalSet {
  readonly key: string;
  readonly tools: DataTool[];
  readonly queries: DataQuery[];
  readonly team: boolean;
  /** Tools that meet a query's need as well as its gold tool (team sets: general-purpose needs). */
  readonly alternatives?: (q: DataQuery, gold: string) => readonly string[];
}

/**
 * A general-purpose need was written as a kind ("general": ["calculate"]) and stored as the split's primary
 * tool for it; every tool the team labelled with that kind in the split's catalogues meets it as well (any
 * of a calculator's operations, Playwright's navigate beside a fetch tool), and is credited as that need.
 */
function generalAlternatives(split: string): (q: DataQuery, gold: string) => readonly string[] {
  const splitOf = new Map(CATALOGUES.map((c) => [c.server, c.split]));
  const labels = readKindLabels().filter((l) => splitOf.get(serverOfId(l.tool)) === split);
  const kindOf = new Map(labels.map((l) => [l.tool, l.kind]));
  return (q, gold) => {
    if (!q.general?.includes(gold)) return [];
    const kind = kindOf.get(gold);
    return kind ? labels.filter((l) => l.kind === kind).map((l) => l.tool) : [];
  };
}

interface Row {
  readonly method: string;
  readonly metrics: Metrics;
  readonly selectedRecall?: number;
  readonly meanSelected?: number;
  /** Share of requests with every needed tool sent. */
  readonly sentAll?: number;
  /** recall@25 over unnamed general-purpose needs and over tools of non-English catalogues (team sets). */
  readonly generalRecall?: number;
  readonly nonEnglishRecall?: number;
  readonly outcomes?: readonly QueryOutcome[];
  /** The outcomes as selected, before any alternative is credited as the gold tool it stands for. */
  readonly rawOutcomes?: readonly QueryOutcome[];
}

/** Depths the coverage curve is drawn at (share of the drop from the best score to the cap-th). */
const CURVE_DEPTHS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.81, 0.82, 0.85, 0.9, 1];
const CURVE_MIN_TOOLS = [3, 5];

interface RouterRun {
  readonly selection?: Partial<SelectionOptions>;
  /** A model folder other than the bundled one. */
  readonly model?: string;
  /** The default model's vector of each query: replay the set as a history through the use memory. */
  readonly memoryVectors?: readonly Float32Array[];
}

function loadSets(): EvalSet[] {
  const sets: EvalSet[] = SELECTION_DEV_SETS.map((s) => ({
    key: s.key,
    tools: loadToolsFile(path.join(DATA, s.folder, 'tools.jsonl.gz')),
    queries: loadQueriesFile(path.join(DATA, s.folder, 'queries.jsonl.gz'), s.split),
    team: false,
  }));
  const teamTools = loadToolsFile(path.join(TEAM, 'tools.jsonl'));
  const splits = ['dev', 'test'].map((split) => ({ split, queries: loadQueriesFile(path.join(TEAM, 'queries.jsonl'), split), alternatives: generalAlternatives(split) }));
  for (const { split, queries, alternatives } of splits) {
    // A user has one general-purpose server per need: the split is ranked with its own, beside every other catalogue.
    const elsewhere = otherSplitsGeneralServers(split);
    sets.push({ key: `team_${split}`, tools: teamTools.filter((t) => !elsewhere.has(t.server ?? '')), queries, team: true, alternatives });
  }
  // Users also keep several servers of one kind (two file servers for different folders): every split's
  // general-purpose servers together, a need met only by the split's own, as when a task must use that one.
  for (const { split, queries, alternatives } of splits) sets.push({ key: `team_${split}_every_general`, tools: teamTools, queries, team: true, alternatives });
  return sets;
}

function lexicalRankings(ranker: LexicalRanker, set: EvalSet): string[][] {
  const rankings = set.queries.map((q) => ranker.rank(q.query, RANKED).map((r) => r.id));
  return set.alternatives ? creditAlternatives(set.queries, rankings, set.alternatives) : rankings;
}

async function runRouter(set: EvalSet, run: RouterRun = {}): Promise<Row & { latencyP50: number }> {
  const hints = run.memoryVectors ? new SwitchableUsageHints() : undefined;
  const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: run.model ?? MODEL_OVERRIDE ?? 'default' }, root: ROOT, ...(NEEDS_OVERRIDE ? { needsFile: NEEDS_OVERRIDE } : {}), selection: { ...SELECTION_OVERRIDES, ...(run.selection ?? {}) }, ...(hints ? { usage: hints } : {}) });
  if (engine.embedderProblem) throw new Error(`the model did not load: ${engine.embedderProblem}`);
  engine.selector.setCatalogue(catalogueFromData(set.tools));
  await engine.index?.whenReady();
  let outcomes: QueryOutcome[];
  if (run.memoryVectors && hints) {
    // Time-ordered replay: each query is ranked with a memory of the queries before it only.
    const records = historyRecords(set.queries, run.memoryVectors);
    const queryOf = new Map(records.map((r, i) => [r, i]));
    const byQuery: QueryOutcome[] = [];
    await replayCoverage(
      records,
      async (record, memory) => {
        hints.current = memory;
        const i = queryOf.get(record)!;
        const [outcome] = await evaluateSelection(engine.selector, [set.queries[i]!], RANKED);
        byQuery[i] = outcome!;
        return outcome!.selected;
      },
      { timeOrdered: { modelId: REPLAY_MODEL_ID } },
    );
    outcomes = byQuery;
  } else outcomes = await evaluateSelection(engine.selector, set.queries, RANKED);
  await engine.dispose();
  const raw = outcomes;
  if (set.alternatives) {
    const alternatives = set.alternatives;
    outcomes = outcomes.map((o, i) => {
      const q = set.queries[i]!;
      const ranked = creditList(q, o.ranked, alternatives);
      return {
        ...o,
        ranked: ranked.map((r) => r.name),
        scores: ranked.map((r) => o.scores[r.from]!),
        selected: creditList(q, o.selected, alternatives).map((r) => r.name),
        extras: creditList(q, o.extras.map((e) => e.name), alternatives).map((r) => ({ name: r.name, score: o.extras[r.from]!.score })),
      };
    });
  }
  const latencies = outcomes.map((o) => o.latencyMs).sort((a, b) => a - b);
  const rankings = outcomes.map((o) => o.ranked);
  return {
    method: 'router',
    metrics: retrievalMetrics(set.queries, rankings),
    selectedRecall: selectedRecall(set.queries, outcomes),
    meanSelected: Math.round((10 * outcomes.reduce((s, o) => s + o.selected.length, 0)) / outcomes.length) / 10,
    sentAll: sentAll(set.queries, outcomes.map((o) => o.selected)),
    ...(set.team ? { generalRecall: needRecall(set.queries, rankings, (q) => q.general ?? [], 25).recall, nonEnglishRecall: needRecall(set.queries, rankings, (q) => q.gold.filter((g) => NON_ENGLISH_SERVERS.has(serverOfId(g))), 25).recall } : {}),
    latencyP50: latencies[Math.floor(latencies.length / 2)] ?? 0,
    outcomes,
    rawOutcomes: raw,
  };
}

function table(rows: readonly Row[], team: boolean): string {
  const cell = (x: number | undefined, w: number): string => (x === undefined ? '' : x.toFixed(1)).padStart(w);
  const head = ['method'.padEnd(34), ...METRIC_NAMES.map((m) => m.padStart(10)), 'sel.recall'.padStart(11), 'sent_all'.padStart(9), 'mean_sent'.padStart(10), ...(team ? ['general@25'.padStart(11), 'non-en@25'.padStart(10)] : [])].join('');
  const lines = rows.map((r) =>
    [r.method.padEnd(34), ...METRIC_NAMES.map((m) => r.metrics[m].toFixed(1).padStart(10)), cell(r.selectedRecall, 11), cell(r.sentAll, 9), cell(r.meanSelected, 10), ...(team ? [cell(r.generalRecall, 11), cell(r.nonEnglishRecall, 10)] : [])].join(''),
  );
  return [head, ...lines].join('\n');
}

/** Coverage against tools sent, as the depth and the floor vary (the count rule's curve). */
function curve(set: EvalSet, outcomes: readonly QueryOutcome[], cap: number): string {
  const lines = [`  coverage curve (cap ${cap}): minTools   depth  mean_sent  sent_all  sel.recall`];
  for (const minTools of CURVE_MIN_TOOLS) {
    for (const depth of CURVE_DEPTHS) {
      const selected = outcomes.map((o) => selectedAt(o, depth, minTools, cap));
      const mean = selected.reduce((s, x) => s + x.length, 0) / Math.max(1, selected.length);
      const recall = selectedRecall(set.queries, selected.map((sel, i) => ({ ...outcomes[i]!, selected: sel })));
      lines.push(`  ${''.padEnd(32)}${String(minTools).padStart(2)}  ${depth.toFixed(2).padStart(6)}  ${mean.toFixed(1).padStart(9)}  ${sentAll(set.queries, selected).toFixed(1).padStart(8)}  ${recall.toFixed(1).padStart(10)}`);
    }
  }
  return lines.join('\n');
}

/** The default model's vectors for `texts`, as the selector computes them for prompts. */
async function embedAll(texts: readonly string[]): Promise<Float32Array[]> {
  const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: ROOT });
  if (!engine.index) throw new Error(`the default model did not load: ${engine.embedderProblem}`);
  const out: Float32Array[] = [];
  for (const t of texts) out.push(await engine.index.embedQuery(t));
  await engine.dispose();
  return out;
}

/** Trains the default model without the team pairs into a temporary folder (deterministic, ~1 minute). */
function trainWithoutTeamPairs(): string {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tool-router-model-no-team-'));
  process.stdout.write('training the model without the team pairs, for the ablation…\n');
  execFileSync(process.execPath, [require.resolve('tsx/cli'), path.join(ROOT, 'scripts', 'model', 'trainModel.ts'), '--set', 'team=0', '--out', out], { stdio: ['ignore', 'ignore', 'inherit'] });
  return out;
}

async function main(): Promise<void> {
  const sweep = process.argv.includes('--sweep');
  const quick = process.argv.includes('--quick');
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt >= 0 ? new Set((process.argv[onlyAt + 1] ?? '').split(',')) : undefined;
  const sets = loadSets().filter((s) => !only || only.has(s.key));
  const withoutPairs = quick ? undefined : trainWithoutTeamPairs();
  const summary: Record<string, { router: Record<string, number>; bm25: Metrics }> = {};
  try {
    for (const set of sets) {
      const rankable = catalogueFromData(set.tools).map(rankableFor);
      const bm25 = retrievalMetrics(set.queries, lexicalRankings(new LexicalRanker(rankable, { plainBm25: true }), set));
      const lexical = retrievalMetrics(set.queries, lexicalRankings(new LexicalRanker(rankable), set));
      const router = await runRouter(set);
      const rows: Row[] = [{ method: 'BM25 (README floor)', metrics: bm25 }, { method: 'lexical BM25F alone', metrics: lexical }, router];
      if (withoutPairs) rows.push({ ...(await runRouter(set, { model: withoutPairs })), method: '− team pairs (model without them)' });
      rows.push({ ...(await runRouter(set, { selection: { generalBoost: 0 } })), method: '− unnamed needs' });
      rows.push({ ...(await runRouter(set, { selection: { clauseHead: 0 } })), method: '− clause heads (count rule)' });
      rows.push({ ...(await runRouter(set, { selection: { stepHead: 0 } })), method: '− step shares' });
      rows.push({ ...(await runRouter(set, { selection: { companionHead: 0 } })), method: '− companion listers' });
      rows.push({ ...(await runRouter(set, { selection: { crossScript: 0 } })), method: '− cross-script fusion' });
      rows.push({ ...(await runRouter(set, { selection: { fileTypes: 0 } })), method: '− file types' });
      rows.push({ ...(await runRouter(set, { selection: { spelling: 0 } })), method: '− spelling tolerance' });
      rows.push({ ...(await runRouter(set, { selection: { serverBoost: 0 } })), method: '− server boost' });
      rows.push({ ...(await runRouter(set, { selection: { promptServerLift: 0 } })), method: '− named apps (one-step prompts)' });
      rows.push({ ...(await runRouter(set, { selection: { lexicalSdFloor: 0 } })), method: '− lexical spread floor' });
      rows.push({ ...(await runRouter(set, { selection: { pageOpeners: 0 } })), method: '− page openers' });
      rows.push({ ...(await runRouter(set, { selection: { pageHands: 0 } })), method: '− page hands' });
      rows.push({ ...(await runRouter(set, { selection: { clauseWeight: 0 } })), method: '− clause matching' });
      rows.push({ ...(await runRouter(set, { selection: { serverPolicy: { head: 10, fill: 5, perServerCap: 12 } } })), method: '+ head-then-server policy' });
      if (set.team) {
        const vectors = await embedAll(set.queries.map((q) => q.query));
        rows.push({ ...(await runRouter(set, { memoryVectors: vectors })), method: '+ use memory (replayed history)' });
      }
      if (process.argv.includes('--general-sweep')) {
        for (const generalBoost of [12, 16]) {
          for (const generalToolMin of [0.2, 0.35]) rows.push({ ...(await runRouter(set, { selection: { generalBoost, generalNeedMin: 0.15, generalToolMin } })), method: `general boost ${generalBoost}, tool ≥ ${generalToolMin}` });
        }
      }
      if (sweep) {
        for (const w of [0.3, 0.4, 0.6]) rows.push({ ...(await runRouter(set, { selection: { lexicalWeight: w } })), method: `lexical weight ${w}` });
        for (const b of [0.25, 0.75, 1]) rows.push({ ...(await runRouter(set, { selection: { serverBoost: b } })), method: `server boost ${b}` });
        for (const c of [0.2, 0.5]) rows.push({ ...(await runRouter(set, { selection: { clauseWeight: c } })), method: `clause weight ${c}` });
      }
      console.log(`\n${set.key}: ${set.queries.length} queries, ${set.tools.length} tools (router p50 ${router.latencyP50.toFixed(2)} ms per query)`);
      console.log(table(rows, set.team));
      console.log(curve(set, router.outcomes ?? [], DEFAULT_SELECTION_OPTIONS.cap));
      const browserTools = new Set(readKindLabels().filter((l) => (l.kind as string) === 'browser').map((l) => l.tool));
      // Of the browser tools, those that open a page: browsing a site starts there.
      const openers = new Set(catalogueFromData(set.tools).filter((t) => browserTools.has(t.name) && opensPage(t)).map((t) => t.name));
      const roundFour: RoundFourFigures | undefined = set.team ? roundFourFigures(set.queries, router.outcomes ?? [], browserTools, { raw: router.rawOutcomes ?? [], openers }) : undefined;
      if (roundFour) console.log(roundFourTable(roundFour));
      const dumpAt = process.argv.indexOf('--dump-outcomes');
      if (dumpAt >= 0) fs.writeFileSync(path.join(process.argv[dumpAt + 1] ?? '.', `${set.key}.json`), JSON.stringify({ queries: set.queries, outcomes: router.outcomes, raw: router.rawOutcomes }));
      summary[set.key] = {
        router: {
          ...router.metrics,
          sent_all: router.sentAll ?? 0,
          mean_sent: router.meanSelected ?? 0,
          ...(set.team ? { 'general_recall@25': router.generalRecall ?? 0, 'non_english_recall@25': router.nonEnglishRecall ?? 0 } : {}),
          ...(roundFour ? { 'browser_recall@25': roundFour['browser_recall@25'], browser_opener_sent: roundFour.browser_opener_sent, 'names_recall@25': roundFour['names_recall@25'], steps_group_sent_all: roundFour.groups['steps']?.sent_all ?? 0, steps_group_mean_sent: roundFour.groups['steps']?.mean_sent ?? 0 } : {}),
          ...(roundFour?.pageTasks ? { page_tasks_sent_all: roundFour.pageTasks.sent_all, page_tasks_mean_sent: roundFour.pageTasks.mean_sent } : {}),
        },
        bm25,
      };
    }
  } finally {
    if (withoutPairs) fs.rmSync(withoutPairs, { recursive: true, force: true });
  }
  console.log(JSON.stringify(summary));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
