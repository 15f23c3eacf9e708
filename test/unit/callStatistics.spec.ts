import assert from 'node:assert/strict';
import { CallStatistics, MAX_TRACKED_TOOLS, STATS_WINDOW, percentile, percentiles } from '../../src/core/router/callStatistics';

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe('callStatistics', () => {
  describe('percentile (nearest rank)', () => {
    const sample = [15, 20, 35, 40, 50];

    it('returns the nearest-rank value on a known sample', () => {
      // Rank = ceil(p/100 * n): the textbook example from the nearest-rank method.
      assert.equal(percentile(sample, 5), 15);
      assert.equal(percentile(sample, 30), 20);
      assert.equal(percentile(sample, 40), 20);
      assert.equal(percentile(sample, 50), 35);
      assert.equal(percentile(sample, 100), 50);
    });

    it('returns the smallest value for p = 0 and the largest for p above 100', () => {
      assert.equal(percentile(sample, 0), 15);
      assert.equal(percentile(sample, 150), 50);
    });

    it('sorts numerically, not as strings, and does not reorder its input', () => {
      const unsorted = [100, 9, 20, 3];
      assert.equal(percentile(unsorted, 50), 9);
      assert.equal(percentile(unsorted, 75), 20);
      assert.deepEqual(unsorted, [100, 9, 20, 3]);
    });

    it('gives p50, p95 and p99 of 1..100 as 50, 95 and 99', () => {
      assert.deepEqual(percentiles(range(1, 100)), { p50: 50, p95: 95, p99: 99 });
    });

    it('gives p50, p95 and p99 of 1..1000 as 500, 950 and 990', () => {
      assert.deepEqual(percentiles(range(1, 1000).reverse()), { p50: 500, p95: 950, p99: 990 });
    });

    it('returns the single value of a one-element sample', () => {
      assert.deepEqual(percentiles([7]), { p50: 7, p95: 7, p99: 7 });
    });

    it('returns 0 for an empty sample', () => {
      assert.equal(percentile([], 50), 0);
      assert.deepEqual(percentiles([]), { p50: 0, p95: 0, p99: 0 });
    });
  });

  describe('CallStatistics', () => {
    it('returns undefined for a tool never called', () => {
      assert.equal(new CallStatistics().get('nope'), undefined);
    });

    it('counts calls and errors per tool', () => {
      const stats = new CallStatistics();
      stats.record('a', 10, 100, true);
      stats.record('a', 20, 200, false);
      stats.record('a', 30, 300, false);
      stats.record('b', 5, 50, true);
      assert.equal(stats.get('a')!.calls, 3);
      assert.equal(stats.get('a')!.errors, 2);
      assert.equal(stats.get('b')!.calls, 1);
      assert.equal(stats.get('b')!.errors, 0);
    });

    it('reports latency and size percentiles separately', () => {
      const stats = new CallStatistics();
      for (const v of range(1, 100)) stats.record('t', v, v * 10, true);
      assert.deepEqual(stats.get('t'), {
        calls: 100,
        errors: 0,
        latencyMs: { p50: 50, p95: 95, p99: 99 },
        bytes: { p50: 500, p95: 950, p99: 990 },
      });
    });

    it(`keeps only the last STATS_WINDOW (${STATS_WINDOW}) calls for percentiles but counts every call`, () => {
      const stats = new CallStatistics();
      for (const v of range(1, 1500)) stats.record('t', v, v, v % 2 === 0);
      const s = stats.get('t')!;
      assert.equal(s.calls, 1500);
      assert.equal(s.errors, 750);
      // The window holds 501..1500; over all 1,500 calls p50 would be 750.
      assert.deepEqual(s.latencyMs, { p50: 1000, p95: 1450, p99: 1490 });
      assert.deepEqual(s.bytes, { p50: 1000, p95: 1450, p99: 1490 });
    });

    it('forgets old slow calls once a full window of fast ones has passed', () => {
      const stats = new CallStatistics();
      for (let i = 0; i < STATS_WINDOW; i++) stats.record('t', 10_000, 1, true);
      for (let i = 0; i < STATS_WINDOW - 11; i++) stats.record('t', 1, 1, true);
      // 11 slow calls of 1,000 are left: more than 1%, so p99 is still slow, p95 no longer.
      assert.deepEqual(stats.get('t')!.latencyMs, { p50: 1, p95: 1, p99: 10_000 });
      for (let i = 0; i < 11; i++) stats.record('t', 1, 1, true);
      assert.deepEqual(stats.get('t')!.latencyMs, { p50: 1, p95: 1, p99: 1 });
    });

    it('keeps the window correct across several wrap-arounds', () => {
      const stats = new CallStatistics();
      for (const v of range(1, STATS_WINDOW * 3 + 7)) stats.record('t', v, v, true);
      const last = STATS_WINDOW * 3 + 7;
      assert.deepEqual(stats.get('t')!.latencyMs, percentiles(range(last - STATS_WINDOW + 1, last)));
    });

    it('lists every tool in name order', () => {
      const stats = new CallStatistics();
      stats.record('zeta', 1, 1, true);
      stats.record('alpha', 2, 2, false);
      stats.record('Mid', 3, 3, true);
      const all = stats.all();
      assert.deepEqual(Object.keys(all), ['Mid', 'alpha', 'zeta']);
      assert.deepEqual(all['alpha'], { calls: 1, errors: 1, latencyMs: { p50: 2, p95: 2, p99: 2 }, bytes: { p50: 2, p95: 2, p99: 2 } });
    });

    it('returns an empty record when nothing was called', () => {
      assert.deepEqual(new CallStatistics().all(), {});
    });
  });
});

describe('CallStatistics bound', () => {
  it('keeps at most MAX_TRACKED_TOOLS tools, dropping the least recently called', () => {
    const max = MAX_TRACKED_TOOLS;
    const stats = new CallStatistics();
    stats.record('kept', 1, 1, true);
    for (let i = 0; i < max; i++) {
      stats.record(`t${i}`, 1, 1, true);
      if (i === max - 10) stats.record('kept', 1, 1, true); // called again recently: survives
    }
    const all = stats.all();
    assert.equal(Object.keys(all).length, max);
    assert.ok(all['kept'], 'a recently called tool is kept');
    assert.equal(all['t0'], undefined, 'the least recently called tool was dropped');
  });
});
