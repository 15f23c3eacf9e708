import type { DataQuery, DataTool } from './retrievalData';
import type { SelectableTool } from './selectionTypes';
import type { ToolSelector } from './toolSelector';

/**
 * Runs selection over labelled queries, the way `mcp-tool-router eval` and eval:select measure it: per
 * query, the full ranking (best first) and the set the default configuration would send.
 */

export interface QueryOutcome {
  readonly id: string;
  /** Tool ids, best first: the fused ranking (or the selection order when nothing was scored). */
  readonly ranked: string[];
  readonly selected: string[];
  readonly latencyMs: number;
}

/** The shared data format's tools as selection sees them: the id is the unique name. */
export function catalogueFromData(tools: readonly DataTool[], defaultServer = 'catalogue'): SelectableTool[] {
  return tools.map((t) => ({ name: t.id, originalName: t.name, server: t.server ?? defaultServer, description: t.description, inputSchema: t.inputSchema }));
}

export async function evaluateSelection(selector: ToolSelector, queries: readonly DataQuery[], rankedLength: number): Promise<QueryOutcome[]> {
  const out: QueryOutcome[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    const selection = await selector.select({ prompt: q.query });
    const latencyMs = performance.now() - t0;
    const ranked = selection.ranking.slice(0, rankedLength).map((r) => r.name);
    const selected = selection.tools.map((t) => t.name);
    out.push({ id: q.id, ranked: ranked.length ? ranked : selected, selected, latencyMs });
  }
  return out;
}

/** Share (percent) of needed tools that were in the selected set, averaged over queries. */
export function selectedRecall(queries: readonly DataQuery[], outcomes: readonly QueryOutcome[]): number {
  let sum = 0;
  let n = 0;
  queries.forEach((q, i) => {
    if (q.gold.length === 0) return;
    const selected = new Set(outcomes[i]?.selected ?? []);
    sum += q.gold.filter((g) => selected.has(g)).length / q.gold.length;
    n++;
  });
  return n ? Math.round((1000 * sum) / n) / 10 : 0;
}
