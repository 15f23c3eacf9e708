import { estimateTokens } from '../util/tokens';
/**
 * The cost monitor: token usage in 60 one-minute buckets, a sliding hour.
 * After every {@link CostMonitor.record} two limits are checked, and crossing either pauses the router
 * until the user resumes it:
 *
 * - the hard cap: the hour's tokens reach `hourlyTokenCap`;
 * - the spike rule: the rate over the last `shortWindowMinutes` (tokens a minute) is more than
 *   `spikeMultiplier` × the baseline, the mean tokens a minute of the hour's other active (non-zero)
 *   minutes; skipped while that baseline is under `minimumBaselineTokensPerMinute`, so the first busy
 *   minutes of a session are not a "spike" against nothing.
 *
 * Usage is also charged to the tools whose definitions, arguments and results caused it, so a spike can
 * be blamed on something. Time comes from an injected clock, so tests never wait.
 */

/** A quarter of a million tokens an hour: a busy hour of chat with tools stays under it, a runaway loop does not. */
export const DEFAULT_HOURLY_TOKEN_CAP = 250_000;
/** The short window a spike is measured over: long enough to smooth one big turn, short enough to stop a loop early. */
export const DEFAULT_SHORT_WINDOW_MINUTES = 5;
/** A spike is the short window running at three times the hour's baseline rate. */
export const DEFAULT_SPIKE_MULTIPLIER = 3;
/** The cold-start guard, compared with the baseline rate (tokens a minute): a quiet hour's tiny baseline must not make every turn a spike. */
export const DEFAULT_MINIMUM_BASELINE_TOKENS_PER_MINUTE = 1000;
/** A sliding hour in 60 one-minute buckets: minute resolution is enough for a spike, and memory is fixed. */
export const WINDOW_MINUTES = 60;
export const MINUTE_MS = 60_000;
/** Tools listed in the snapshot and named in a spike message: enough to find the culprit, short enough to read. */
export const DEFAULT_TOP_TOOLS = 10;

/**
 * The settings that hold the limits, named in pause messages so the user knows what to change. The
 * extension's package.json must declare them under these keys.
 */
export const COST_SETTING_KEYS = {
  enabled: 'toolRouter.cost.enabled',
  hourlyTokenCap: 'toolRouter.cost.hourlyTokenCap',
  shortWindowMinutes: 'toolRouter.cost.shortWindowMinutes',
  spikeMultiplier: 'toolRouter.cost.spikeMultiplier',
  minimumBaselineTokensPerMinute: 'toolRouter.cost.minimumBaselineTokensPerMinute',
} as const;

/** The command titles named in pause messages (category "Tool Router"). */
export const COST_COMMAND_TITLES = {
  resume: 'Tool Router: Resume',
  resetWindow: 'Tool Router: Reset Cost Window',
} as const;

export interface CostLimits {
  /** Off: usage is still counted and shown, but nothing pauses. */
  readonly enabled: boolean;
  /** Tokens (prompt + completion) per sliding hour; 0 turns the cap off. */
  readonly hourlyTokenCap: number;
  /** Minutes in the short window of the spike rule, 1 to 59 (the rest of the hour is the baseline). */
  readonly shortWindowMinutes: number;
  /** The short-window rate must exceed the baseline this many times over; 0 turns the spike rule off. */
  readonly spikeMultiplier: number;
  /** Below this baseline (tokens a minute) the spike rule is skipped. */
  readonly minimumBaselineTokensPerMinute: number;
}

export const DEFAULT_COST_LIMITS: CostLimits = {
  enabled: true,
  hourlyTokenCap: DEFAULT_HOURLY_TOKEN_CAP,
  shortWindowMinutes: DEFAULT_SHORT_WINDOW_MINUTES,
  spikeMultiplier: DEFAULT_SPIKE_MULTIPLIER,
  minimumBaselineTokensPerMinute: DEFAULT_MINIMUM_BASELINE_TOKENS_PER_MINUTE,
};

/** What a tool's share of the tokens came from. */
export type ToolUsagePart = 'definition' | 'arguments' | 'result';

export interface ToolCharge {
  /** Exposed tool name. */
  readonly name: string;
  readonly tokens: number;
  readonly part?: ToolUsagePart;
}

export interface UsageRecord {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Model requests this usage stands for; defaults to 1. */
  readonly calls?: number;
  /**
   * The tools that caused part of these tokens. This attributes the tokens above; it does not add to
   * them (a tool's definition is part of the prompt).
   */
  readonly tools?: readonly ToolCharge[];
}

export interface ToolUsage {
  readonly name: string;
  readonly tokens: number;
  readonly definition: number;
  readonly arguments: number;
  readonly result: number;
}

export type CostLimitKind = 'hourly-cap' | 'spike';

export type CostPause =
  | {
      readonly limit: 'hourly-cap';
      /** When it paused (the clock's ms). */
      readonly at: number;
      readonly message: string;
      /** The hour's tokens counted against the cap (usage before a resume is not counted again). */
      readonly tokens: number;
      readonly cap: number;
    }
  | {
      readonly limit: 'spike';
      readonly at: number;
      readonly message: string;
      /** Tokens a minute over the short window. */
      readonly shortWindowRate: number;
      /** Mean tokens a minute of the other active minutes. */
      readonly baselineRate: number;
      readonly multiplier: number;
      readonly shortWindowMinutes: number;
      /** The tool with the most tokens in the short window, if any was charged. */
      readonly topTool?: ToolUsage;
    };

export interface BucketSnapshot {
  /** Start of the minute (the clock's ms). */
  readonly start: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly tokens: number;
  readonly calls: number;
}

export interface CostSnapshot {
  readonly now: number;
  /** The 60 minutes of the window, oldest first; the last one is the current minute. */
  readonly buckets: readonly BucketSnapshot[];
  readonly totals: { readonly promptTokens: number; readonly completionTokens: number; readonly tokens: number; readonly calls: number };
  /** The hour's tokens that count against the cap: all of them, less what a resume accepted. */
  readonly countedTokens: number;
  readonly limits: CostLimits;
  readonly shortWindowRate: number;
  readonly baselineRate: number;
  /** Active minutes the baseline was averaged over. */
  readonly baselineMinutes: number;
  /** False while the baseline is under the minimum (the cold-start guard) or the rule is off. */
  readonly spikeRuleActive: boolean;
  readonly paused?: CostPause;
  /** Tools by tokens charged this hour, most first. */
  readonly topTools: readonly ToolUsage[];
}

export interface RecordOutcome {
  /** Set when this record crossed a limit and paused the router. */
  readonly pausedNow?: CostPause;
}

interface MutableToolUsage {
  tokens: number;
  definition: number;
  arguments: number;
  result: number;
}

interface Bucket {
  readonly minute: number;
  prompt: number;
  completion: number;
  calls: number;
  /** Tokens of this minute a resume accepted: the limits no longer count them. */
  accepted: number;
  readonly tools: Map<string, MutableToolUsage>;
}

const numberFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const fmt = (n: number): string => numberFormat.format(n);

/** The estimate for when the model's `countTokens` is not available (util/tokens.ts). */
export { estimateTokens };

/** {@link estimateTokens} of a value's JSON (a tool definition, arguments, a result). */
export function estimateJsonTokens(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value === 'string') return estimateTokens(value);
  try {
    return estimateTokens(JSON.stringify(value));
  } catch {
    return 0;
  }
}

export class CostMonitor {
  /** Problems in the limits given; each bad value was replaced by its default. */
  readonly issues: string[] = [];
  private limitsValue: CostLimits;
  private readonly buckets = new Map<number, Bucket>();
  private pause: CostPause | undefined;
  /** The latest minute seen: a clock that steps back does not reopen old buckets. */
  private lastMinute = Number.NEGATIVE_INFINITY;

  constructor(limits: Partial<CostLimits> = {}, private readonly now: () => number = Date.now) {
    this.limitsValue = this.validate(limits);
  }

  get limits(): CostLimits {
    return this.limitsValue;
  }

  /**
   * Changes the limits (settings edited). A pause whose limit no longer holds under the new limits ends,
   * so raising the cap is as good as resuming.
   */
  configure(limits: Partial<CostLimits>): void {
    this.issues.length = 0;
    this.limitsValue = this.validate(limits);
    if (!this.pause) return;
    const minute = this.currentMinute();
    const stillHolds = this.limitsValue.enabled && (this.pause.limit === 'hourly-cap' ? this.capCrossed() : this.spikeCrossed(minute));
    if (!stillHolds) this.pause = undefined;
  }

  /** Adds usage to the current minute, then checks both limits. */
  record(usage: UsageRecord): RecordOutcome {
    const minute = this.currentMinute();
    const bucket = this.bucketAt(minute);
    bucket.prompt += count(usage.promptTokens);
    bucket.completion += count(usage.completionTokens);
    bucket.calls += usage.calls === undefined ? 1 : count(usage.calls);
    for (const charge of usage.tools ?? []) {
      const tokens = count(charge.tokens);
      if (!charge.name || tokens === 0) continue;
      let tool = bucket.tools.get(charge.name);
      if (!tool) bucket.tools.set(charge.name, (tool = { tokens: 0, definition: 0, arguments: 0, result: 0 }));
      tool.tokens += tokens;
      if (charge.part) tool[charge.part] += tokens;
    }
    if (this.pause || !this.limitsValue.enabled) return {};
    this.pause = this.capCrossed() ?? this.spikeCrossed(minute);
    return this.pause ? { pausedNow: this.pause } : {};
  }

  isPaused(): boolean {
    return this.pause !== undefined;
  }

  /** Why the router is paused, with the message to show; undefined when it is not. */
  get pausedReason(): CostPause | undefined {
    return this.pause;
  }

  /**
   * Ends the pause and accepts the usage so far: the limits count only usage recorded after this, so
   * the next request does not pause again at once. The buckets (and the panel's view) keep it all.
   * Returns whether the router was paused.
   */
  resume(): boolean {
    const wasPaused = this.pause !== undefined;
    this.pause = undefined;
    this.prune(this.currentMinute());
    for (const bucket of this.buckets.values()) bucket.accepted = bucket.prompt + bucket.completion;
    return wasPaused;
  }

  /** Forgets all usage, and with it any pause. */
  resetWindow(): void {
    this.buckets.clear();
    this.pause = undefined;
  }

  snapshot(topTools = DEFAULT_TOP_TOOLS): CostSnapshot {
    const minute = this.currentMinute();
    const buckets: BucketSnapshot[] = [];
    const totals = { promptTokens: 0, completionTokens: 0, tokens: 0, calls: 0 };
    for (let m = minute - WINDOW_MINUTES + 1; m <= minute; m++) {
      const b = this.buckets.get(m);
      const prompt = b?.prompt ?? 0;
      const completion = b?.completion ?? 0;
      buckets.push({ start: m * MINUTE_MS, promptTokens: prompt, completionTokens: completion, tokens: prompt + completion, calls: b?.calls ?? 0 });
      totals.promptTokens += prompt;
      totals.completionTokens += completion;
      totals.calls += b?.calls ?? 0;
    }
    totals.tokens = totals.promptTokens + totals.completionTokens;
    const rates = this.rates(minute);
    return {
      now: this.now(),
      buckets,
      totals,
      countedTokens: this.countedTokens(),
      limits: this.limitsValue,
      shortWindowRate: rates.shortWindowRate,
      baselineRate: rates.baselineRate,
      baselineMinutes: rates.baselineMinutes,
      spikeRuleActive: this.limitsValue.spikeMultiplier > 0 && rates.baselineRate >= this.limitsValue.minimumBaselineTokensPerMinute && rates.baselineMinutes > 0,
      ...(this.pause ? { paused: this.pause } : {}),
      topTools: this.toolUsage(minute - WINDOW_MINUTES + 1, minute).slice(0, Math.max(0, topTools)),
    };
  }

  // -------------------------------------------------------------------------------------------------

  private capCrossed(): CostPause | undefined {
    const cap = this.limitsValue.hourlyTokenCap;
    if (cap <= 0) return undefined;
    const tokens = this.countedTokens();
    if (tokens < cap) return undefined;
    return {
      limit: 'hourly-cap',
      at: this.now(),
      tokens,
      cap,
      message:
        `The router is paused: ${fmt(tokens)} tokens in the last hour reached the cap of ${fmt(cap)} (${COST_SETTING_KEYS.hourlyTokenCap}). ` +
        `Run "${COST_COMMAND_TITLES.resume}" to continue, or raise the cap.`,
    };
  }

  private spikeCrossed(minute: number): CostPause | undefined {
    const { spikeMultiplier, minimumBaselineTokensPerMinute, shortWindowMinutes } = this.limitsValue;
    if (spikeMultiplier <= 0) return undefined;
    const { shortWindowRate, baselineRate, baselineMinutes } = this.rates(minute);
    if (baselineMinutes === 0 || baselineRate < minimumBaselineTokensPerMinute) return undefined; // the cold-start guard
    if (!(shortWindowRate > baselineRate * spikeMultiplier)) return undefined;
    const topTool = this.toolUsage(minute - shortWindowMinutes + 1, minute)[0];
    const blame = topTool ? ` The most came from ${topTool.name} (${fmt(topTool.tokens)} tokens${partsNote(topTool)}).` : '';
    return {
      limit: 'spike',
      at: this.now(),
      shortWindowRate,
      baselineRate,
      multiplier: spikeMultiplier,
      shortWindowMinutes,
      ...(topTool ? { topTool } : {}),
      message:
        `The router is paused: usage spiked to ${fmt(shortWindowRate)} tokens a minute over the last ${shortWindowMinutes} minutes, ` +
        `more than ${spikeMultiplier} × the ${fmt(baselineRate)} tokens a minute of the other active minutes this hour (${COST_SETTING_KEYS.spikeMultiplier}).${blame} ` +
        `Run "${COST_COMMAND_TITLES.resume}" to continue, or raise the multiplier.`,
    };
  }

  /** Short-window rate (counted tokens, over the full window length) and the baseline of the other active minutes (all tokens). */
  private rates(minute: number): { shortWindowRate: number; baselineRate: number; baselineMinutes: number } {
    const n = this.limitsValue.shortWindowMinutes;
    let shortTokens = 0;
    let baselineTokens = 0;
    let baselineMinutes = 0;
    for (const b of this.buckets.values()) {
      if (b.minute <= minute - WINDOW_MINUTES || b.minute > minute) continue;
      const tokens = b.prompt + b.completion;
      if (b.minute > minute - n) shortTokens += tokens - b.accepted;
      else if (tokens > 0) {
        baselineTokens += tokens;
        baselineMinutes++;
      }
    }
    return { shortWindowRate: shortTokens / n, baselineRate: baselineMinutes ? baselineTokens / baselineMinutes : 0, baselineMinutes };
  }

  private countedTokens(): number {
    let sum = 0;
    for (const b of this.buckets.values()) sum += b.prompt + b.completion - b.accepted;
    return sum;
  }

  private toolUsage(fromMinute: number, toMinute: number): ToolUsage[] {
    const byName = new Map<string, MutableToolUsage>();
    for (const b of this.buckets.values()) {
      if (b.minute < fromMinute || b.minute > toMinute) continue;
      for (const [name, usage] of b.tools) {
        const sum = byName.get(name) ?? { tokens: 0, definition: 0, arguments: 0, result: 0 };
        sum.tokens += usage.tokens;
        sum.definition += usage.definition;
        sum.arguments += usage.arguments;
        sum.result += usage.result;
        byName.set(name, sum);
      }
    }
    return [...byName.entries()].map(([name, u]) => ({ name, ...u })).sort((a, b) => b.tokens - a.tokens || a.name.localeCompare(b.name));
  }

  /** The current minute, never earlier than one already seen; buckets that left the hour are dropped. */
  private currentMinute(): number {
    const minute = Math.max(Math.floor(this.now() / MINUTE_MS), this.lastMinute);
    if (minute !== this.lastMinute) {
      this.lastMinute = minute;
      this.prune(minute);
    }
    return minute;
  }

  private prune(minute: number): void {
    for (const m of [...this.buckets.keys()]) if (m <= minute - WINDOW_MINUTES) this.buckets.delete(m);
  }

  private bucketAt(minute: number): Bucket {
    let bucket = this.buckets.get(minute);
    if (!bucket) this.buckets.set(minute, (bucket = { minute, prompt: 0, completion: 0, calls: 0, accepted: 0, tools: new Map() }));
    return bucket;
  }

  private validate(limits: Partial<CostLimits>): CostLimits {
    const d = DEFAULT_COST_LIMITS;
    const check = (key: keyof Omit<CostLimits, 'enabled'>, ok: (v: number) => boolean, rule: string): number => {
      const v = limits[key];
      if (v === undefined) return d[key];
      if (typeof v === 'number' && Number.isFinite(v) && ok(v)) return v;
      this.issues.push(`${COST_SETTING_KEYS[key]} ${rule}, got ${JSON.stringify(v)}; using ${d[key]}.`);
      return d[key];
    };
    if (limits.enabled !== undefined && typeof limits.enabled !== 'boolean') this.issues.push(`${COST_SETTING_KEYS.enabled} must be true or false, got ${JSON.stringify(limits.enabled)}; using ${d.enabled}.`);
    return {
      enabled: typeof limits.enabled === 'boolean' ? limits.enabled : d.enabled,
      hourlyTokenCap: check('hourlyTokenCap', (v) => v >= 0, 'must be 0 (no cap) or a positive number of tokens'),
      shortWindowMinutes: check('shortWindowMinutes', (v) => Number.isInteger(v) && v >= 1 && v < WINDOW_MINUTES, `must be a whole number of minutes from 1 to ${WINDOW_MINUTES - 1}`),
      spikeMultiplier: check('spikeMultiplier', (v) => v === 0 || v > 1, 'must be 0 (no spike rule) or more than 1'),
      minimumBaselineTokensPerMinute: check('minimumBaselineTokensPerMinute', (v) => v >= 0, 'must be 0 or more tokens a minute'),
    };
  }
}

function count(n: number | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

const PART_LABELS = { result: 'results', arguments: 'arguments', definition: 'definitions' } as const;

function partsNote(u: ToolUsage): string {
  const parts = (['result', 'arguments', 'definition'] as const).filter((p) => u[p] > 0).map((p) => `${PART_LABELS[p]} ${fmt(u[p])}`);
  return parts.length ? `: ${parts.join(', ')}` : '';
}
