/**
 * Where the tool-retrieval sets live (data/benchmarks, formats in its README), which splits are for
 * measuring, and the small ranking helpers the model scripts share. Reading files and scoring rankings
 * is src/core/evaluation/retrievalData.ts, the same code every evaluation of the project uses.
 */
import path from 'node:path';
import { loadQueriesFile, loadToolsFile, SELECTION_DEV_SETS, type DataQuery, type DataTool } from '../../src/core/evaluation/retrievalData';

export { METRIC_NAMES, readJsonl, retrievalMetrics, round1, type DataQuery, type DataTool, type Metrics } from '../../src/core/evaluation/retrievalData';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** The public benchmark sets, carried in the repository gzip-compressed (data/benchmarks/README.md). */
export const DATA_DIR = path.join(REPO_ROOT, 'data', 'benchmarks');

export function loadTools(folder: string): DataTool[] {
  return loadToolsFile(path.join(DATA_DIR, folder, 'tools.jsonl.gz'));
}

export function loadQueries(folder: string, split: string): DataQuery[] {
  return loadQueriesFile(path.join(DATA_DIR, folder, 'queries.jsonl.gz'), split);
}

/** The measurement sets of issue 9: never trained on. */
export const MEASUREMENT_SETS = SELECTION_DEV_SETS.slice(0, 3);

/** Ids of the top `k` scores, ties in catalogue order (the same order for every method). */
export function topIds(scores: ArrayLike<number>, ids: readonly string[], k: number): string[] {
  const idx = Array.from({ length: scores.length }, (_, i) => i);
  idx.sort((a, b) => scores[b]! - scores[a]! || a - b);
  return idx.slice(0, k).map((i) => ids[i]!);
}

export function formatTable(rows: ReadonlyArray<{ method: string; metrics: Record<string, number> }>, metricNames: readonly string[]): string {
  const header = ['method', ...metricNames];
  const lines = rows.map((r) => [r.method, ...metricNames.map((m) => r.metrics[m]!.toFixed(1))]);
  const widths = header.map((h, c) => Math.max(h.length, ...lines.map((l) => l[c]!.length)));
  const fmt = (cells: string[]): string => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return [fmt(header), ...lines.map(fmt)].join('\n');
}
