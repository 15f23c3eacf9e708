import assert from 'node:assert/strict';
import { splitClauses } from '../../../src/core/selection/clauses';
import { boostByServer, headThenServer, serverStrengths } from '../../../src/core/selection/serverAware';

describe('server-aware ranking', () => {
  const servers = ['docs', 'docs', 'docs', 'mail', 'mail', 'web'];

  it('a server is as strong as the mean of its two best scores', () => {
    const s = serverStrengths([3, 1, 0, 2, -1, 0.5], servers);
    assert.equal(s.get('docs'), 2);
    assert.equal(s.get('mail'), 0.5);
    assert.equal(s.get('web'), 0.5);
  });

  it('the boost lifts a strong server’s weaker tools past a lone match elsewhere', () => {
    const scores = Float64Array.from([3, 1, 0.2, 0.1, -1, 1.2]);
    boostByServer(scores, servers, 0.5);
    // docs (strength 2) +1, mail (−0.45) −0.225, web (one tool, 1.2) +0.6.
    const expected = [4, 2, 1.2, -0.125, -1.225, 1.8];
    expected.forEach((v, i) => assert.ok(Math.abs(scores[i]! - v) < 1e-9, `tool ${i}: ${scores[i]} ≠ ${v}`));
    assert.ok(scores[1]! > scores[5]!, 'docs’ second tool now outranks the lone web match');
  });

  it('is the identity with a single server or weight 0', () => {
    const one = Float64Array.from([1, 2, 3]);
    boostByServer(one, ['a', 'a', 'a'], 0.5);
    assert.deepEqual([...one], [1, 2, 3]);
    const zero = Float64Array.from([1, 2, 3]);
    boostByServer(zero, ['a', 'b', 'c'], 0);
    assert.deepEqual([...zero], [1, 2, 3]);
  });

  it('head-then-server keeps the head, then the strongest server, capping each server in the window', () => {
    const sv = ['a', 'b', 'a', 'c', 'a', 'b', 'a', 'a'];
    const scores = [9, 8, 7, 6, 5, 4, 3, 2];
    const ranked = [0, 1, 2, 3, 4, 5, 6, 7];
    // head 2 → [0 (a), 1 (b)], then a's next tools up to fill 3 → [2, 4, 6], then the rest [3, 5, 7];
    // a may hold 3 of the window of 6: 7 moves past the window.
    assert.deepEqual(headThenServer(ranked, scores, sv, { head: 2, fill: 3, perServerCap: 4, window: 6 }), [0, 1, 2, 4, 6, 3, 5, 7]);
    assert.deepEqual(headThenServer(ranked, scores, sv, { head: 2, fill: 3, perServerCap: 2, window: 6 }), [0, 1, 2, 3, 5, 4, 6, 7]);
  });

  it('head-then-server is the identity with one server', () => {
    assert.deepEqual(headThenServer([2, 0, 1], [1, 0, 2], ['x', 'x', 'x'], { head: 1, fill: 2, perServerCap: 1, window: 3 }), [2, 0, 1]);
  });
});

describe('clause splitting', () => {
  it('splits requests joined by sentence ends and joining words', () => {
    assert.deepEqual(splitClauses('find the march invoice, then email it to Ana. also add a reminder for friday'), ['find the march invoice', 'email it to Ana', 'add a reminder for friday']);
    assert.deepEqual(splitClauses('book a table for two; check the weather in Lisbon'), ['book a table for two', 'check the weather in Lisbon']);
  });

  it('keeps one request whole, and glues fragments to their neighbour', () => {
    assert.deepEqual(splitClauses('what is the weather in Paris'), ['what is the weather in Paris']);
    assert.deepEqual(splitClauses('buy salt and pepper'), ['buy salt and pepper']);
    assert.deepEqual(splitClauses('hi. what is on my calendar tomorrow'), ['hi. what is on my calendar tomorrow']);
  });

  it('does not split a long paste into many clauses', () => {
    const paste = Array.from({ length: 12 }, (_, i) => `sentence number ${i} is here.`).join(' ');
    assert.deepEqual(splitClauses(paste), [paste]);
  });
});
