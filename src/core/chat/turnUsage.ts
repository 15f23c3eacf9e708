import type { UsageRecordInput } from '../learning/usageMemory';

/**
 * What learning from use records of a `@router` turn: the tools offered up front, the routed tools the
 * model called, and the misses, the called tools that were not offered up front: a tool the model found
 * with the search tool during the turn and then called is one, as is a name it called unoffered. The
 * search tool itself, and names that are no routed tool, are not recorded.
 */
export function chatUsageRecord(prompt: string, offeredUpFront: readonly string[], called: readonly string[], isTool: (name: string) => boolean): UsageRecordInput {
  const sent = new Set(offeredUpFront);
  const known = [...new Set(called)].filter(isTool);
  return { prompt, offered: offeredUpFront, called: known, misses: known.filter((name) => !sent.has(name)), source: 'chat' };
}
