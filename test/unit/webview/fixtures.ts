import { CostMonitor, MINUTE_MS, type CostLimits, type CostSnapshot } from '../../../src/core/guards/costMonitor';
import type { Selection } from '../../../src/core/selection/selectionTypes';
import type { PanelState, TurnView } from '../../../src/webview/protocol';

/** Shared data for the panel's unit tests: a Selection as the selector makes one, and a real cost window. */

export const HOSTILE_DESCRIPTION = '<img src=x onerror="alert(1)"><script>alert(2)</script>';

export function sampleSelection(overrides: Partial<Selection> = {}): Selection {
  return {
    prompt: 'remember that Alice works at Acme',
    method: 'embedding+keyword',
    tools: [
      { name: 'memory_create_entities', score: 1.8, cosine: 0.62, lexical: 3.1, stages: ['embedding', 'keyword:memory'], tier: 2, reason: 'top 5 by relevance (rank 1)' },
      { name: 'memory_add_observations', score: 1.1, cosine: 0.41, stages: ['embedding'], tier: 2, reason: 'cosine 0.41 ≥ threshold 0.2' },
      { name: 'everything_echo', stages: ['sticky:2'], tier: 1, reason: 'used in turn 2' },
      { name: 'memory_read_graph', score: -0.2, cosine: 0.1, stages: ['embedding'], tier: 2, reason: 'top 5 by relevance (rank 5)' },
    ],
    dropped: [
      { name: 'memory_delete_entities', score: 0.9, stages: ['embedding'], by: 'destructive', reason: 'marked destructive' },
      { name: 'everything_add', stages: ['keyword:math'], by: 'cap', reason: 'over the cap of 25 (tier 3)' },
    ],
    nearMisses: [],
    ranking: [
      { name: 'memory_create_entities', score: 1.8, cosine: 0.62 },
      { name: 'memory_add_observations', score: 1.1, cosine: 0.41 },
      { name: 'memory_read_graph', score: -0.2, cosine: 0.1 },
      { name: 'everything_echo', score: -0.5, cosine: -0.2 },
    ],
    threshold: 0.2,
    timingsMs: { embed: 12.5, lexical: 0.8, rank: 0.25 },
    tokens: { selected: 250, catalogue: 1000 },
    issues: [],
    ...overrides,
  };
}

/** A clock at the top of a minute that the test moves. */
export function manualClock(): { now: () => number; advanceMinutes(n: number): void } {
  let t = Math.floor(1_760_000_000_000 / MINUTE_MS) * MINUTE_MS;
  return { now: () => t, advanceMinutes: (n) => void (t += n * MINUTE_MS) };
}

export function costSnapshot(limits: Partial<CostLimits> = {}, fill?: (cost: CostMonitor, clock: ReturnType<typeof manualClock>) => void): CostSnapshot {
  const clock = manualClock();
  const cost = new CostMonitor(limits, clock.now);
  fill?.(cost, clock);
  return cost.snapshot();
}

export function sampleTurn(turn: number, overrides: Partial<TurnView> = {}): TurnView {
  return {
    turn,
    prompt: `prompt of turn ${turn}`,
    at: 1_760_000_000_000 + turn,
    selection: sampleSelection(),
    calls: [{ name: 'everything_echo', ok: true, latencyMs: 3 }],
    warnings: [],
    usage: { promptTokens: 100, completionTokens: 20 },
    paused: false,
    ...overrides,
  };
}

export function sampleState(): PanelState {
  return {
    turns: [sampleTurn(1)],
    turnNumbers: [1],
    cost: costSnapshot(),
    loops: [],
    servers: { statuses: [{ name: 'everything', state: 'ready', restarts: 0, toolCount: 13 }], stats: {}, toolServers: { everything_echo: 'everything' } },
    descriptions: { everything_echo: 'Echoes back the input' },
  };
}
