import assert from 'node:assert/strict';
import { dot, rankIndices, topIndices } from '../../../src/core/selection/rankMath';
import { boostByServerIds, serverIdsOf, serverStrengths } from '../../../src/core/selection/serverAware';
import { ToolIndex } from '../../../src/core/selection/toolIndex';
import type { Embedder } from '../../../src/core/embedding/embedder';

/** The ordering selection promises, written the plain way: best first, ties by index. */
const reference = (scores: ArrayLike<number>): number[] => Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);

let seed = 7;
const rand = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;

describe('rankMath: the same order as a plain sort, without one', () => {
  it('ranks like a comparator sort, ties by index, with few distinct values, -0 beside 0 and infinities', () => {
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(rand() * 400);
      const distinct = 1 + Math.floor(rand() * 12);
      const scores = Float64Array.from({ length: n }, () => {
        const r = rand();
        if (r < 0.05) return -0;
        if (r < 0.07) return r < 0.06 ? Infinity : -Infinity;
        return Math.floor(rand() * distinct) / 3 - 1;
      });
      const expected = reference(scores);
      assert.deepEqual(rankIndices(scores), expected, `n=${n}`);
      for (const k of [1, 2, 5, 6, 31, 32, 33, Math.ceil(n / 2), n - 1, n, n + 5]) {
        if (k < 1) continue;
        assert.deepEqual(topIndices(scores, k), expected.slice(0, k), `n=${n} k=${k}`);
      }
    }
  });

  it('ranks distinct real-valued scores the same way, large k through quickselect', () => {
    const scores = Float64Array.from({ length: 5000 }, () => (rand() - 0.5) * 8);
    const expected = reference(scores);
    assert.deepEqual(topIndices(scores, 1000), expected.slice(0, 1000));
    assert.deepEqual(topIndices(scores, 4), expected.slice(0, 4));
    assert.deepEqual(rankIndices(scores), expected);
  });

  it('still gives the plain order when a score is NaN, and nothing for k = 0', () => {
    const scores = [1, NaN, 3, 2];
    assert.deepEqual(rankIndices(scores), reference(scores));
    assert.deepEqual(topIndices(scores, 2), reference(scores).slice(0, 2));
    assert.deepEqual(topIndices([1, 2], 0), []);
  });

  it('dot sums four lanes, each in order (the tail into the first), then the lanes in order', () => {
    const m = Float32Array.from([0.1, 0.2, 0.3, 0.4, 0.5, 9, 9, 9, 9, 9]);
    const q = Float64Array.from([1, 2, 3, 4, 5]);
    const f = (x: number): number => Math.fround(x);
    assert.equal(dot(m, 0, q, 5), f(0.1) * 1 + f(0.5) * 5 + f(0.2) * 2 + f(0.3) * 3 + f(0.4) * 4);
    assert.equal(dot(m, 5, q, 5), 9 * 15);
  });
});

describe('server boost by numbered servers', () => {
  it('gives the same strengths and boost, to the last bit, as the map of lists', () => {
    for (let trial = 0; trial < 100; trial++) {
      const n = 1 + Math.floor(rand() * 200);
      const names = ['a', 'b', 'c', 'd', 'e'].slice(0, 1 + Math.floor(rand() * 5));
      const servers = Array.from({ length: n }, () => names[Math.floor(rand() * names.length)]!);
      const scores = Float64Array.from({ length: n }, () => (rand() < 0.2 ? 0.5 : rand() * 6 - 3));
      const expected = Float64Array.from(scores);
      const strengths = serverStrengths(expected, servers);
      if (strengths.size >= 2) for (let i = 0; i < n; i++) expected[i] = expected[i]! + 0.5 * strengths.get(servers[i]!)!;
      const { ids, count, names: byId } = serverIdsOf(servers);
      assert.equal(count, new Set(servers).size);
      assert.deepEqual(byId, [...new Set(servers)]);
      servers.forEach((s, i) => assert.equal(byId[ids[i]!], s));
      const boosted = Float64Array.from(scores);
      boostByServerIds(boosted, ids, count, 0.5);
      assert.deepEqual([...boosted], [...expected], `trial ${trial}`);
    }
  });
});

describe('ToolIndex.readiness', () => {
  /** A FAKE embedder that answers at once: readiness is about counting, not about vectors. */
  const instant: Embedder = { modelId: 'fake:instant', dimension: 1, embed: async (texts) => texts.map(() => Float32Array.from([1])), dispose: async () => undefined };

  it('follows updates and background embedding, though it counts only after a change', async () => {
    const index = new ToolIndex(instant);
    assert.deepEqual(index.readiness(), { ready: 0, total: 0 });
    index.update(['a', 'b']);
    assert.deepEqual(index.readiness(), { ready: 0, total: 2 });
    await index.whenReady();
    assert.deepEqual(index.readiness(), { ready: 2, total: 2 });
    index.update(['b', 'c', 'd']);
    assert.deepEqual(index.readiness(), { ready: 1, total: 3 });
    await index.whenReady();
    assert.deepEqual(index.readiness(), { ready: 3, total: 3 });
  });
});
