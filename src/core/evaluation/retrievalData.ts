import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import type { RankableTool } from '../selection/toolDocument';
import { describeError } from '../errors/describeError';

/**
 * Tool catalogues and labelled queries in the shared data format (below), and the
 * retrieval metrics every evaluation prints. Used by `mcp-tool-router eval`, eval:model and eval:select,
 * so all of them read data and score rankings the same way.
 *
 * tools.jsonl:   {id, name, description, parameters | inputSchema, server?}
 * queries.jsonl: {id, split, query, gold: [tool ids]}
 */

export interface DataTool extends RankableTool {
  readonly description: string;
  readonly server?: string;
}

export interface DataQuery {
  readonly id: string;
  readonly split: string;
  readonly query: string;
  readonly gold: readonly string[];
  /** The gold tools that stand for unnamed general-purpose needs (the team set only). */
  readonly general?: readonly string[];
  /**
   * The general-purpose kinds of need the request has without naming them (the team set only), including
   * kinds that no catalogue of its split provides and that are therefore not in `general`.
   */
  readonly kinds?: readonly string[];
  /** How many steps the task has, as its writer counted them (round-four team requests). */
  readonly steps?: number;
  /** Which round-four group the request was written for: browse, dates, document, names or steps. */
  readonly group?: string;
}

export class DataFormatError extends Error {}

/** Reads a JSON-lines file (gzip when it ends in .gz); a bad line is an error naming the file and line. */
export function readJsonl<T>(file: string): T[] {
  let raw: string;
  try {
    raw = file.endsWith('.gz') ? zlib.gunzipSync(fs.readFileSync(file)).toString('utf8') : fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new DataFormatError(`Cannot read ${file}: ${describeError(error)}`);
  }
  const out: T[] = [];
  raw.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      out.push(JSON.parse(line) as T);
    } catch (error) {
      throw new DataFormatError(`${file}, line ${i + 1}: not valid JSON (${describeError(error)}).`);
    }
  });
  return out;
}

/**
 * Seal-Tools gives parameters as a flat `{name: {type, description}}` map and BFCL as a schema of type
 * "dict"; both become a JSON-schema object so every consumer reads one shape, like an MCP tool's.
 */
export function toInputSchema(raw: { parameters?: unknown; inputSchema?: unknown }): unknown {
  if (raw.inputSchema !== undefined) return raw.inputSchema;
  const p = raw.parameters;
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return undefined;
  const params = p as Record<string, unknown>;
  if (typeof params['properties'] === 'object' && params['properties'] !== null) return { ...params, type: 'object' };
  return { type: 'object', properties: params };
}

export function loadToolsFile(file: string): DataTool[] {
  const seen = new Set<string>();
  return readJsonl<Record<string, unknown>>(file).map((t, i) => {
    const id = t['id'];
    const name = t['name'];
    if (typeof id !== 'string' && typeof id !== 'number') throw new DataFormatError(`${file}, tool ${i + 1}: "id" must be a string.`);
    if (typeof name !== 'string') throw new DataFormatError(`${file}, tool ${i + 1} (id ${String(id)}): "name" must be a string.`);
    const key = String(id);
    if (seen.has(key)) throw new DataFormatError(`${file}: the id "${key}" is used twice; ids must be unique.`);
    seen.add(key);
    return {
      id: key,
      name,
      description: typeof t['description'] === 'string' ? t['description'] : '',
      inputSchema: toInputSchema(t as { parameters?: unknown; inputSchema?: unknown }),
      ...(typeof t['server'] === 'string' ? { server: t['server'] } : {}),
    };
  });
}

export function loadQueriesFile(file: string, split?: string): DataQuery[] {
  return readJsonl<Record<string, unknown>>(file)
    .filter((q) => split === undefined || q['split'] === split)
    .map((q, i) => {
      if (typeof q['query'] !== 'string') throw new DataFormatError(`${file}, query ${i + 1}: "query" must be a string.`);
      const gold = Array.isArray(q['gold']) ? q['gold'].map(String) : [];
      const general = Array.isArray(q['general']) ? q['general'].map(String) : undefined;
      const kinds = Array.isArray(q['kinds']) && q['kinds'].length > 0 ? q['kinds'].map(String) : undefined;
      const steps = typeof q['steps'] === 'number' ? q['steps'] : undefined;
      const group = typeof q['group'] === 'string' ? q['group'] : undefined;
      return { id: String(q['id'] ?? i + 1), split: String(q['split'] ?? ''), query: q['query'], gold, ...(general ? { general } : {}), ...(kinds ? { kinds } : {}), ...(steps !== undefined ? { steps } : {}), ...(group ? { group } : {}) };
    });
}

/**
 * The public dev sets selection is measured on: eval:select, bench:tokens and, for the first
 * three, eval:model. None of them is ever trained on.
 */
export const SELECTION_DEV_SETS = [
  { key: 'metatool_multi', label: 'metatool multi', folder: 'metatool', split: 'multi' },
  { key: 'seal_test_out_domain', label: 'seal-tools test_out_domain', folder: 'seal-tools', split: 'test_out_domain' },
  { key: 'bfcl_live_multiple', label: 'bfcl live_multiple', folder: 'bfcl', split: 'live_multiple' },
  { key: 'bfcl_parallel_multiple', label: 'bfcl parallel_multiple', folder: 'bfcl', split: 'parallel_multiple' },
] as const;

export type MetricName = 'recall@5' | 'recall@10' | 'recall@25' | 'all@25' | 'ndcg@10';
export const METRIC_NAMES: readonly MetricName[] = ['recall@5', 'recall@10', 'recall@25', 'all@25', 'ndcg@10'];
export type Metrics = Record<MetricName, number>;

/**
 * Metrics in percent over queries. recall@k: per query, the share of its needed tools in the top k,
 * averaged; all@k: share of queries with every needed tool in the top k; nDCG@10 with binary gains.
 * `rankings[i]` is the tool ids in rank order for `queries[i]` (at least the top 25). Queries without
 * gold tools are skipped.
 */
export function retrievalMetrics(queries: readonly DataQuery[], rankings: ReadonlyArray<readonly string[]>): Metrics {
  const sums: Metrics = { 'recall@5': 0, 'recall@10': 0, 'recall@25': 0, 'all@25': 0, 'ndcg@10': 0 };
  let counted = 0;
  queries.forEach((q, i) => {
    const gold = new Set(q.gold);
    if (gold.size === 0) return;
    counted++;
    const ranking = rankings[i] ?? [];
    const position = new Map<string, number>();
    ranking.slice(0, 25).forEach((id, r) => {
      if (!position.has(id)) position.set(id, r);
    });
    const hitsWithin = (k: number): number => [...gold].filter((g) => (position.get(g) ?? Infinity) < k).length;
    sums['recall@5'] += hitsWithin(5) / gold.size;
    sums['recall@10'] += hitsWithin(10) / gold.size;
    sums['recall@25'] += hitsWithin(25) / gold.size;
    sums['all@25'] += hitsWithin(25) === gold.size ? 1 : 0;
    let dcg = 0;
    for (const g of gold) {
      const r = position.get(g);
      if (r !== undefined && r < 10) dcg += 1 / Math.log2(r + 2);
    }
    let ideal = 0;
    for (let r = 0; r < Math.min(gold.size, 10); r++) ideal += 1 / Math.log2(r + 2);
    sums['ndcg@10'] += dcg / ideal;
  });
  const out = {} as Metrics;
  for (const m of METRIC_NAMES) out[m] = round1((100 * sums[m]) / Math.max(counted, 1));
  return out;
}

export function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
