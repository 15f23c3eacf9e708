import assert from 'node:assert/strict';
import { creditAlternatives, needRecall, selectedAt, sentAll, type QueryOutcome } from '../../../src/core/evaluation/selectionEvaluation';
import type { DataQuery } from '../../../src/core/evaluation/retrievalData';

const q = (gold: string[], general?: string[]): DataQuery => ({ id: 'q', split: 'test', query: 'x', gold, ...(general ? { general } : {}) });

describe('selection evaluation', () => {
  it('credits an equally good tool as the need it meets, once, at its best position', () => {
    const query = q(['calc_add', 'crm_find'], ['calc_add']);
    const alternatives = (_: DataQuery, g: string): string[] => (g === 'calc_add' ? ['calc_add', 'calc_mul', 'calc_div'] : []);
    const [credited] = creditAlternatives([query], [['crm_find', 'calc_mul', 'other', 'calc_div', 'calc_add']], alternatives);
    assert.deepEqual(credited, ['crm_find', 'calc_add', 'other']);
  });

  it('counts sent_all per request, and general-purpose recall over needs pooled', () => {
    const queries = [q(['a', 'b'], ['b']), q(['c'])];
    assert.equal(sentAll(queries, [['a', 'b', 'z'], ['d']]), 50);
    assert.deepEqual(needRecall(queries, [['b'], ['c']], (x) => x.general ?? [], 25), { recall: 100, needs: 1 });
    assert.deepEqual(needRecall(queries, [['a'], ['c']], (x) => x.general ?? [], 25), { recall: 0, needs: 1 });
  });

  it('draws the count rule at other depths from one outcome, with the extra picks and the cap', () => {
    const outcome: QueryOutcome = { id: 'q', ranked: ['t1', 't2', 't3', 't4', 't5'], scores: [10, 8, 5, 2, 0], selected: [], latencyMs: 0, extras: [{ name: 'g', score: -1 }] };
    // cap 5: last score 0, so depth 0.5 keeps scores ≥ 5.
    assert.deepEqual(selectedAt(outcome, 0.5, 1, 5), ['t1', 't2', 't3', 'g']);
    assert.deepEqual(selectedAt(outcome, 0, 2, 5), ['t1', 't2', 'g']);
    assert.deepEqual(selectedAt(outcome, 1, 1, 3), ['t1', 't2', 't3']);
  });
});
