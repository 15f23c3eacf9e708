/**
 * `npm run bench:tokens`: the tool-definition tokens the default selection sends per turn, against
 * sending every tool, with the coverage of needed tools at that budget, in one run.
 *
 * Sets: MetaTool multi, Seal-Tools test_out_domain, BFCL live_multiple and parallel_multiple (whole
 * catalogues from data/benchmarks), and the reference servers' real catalogue: server-everything,
 * server-memory and server-filesystem started under the router, with the hand-written prompts of
 * REFERENCE_PROMPTS below. Tokens are the seeds' estimate (estimateToolTokens: name + description +
 * schema, 4 characters a token) of each tool as a model would receive it; coverage is the share of a
 * prompt's needed tools in the selected set, averaged over prompts, in percent.
 * The last line is JSON: {SET: {"tokens_selected", "tokens_all", "coverage"}}.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseMcpConfig } from '../src/core/config/mcpConfigParser';
import { loadQueriesFile, loadToolsFile, SELECTION_DEV_SETS, type DataQuery } from '../src/core/evaluation/retrievalData';
import { createSelectionEngine } from '../src/core/selection/selectionEngine';
import { catalogueFromData } from '../src/core/evaluation/selectionEvaluation';
import { estimateToolTokens, type SelectableTool, type Selection } from '../src/core/selection/selectionTypes';
import { ToolRouter } from '../src/core/router/toolRouter';
import { loadInProcess } from '../src/core/embedding/onnxEmbedder';

const ROOT = path.resolve(__dirname, '..', '..');
const DATA = path.join(ROOT, 'data', 'benchmarks');
const SERVERS = path.join(ROOT, 'node_modules', '@modelcontextprotocol');
const DEV_SETS = SELECTION_DEV_SETS;
const REFERENCE_SET = 'reference_servers';
/** The reference servers' first start can be slow; they are local, so a minute is plenty. */
const SERVER_START_MS = 60_000;

/**
 * Prompts a person would type while working with the three reference servers, each with the tools it
 * needs (by exposed name). Written for this bench from the servers' documentation, not from the
 * selector's output. Three need tools marked destructive (write_file, move_file, edit_file): the default
 * policy ("confirm") offers them and asks before they run, and only "never" leaves them out; the lines
 * below say how many needed destructive tools the selection missed.
 */
const REFERENCE_PROMPTS: ReadonlyArray<{ readonly prompt: string; readonly needs: readonly string[] }> = [
  { prompt: 'Read notes/todo.md and tell me what is still left to do', needs: ['filesystem_read_text_file'] },
  { prompt: 'What files are in the project folder?', needs: ['filesystem_list_directory'] },
  { prompt: 'Find all the JSON config files anywhere in the workspace', needs: ['filesystem_search_files'] },
  { prompt: 'Show me the directory structure of src as a tree', needs: ['filesystem_directory_tree'] },
  { prompt: 'Open package.json and README.md side by side so we can compare the versions', needs: ['filesystem_read_multiple_files'] },
  { prompt: 'How big is recording.mp4 and when was it last modified?', needs: ['filesystem_get_file_info'] },
  { prompt: 'Show me the picture in assets/logo.png', needs: ['filesystem_read_media_file'] },
  { prompt: 'Save this summary to report.md', needs: ['filesystem_write_file'] },
  { prompt: 'Make a folder called archive and move old-log.txt into it', needs: ['filesystem_create_directory', 'filesystem_move_file'] },
  { prompt: 'Fix the typo "recieve" in src/app.ts', needs: ['filesystem_read_text_file', 'filesystem_edit_file'] },
  { prompt: 'Remember that Alice is the tech lead of the payments team', needs: ['memory_create_entities'] },
  { prompt: 'Record that Alice manages Bob', needs: ['memory_create_relations'] },
  { prompt: 'Add a note to what you know about Carol: she moved to the Berlin office', needs: ['memory_add_observations'] },
  { prompt: 'What do you remember about Bob?', needs: ['memory_search_nodes'] },
  { prompt: 'Look up what we stored about the Acme project and add that the deadline moved to March', needs: ['memory_search_nodes', 'memory_add_observations'] },
  { prompt: 'Show me everything in my knowledge graph', needs: ['memory_read_graph'] },
  { prompt: 'Echo back the text "ping" so I can test the connection', needs: ['everything_echo'] },
  { prompt: 'What is 1234 plus 5678?', needs: ['everything_get-sum'] },
  { prompt: 'Which environment variables does the test server run with?', needs: ['everything_get-env'] },
  { prompt: 'Compress the file at https://example.com/data.csv with gzip', needs: ['everything_gzip-file-as-resource'] },
];

interface SetResult {
  readonly tokens_selected: number;
  readonly tokens_all: number;
  readonly coverage: number;
}

/** A tool as the model receives it: its real name (dev-set catalogues key tools by id), description and schema. */
function definitionTokens(tool: SelectableTool): number {
  return estimateToolTokens({ ...tool, name: tool.originalName ?? tool.name });
}

/** Selects for every query and sums what each turn would send; `needs` are the tools each query needs. */
async function measure(key: string, catalogue: readonly SelectableTool[], queries: readonly DataQuery[]): Promise<SetResult> {
  const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: ROOT });
  if (engine.embedderProblem) throw new Error(`the default model did not load: ${engine.embedderProblem}`);
  engine.selector.setCatalogue(catalogue);
  await engine.index?.whenReady();
  const byName = new Map(catalogue.map((t) => [t.name, t]));
  const tokensAll = catalogue.reduce((sum, t) => sum + definitionTokens(t), 0);
  let tokensSelected = 0;
  let toolsSelected = 0;
  let coverageSum = 0;
  let covered = 0;
  let lostToDestructive = 0;
  const misses: string[] = [];
  for (const q of queries) {
    const selection: Selection = await engine.selector.select({ prompt: q.query });
    if (selection.method !== 'embedding+keyword') throw new Error(`${key}: selection fell back to ${selection.method}: ${selection.methodNote ?? ''}`);
    tokensSelected += selection.tools.reduce((sum, t) => sum + definitionTokens(byName.get(t.name)!), 0);
    toolsSelected += selection.tools.length;
    if (q.gold.length === 0) continue;
    const sent = new Set(selection.tools.map((t) => t.name));
    const missing = q.gold.filter((g) => !sent.has(g));
    coverageSum += (q.gold.length - missing.length) / q.gold.length;
    covered++;
    // Under the default policy ("confirm") destructive tools are offered, so a missed one was ranked out.
    lostToDestructive += missing.filter((g) => byName.get(g)?.annotations?.destructiveHint).length;
    if (missing.length > 0) misses.push(`"${q.query}" → ${missing.join(', ')}`);
  }
  await engine.dispose();
  const n = Math.max(queries.length, 1);
  const result: SetResult = {
    tokens_selected: Math.round(tokensSelected / n),
    tokens_all: tokensAll,
    coverage: Math.round((1000 * coverageSum) / Math.max(covered, 1)) / 10,
  };
  const ratio = result.tokens_selected / Math.max(result.tokens_all, 1);
  console.log(`\n${key}: ${queries.length} prompts, ${catalogue.length} tools`);
  console.log(`  tokens per turn  selected ${result.tokens_selected} (${(toolsSelected / n).toFixed(1)} tools)   all ${result.tokens_all}   ratio ${ratio.toFixed(4)} (${(1 / Math.max(ratio, 1e-9)).toFixed(1)}x fewer)`);
  console.log(`  coverage         ${result.coverage.toFixed(1)}% of needed tools in the selected set${lostToDestructive ? `; ${lostToDestructive} of the missed tools are destructive (offered under the default "confirm" policy, left out only under "never")` : ''}`);
  // The dev sets miss hundreds; the reference prompts are few enough to read each miss.
  if (key === REFERENCE_SET) for (const miss of misses) console.log(`  missed: ${miss}`);
  return result;
}

/** The real tools of server-everything, server-memory and server-filesystem, as the router exposes them. */
async function referenceCatalogue(workdir: string): Promise<{ tools: SelectableTool[]; router: ToolRouter }> {
  const config = {
    servers: {
      everything: { command: process.execPath, args: [path.join(SERVERS, 'server-everything', 'dist', 'index.js'), 'stdio'] },
      memory: { command: process.execPath, args: [path.join(SERVERS, 'server-memory', 'dist', 'index.js')], env: { MEMORY_FILE_PATH: path.join(workdir, 'memory.jsonl') } },
      filesystem: { command: process.execPath, args: [path.join(SERVERS, 'server-filesystem', 'dist', 'index.js'), workdir] },
    },
  };
  const parsed = await parseMcpConfig(JSON.stringify(config), { file: 'tokenBench', workspaceFolder: workdir });
  const errors = parsed.issues.filter((i) => i.severity === 'error');
  if (errors.length > 0) throw new Error(`the bench's server config has errors: ${JSON.stringify(errors)}`);
  const router = new ToolRouter();
  await router.applyConfig(parsed.servers);
  await router.whenSettled(SERVER_START_MS);
  const down = router.serverStatuses.filter((s) => s.state !== 'ready');
  if (down.length > 0) throw new Error(`reference servers not ready: ${down.map((s) => `${s.name} (${s.state}${s.reason ? `: ${s.reason}` : ''})`).join(', ')}`);
  return { tools: router.listTools(), router };
}

async function main(): Promise<void> {
  const summary: Record<string, SetResult> = {};
  for (const set of DEV_SETS) {
    const tools = loadToolsFile(path.join(DATA, set.folder, 'tools.jsonl.gz'));
    const queries = loadQueriesFile(path.join(DATA, set.folder, 'queries.jsonl.gz'), set.split);
    summary[set.key] = await measure(set.key, catalogueFromData(tools), queries);
  }

  const workdir = mkdtempSync(path.join(tmpdir(), 'token-bench-'));
  const { tools, router } = await referenceCatalogue(workdir);
  try {
    const names = new Set(tools.map((t) => t.name));
    const unknown = REFERENCE_PROMPTS.flatMap((p) => p.needs).filter((n) => !names.has(n));
    if (unknown.length > 0) throw new Error(`the reference prompts name tools the servers no longer have: ${[...new Set(unknown)].join(', ')}`);
    const queries: DataQuery[] = REFERENCE_PROMPTS.map((p, i) => ({ id: `ref-${i + 1}`, split: REFERENCE_SET, query: p.prompt, gold: p.needs }));
    summary[REFERENCE_SET] = await measure(REFERENCE_SET, tools, queries);
  } finally {
    await router.dispose();
    rmSync(workdir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(summary));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
