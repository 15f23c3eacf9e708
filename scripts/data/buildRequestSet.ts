/**
 * Builds the team-written request set in data/requests, in the data/benchmarks format.
 *
 *   npx tsx scripts/data/buildRequestSet.ts catalogues   # tools.jsonl + catalogues.json from the sources
 *   npx tsx scripts/data/buildRequestSet.ts              # queries.jsonl from written/*.jsonl, checked
 *   npx tsx scripts/data/buildRequestSet.ts --check      # check only: fails if queries.jsonl is stale
 *   npx tsx scripts/data/buildRequestSet.ts --only calendar cross-a   # check some written files
 *
 * Tools: real MCP servers' saved tool lists (test/fixtures/catalogues) and OpenAPI operations turned into
 * server-like catalogues, the way OpenAPI-to-MCP generators do (operationId → tool name, summary and
 * description → description, parameters → a string-typed input schema).
 *
 * Requests: written/*.jsonl, one `{"query", "gold": ["server_tool", …]}` a line, written by the team
 * (see data/requests/README.md), optionally with `general` kinds, `steps` (1–6) and a `group`. Every gold tool must exist, and every tool of a request must belong to
 * catalogues of one split: a request spanning a train and a test server would leak the test server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readJsonl } from '../../src/core/evaluation/retrievalData';
import { CATALOGUES, type Catalogue, type CatalogueSplit } from './catalogueList';
import { isGeneralKind, kindProviders } from './generalKinds';
import { describeError } from '../../src/core/errors/describeError';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'data', 'requests');
const OPENAPI = path.join(ROOT, 'data', 'benchmarks', 'openapi', 'operations.jsonl.gz');
/** MCP clients show names up to 64 characters; longer generated names keep their last segments. */
const MAX_TOOL_NAME = 64;
/** Long OpenAPI descriptions are cut at a sentence near here: generated servers' descriptions rarely run longer. */
const MAX_DESCRIPTION = 500;
/** A request needing more tools than this is a plan, not a request; the writers were asked for 1–5. */
const MAX_GOLD = 6;
/** `steps` counts what a task asks for, tools and unnamed needs alike, so it has the same ceiling. */
const MAX_STEPS = MAX_GOLD;
/** What a round-four request was written to exercise (see data/requests/README.md). */
export const REQUEST_GROUPS = ['browse', 'dates', 'document', 'names', 'steps'] as const;
export type RequestGroup = (typeof REQUEST_GROUPS)[number];

interface Operation {
  api: string;
  title: string;
  method: string;
  path: string;
  operationId: string | null;
  summary: string;
  description: string;
  params: Array<{ name: string; in: string; description: string }>;
  spec_license: string;
}

export interface RequestTool {
  id: string;
  name: string;
  description: string;
  inputSchema: unknown;
  server: string;
}

function readOperations(): Map<string, Operation[]> {
  const byApi = new Map<string, Operation[]>();
  for (const op of readJsonl<Operation>(OPENAPI)) {
    let list = byApi.get(op.api);
    if (!list) byApi.set(op.api, (list = []));
    list.push(op);
  }
  return byApi;
}

function cleanText(s: string): string {
  return s
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // markdown links → their text
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function cutAtSentence(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, max);
  const stop = cut.lastIndexOf('. ');
  return stop > max / 2 ? cut.slice(0, stop + 1) : `${cut.trimEnd()}…`;
}

function toolNameOf(op: Operation, apiKey: string): string {
  let raw: string;
  if (op.operationId) {
    const segments = op.operationId.split('.');
    // Google operation ids start with the API's own name ("calendar.events.insert"): a server prefix does that job.
    const apiName = apiKey.split('/').pop()!.toLowerCase();
    if (segments.length > 1 && segments[0]!.toLowerCase() === apiName) segments.shift();
    raw = segments.join('_');
  } else {
    raw = `${op.method.toLowerCase()}_${op.path.replace(/[{}]/g, '')}`;
  }
  let name = raw.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/_+/g, '_').replace(/^_|_$/g, '');
  while (name.length > MAX_TOOL_NAME && name.includes('_')) name = name.slice(name.indexOf('_') + 1);
  return name.slice(0, MAX_TOOL_NAME);
}

function openApiTools(server: string, apiKey: string, ops: readonly Operation[]): RequestTool[] {
  const used = new Set<string>();
  return ops.map((op) => {
    let name = toolNameOf(op, apiKey);
    for (let n = 2; used.has(name); n++) name = `${toolNameOf(op, apiKey)}_${n}`;
    used.add(name);
    const summary = cleanText(op.summary);
    const body = cleanText(op.description);
    const description = cutAtSentence(summary && body && !body.startsWith(summary) ? `${summary}${/[.!?]$/.test(summary) ? '' : '.'} ${body}` : summary || body || `${op.method} ${op.path}`, MAX_DESCRIPTION);
    const properties: Record<string, { type: string; description?: string }> = {};
    const required: string[] = [];
    for (const p of op.params) {
      if (!p.name || properties[p.name]) continue;
      const d = cleanText(p.description ?? '');
      properties[p.name] = d ? { type: 'string', description: cutAtSentence(d, 200) } : { type: 'string' };
      if (p.in === 'path') required.push(p.name);
    }
    const inputSchema = { type: 'object', properties, ...(required.length ? { required } : {}) };
    return { id: `${server}_${name}`, name, description, inputSchema, server };
  });
}

function mcpTools(server: string, fixture: string): RequestTool[] {
  const file = path.join(ROOT, 'test', 'fixtures', 'catalogues', fixture);
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { tools: Array<{ name: string; description: string; inputSchema: unknown }> };
  return saved.tools.map((t) => ({ id: `${server}_${t.name}`, name: t.name, description: t.description, inputSchema: t.inputSchema, server }));
}

function buildCatalogues(): void {
  const ops = readOperations();
  const tools: RequestTool[] = [];
  const summary: Array<Record<string, unknown>> = [];
  for (const c of CATALOGUES) {
    let list: RequestTool[];
    let source: Record<string, unknown>;
    if (c.kind === 'mcp') {
      list = mcpTools(c.server, c.fixture);
      source = { fixture: `test/fixtures/catalogues/${c.fixture}` };
    } else {
      const apiOps = ops.get(c.api);
      if (!apiOps) throw new Error(`OpenAPI api "${c.api}" (catalogue ${c.server}) is not in ${OPENAPI}`);
      list = openApiTools(c.server, c.api, apiOps);
      source = { openapi: c.api, title: apiOps[0]!.title, license: apiOps[0]!.spec_license };
    }
    tools.push(...list);
    const extra = c.kind === 'mcp' ? { ...(c.general ? { general: true } : {}), ...(c.language ? { language: c.language } : {}) } : {};
    summary.push({ server: c.server, split: c.split, tools: list.length, ...extra, ...source });
  }
  const ids = new Set<string>();
  for (const t of tools) {
    if (ids.has(t.id)) throw new Error(`duplicate tool id ${t.id}`);
    ids.add(t.id);
  }
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'tools.jsonl'), tools.map((t) => JSON.stringify(t)).join('\n') + '\n');
  fs.writeFileSync(path.join(OUT, 'catalogues.json'), `${JSON.stringify(summary, null, 1)}\n`);
  process.stdout.write(`${CATALOGUES.length} catalogues, ${tools.length} tools → data/requests/tools.jsonl\n`);
}

interface Written {
  query: string;
  gold: string[];
  /** General-purpose kinds the request needs without naming them (see generalKinds.ts). */
  general?: string[];
  /** How many steps the task takes, as its writer counted them (1–6). */
  steps?: unknown;
  /** What the request was written to exercise (REQUEST_GROUPS). */
  group?: unknown;
}

export interface BuiltQuery {
  id: string;
  split: CatalogueSplit;
  query: string;
  gold: string[];
  /** The gold tools that stand for unnamed general-purpose needs. */
  general?: string[];
  /** Every general-purpose kind the request needs, including kinds no server of its split provides. */
  kinds?: string[];
  steps?: number;
  group?: RequestGroup;
}

/** The optional `steps` and `group` of a written line, or what is wrong with them. */
function stepsAndGroup(w: Written): { steps?: number; group?: RequestGroup } | string {
  const out: { steps?: number; group?: RequestGroup } = {};
  if (w.steps !== undefined) {
    if (typeof w.steps !== 'number' || !Number.isInteger(w.steps) || w.steps < 1 || w.steps > MAX_STEPS) return `"steps" must be a whole number from 1 to ${MAX_STEPS}, not ${JSON.stringify(w.steps)}`;
    out.steps = w.steps;
  }
  if (w.group !== undefined) {
    if (typeof w.group !== 'string' || !(REQUEST_GROUPS as readonly string[]).includes(w.group)) return `"group" must be one of ${REQUEST_GROUPS.join(', ')}, not ${JSON.stringify(w.group)}`;
    out.group = w.group as RequestGroup;
  }
  return out;
}

/** A file named `general-<split>…` holds requests of that split; general-only requests take it from there. */
const SPLIT_IN_NAME = /(?:^|-)(train|dev|test)(?:-|$)/;

/**
 * Reads and checks every written file (of `dir`, data/requests/written by default); throws naming the file
 * and line of each problem.
 */
export function assembleQueries(only?: ReadonlySet<string>, quiet = false, dir = path.join(OUT, 'written')): BuiltQuery[] {
  const tools = readJsonl<RequestTool>(path.join(OUT, 'tools.jsonl'));
  const serverOf = new Map(tools.map((t) => [t.id, t.server]));
  const splitOf = new Map<string, CatalogueSplit>(CATALOGUES.map((c: Catalogue) => [c.server, c.split]));
  const providers = kindProviders();
  const unresolved = new Map<string, number>();
  const out: BuiltQuery[] = [];
  const seen = new Map<string, string>();
  const problems: string[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()) {
    const stem = file.replace(/\.jsonl$/, '');
    if (only && !only.has(stem)) continue;
    const lines = fs.readFileSync(path.join(dir, file), 'utf8').split('\n');
    let n = 0;
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      const where = `written/${file}:${i + 1}`;
      let w: Written;
      try {
        w = JSON.parse(line) as Written;
      } catch (e) {
        problems.push(`${where}: not JSON (${describeError(e)})`);
        return;
      }
      if (typeof w.query !== 'string' || w.query.trim().length < 3) return void problems.push(`${where}: "query" must be a non-empty string`);
      const extra = stepsAndGroup(w);
      if (typeof extra === 'string') return void problems.push(`${where}: ${extra}`);
      const kinds = w.general ?? [];
      if (!Array.isArray(kinds) || kinds.some((k) => typeof k !== 'string' || !isGeneralKind(k))) return void problems.push(`${where}: "general" must list kinds of general-purpose need`);
      if (!Array.isArray(w.gold) || w.gold.length + kinds.length === 0 || w.gold.length + kinds.length > MAX_GOLD) return void problems.push(`${where}: "gold" and "general" must list 1–${MAX_GOLD} needs`);
      const unknown = w.gold.filter((g) => !serverOf.has(g));
      if (unknown.length) return void problems.push(`${where}: unknown tool id(s) ${unknown.join(', ')}`);
      const splits = new Set(w.gold.map((g) => splitOf.get(serverOf.get(g)!)!));
      if (splits.size === 0 && kinds.length) {
        const named = SPLIT_IN_NAME.exec(stem)?.[1] as CatalogueSplit | undefined;
        if (!named) return void problems.push(`${where}: a request with only general needs must be in a file named for its split (general-train…)`);
        splits.add(named);
      }
      if (splits.size > 1) return void problems.push(`${where}: tools from catalogues of different splits (${[...splits].join(', ')})`);
      const split = [...splits][0]!;
      // A kind no server of the split provides (none could be found on npm that starts offline) stays in
      // `kinds`, for the prompt model, but cannot be gold; a request left with no gold is not kept.
      const general: string[] = [];
      for (const kind of new Set(kinds)) {
        const tool = providers.get(split)?.get(kind as never);
        if (tool) general.push(tool);
        else unresolved.set(`${split} ${kind}`, (unresolved.get(`${split} ${kind}`) ?? 0) + 1);
      }
      const gold = [...new Set([...w.gold, ...general])];
      const key = w.query.trim().toLowerCase();
      if (seen.has(key)) return void problems.push(`${where}: same query as ${seen.get(key)}`);
      seen.set(key, where);
      if (gold.length === 0) return;
      out.push({ id: `${stem}-${++n}`, split, query: w.query.trim(), gold, ...(general.length ? { general } : {}), ...(kinds.length ? { kinds: [...new Set(kinds)] } : {}), ...extra });
    });
  }
  if (problems.length) throw new Error(`${problems.length} problem(s) in data/requests/written:\n${problems.slice(0, 50).join('\n')}`);
  if (unresolved.size && !quiet) process.stderr.write(`kinds no general-purpose server of the split provides (kept in "kinds", not in gold): ${[...unresolved].map(([k, n]) => `${k} ×${n}`).join(', ')}\n`);
  return out;
}

function stats(queries: readonly BuiltQuery[]): string {
  const bySplit = new Map<string, number>();
  const bySize = new Map<number, number>();
  let words = 0;
  for (const q of queries) {
    bySplit.set(q.split, (bySplit.get(q.split) ?? 0) + 1);
    bySize.set(q.gold.length, (bySize.get(q.gold.length) ?? 0) + 1);
    words += q.query.split(/\s+/).length;
  }
  const fmt = (m: Map<string | number, number>): string => [...m].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).map(([k, v]) => `${k}: ${v}`).join(', ');
  return `${queries.length} requests (${fmt(bySplit as Map<string | number, number>)}); tools needed (${fmt(bySize as Map<string | number, number>)}); ${(words / Math.max(1, queries.length)).toFixed(1)} words on average`;
}

function main(): void {
  const arg = process.argv[2];
  if (arg === 'catalogues') return buildCatalogues();
  if (arg === '--only') {
    // Checks the named written files (without .jsonl) and prints their figures; writes nothing.
    const queries = assembleQueries(new Set(process.argv.slice(3)));
    process.stdout.write(`ok: ${stats(queries)}\n`);
    return;
  }
  const queries = assembleQueries();
  const text = queries.map((q) => JSON.stringify(q)).join('\n') + '\n';
  const file = path.join(OUT, 'queries.jsonl');
  if (arg === '--check') {
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (current !== text) throw new Error('data/requests/queries.jsonl is not what written/*.jsonl give; run npx tsx scripts/data/buildRequestSet.ts');
    process.stdout.write(`queries.jsonl is current: ${stats(queries)}\n`);
    return;
  }
  fs.writeFileSync(file, text);
  process.stdout.write(`${stats(queries)} → data/requests/queries.jsonl\n`);
}

if (require.main === module) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`${describeError(e)}\n`);
    process.exit(1);
  }
}
