import type { CostSnapshot } from '../core/guards/costMonitor';
import { clamp01, formatTokens } from './format';

/**
 * The panel's cost window: the hour's chart, the spike rate, the totals against the cap, and the tools
 * that used the most tokens. Pure, like viewModel.ts, so every number on screen is unit-tested.
 */


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
