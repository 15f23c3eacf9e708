import type { Selection } from '../selection/selectionTypes';
import { offerTool, type CallAudience, type CallPolicy } from '../policy/callPolicy';
import type { RoutedTool } from '../router/toolRouter';

/**
 * Tool search over the whole catalogue, shared by every place a model can look for tools: the gateway's
 * and agent mode's `toolRouter_searchTools`, and the search tool `@router` offers at each step. A search
 * is a selection run on the query; its ranking (every tool, best first) becomes the hits.
 */

/** One search result, as the model receives it. */
export interface SearchHit {
  readonly name: string;
  readonly server: string;
  readonly description: string;
  readonly score: number;
  readonly inputSchema: unknown;
  readonly annotations?: RoutedTool['annotations'];
}

export interface SearchHitOptions {
  readonly limit: number;
  /** Exposed name → why it is quarantined (poisoning flags): such tools never reach a model through search. */
  readonly quarantined?: ReadonlyMap<string, string>;
  /** Tools the policy would refuse for this audience are left out: the model must not plan around them. */
  readonly policy?: CallPolicy;
  readonly audience?: CallAudience;
}

/** Scores are rounded for the model: more digits cost tokens and mean nothing. */
const SCORE_DIGITS = 3;

/** The best `limit` tools of a selection run on the query, best first, described from the router's catalogue. */
export function searchHits(selection: Selection, getTool: (name: string) => RoutedTool | undefined, options: SearchHitOptions): SearchHit[] {
  const scores = new Map(selection.ranking.map((r) => [r.name, r.score]));
  // Nothing is ranked only when no scorer ran; the selection's own order is then the best there is.
  const order = selection.ranking.length > 0 ? selection.ranking.map((r) => r.name) : selection.tools.map((t) => t.name);
  const hits: SearchHit[] = [];
  for (const name of order) {
    if (hits.length >= options.limit) break;
    if (options.quarantined?.has(name)) continue;
    const tool = getTool(name);
    if (!tool || (options.policy && !offerTool(options.policy, tool, options.audience ?? { canAsk: true }).offered)) continue;
    const annotated = Object.keys(tool.annotations).length > 0;
    hits.push({
      name: tool.name,
      server: tool.server,
      description: tool.originalDescription,
      score: round(scores.get(name) ?? 0, SCORE_DIGITS),
      inputSchema: tool.inputSchema,
      ...(annotated ? { annotations: tool.annotations } : {}),
    });
  }
  return hits;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
