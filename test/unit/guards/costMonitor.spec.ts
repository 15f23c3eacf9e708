import assert from 'node:assert/strict';
import {
  COST_COMMAND_TITLES,
  COST_SETTING_KEYS,
  CostMonitor,
  DEFAULT_COST_LIMITS,
  DEFAULT_HOURLY_TOKEN_CAP,
  DEFAULT_MINIMUM_BASELINE_TOKENS_PER_MINUTE,
  DEFAULT_SHORT_WINDOW_MINUTES,
  DEFAULT_SPIKE_MULTIPLIER,
  DEFAULT_TOP_TOOLS,
  MINUTE_MS,
  WINDOW_MINUTES,
  estimateJsonTokens,
  estimateTokens,
  type CostLimits,
  type CostPause,
} from '../../../src/core/guards/costMonitor';
import { CHARS_PER_TOKEN } from '../../../src/core/util/tokens';

/** A clock the test moves by hand, starting at the top of a minute. */
class ManualClock {
  t = Math.floor(1_760_000_000_000 / MINUTE_MS) * MINUTE_MS;
  readonly start = this.t;
  now = (): number => this.t;
  advanceMinutes(n: number): void {
    this.t += n * MINUTE_MS;
  }
  advanceMs(ms: number): void {
    this.t += ms;
  }
  /** Start (ms) of the minute `n` minutes after the clock's start. */
  minute(n: number): number {
    return this.start + n * MINUTE_MS;
  }
}

function monitor(limits: Partial<CostLimits> = {}): { clock: ManualClock; cost: CostMonitor } {
  const clock = new ManualClock();
  return { clock, cost: new CostMonitor(limits, clock.now) };
}

/** Only the hourly cap: the spike rule off. */
const CAP_ONLY = { spikeMultiplier: 0 };
/** Only the spike rule: the cap off. */
const SPIKE_ONLY = { hourlyTokenCap: 0 };

function pauseOf(cost: CostMonitor): CostPause {
  const pause = cost.pausedReason;
  assert.ok(pause, 'expected the router to be paused');
  return pause;
}

describe('cost monitor', () => {
  describe('defaults and estimates', () => {
    it('are the seed 000 cost controls', () => {
      assert.equal(DEFAULT_HOURLY_TOKEN_CAP, 250_000);
      assert.equal(DEFAULT_SHORT_WINDOW_MINUTES, 5);
      assert.equal(DEFAULT_SPIKE_MULTIPLIER, 3);
      assert.equal(DEFAULT_MINIMUM_BASELINE_TOKENS_PER_MINUTE, 1000);
      assert.equal(WINDOW_MINUTES, 60);
      assert.deepEqual(DEFAULT_COST_LIMITS, { enabled: true, hourlyTokenCap: 250_000, shortWindowMinutes: 5, spikeMultiplier: 3, minimumBaselineTokensPerMinute: 1000 });
      assert.deepEqual(new CostMonitor().limits, DEFAULT_COST_LIMITS);
    });

    it('estimates tokens as ceil(chars / 4), as seed 001 does', () => {
      assert.equal(CHARS_PER_TOKEN, 4);
      assert.equal(estimateTokens(''), 0);
      assert.equal(estimateTokens(undefined), 0);
      assert.equal(estimateTokens('a'), 1);
      assert.equal(estimateTokens('abcd'), 1);
      assert.equal(estimateTokens('abcde'), 2);
      assert.equal(estimateTokens('x'.repeat(4000)), 1000);
    });

    it('estimates the tokens of a JSON value from its JSON text', () => {
      assert.equal(estimateJsonTokens({ a: 1 }), 2); // {"a":1} is 7 characters
      assert.equal(estimateJsonTokens('abcdefgh'), 2);
      assert.equal(estimateJsonTokens(undefined), 0);
      const cyclic: Record<string, unknown> = {};
      cyclic['self'] = cyclic;
      assert.equal(estimateJsonTokens(cyclic), 0);
    });
  });

  describe('buckets', () => {
    it('shows 60 one-minute buckets, oldest first, ending with the current minute', () => {
      const { clock, cost } = monitor();
      clock.advanceMs(30_000);
      cost.record({ promptTokens: 100, completionTokens: 20 });
      const snap = cost.snapshot();
      assert.equal(snap.buckets.length, 60);
      assert.equal(snap.buckets[59]!.start, clock.minute(0));
      assert.equal(snap.buckets[0]!.start, clock.minute(-59));
      for (let i = 1; i < 60; i++) assert.equal(snap.buckets[i]!.start - snap.buckets[i - 1]!.start, MINUTE_MS);
      assert.deepEqual(snap.buckets[59], { start: clock.minute(0), promptTokens: 100, completionTokens: 20, tokens: 120, calls: 1 });
      assert.deepEqual(snap.totals, { promptTokens: 100, completionTokens: 20, tokens: 120, calls: 1 });
      assert.equal(snap.now, clock.t);
    });

    it('adds usage within a minute to one bucket, and counts calls (1 unless said)', () => {
      const { clock, cost } = monitor();
      cost.record({ promptTokens: 100, completionTokens: 10 });
      clock.advanceMs(59_999);
      cost.record({ promptTokens: 50, completionTokens: 5, calls: 3 });
      const last = cost.snapshot().buckets[59]!;
      assert.deepEqual(last, { start: clock.minute(0), promptTokens: 150, completionTokens: 15, tokens: 165, calls: 4 });
    });

    it('rolls over after 1 minute into a new bucket', () => {
      const { clock, cost } = monitor();
      cost.record({ promptTokens: 100, completionTokens: 0 });
      clock.advanceMinutes(1);
      cost.record({ promptTokens: 200, completionTokens: 0 });
      const b = cost.snapshot().buckets;
      assert.equal(b[58]!.start, clock.minute(0));
      assert.equal(b[58]!.tokens, 100);
      assert.equal(b[59]!.start, clock.minute(1));
      assert.equal(b[59]!.tokens, 200);
      assert.equal(cost.snapshot().totals.tokens, 300);
    });

    it('keeps a bucket for 59 minutes after its own, and drops it at the 60th', () => {
      const { clock, cost } = monitor();
      cost.record({ promptTokens: 100, completionTokens: 0 });
      clock.advanceMinutes(59);
      let snap = cost.snapshot();
      assert.equal(snap.buckets[0]!.start, clock.minute(0));
      assert.equal(snap.buckets[0]!.tokens, 100);
      assert.equal(snap.totals.tokens, 100);
      clock.advanceMinutes(1);
      snap = cost.snapshot();
      assert.equal(snap.buckets[0]!.start, clock.minute(1));
      assert.equal(snap.totals.tokens, 0);
      assert.ok(snap.buckets.every((b) => b.tokens === 0 && b.calls === 0));
    });

    it('after a 2-hour jump shows an empty hour, and new usage lands in the new current minute', () => {
      const { clock, cost } = monitor();
      for (let i = 0; i < 10; i++) {
        cost.record({ promptTokens: 1000, completionTokens: 100, tools: [{ name: 'kb_search', tokens: 500 }] });
        clock.advanceMinutes(1);
      }
      clock.advanceMinutes(120);
      let snap = cost.snapshot();
      assert.deepEqual(snap.totals, { promptTokens: 0, completionTokens: 0, tokens: 0, calls: 0 });
      assert.deepEqual(snap.topTools, []);
      assert.equal(snap.buckets[59]!.start, clock.minute(130));
      cost.record({ promptTokens: 7, completionTokens: 0 });
      snap = cost.snapshot();
      assert.equal(snap.totals.tokens, 7);
      assert.equal(snap.buckets[59]!.tokens, 7);
    });

    it('never reopens an old bucket when the clock steps back', () => {
      const { clock, cost } = monitor();
      clock.advanceMinutes(5);
      cost.record({ promptTokens: 10, completionTokens: 0 });
      clock.advanceMinutes(-3);
      cost.record({ promptTokens: 5, completionTokens: 0 });
      const snap = cost.snapshot();
      assert.equal(snap.buckets[59]!.start, clock.minute(5));
      assert.equal(snap.buckets[59]!.tokens, 15);
    });

    it('ignores negative or non-numeric token counts', () => {
      const { cost } = monitor();
      cost.record({ promptTokens: -5, completionTokens: Number.NaN, calls: -1 });
      assert.deepEqual(cost.snapshot().totals, { promptTokens: 0, completionTokens: 0, tokens: 0, calls: 0 });
    });
  });

  describe('hourly cap', () => {
    it('pauses when the hour reaches the cap, once, with a message that says what to do', () => {
      const { cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 1000 });
      assert.deepEqual(cost.record({ promptTokens: 500, completionTokens: 99 }), {});
      assert.equal(cost.isPaused(), false);
      const outcome = cost.record({ promptTokens: 400, completionTokens: 1 });
      assert.ok(outcome.pausedNow);
      assert.equal(cost.isPaused(), true);
      const pause = pauseOf(cost);
      assert.equal(pause.limit, 'hourly-cap');
      if (pause.limit !== 'hourly-cap') return;
      assert.equal(pause.tokens, 1000);
      assert.equal(pause.cap, 1000);
      assert.equal(pause.message, `The router is paused: 1,000 tokens in the last hour reached the cap of 1,000 (${COST_SETTING_KEYS.hourlyTokenCap}). Run "${COST_COMMAND_TITLES.resume}" to continue, or raise the cap.`);
      // Usage still arriving (calls already in flight) is counted; the pause and its reason stay.
      assert.deepEqual(cost.record({ promptTokens: 10, completionTokens: 0 }), {});
      assert.equal(cost.snapshot().totals.tokens, 1010);
      assert.equal(pauseOf(cost), pause);
    });

    it('counts the whole sliding hour, across minutes', () => {
      const { clock, cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 400_000 });
      for (let i = 0; i < 40; i++) {
        cost.record({ promptTokens: 10_000, completionTokens: 300 });
        clock.advanceMinutes(1);
      }
      assert.equal(cost.isPaused(), true);
      const pause = pauseOf(cost);
      assert.equal(pause.limit, 'hourly-cap');
      assert.match(pause.message, /^The router is paused: 401,700 tokens in the last hour reached the cap of 400,000 \(toolRouter\.cost\.hourlyTokenCap\)\. Run "Tool Router: Resume" to continue, or raise the cap\.$/);
    });

    it('does not pause when usage that left the window made the hour look big', () => {
      const { clock, cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 1000 });
      cost.record({ promptTokens: 900, completionTokens: 0 });
      clock.advanceMinutes(60);
      cost.record({ promptTokens: 900, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
    });

    it('is off with a cap of 0', () => {
      const { cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 0 });
      cost.record({ promptTokens: 10_000_000, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
    });
  });

  describe('spike rule', () => {
    /** 20 active minutes of 2,000 tokens (a 2,000 tokens/min baseline), then quiet until minute 30. */
    function withBaseline(limits: Partial<CostLimits> = {}): { clock: ManualClock; cost: CostMonitor } {
      const m = monitor({ ...SPIKE_ONLY, ...limits });
      for (let i = 0; i < 20; i++) {
        m.cost.record({ promptTokens: 1500, completionTokens: 500 });
        m.clock.advanceMinutes(1);
      }
      m.clock.advanceMinutes(10);
      return m;
    }

    it('fires when the short-window rate exceeds multiplier × the baseline of the other active minutes', () => {
      const { cost } = withBaseline();
      // 5-minute window: 30,000 tokens is 6,000/min, exactly 3 × 2,000: not more, no pause.
      cost.record({ promptTokens: 30_000, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
      const snap = cost.snapshot();
      assert.equal(snap.shortWindowRate, 6000);
      assert.equal(snap.baselineRate, 2000);
      assert.equal(snap.baselineMinutes, 20);
      assert.equal(snap.spikeRuleActive, true);
      const outcome = cost.record({ promptTokens: 5, completionTokens: 0, tools: [{ name: 'web_fetch', tokens: 20_000, part: 'result' }, { name: 'kb_search', tokens: 3000, part: 'definition' }] });
      assert.ok(outcome.pausedNow);
      const pause = pauseOf(cost);
      assert.equal(pause.limit, 'spike');
      if (pause.limit !== 'spike') return;
      assert.equal(pause.shortWindowRate, 6001);
      assert.equal(pause.baselineRate, 2000);
      assert.equal(pause.multiplier, 3);
      assert.equal(pause.shortWindowMinutes, 5);
      assert.equal(pause.topTool?.name, 'web_fetch');
      assert.equal(
        pause.message,
        'The router is paused: usage spiked to 6,001 tokens a minute over the last 5 minutes, more than 3 × the 2,000 tokens a minute of the other active minutes this hour (toolRouter.cost.spikeMultiplier). ' +
          'The most came from web_fetch (20,000 tokens: results 20,000). Run "Tool Router: Resume" to continue, or raise the multiplier.',
      );
    });

    it('leaves out empty minutes from the baseline: it is the mean of the active ones', () => {
      const { clock, cost } = monitor(SPIKE_ONLY);
      cost.record({ promptTokens: 3000, completionTokens: 0 });
      clock.advanceMinutes(30);
      cost.record({ promptTokens: 1000, completionTokens: 0 });
      clock.advanceMinutes(10);
      const snap = cost.snapshot();
      assert.equal(snap.baselineRate, 2000);
      assert.equal(snap.baselineMinutes, 2);
    });

    it('uses the configured short window and multiplier', () => {
      const { cost } = withBaseline({ shortWindowMinutes: 1, spikeMultiplier: 2 });
      cost.record({ promptTokens: 4000, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
      cost.record({ promptTokens: 1, completionTokens: 0 });
      const pause = pauseOf(cost);
      assert.equal(pause.limit, 'spike');
      assert.match(pause.message, /4,001 tokens a minute over the last 1 minutes, more than 2 × the 2,000/);
    });

    it('has a cold-start guard: no spike against no baseline at all', () => {
      const { cost } = monitor(SPIKE_ONLY);
      cost.record({ promptTokens: 100_000, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
      const snap = cost.snapshot();
      assert.equal(snap.baselineMinutes, 0);
      assert.equal(snap.spikeRuleActive, false);
    });

    it('has a cold-start guard: no spike while the baseline is under the minimum, and one once the guard is lowered', () => {
      const quiet = (limits: Partial<CostLimits>): CostMonitor => {
        const { clock, cost } = monitor({ ...SPIKE_ONLY, ...limits });
        for (let i = 0; i < 10; i++) {
          cost.record({ promptTokens: 500, completionTokens: 0 }); // a 500 tokens/min baseline, under 1,000
          clock.advanceMinutes(1);
        }
        clock.advanceMinutes(10);
        cost.record({ promptTokens: 50_000, completionTokens: 0 }); // 10,000/min: 20 × the baseline
        return cost;
      };
      const guarded = quiet({});
      assert.equal(guarded.isPaused(), false);
      assert.equal(guarded.snapshot().spikeRuleActive, false);
      assert.equal(guarded.snapshot().baselineRate, 500);
      const unguarded = quiet({ minimumBaselineTokensPerMinute: 0 });
      assert.equal(unguarded.isPaused(), true);
      assert.equal(pauseOf(unguarded).limit, 'spike');
    });

    it('is off with a multiplier of 0', () => {
      const { cost } = withBaseline({ spikeMultiplier: 0 });
      cost.record({ promptTokens: 1_000_000, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
      assert.equal(cost.snapshot().spikeRuleActive, false);
    });

    it('reports the cap first when one record crosses both limits', () => {
      const { cost } = withBaseline({ hourlyTokenCap: 60_000 });
      cost.record({ promptTokens: 30_000, completionTokens: 0 });
      assert.equal(pauseOf(cost).limit, 'hourly-cap');
    });
  });

  describe('resume and reset', () => {
    it('resume ends a cap pause and accepts the usage so far, so the next request does not pause again at once', () => {
      const { clock, cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 1000 });
      cost.record({ promptTokens: 1200, completionTokens: 0 });
      assert.equal(cost.isPaused(), true);
      assert.equal(cost.resume(), true);
      assert.equal(cost.isPaused(), false);
      assert.equal(cost.pausedReason, undefined);
      clock.advanceMinutes(1);
      cost.record({ promptTokens: 100, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
      const snap = cost.snapshot();
      assert.equal(snap.totals.tokens, 1300); // the panel still shows all of it
      assert.equal(snap.countedTokens, 100);
      // Another cap's worth after the resume pauses again.
      cost.record({ promptTokens: 900, completionTokens: 0 });
      const pause = pauseOf(cost);
      assert.equal(pause.limit, 'hourly-cap');
      if (pause.limit === 'hourly-cap') assert.equal(pause.tokens, 1000);
    });

    it('resume ends a spike pause, and the same spike does not fire again', () => {
      const m = monitor(SPIKE_ONLY);
      for (let i = 0; i < 20; i++) {
        m.cost.record({ promptTokens: 2000, completionTokens: 0 });
        m.clock.advanceMinutes(1);
      }
      m.clock.advanceMinutes(10);
      m.cost.record({ promptTokens: 40_000, completionTokens: 0 });
      assert.equal(pauseOf(m.cost).limit, 'spike');
      m.cost.resume();
      m.cost.record({ promptTokens: 2000, completionTokens: 0 });
      assert.equal(m.cost.isPaused(), false);
      assert.equal(m.cost.snapshot().shortWindowRate, 400);
    });

    it('resume returns false when the router was not paused', () => {
      const { cost } = monitor();
      assert.equal(cost.resume(), false);
    });

    it('resetWindow forgets all usage and the pause', () => {
      const { cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 1000 });
      cost.record({ promptTokens: 1000, completionTokens: 0, tools: [{ name: 'a', tokens: 10 }] });
      assert.equal(cost.isPaused(), true);
      cost.resetWindow();
      assert.equal(cost.isPaused(), false);
      const snap = cost.snapshot();
      assert.deepEqual(snap.totals, { promptTokens: 0, completionTokens: 0, tokens: 0, calls: 0 });
      assert.equal(snap.countedTokens, 0);
      assert.deepEqual(snap.topTools, []);
      cost.record({ promptTokens: 999, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
    });

    it('a pause stays until resumed, even after its usage has left the window', () => {
      const { clock, cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 1000 });
      cost.record({ promptTokens: 1000, completionTokens: 0 });
      clock.advanceMinutes(120);
      assert.equal(cost.isPaused(), true);
      assert.equal(cost.snapshot().paused?.limit, 'hourly-cap');
    });
  });

  describe('configure', () => {
    it('ends a cap pause when the cap is raised above the usage, and keeps it otherwise', () => {
      const { cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 1000 });
      cost.record({ promptTokens: 1500, completionTokens: 0 });
      cost.configure({ ...CAP_ONLY, hourlyTokenCap: 1200 });
      assert.equal(cost.isPaused(), true);
      cost.configure({ ...CAP_ONLY, hourlyTokenCap: 2000 });
      assert.equal(cost.isPaused(), false);
      assert.equal(cost.limits.hourlyTokenCap, 2000);
    });

    it('ends any pause when the monitor is disabled, and then only counts', () => {
      const { cost } = monitor({ ...CAP_ONLY, hourlyTokenCap: 1000 });
      cost.record({ promptTokens: 1500, completionTokens: 0 });
      cost.configure({ enabled: false, hourlyTokenCap: 1000 });
      assert.equal(cost.isPaused(), false);
      cost.record({ promptTokens: 5000, completionTokens: 0 });
      assert.equal(cost.isPaused(), false);
      assert.equal(cost.snapshot().totals.tokens, 6500);
    });

    it('does not pause by itself when a limit is lowered; the next record does', () => {
      const { cost } = monitor(CAP_ONLY);
      cost.record({ promptTokens: 1500, completionTokens: 0 });
      cost.configure({ ...CAP_ONLY, hourlyTokenCap: 1000 });
      assert.equal(cost.isPaused(), false);
      cost.record({ promptTokens: 1, completionTokens: 0 });
      assert.equal(cost.isPaused(), true);
    });

    it('reports bad limits and uses the defaults for them', () => {
      const cost = new CostMonitor({ hourlyTokenCap: -1, shortWindowMinutes: 60, spikeMultiplier: 1, minimumBaselineTokensPerMinute: Number.NaN, enabled: 'yes' as unknown as boolean });
      assert.deepEqual(cost.limits, DEFAULT_COST_LIMITS);
      assert.equal(cost.issues.length, 5);
      assert.match(cost.issues.join('\n'), /toolRouter\.cost\.enabled must be true or false, got "yes"; using true\./);
      assert.match(cost.issues.join('\n'), /toolRouter\.cost\.hourlyTokenCap must be 0 \(no cap\) or a positive number of tokens, got -1; using 250000\./);
      assert.match(cost.issues.join('\n'), /toolRouter\.cost\.shortWindowMinutes must be a whole number of minutes from 1 to 59, got 60; using 5\./);
      assert.match(cost.issues.join('\n'), /toolRouter\.cost\.spikeMultiplier must be 0 \(no spike rule\) or more than 1, got 1; using 3\./);
      cost.configure({});
      assert.deepEqual(cost.issues, []);
    });
  });

  describe('tool blame', () => {
    it('ranks tools by the tokens charged to them this hour, with the parts they came from', () => {
      const { clock, cost } = monitor();
      cost.record({ promptTokens: 5000, completionTokens: 100, tools: [{ name: 'github_search', tokens: 1200, part: 'definition' }, { name: 'files_read', tokens: 300, part: 'definition' }] });
      clock.advanceMinutes(3);
      cost.record({ promptTokens: 9000, completionTokens: 50, tools: [{ name: 'files_read', tokens: 6000, part: 'result' }, { name: 'files_read', tokens: 40, part: 'arguments' }, { name: 'github_search', tokens: 1200, part: 'definition' }] });
      cost.record({ promptTokens: 10, completionTokens: 0, tools: [{ name: 'memory_get', tokens: 5 }, { name: 'ignored', tokens: 0 }, { name: '', tokens: 9 }] });
      const top = cost.snapshot().topTools;
      assert.deepEqual(top, [
        { name: 'files_read', tokens: 6340, definition: 300, arguments: 40, result: 6000 },
        { name: 'github_search', tokens: 2400, definition: 2400, arguments: 0, result: 0 },
        { name: 'memory_get', tokens: 5, definition: 0, arguments: 0, result: 0 },
      ]);
      // Charges attribute the tokens; they do not add to them.
      assert.equal(cost.snapshot().totals.tokens, 14_160);
    });

    it('breaks ties by name, limits the list, and forgets charges that left the hour', () => {
      const { clock, cost } = monitor();
      const tools = Array.from({ length: DEFAULT_TOP_TOOLS + 5 }, (_, i) => ({ name: `t${String(i).padStart(2, '0')}`, tokens: 10 }));
      cost.record({ promptTokens: 200, completionTokens: 0, tools });
      assert.deepEqual(cost.snapshot().topTools.map((t) => t.name), tools.slice(0, DEFAULT_TOP_TOOLS).map((t) => t.name));
      assert.equal(cost.snapshot(3).topTools.length, 3);
      clock.advanceMinutes(30);
      cost.record({ promptTokens: 200, completionTokens: 0, tools: [{ name: 'late', tokens: 5 }] });
      clock.advanceMinutes(30);
      assert.deepEqual(cost.snapshot().topTools.map((t) => t.name), ['late']);
    });

    it('blames the spike on the tool with the most tokens in the short window, not in the hour', () => {
      const { clock, cost } = monitor(SPIKE_ONLY);
      for (let i = 0; i < 20; i++) {
        cost.record({ promptTokens: 2000, completionTokens: 0, tools: [{ name: 'old_heavy', tokens: 1900, part: 'definition' }] });
        clock.advanceMinutes(1);
      }
      clock.advanceMinutes(10);
      cost.record({ promptTokens: 40_000, completionTokens: 0, tools: [{ name: 'web_fetch', tokens: 30_000, part: 'result' }, { name: 'web_fetch', tokens: 100, part: 'arguments' }] });
      const pause = pauseOf(cost);
      assert.equal(pause.limit, 'spike');
      if (pause.limit !== 'spike') return;
      assert.equal(pause.topTool?.name, 'web_fetch');
      assert.match(pause.message, /The most came from web_fetch \(30,100 tokens: results 30,000, arguments 100\)\./);
      assert.equal(cost.snapshot().topTools[0]!.name, 'old_heavy'); // 38,000 over the hour
    });

    it('leaves the blame out of a spike message when no tool was charged', () => {
      const { clock, cost } = monitor(SPIKE_ONLY);
      for (let i = 0; i < 20; i++) {
        cost.record({ promptTokens: 2000, completionTokens: 0 });
        clock.advanceMinutes(1);
      }
      clock.advanceMinutes(10);
      cost.record({ promptTokens: 40_000, completionTokens: 0 });
      assert.doesNotMatch(pauseOf(cost).message, /most came from/);
    });
  });
});
