import type { DataQuery, DataTool } from './retrievalData';
import type { SelectableTool } from '../selection/selectionTypes';
import type { ToolSelector } from '../selection/toolSelector';

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
  /** The best ranked tools' fused scores, aligned with `ranked` (empty when nothing was scored). */
  readonly scores: number[];
  /** Tools sent for a reason other than rank (general-purpose needs, clause heads, companion listers), with their scores. */
  readonly extras: ReadonlyArray<{ readonly name: string; readonly score: number }>;
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
    const scores = selection.ranking.slice(0, rankedLength).map((r) => r.score);
    const selected = selection.tools.map((t) => t.name);
    const extras = selection.tools.filter((t) => t.stages.some((s) => s === 'clause' || s === 'step' || s === 'companion' || s === 'page' || s.startsWith('general:'))).map((t) => ({ name: t.name, score: t.score ?? 0 }));
    out.push({ id: q.id, ranked: ranked.length ? ranked : selected, selected, latencyMs, scores, extras });
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

/**
 * The set the count rule would send at another depth and floor, from an outcome: the best `minTools`,
 * every ranked tool within `depth` of the drop from the best to the cap-th score, and the tools sent for
 * other reasons, best `cap` by score.
 * Used to draw the coverage-against-tools-sent curve without re-running selection per setting.
 */
export function selectedAt(outcome: QueryOutcome, depth: number, minTools: number, cap: number): string[] {
  const picks = new Map<string, number>();
  const head = outcome.scores[0] ?? 0;
  const last = outcome.scores[Math.min(cap, outcome.scores.length) - 1] ?? 0;
  const cutoff = head - depth * (head - last);
  outcome.ranked.forEach((name, i) => {
    const score = outcome.scores[i];
    if (score === undefined || i >= cap) return;
    if (i < minTools || score >= cutoff) picks.set(name, score);
  });
  for (const e of outcome.extras) if (!picks.has(e.name)) picks.set(e.name, e.score);
  return [...picks].sort((a, b) => b[1] - a[1]).slice(0, cap).map(([name]) => name);
}

/** Share (percent) of queries for which every needed tool was in the selected set. */
export function sentAll(queries: readonly DataQuery[], selected: ReadonlyArray<readonly string[]>): number {
  let all = 0;
  let n = 0;
  queries.forEach((q, i) => {
    if (q.gold.length === 0) return;
    const sent = new Set(selected[i] ?? []);
    if (q.gold.every((g) => sent.has(g))) all++;
    n++;
  });
  return n ? Math.round((1000 * all) / n) / 10 : 0;
}

/** Share (percent) of the needs in `needs(q)` found in the top k of each query's ranking (needs pooled). */
export function needRecall(queries: readonly DataQuery[], rankings: ReadonlyArray<readonly string[]>, needs: (q: DataQuery) => readonly string[], k: number): { recall: number; needs: number } {
  let found = 0;
  let total = 0;
  queries.forEach((q, i) => {
    const top = new Set((rankings[i] ?? []).slice(0, k));
    for (const g of needs(q)) {
      total++;
      if (top.has(g)) found++;
    }
  });
  return { recall: total ? Math.round((1000 * found) / total) / 10 : 0, needs: total };
}

/**
 * A need that any of several tools meets equally ("today's date" from either of a server's clock tools,
 * "18% of the bill" from any of a calculator's operations) is written with one tool; `alternatives(q, g)`
 * names the others. Each list (a ranking or a sent set) is rewritten so that the first alternative found
 * stands for `g`, and later ones are dropped, so a need is counted once, at its best position.
 */
export function creditAlternatives(queries: readonly DataQuery[], lists: ReadonlyArray<readonly string[]>, alternatives: (q: DataQuery, gold: string) => readonly string[]): string[][] {
  return queries.map((q, i) => creditList(q, lists[i] ?? [], alternatives).map((c) => c.name));
}

/** One list credited as creditAlternatives does, each kept entry with its position in the original list. */
export function creditList(q: DataQuery, list: readonly string[], alternatives: (q: DataQuery, gold: string) => readonly string[]): Array<{ name: string; from: number }> {
  const standFor = new Map<string, string>();
  for (const g of q.gold) for (const a of alternatives(q, g)) if (a !== g && !q.gold.includes(a) && !standFor.has(a)) standFor.set(a, g);
  const out: Array<{ name: string; from: number }> = [];
  const seen = new Set<string>();
  list.forEach((id, from) => {
    const name = standFor.get(id) ?? id;
    if (seen.has(name)) return;
    seen.add(name);
    out.push({ name, from });
  });
  return out;
}
