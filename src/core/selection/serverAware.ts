/**
 * Server-aware ranking: tasks people write often need several tools of one server ("make a report" needs
 * create_document, add_paragraph and convert_to_pdf), while each tool alone may match the words weakly.
 * Two pure steps over the fused scores (z-score units, catalogue order):
 *
 * - {@link boostByServer}: every tool gains `weight × (mean of its server's best scores)`, so a server
 *   that matches the prompt lifts its weaker tools together.
 * - {@link headThenServer}: a ranking policy: a head of the plain ranking first, then the strongest
 *   server's further tools (each server's share capped), then the rest of the ranking.
 *
 * With one server in the catalogue both are the identity, so data without servers is never changed.
 */

/** How many of a server's best scores its strength averages: one lucky word match should not lift a server. */
export const SERVER_TOP_SCORES = 2;

/** Each server's strength: the mean of its `top` best scores. */
export function serverStrengths(scores: ArrayLike<number>, servers: readonly string[], top = SERVER_TOP_SCORES): Map<string, number> {
  const best = new Map<string, number[]>();
  for (let i = 0; i < servers.length; i++) {
    const s = servers[i]!;
    let list = best.get(s);
    if (!list) best.set(s, (list = []));
    const v = scores[i]!;
    if (list.length < top) {
      list.push(v);
      list.sort((a, b) => b - a);
    } else if (v > list[top - 1]!) {
      list[top - 1] = v;
      list.sort((a, b) => b - a);
    }
  }
  const out = new Map<string, number>();
  for (const [s, list] of best) out.set(s, list.reduce((a, b) => a + b, 0) / list.length);
  return out;
}

/** Adds `weight × strength(server)` to each tool's score, in place. No-op with one server or weight 0. */
export function boostByServer(scores: Float64Array, servers: readonly string[], weight: number): void {
  const { ids, count } = serverIdsOf(servers);
  boostByServerIds(scores, ids, count, weight);
}

/**
 * Each tool's server as a number (servers numbered in order of first appearance), how many servers there
 * are, and each number's server.
 */
export function serverIdsOf(servers: readonly string[]): { ids: Int32Array; count: number; names: string[] } {
  const numbers = new Map<string, number>();
  const ids = new Int32Array(servers.length);
  for (let i = 0; i < servers.length; i++) {
    let id = numbers.get(servers[i]!);
    if (id === undefined) numbers.set(servers[i]!, (id = numbers.size));
    ids[i] = id;
  }
  return { ids, count: numbers.size, names: [...numbers.keys()] };
}

/**
 * {@link boostByServer} with the servers numbered once per catalogue ({@link serverIdsOf}), as selection runs
 * it on every prompt: the same strengths, kept in flat arrays instead of a map of lists.
 */
export function boostByServerIds(scores: Float64Array, ids: Int32Array, count: number, weight: number, top = SERVER_TOP_SCORES): void {
  if (weight === 0 || count < 2) return;
  // Each server's best `top` scores, best first, and how many it has so far.
  const best = new Float64Array(count * top);
  const filled = new Int32Array(count);
  for (let i = 0; i < scores.length; i++) {
    const base = ids[i]! * top;
    const v = scores[i]!;
    let at = filled[ids[i]!]!;
    if (at === top && !(v > best[base + top - 1]!)) continue;
    if (at < top) filled[ids[i]!]!++;
    else at = top - 1;
    for (; at > 0 && v > best[base + at - 1]!; at--) best[base + at] = best[base + at - 1]!;
    best[base + at] = v;
  }
  // The mean summed best first, as serverStrengths does, so the boost is the same to the last bit.
  const strength = new Float64Array(count);
  for (let s = 0; s < count; s++) {
    let sum = 0;
    for (let j = 0; j < filled[s]!; j++) sum += best[s * top + j]!;
    strength[s] = sum / filled[s]!;
  }
  for (let i = 0; i < scores.length; i++) scores[i] = scores[i]! + weight * strength[ids[i]!]!;
}

export interface ServerPolicy {
  /** Places taken by the plain ranking before any server is favoured. */
  readonly head: number;
  /** How many further tools of the strongest server follow the head. */
  readonly fill: number;
  /** No server may hold more than this many of the first `window` places. */
  readonly perServerCap: number;
  /** The span the cap applies to (the selection budget). */
  readonly window: number;
}

/**
 * Reorders `ranked` (indices, best first): the first `head` as they are; then the strongest server's
 * next tools in ranking order, up to `fill`; then the rest of the ranking. Within the first `window`
 * places no server holds more than `perServerCap`; tools over the cap move just past the window.
 * The strongest server is the one whose best SERVER_TOP_SCORES scores have the highest mean.
 */
export function headThenServer(ranked: readonly number[], scores: ArrayLike<number>, servers: readonly string[], policy: ServerPolicy): number[] {
  const strengths = serverStrengths(scores, servers);
  if (strengths.size < 2 || ranked.length <= policy.head) return [...ranked];
  let strongest = '';
  let best = -Infinity;
  for (const [s, v] of strengths) if (v > best) [strongest, best] = [s, v];
  const head = ranked.slice(0, policy.head);
  const taken = new Set(head);
  const fill: number[] = [];
  for (const i of ranked.slice(policy.head)) {
    if (fill.length >= policy.fill) break;
    if (servers[i] === strongest) fill.push(i);
  }
  for (const i of fill) taken.add(i);
  const order = [...head, ...fill, ...ranked.filter((i) => !taken.has(i))];
  // Cap each server's share of the window.
  const count = new Map<string, number>();
  const inWindow: number[] = [];
  const overflow: number[] = [];
  for (const i of order) {
    if (inWindow.length >= policy.window) {
      overflow.push(i);
      continue;
    }
    const s = servers[i]!;
    const c = count.get(s) ?? 0;
    if (c >= policy.perServerCap) {
      overflow.push(i);
      continue;
    }
    count.set(s, c + 1);
    inWindow.push(i);
  }
  return [...inWindow, ...overflow];
}
