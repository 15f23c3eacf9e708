import assert from 'node:assert/strict';
import { formatSelection } from '../../../src/cli/selectCommands';
import { l2Normalize, type Embedder } from '../../../src/core/embedding/embedder';
import { callPolicy } from '../../../src/core/policy/callPolicy';
import { NEAR_MISS_COUNT, ordinal } from '../../../src/core/selection/nearMisses';
import { explainText } from '../../../src/core/selection/selectionText';
import type { SelectableTool, Selection } from '../../../src/core/selection/selectionTypes';
import { ToolIndex, embeddingTextFor } from '../../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector, type LexicalScorer, type SelectionOptions } from '../../../src/core/selection/toolSelector';

/**
 * A FAKE embedder: each tool text maps to the cosine we choose with the query (1, 0), so which tools are
 * sent, and so which are near misses, follows from the numbers. The real model has its own tests.
 */
class ScriptedFakeEmbedder implements Embedder {
  readonly modelId = 'fake:scripted';
  readonly dimension = 2;
  constructor(private readonly cosineOf: ReadonlyMap<string, number>) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const c = this.cosineOf.get(t);
      return l2Normalize(Float32Array.from(c === undefined ? [1, 0] : [c, Math.sqrt(Math.max(0, 1 - c * c))]));
    });
  }
  async dispose(): Promise<void> {}
}

/** Tools t00, t01, … whose cosines with the prompt fall in this order. */
function tools(cosines: readonly number[]): SelectableTool[] {
  return cosines.map((_, i) => ({ name: `s_t${String(i).padStart(2, '0')}`, server: 's', description: `tool number ${i}` }));
}

async function select(cosines: readonly number[], options: Partial<SelectionOptions> = {}, extra: { quarantine?: Map<string, string>; lexical?: LexicalScorer; embed?: boolean; mark?: (t: SelectableTool, i: number) => SelectableTool; turn?: { sticky: string[] }; pinned?: string[] } = {}): Promise<Selection> {
  const catalogue = tools(cosines).map((t, i) => extra.mark?.(t, i) ?? t);
  const index = extra.embed === false ? undefined : new ToolIndex(new ScriptedFakeEmbedder(new Map(catalogue.map((t, i) => [embeddingTextFor(t), cosines[i]!]))));
  const selector = new ToolSelector(
    { ...DEFAULT_SELECTION_OPTIONS, lexicalWeight: 0, serverBoost: 0, ...options },
    { ...(index ? { index } : {}), ...(extra.quarantine ? { quarantine: () => extra.quarantine! } : {}), ...(extra.lexical ? { createLexical: () => extra.lexical! } : {}) },
  );
  selector.setCatalogue(catalogue);
  await index?.whenReady();
  if (extra.turn) selector.sticky.record(1, extra.turn.sticky);
  return selector.select({ prompt: 'q', ...(extra.turn ? { turn: 2 } : {}), ...(extra.pinned ? { pinned: extra.pinned } : {}) });
}

/** 30 tools, cosines 0.95 down to 0.66 in steps of 0.01: a steady slope. */
const SLOPE = Array.from({ length: 30 }, (_, i) => 0.95 - i * 0.01);

describe('near misses: the best tools that were not sent', () => {
  it('lists the next ten ranked tools after those sent, best first, with their scores', async () => {
    const sel = await select(SLOPE, { minTools: 3, depth: 0.2 });
    const sent = sel.tools.map((t) => t.name);
    assert.ok(sent.length >= 3 && sent.length < 20, `sent ${sent.length}`);
    const next = sel.ranking.map((r) => r.name).filter((n) => !sent.includes(n)).slice(0, NEAR_MISS_COUNT);
    assert.equal(NEAR_MISS_COUNT, 10);
    assert.deepEqual(sel.nearMisses.map((n) => n.name), next);
    for (const [k, n] of sel.nearMisses.entries()) {
      assert.equal(n.why, 'below-cutoff');
      assert.ok(n.score < sel.threshold, `${n.name} scored ${n.score}, under the cutoff ${sel.threshold}`);
      assert.equal(n.reason, `score ${n.score.toFixed(2)} under the cutoff ${sel.threshold.toFixed(2)}; ranked ${ordinal(sent.length + k + 1)}`);
      assert.ok(n.cosine !== undefined && Math.abs(n.cosine - SLOPE[Number(n.name.slice(3))]!) < 1e-6, 'the cosine is kept');
      assert.equal(n.score, sel.ranking.find((r) => r.name === n.name)!.score);
    }
  });

  it('lists fewer than ten when fewer were ranked, and none when every tool was sent', async () => {
    const few = await select([0.9, 0.8, 0.7, 0.1, 0.05, 0], { minTools: 2, depth: 0 });
    assert.deepEqual(few.nearMisses.map((n) => n.name), ['s_t02', 's_t03', 's_t04', 's_t05']);
    const all = await select([0.9, 0.8, 0.7], { minTools: 3 });
    assert.deepEqual(all.nearMisses, []);
  });

  it('says "below-count" when its score (or minTools) would do but the count stopped at the cap', async () => {
    // minTools 8 asks for more than the cap of 5 allows; depth 0 puts the cutoff at the best score.
    const sel = await select(SLOPE, { minTools: 8, depth: 0, cap: 5 });
    assert.equal(sel.tools.length, 5);
    assert.deepEqual(
      sel.nearMisses.slice(0, 4).map((n) => [n.name, n.why, n.reason]),
      [
        ['s_t05', 'below-count', 'ranked 6th; 5 tools were sent, the cap'],
        ['s_t06', 'below-count', 'ranked 7th; 5 tools were sent, the cap'],
        ['s_t07', 'below-count', 'ranked 8th; 5 tools were sent, the cap'],
        ['s_t08', 'below-cutoff', `score ${sel.nearMisses[3]!.score.toFixed(2)} under the cutoff ${sel.threshold.toFixed(2)}; ranked 9th`],
      ],
    );
  });

  it('says "over-cap" for a ranked tool the tiered cap removed, and "policy" for one a policy keeps out', async () => {
    const capped = await select([0.9, 0.8, 0.7, 0.6, 0.1, 0.1, 0.1], { cap: 4, minTools: 3, depth: 0, coreTools: ['s_t06'] }, { turn: { sticky: ['s_t03'] } });
    assert.deepEqual(capped.tools.map((t) => t.name), ['s_t06', 's_t03', 's_t00', 's_t01']);
    const overCap = capped.nearMisses.find((n) => n.name === 's_t02');
    assert.equal(overCap?.why, 'over-cap');
    assert.equal(overCap?.reason, 'ranked 3rd; over the cap of 4 (tier 2)');

    const destructive = (t: SelectableTool, i: number): SelectableTool => (i === 0 ? { ...t, annotations: { destructiveHint: true } } : t);
    const kept = await select([0.9, 0.8, 0.7, 0.6, 0.05], { minTools: 2, depth: 0, callPolicy: callPolicy('never'), allowedTools: ['s_t00', 's_t01', 's_t02', 's_t04'] }, { mark: destructive, quarantine: new Map([['s_t02', 'hidden instructions']]) });
    assert.deepEqual(kept.tools.map((t) => t.name), ['s_t01', 's_t04']);
    const byName = new Map(kept.nearMisses.map((n) => [n.name, n]));
    assert.equal(byName.get('s_t00')?.why, 'policy');
    assert.match(byName.get('s_t00')!.reason, /^ranked 1st; marked destructive, and the policy is "never"/);
    assert.equal(byName.get('s_t02')?.why, 'policy');
    assert.equal(byName.get('s_t02')?.reason, 'ranked 3rd; quarantined: hidden instructions');
    // Below the cutoff too, but outside the allowed tools: no cutoff would let it through, so the policy is the reason.
    assert.equal(byName.get('s_t03')?.why, 'policy');
    assert.match(byName.get('s_t03')!.reason, /^ranked 4th; not in the allowed tools/);
  });

  it('uses the lexical ranking without an embedder, and lists nothing when nothing was ranked', async () => {
    const lexical: LexicalScorer = { score: () => [0, 5, 0, 1, 4] };
    const sel = await select([0, 0, 0, 0, 0], { minTools: 1, lexicalZThreshold: 1.5 }, { embed: false, lexical });
    assert.equal(sel.method, 'keyword-only');
    assert.deepEqual(sel.tools.map((t) => t.name), ['s_t01']);
    assert.deepEqual(sel.nearMisses.map((n) => [n.name, n.why, n.lexical, n.cosine]), [
      ['s_t04', 'below-cutoff', 4, undefined],
      ['s_t03', 'below-cutoff', 1, undefined],
      ['s_t00', 'below-cutoff', 0, undefined],
      ['s_t02', 'below-cutoff', 0, undefined],
    ]);
    assert.match(sel.nearMisses[0]!.reason, /under the cutoff 1\.50; ranked 2nd$/, 'keyword-only needs the z-score threshold');
    const none = await select([0, 0, 0], {}, { embed: false });
    assert.deepEqual(none.ranking, []);
    assert.deepEqual(none.nearMisses, []);
  });

  it('lists nothing when the prompt pinned its tools (the selectors did not run)', async () => {
    const sel = await select(SLOPE, {}, { pinned: ['s_t29'] });
    assert.equal(sel.method, 'required_tools');
    assert.deepEqual(sel.nearMisses, []);
  });
});

describe('near misses for people', () => {
  it('the CLI and Explain print them as "not sent", with why, the reason and the scores', async () => {
    const sel = await select(SLOPE, { minTools: 3, depth: 0.2 });
    const first = sel.nearMisses[0]!;
    const line = `${first.name}  (below-cutoff) ${first.reason} (cosine ${first.cosine!.toFixed(2)})`;
    const cli = formatSelection(sel).split('\n');
    const cliAt = cli.indexOf('not sent (the best 10 ranked tools left out):');
    assert.ok(cliAt > 0, 'the CLI has a "not sent" section');
    assert.equal(cli[cliAt + 1], `  ${line}`);
    const explain = explainText(sel).split('\n');
    const explainAt = explain.indexOf('Not sent (the best 10 ranked tools that were not sent):');
    assert.ok(explainAt > 0, 'Explain has a "Not sent" section');
    assert.equal(explain[explainAt + 1], `~ ${line}`);
    assert.equal(explain.filter((l) => l.startsWith('~ ')).length, 10);
  });

  it('prints the score beside the reason when the reason does not give it', async () => {
    const sel = await select(SLOPE, { minTools: 8, depth: 0, cap: 5 });
    const line = formatSelection(sel).split('\n').find((l) => l.includes('s_t05'))!;
    assert.equal(line, `  s_t05  (below-count) ranked 6th; 5 tools were sent, the cap (score ${sel.nearMisses[0]!.score.toFixed(2)}, cosine ${sel.nearMisses[0]!.cosine!.toFixed(2)})`);
  });

  it('prints no "not sent" section when every ranked tool was sent', async () => {
    const sel = await select([0.9, 0.8, 0.7], { minTools: 3 });
    assert.doesNotMatch(formatSelection(sel), /not sent/);
    assert.doesNotMatch(explainText(sel), /Not sent/);
  });

  it('writes ordinals as people do', () => {
    assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112].map(ordinal), ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '101st', '111th', '112th']);
  });
});
