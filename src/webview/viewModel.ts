import type { ToolCallStats } from '../core/router/callStatistics';
import type { CostSnapshot } from '../core/guards/costMonitor';
import type { LoopTurnHistory } from '../core/guards/loopDetector';
import { readAsText, type DroppedTool, type Selection, type SelectionStage } from '../core/selection/selectionTypes';
import type { CallView, ServersView, ToolFlagView, TurnView } from './protocol';

/**
 * What the Tool Router panel draws, computed from the data the extension sends: no DOM and no vscode
 * here, so every number on screen is unit-tested under plain Node. main.ts only turns these into
 * elements (always as text, never HTML).
 */

// ---------------------------------------------------------------------------------------------------
// Formatting

const integerFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatTokens(n: number): string {
  return integerFormat.format(Math.round(n));
}

export function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(0)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  return ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${Math.round(bytes)} B`;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** Arguments as one line of JSON, cut so a huge argument cannot fill the panel. */
export const MAX_ARGUMENT_CHARS = 200;

export function argumentsText(args: unknown): string {
  let text: string;
  try {
    text = typeof args === 'string' ? args : (JSON.stringify(args) ?? 'undefined');
  } catch {
    text = String(args);
  }
  return text.length > MAX_ARGUMENT_CHARS ? `${text.slice(0, MAX_ARGUMENT_CHARS - 1)}…` : text;
}

// ---------------------------------------------------------------------------------------------------
// Selection

/** `embedding`, `keyword:<route>`, `sticky:<turn>`, `required`, `core` as people read them. */
export function stageLabel(stage: SelectionStage): string {
  if (stage === 'embedding') return 'embedding';
  if (stage === 'required') return 'pinned';
  if (stage === 'core') return 'core';
  if (stage === 'keyword:lexical') return 'lexical';
  if (stage.startsWith('keyword:')) return `keyword route ${stage.slice('keyword:'.length)}`;
  if (stage.startsWith('sticky:')) return `sticky from turn ${stage.slice('sticky:'.length)}`;
  if (stage.startsWith('general:')) return `unnamed need: ${stage.slice('general:'.length).replace(/_/g, ' ')}`;
  if (stage === 'companion') return 'finds the item first';
  if (stage === 'clause') return 'best for a clause';
  if (stage === 'step') return 'best for a step';
  return stage;
}

const DROPPED_BY_LABELS: Readonly<Record<DroppedTool['by'], string>> = {
  cap: 'over the cap',
  whitelist: 'not allowed',
  destructive: 'destructive',
  quarantine: 'quarantined',
};

/**
 * What a score bar measures. With embeddings the bar is the cosine, on [min(0, lowest), 1]; without them
 * it is the fused z-score, normalised between the lowest and highest in the ranking, with a line at the
 * cutoff the count rule drew (`Selection.threshold`). Cosines have no line: the count follows the fused
 * scores, not a cosine threshold.
 */
export type ScoreScale = { readonly kind: 'cosine'; readonly min: number; readonly max: number } | { readonly kind: 'score'; readonly min: number; readonly max: number } | { readonly kind: 'none' };

export function scoreScale(selection: Selection): ScoreScale {
  const cosines = [...selection.tools, ...selection.ranking].map((t) => t.cosine).filter((c): c is number => c !== undefined && Number.isFinite(c));
  if (cosines.length > 0) return { kind: 'cosine', min: Math.min(0, ...cosines), max: 1 };
  const scores = [...selection.tools.map((t) => t.score), ...selection.ranking.map((r) => r.score), ...selection.dropped.map((d) => d.score)].filter((s): s is number => s !== undefined && Number.isFinite(s));
  if (scores.length === 0) return { kind: 'none' };
  return { kind: 'score', min: Math.min(...scores), max: Math.max(...scores) };
}

/** A value's place on the scale, 0..1 (a flat scale puts everything at the full bar). */
export function barFraction(scale: ScoreScale, value: number | undefined): number | undefined {
  if (scale.kind === 'none' || value === undefined || !Number.isFinite(value)) return undefined;
  const span = scale.max - scale.min;
  return span <= 0 ? 1 : clamp01((value - scale.min) / span);
}

export interface ToolRowView {
  readonly name: string;
  readonly description?: string;
  /** The number the bar shows, formatted; '' when nothing was scored. */
  readonly scoreText: string;
  /** 0..1, or undefined for no bar (pinned, core or keyword-only tools with no score). */
  readonly bar?: number;
  readonly aboveThreshold?: boolean;
  readonly stages: readonly string[];
  readonly reason: string;
  readonly tier: 1 | 2 | 3;
}

export interface DroppedRowView {
  readonly name: string;
  readonly by: string;
  readonly reason: string;
  readonly scoreText: string;
}

export interface SelectionView {
  readonly prompt: string;
  readonly method: string;
  readonly methodNote?: string;
  /** Typos read as other words (`read "hirng" as "hiring"`), when there were any. */
  readonly readAs?: string;
  readonly scaleLabel: string;
  /** 0..1 position of the threshold line, when the bars are cosines. */
  readonly thresholdLine?: number;
  readonly thresholdText: string;
  readonly tools: readonly ToolRowView[];
  readonly dropped: readonly DroppedRowView[];
  readonly tokens: TokenRatioView;
  readonly timings: readonly TimingRowView[];
  readonly issues: readonly string[];
}

export interface TokenRatioView {
  readonly selected: number;
  readonly catalogue: number;
  /** selected / catalogue, 0..1 (0 for an empty catalogue). */
  readonly ratio: number;
  readonly text: string;
}

export function tokenRatio(tokens: Selection['tokens']): TokenRatioView {
  const ratio = tokens.catalogue > 0 ? clamp01(tokens.selected / tokens.catalogue) : 0;
  return {
    selected: tokens.selected,
    catalogue: tokens.catalogue,
    ratio,
    text: `~${formatTokens(tokens.selected)} of ${formatTokens(tokens.catalogue)} tokens of tool definitions (${(ratio * 100).toFixed(0)}%)`,
  };
}

export interface TimingRowView {
  readonly stage: string;
  readonly ms: number;
  readonly text: string;
  /** 0..1 of the slowest stage, for a small bar. */
  readonly fraction: number;
}

export function timingRows(timingsMs: Readonly<Record<string, number>>): TimingRowView[] {
  const entries = Object.entries(timingsMs).filter(([, ms]) => typeof ms === 'number' && Number.isFinite(ms) && ms >= 0);
  const slowest = Math.max(0, ...entries.map(([, ms]) => ms));
  return entries.map(([stage, ms]) => ({ stage, ms, text: formatMs(ms), fraction: slowest > 0 ? ms / slowest : 0 }));
}

function scoreText(scale: ScoreScale, t: { score?: number; cosine?: number }): string {
  if (scale.kind === 'cosine' && t.cosine !== undefined) return `cosine ${t.cosine.toFixed(2)}`;
  if (t.score !== undefined) return `score ${t.score.toFixed(2)}`;
  return '';
}

export function selectionView(selection: Selection, descriptions: Readonly<Record<string, string>> = {}): SelectionView {
  const scale = scoreScale(selection);
  const value = (t: { score?: number; cosine?: number }): number | undefined => (scale.kind === 'cosine' ? t.cosine : t.score);
  const thresholdLine = scale.kind === 'score' ? barFraction(scale, selection.threshold) : undefined;
  return {
    prompt: selection.prompt,
    method: selection.method,
    ...(selection.methodNote ? { methodNote: selection.methodNote } : {}),
    ...(selection.readAs?.length ? { readAs: readAsText(selection) } : {}),
    scaleLabel: scale.kind === 'cosine' ? 'cosine similarity to the prompt' : scale.kind === 'score' ? 'relevance (lexical z-score, normalised)' : 'no scores (keyword routes only)',
    ...(thresholdLine !== undefined ? { thresholdLine } : {}),
    thresholdText: scale.kind === 'score' ? `cutoff ${selection.threshold.toFixed(2)}` : '',
    tools: selection.tools.map((t) => {
      const bar = barFraction(scale, value(t));
      const description = descriptions[t.name];
      return {
        name: t.name,
        ...(description !== undefined ? { description } : {}),
        scoreText: scoreText(scale, t),
        ...(bar !== undefined ? { bar } : {}),
        ...(scale.kind === 'score' && t.score !== undefined ? { aboveThreshold: t.score >= selection.threshold } : {}),
        stages: t.stages.map(stageLabel),
        reason: t.reason,
        tier: t.tier,
      };
    }),
    dropped: selection.dropped.map((d) => ({ name: d.name, by: DROPPED_BY_LABELS[d.by] ?? d.by, reason: d.reason, scoreText: d.score !== undefined ? `score ${d.score.toFixed(2)}` : '' })),
    tokens: tokenRatio(selection.tokens),
    timings: timingRows(selection.timingsMs),
    issues: selection.issues,
  };
}

// ---------------------------------------------------------------------------------------------------
// Tools found during a turn, and calls that asked first

export interface FoundRowView {
  readonly name: string;
  readonly description?: string;
  /** Whether the model then called it (a miss that learning from use records). */
  readonly called: boolean;
  /** "found with “query” at step 2; offered from step 3 in place of x". */
  readonly text: string;
}

/** The tools the model found with the search tool, in the order found. */
export function foundRows(turn: Pick<TurnView, 'found' | 'calls'>, descriptions: Readonly<Record<string, string>> = {}): FoundRowView[] {
  const called = new Set(turn.calls.filter((c) => c.errorType !== 'LOOP_DETECTED').map((c) => c.name));
  return (turn.found ?? []).map((f) => {
    const description = descriptions[f.name];
    const offered = f.offered ? `offered from step ${f.step + 1}${f.replaced ? ` in place of ${f.replaced}` : ''}` : 'not offered: the tool cap was full';
    return { name: f.name, ...(description !== undefined ? { description } : {}), called: called.has(f.name), text: `found with “${f.query}” at step ${f.step}; ${offered}` };
  });
}

const CONFIRMATION_LABELS: Readonly<Record<NonNullable<CallView['confirmation']>, string>> = {
  confirmed: 'run after you confirmed',
  declined: 'not run: you declined',
  unanswered: 'not run: the question went unanswered',
  refused: 'not run: the destructive-tools policy refused it',
};

/** How a call ended, for the calls list: ok, the error type, or what the destructive-tools question decided. */
export function callOutcomeText(call: CallView): string {
  if (call.confirmation && call.confirmation !== 'confirmed') return CONFIRMATION_LABELS[call.confirmation];
  const outcome = call.ok ? 'ok' : (call.errorType ?? 'error');
  return call.confirmation ? `${outcome} (${CONFIRMATION_LABELS[call.confirmation]})` : outcome;
}

/** The history picker's label of a turn. */
export function turnLabel(turn: Pick<TurnView, 'turn' | 'prompt'>): string {
  const prompt = turn.prompt.replace(/\s+/g, ' ').trim();
  return `Turn ${turn.turn}: ${prompt.length > 60 ? `${prompt.slice(0, 59)}…` : prompt}`;
}

// ---------------------------------------------------------------------------------------------------
// Cost window

export interface ChartBar {
  readonly x: number;
  readonly width: number;
  /** Prompt tokens at the bottom, completion tokens stacked on top (SVG y grows downwards). */
  readonly promptY: number;
  readonly promptHeight: number;
  readonly completionY: number;
  readonly completionHeight: number;
  /** "12:34 · 1,200 prompt + 300 completion tokens". */
  readonly label: string;
}

export interface HorizontalLine {
  readonly y: number;
  readonly label: string;
}

export interface CostChartView {
  readonly width: number;
  readonly height: number;
  readonly bars: readonly ChartBar[];
  /** Tokens a minute at the top of the left scale (the bars, the baseline and the spike line). */
  readonly maxPerMinute: number;
  /** The mean of the hour's other active minutes, when there is one. */
  readonly baseline?: HorizontalLine;
  /** baseline × multiplier: a short-window rate above this pauses. */
  readonly spikeLine?: HorizontalLine;
  /** The hour's running total, on the right scale (0 at the bottom, `maxCumulative` at the top). */
  readonly cumulativePoints: string;
  readonly maxCumulative: number;
  /** The hourly cap, on the right scale. */
  readonly capLine?: HorizontalLine;
  /** Where the short window starts (x), shaded behind the bars. */
  readonly shortWindowX: number;
}

/** Room above the tallest value so the lines never sit on the edge. */
const CHART_HEADROOM = 1.1;

/**
 * The 60 one-minute buckets as stacked bars (prompt, completion), with the spike baseline and the spike
 * limit on the left scale (tokens a minute), and the running total against the hourly cap on the right
 * scale (tokens this hour). Both scales start at 0 at the bottom.
 */
export function costChart(snapshot: CostSnapshot, size: { readonly width: number; readonly height: number }): CostChartView {
  const { width, height } = size;
  const n = snapshot.buckets.length || 1;
  const slot = width / n;
  const limits = snapshot.limits;
  const hasBaseline = snapshot.baselineMinutes > 0 && snapshot.baselineRate > 0;
  const spikeRate = hasBaseline && limits.spikeMultiplier > 0 ? snapshot.baselineRate * limits.spikeMultiplier : undefined;
  const tallest = Math.max(0, ...snapshot.buckets.map((b) => b.tokens));
  const maxPerMinute = Math.max(1, tallest, hasBaseline ? snapshot.baselineRate : 0, spikeRate ?? 0) * CHART_HEADROOM;
  const yPerMinute = (v: number): number => height - clamp01(v / maxPerMinute) * height;

  const bars = snapshot.buckets.map((b, i) => {
    const promptHeight = clamp01(b.promptTokens / maxPerMinute) * height;
    const completionHeight = clamp01(b.completionTokens / maxPerMinute) * height;
    return {
      x: i * slot,
      width: Math.max(0, slot - Math.min(1, slot / 4)),
      promptY: height - promptHeight,
      promptHeight,
      completionY: height - promptHeight - completionHeight,
      completionHeight,
      label: `${minuteLabel(b.start)} · ${formatTokens(b.promptTokens)} prompt + ${formatTokens(b.completionTokens)} completion tokens`,
    };
  });

  let running = 0;
  const cumulative = snapshot.buckets.map((b) => (running += b.tokens));
  const cap = limits.hourlyTokenCap;
  const maxCumulative = Math.max(1, running, cap > 0 ? cap : 0) * CHART_HEADROOM;
  const yCumulative = (v: number): number => height - clamp01(v / maxCumulative) * height;
  const cumulativePoints = cumulative.map((v, i) => `${round(i * slot + slot / 2)},${round(yCumulative(v))}`).join(' ');

  return {
    width,
    height,
    bars,
    maxPerMinute,
    ...(hasBaseline ? { baseline: { y: yPerMinute(snapshot.baselineRate), label: `baseline ${formatTokens(snapshot.baselineRate)} tokens/min` } } : {}),
    ...(spikeRate !== undefined ? { spikeLine: { y: yPerMinute(spikeRate), label: `spike limit ${formatTokens(spikeRate)} tokens/min (×${limits.spikeMultiplier})` } } : {}),
    cumulativePoints,
    maxCumulative,
    ...(cap > 0 ? { capLine: { y: yCumulative(cap), label: `hourly cap ${formatTokens(cap)} tokens` } } : {}),
    shortWindowX: Math.max(0, n - limits.shortWindowMinutes) * slot,
  };
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}

function minuteLabel(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

export interface RateView {
  readonly shortWindowRate: number;
  readonly baselineRate: number;
  /** short-window rate / baseline (undefined without a baseline). */
  readonly ratio?: number;
  /** 0..1 of the spike limit reached, for a meter. */
  readonly ofLimit: number;
  readonly text: string;
  readonly ruleText: string;
}

export function rateView(snapshot: CostSnapshot): RateView {
  const { shortWindowRate, baselineRate, limits } = snapshot;
  const ratio = baselineRate > 0 ? shortWindowRate / baselineRate : undefined;
  const limit = baselineRate * limits.spikeMultiplier;
  const ruleText = !limits.enabled
    ? 'The cost guard is off: usage is counted, nothing pauses.'
    : limits.spikeMultiplier <= 0
      ? 'The spike rule is off.'
      : snapshot.spikeRuleActive
        ? `Pauses above ${formatTokens(limit)} tokens/min (${limits.spikeMultiplier} × baseline).`
        : `The spike rule waits for a baseline of ${formatTokens(limits.minimumBaselineTokensPerMinute)} tokens/min.`;
  return {
    shortWindowRate,
    baselineRate,
    ...(ratio !== undefined ? { ratio } : {}),
    ofLimit: limit > 0 ? clamp01(shortWindowRate / limit) : 0,
    text: `Last ${limits.shortWindowMinutes} min: ${formatTokens(shortWindowRate)} tokens/min against a baseline of ${formatTokens(baselineRate)}${ratio !== undefined ? ` (×${ratio.toFixed(1)})` : ''}`,
    ruleText,
  };
}

export interface CostSummaryView {
  readonly paused: boolean;
  /** When this pause began: a new pause is a new alert, the same pause is not announced again. */
  readonly pausedAt?: number;
  readonly pausedTitle?: string;
  readonly pausedMessage?: string;
  readonly totalText: string;
  /** 0..1 of the cap counted so far (0 without a cap). */
  readonly capFraction: number;
}

export function costSummary(snapshot: CostSnapshot): CostSummaryView {
  const cap = snapshot.limits.hourlyTokenCap;
  const pause = snapshot.paused;
  return {
    paused: pause !== undefined,
    ...(pause ? { pausedAt: pause.at, pausedTitle: pause.limit === 'hourly-cap' ? 'Paused: the hourly cap was reached' : 'Paused: token usage spiked', pausedMessage: pause.message } : {}),
    totalText:
      `${formatTokens(snapshot.totals.tokens)} tokens this hour (${formatTokens(snapshot.totals.promptTokens)} prompt, ${formatTokens(snapshot.totals.completionTokens)} completion)` +
      (cap > 0 ? `; ${formatTokens(snapshot.countedTokens)} of the ${formatTokens(cap)} cap counted` : '; no cap'),
    capFraction: cap > 0 ? clamp01(snapshot.countedTokens / cap) : 0,
  };
}

export interface TopToolRowView {
  readonly name: string;
  readonly tokens: number;
  readonly text: string;
  /** 0..1 of the top tool's tokens. */
  readonly fraction: number;
  readonly parts: string;
}

export function topTools(snapshot: CostSnapshot, limit = 5): TopToolRowView[] {
  const rows = snapshot.topTools.slice(0, Math.max(0, limit));
  const most = Math.max(0, ...rows.map((r) => r.tokens));
  return rows.map((r) => ({
    name: r.name,
    tokens: r.tokens,
    text: `${formatTokens(r.tokens)} tokens`,
    fraction: most > 0 ? r.tokens / most : 0,
    parts: [r.definition ? `definitions ${formatTokens(r.definition)}` : '', r.arguments ? `arguments ${formatTokens(r.arguments)}` : '', r.result ? `results ${formatTokens(r.result)}` : ''].filter(Boolean).join(', '),
  }));
}

// ---------------------------------------------------------------------------------------------------
// Loop and guard warnings

export interface WarningRowView {
  readonly turn: number;
  readonly kind: 'loop' | 'hallucination' | 'cost' | 'steps';
  readonly tool: string;
  readonly arguments: string;
  readonly rule: string;
  /** What the model (or the user) was told. */
  readonly told: string;
  readonly at: number;
}

/**
 * Every guard warning of the turns, newest first. Loop refusals the detector logged for turns the panel
 * has no record of (e.g. from before it opened) are added from its history.
 */
export function warningRows(turns: readonly TurnView[], loops: readonly LoopTurnHistory[] = []): WarningRowView[] {
  const rows: WarningRowView[] = [];
  const known = new Set(turns.map((t) => t.turn));
  for (const t of turns) {
    for (const w of t.warnings) {
      switch (w.kind) {
        case 'loop':
          rows.push({ turn: t.turn, kind: 'loop', tool: w.tool, arguments: argumentsText(w.args), rule: `LOOP_DETECTED: ${w.rule}`, told: w.message, at: t.at });
          break;
        case 'hallucination':
          rows.push({
            turn: t.turn,
            kind: 'hallucination',
            tool: '',
            arguments: '',
            rule: `claimed action "${w.phrase}" without a tool call`,
            told: w.outcome === 'retried' ? 'Asked again with tools required.' : 'The answer was replaced by an honest one.',
            at: t.at,
          });
          break;
        case 'cost':
          rows.push({ turn: t.turn, kind: 'cost', tool: '', arguments: '', rule: 'cost guard', told: w.message, at: t.at });
          break;
        case 'steps':
          rows.push({ turn: t.turn, kind: 'steps', tool: '', arguments: '', rule: 'step limit', told: w.message, at: t.at });
          break;
      }
    }
  }
  for (const h of loops) {
    if (known.has(h.turn)) continue;
    for (const b of h.blocked) rows.push({ turn: h.turn, kind: 'loop', tool: b.tool, arguments: '', rule: `LOOP_DETECTED: ${b.rule} (after ${b.count})`, told: '', at: b.at });
  }
  return rows.sort((a, b) => b.turn - a.turn || b.at - a.at);
}

// ---------------------------------------------------------------------------------------------------
// Servers

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
