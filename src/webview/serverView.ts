import type { ToolCallStats } from '../core/router/callStatistics';
import { formatBytes, formatMs } from './format';
import type { ServersView, ToolFlagView } from './protocol';

/**
 * The panel's servers section: each server's state, its tools' call statistics and their poisoning
 * flags. Pure, like viewModel.ts, so every line on screen is unit-tested.
 */


export interface ToolStatsRowView {
  readonly name: string;
  readonly calls: number;
  readonly errors: number;
  readonly latency: string;
  readonly size: string;
}

export interface ServerRowView {
  readonly name: string;
  readonly state: string;
  /** For the colour: ok (ready), busy (starting/restarting), bad (failed), off (stopped/disabled). */
  readonly tone: 'ok' | 'busy' | 'bad' | 'off';
  readonly reason?: string;
  readonly detail: string;
  readonly tools: readonly ToolStatsRowView[];
  /** Poisoning flags of the server's tools, most severe first; the reason is untrusted text. */
  readonly flags: readonly ServerFlagRowView[];
}

export interface ServerFlagRowView {
  readonly tool: string;
  readonly severity: ToolFlagView['severity'];
  readonly text: string;
}

const FLAG_RANK: Readonly<Record<ToolFlagView['severity'], number>> = { high: 0, medium: 1, low: 2 };

function tone(state: string): ServerRowView['tone'] {
  if (state === 'ready') return 'ok';
  if (state === 'starting' || state === 'restarting') return 'busy';
  if (state === 'failed') return 'bad';
  return 'off';
}

export function toolStatsRow(name: string, s: ToolCallStats): ToolStatsRowView {
  return {
    name,
    calls: s.calls,
    errors: s.errors,
    latency: `p50 ${formatMs(s.latencyMs.p50)} · p95 ${formatMs(s.latencyMs.p95)}`,
    size: `p50 ${formatBytes(s.bytes.p50)} · p95 ${formatBytes(s.bytes.p95)}`,
  };
}

export function serverRows(view: ServersView): ServerRowView[] {
  const byServer = new Map<string, ToolStatsRowView[]>();
  for (const [tool, stats] of Object.entries(view.stats)) {
    const server = view.toolServers[tool];
    if (server === undefined) continue;
    const list = byServer.get(server) ?? [];
    list.push(toolStatsRow(tool, stats));
    byServer.set(server, list);
  }
  return [...view.statuses]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((s) => ({
      name: s.name,
      state: s.state,
      tone: tone(s.state),
      ...(s.reason ? { reason: s.reason } : {}),
      detail: [`${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}`, `${s.restarts} restart${s.restarts === 1 ? '' : 's'}`, s.transport ?? ''].filter(Boolean).join(' · '),
      tools: (byServer.get(s.name) ?? []).sort((a, b) => b.calls - a.calls || a.name.localeCompare(b.name)),
      flags: flagRows(view, s.name),
    }));
}

function flagRows(view: ServersView, server: string): ServerFlagRowView[] {
  const rows: ServerFlagRowView[] = [];
  for (const [tool, flags] of Object.entries(view.flags ?? {})) {
    if (view.toolServers[tool] !== server) continue;
    for (const f of flags) rows.push({ tool, severity: f.severity, text: `${f.severity}${f.quarantined ? ', quarantined' : ''}: ${f.reason}` });
  }
  return rows.sort((a, b) => FLAG_RANK[a.severity] - FLAG_RANK[b.severity] || a.tool.localeCompare(b.tool));
}
