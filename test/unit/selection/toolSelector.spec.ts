import assert from 'node:assert/strict';
import { callPolicy } from '../../../src/core/policy/callPolicy';
import { l2Normalize, type Embedder } from '../../../src/core/embedding/embedder';
import { KeywordStage } from '../../../src/core/selection/keywordStage';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';
import { StickyWindow } from '../../../src/core/selection/stickyTools';
import { ToolIndex, embeddingTextFor } from '../../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, rankIndices, topIndices, ToolSelector, zScores, type LexicalScorer, type SelectionOptions } from '../../../src/core/selection/toolSelector';

/**
 * A FAKE embedder for stage-logic tests: each text maps to a vector we choose, so cosines are exact and
 * the threshold / minTools / topK rules can be checked number by number. The real ONNX engine has its
 * own tests (test/unit/embedding).
 */
class ScriptedFakeEmbedder implements Embedder {
  readonly modelId = 'fake:scripted';
  readonly dimension = 2;
  calls = 0;
  fail = false;
  constructor(private readonly vectorFor: (text: string) => [number, number]) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls++;
    if (this.fail) throw new Error('scripted failure');
    return texts.map((t) => l2Normalize(Float32Array.from(this.vectorFor(t))));
  }
  async dispose(): Promise<void> {}
}

/** Tool i gets cosine `cos[i]` with the query, which is the unit vector (1, 0). */
function catalogue(cos: number[], server = 's'): { tools: SelectableTool[]; embedder: ScriptedFakeEmbedder } {
  const tools = cos.map((_, i) => ({ name: `${server}_t${String(i).padStart(2, '0')}`, server, description: `tool number ${i}` }));
  const byText = new Map(tools.map((t, i) => [embeddingTextFor(t), cos[i]!]));
  const embedder = new ScriptedFakeEmbedder((text) => {
    const c = byText.get(text);
    if (c === undefined) return [1, 0]; // the query
    return [c, Math.sqrt(Math.max(0, 1 - c * c))];
  });
  return { tools, embedder };
}

async function selector(tools: SelectableTool[], embedder: Embedder | undefined, options: Partial<SelectionOptions> = {}, lexical?: (tools: readonly SelectableTool[]) => LexicalScorer): Promise<ToolSelector> {
  const index = embedder ? new ToolIndex(embedder) : undefined;
  const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, lexicalWeight: 0, ...options }, { ...(index ? { index } : {}), ...(lexical ? { createLexical: lexical } : {}) });
  s.setCatalogue(tools);
  await index?.whenReady();
  return s;
}

describe('keyword stage', () => {
  const names = ['github_create_issue', 'github_list_prs', 'gmail_send', 'gmail_search', 'files_read_file'];
  it('expands globs, routes prompts to groups and applies default groups when no route matches', () => {
    const stage = new KeywordStage(
      {
        groups: { mail: ['gmail_*'], code: ['github_*', 'files_read_file'] },
        routes: [{ name: 'email', pattern: '\\b(e-?mail|inbox)\\b', groups: ['mail'] }],
        defaultGroups: ['code'],
      },
      ['github', 'gmail', 'files'],
    );
    assert.deepEqual([...stage.match('check my inbox', names).entries()], [['gmail_send', ['keyword:email']], ['gmail_search', ['keyword:email']]]);
    assert.deepEqual([...stage.match('anything else', names).keys()], ['github_create_issue', 'github_list_prs', 'files_read_file']);
    assert.deepEqual(stage.match('anything else', names).get('files_read_file'), ['keyword:default']);
  });

  it('makes every server a group of its own', () => {
    const stage = new KeywordStage({ groups: {}, routes: [{ pattern: 'pull request', groups: ['github'] }], defaultGroups: [] }, ['github', 'gmail']);
    assert.deepEqual([...stage.match('open a pull request', names).keys()], ['github_create_issue', 'github_list_prs']);
  });

  it('reports invalid regexes and unknown groups instead of throwing', () => {
    const stage = new KeywordStage({ groups: {}, routes: [{ name: 'bad', pattern: '([a-z', groups: ['x'] }, { pattern: 'ok', groups: ['nope'] }], defaultGroups: ['missing'] }, []);
    assert.equal(stage.issues.length, 3);
    assert.match(stage.issues[0]!, /Route "bad" has an invalid regular expression/);
    assert.match(stage.issues[1]!, /group "nope", which does not exist/);
    assert.match(stage.issues[2]!, /Default group "missing"/);
    assert.equal(stage.match('ok', names).size, 0);
  });
});

describe('selection: the count follows the scores', () => {
  it('always sends minTools, then every tool within `depth` of the drop from the best score to the last', async () => {
    const cos = [0.9, 0.8, 0.7, 0.6, 0.5, 0.45, 0.4, 0.35, 0.31, 0.29, 0.1, 0.05];
    const { tools, embedder } = catalogue(cos);
    const z = zScores(Float64Array.from(cos));
    // A depth reaching exactly past the sixth tool's score (12 tools, so the last score is the lowest).
    const depth = (z[0]! - z[5]!) / (z[0]! - z[11]!) + 1e-6;
    const sel = await (await selector(tools, embedder, { minTools: 3, depth })).select({ prompt: 'q' });
    assert.equal(sel.method, 'embedding+keyword');
    assert.deepEqual(sel.tools.map((t) => t.name), ['s_t00', 's_t01', 's_t02', 's_t03', 's_t04', 's_t05']);
    assert.match(sel.tools[0]!.reason, /top 3/);
    assert.match(sel.tools[4]!.reason, /≥ cutoff .* \(best /);
    assert.ok(Math.abs(sel.threshold - (z[0]! - depth * (z[0]! - z[11]!))) < 1e-6, 'the cutoff is reported');
    assert.deepEqual(sel.tools.map((t) => t.stages), Array(6).fill(['embedding']));
    assert.equal(sel.ranking.length, cos.length, 'every score is kept for display');
    assert.ok(Math.abs((sel.ranking[0]!.cosine ?? 0) - 0.9) < 1e-6);
  });

  it('sends more tools when the scores are flat than when one tool stands out', async () => {
    const flat = catalogue(Array.from({ length: 12 }, (_, i) => 0.6 - i * 0.02));
    const peaked = catalogue([0.9, ...Array.from({ length: 11 }, (_, i) => 0.12 - i * 0.005)]);
    const flatSel = await (await selector(flat.tools, flat.embedder, { minTools: 1, depth: 0.5 })).select({ prompt: 'q' });
    const peakedSel = await (await selector(peaked.tools, peaked.embedder, { minTools: 1, depth: 0.5 })).select({ prompt: 'q' });
    assert.equal(peakedSel.tools.length, 1);
    assert.ok(flatSel.tools.length >= 3, `flat scores sent ${flatSel.tools.length}`);
  });

  it('keeps minTools even when every other score is far below the best', async () => {
    const { tools, embedder } = catalogue([0.9, 0.1, 0.05, 0.01, 0, -0.1, -0.2]);
    const sel = await (await selector(tools, embedder, { minTools: 5, depth: 0 })).select({ prompt: 'q' });
    assert.equal(sel.tools.length, 5);
  });

  it('never sends more than the cap', async () => {
    const { tools, embedder } = catalogue(Array.from({ length: 30 }, (_, i) => 0.95 - i * 0.01));
    const sel = await (await selector(tools, embedder, { minTools: 5, depth: 1, cap: 15 })).select({ prompt: 'q' });
    assert.equal(sel.tools.length, 15);
  });
});

describe('selection: merge order, sticky, pinned, core, filters and cap', () => {
  it('puts embedding picks first and keyword-only picks after them, union without duplicates', async () => {
    const { tools, embedder } = catalogue([0.9, 0.8, 0.1, 0.05]);
    const s = await selector(tools, embedder, { minTools: 2, depth: 0, keyword: { groups: { g: ['s_t03', 's_t00'] }, routes: [{ name: 'r', pattern: 'q', groups: ['g'] }], defaultGroups: [] } });
    const sel = await s.select({ prompt: 'q' });
    assert.deepEqual(sel.tools.map((t) => t.name), ['s_t00', 's_t01', 's_t03']);
    assert.deepEqual(sel.tools[0]!.stages, ['embedding', 'keyword:r']);
    assert.equal(sel.tools[2]!.tier, 3);
  });

  it('injects sticky tools from the last turns, newest first, at most max, not core tools', () => {
    const w = new StickyWindow(3, 2);
    w.record(1, ['a', 'b']);
    w.record(2, ['c']);
    w.record(3, ['d', 'core_x']);
    assert.deepEqual(w.get(4, (n) => n.startsWith('core_')), [{ name: 'd', turn: 3 }, { name: 'c', turn: 2 }]);
    const wide = new StickyWindow(3, 8);
    wide.record(1, ['a']);
    wide.record(2, ['b']);
    wide.record(5, ['c']);
    assert.deepEqual(wide.get(6).map((e) => e.name), ['c'], 'turns beyond the lookback are trimmed');
  });

  it('adds sticky tools to the selection with their turn', async () => {
    const { tools, embedder } = catalogue([0.9, 0.8, 0.7, 0.1]);
    const s = await selector(tools, embedder, { minTools: 1, depth: 0 });
    s.sticky.record(4, ['s_t03']);
    const sel = await s.select({ prompt: 'q', turn: 5 });
    const sticky = sel.tools.find((t) => t.name === 's_t03');
    assert.deepEqual(sticky?.stages, ['sticky:4']);
    assert.equal(sticky?.tier, 1);
  });

  it('lets pinned tools bypass the selectors and reports method=required_tools', async () => {
    const { tools, embedder } = catalogue([0.9, 0.8, 0.7, 0.1]);
    const s = await selector(tools, embedder, { coreTools: ['s_t02'] });
    const before = embedder.calls;
    const sel = await s.select({ prompt: 'q', pinned: ['s_t03', 'ghost_tool'] });
    assert.equal(sel.method, 'required_tools');
    assert.deepEqual(sel.tools.map((t) => [t.name, t.stages]), [['s_t02', ['core']], ['s_t03', ['required']]]);
    assert.equal(embedder.calls, before, 'the prompt was not embedded');
    assert.match(sel.issues.join('\n'), /Pinned tool "ghost_tool" is not in the catalogue/);
  });

  it('offers destructive tools marked "asks before it runs" by default, and removes them under "never"', async () => {
    const { tools, embedder } = catalogue([0.9, 0.8, 0.7]);
    const marked = tools.map((t, i) => (i === 0 ? { ...t, annotations: { destructiveHint: true } } : t));
    const sel = await (await selector(marked, embedder, { minTools: 3 })).select({ prompt: 'q' });
    const destructive = sel.tools.find((t) => t.name === 's_t00');
    assert.equal(destructive?.confirm, true);
    assert.match(destructive?.reason ?? '', /asks before it runs/);
    assert.equal(sel.tools.find((t) => t.name === 's_t01')?.confirm, undefined);
    const always = await (await selector(marked, embedder, { minTools: 3, callPolicy: callPolicy('always') })).select({ prompt: 'q' });
    assert.equal(always.tools.find((t) => t.name === 's_t00')?.confirm, undefined, '"always" runs without asking');
  });

  it('removes destructive tools under "never" and tools outside the whitelist, with reasons', async () => {
    const { tools, embedder } = catalogue([0.9, 0.8, 0.7]);
    const marked = tools.map((t, i) => (i === 0 ? { ...t, annotations: { destructiveHint: true } } : t));
    const s = await selector(marked, embedder, { minTools: 3, callPolicy: callPolicy('never'), allowedTools: ['s_t00', 's_t01'] });
    const sel = await s.select({ prompt: 'q' });
    assert.deepEqual(sel.tools.map((t) => t.name), ['s_t01']);
    assert.deepEqual(sel.dropped.map((d) => [d.name, d.by]).sort(), [['s_t00', 'destructive'], ['s_t02', 'whitelist']]);
    const optIn = await (await selector(marked, embedder, { minTools: 3, callPolicy: callPolicy('always') })).select({ prompt: 'q' });
    assert.ok(optIn.tools.some((t) => t.name === 's_t00'));
  });

  it('does not let filtered tools take the places minTools guarantees', async () => {
    const { tools, embedder } = catalogue([0.9, 0.8, 0.7, 0.6, 0.05, 0.04]);
    const marked = tools.map((t, i) => (i === 0 ? { ...t, annotations: { destructiveHint: true } } : t));
    const sel = await (await selector(marked, embedder, { minTools: 3, depth: 0, callPolicy: callPolicy('never') })).select({ prompt: 'q' });
    assert.deepEqual(sel.tools.map((t) => t.name), ['s_t01', 's_t02', 's_t03']);
    assert.deepEqual(sel.dropped.map((d) => [d.name, d.by]), [['s_t00', 'destructive']]);
  });

  it('caps in tiers: core and sticky, then scored by score, then keyword-only by name; lists the dropped', async () => {
    const { tools, embedder } = catalogue([0.9, 0.8, 0.7, 0.6, 0.1, 0.1, 0.1]);
    const s = await selector(tools, embedder, {
      cap: 4,
      minTools: 3,
      depth: 0,
      coreTools: ['s_t06'],
      keyword: { groups: { g: ['s_t05', 's_t04'] }, routes: [{ name: 'r', pattern: 'q', groups: ['g'] }], defaultGroups: [] },
    });
    s.sticky.record(1, ['s_t03']);
    const sel = await s.select({ prompt: 'q', turn: 2 });
    assert.deepEqual(sel.tools.map((t) => t.name), ['s_t06', 's_t03', 's_t00', 's_t01']);
    assert.deepEqual(sel.dropped.map((d) => [d.name, d.by]), [['s_t02', 'cap'], ['s_t04', 'cap'], ['s_t05', 'cap']]);
    assert.match(sel.dropped[0]!.reason, /over the cap of 4 \(tier 2\)/);
  });

  it('falls back to keywords (lexical ranking and routes) when the embedder fails, and says so', async () => {
    const { tools, embedder } = catalogue([0.9, 0.8, 0.7, 0.6]);
    embedder.fail = true;
    const lexical = (): LexicalScorer => ({ score: () => [0, 5, 0, 1] });
    const s = await selector(tools, embedder, { minTools: 1, lexicalZThreshold: 1.5 }, lexical);
    const sel = await s.select({ prompt: 'q' });
    assert.equal(sel.method, 'keyword-only');
    assert.match(sel.methodNote ?? '', /failed.*keywords only/);
    assert.deepEqual(sel.tools.map((t) => t.name), ['s_t01']);
    assert.deepEqual(sel.tools[0]!.stages, ['keyword:lexical']);
  });

  it('runs keyword-only while there is no embedder at all', async () => {
    const { tools } = catalogue([0, 0, 0]);
    const s = await selector(tools, undefined, { keyword: { groups: {}, routes: [], defaultGroups: ['s'] } });
    const sel = await s.select({ prompt: 'q' });
    assert.equal(sel.method, 'keyword-only');
    assert.deepEqual(sel.tools.map((t) => t.stages[0]), ['keyword:default', 'keyword:default', 'keyword:default']);
  });

  it('estimates tokens of the chosen tools against the whole catalogue', async () => {
    const { tools, embedder } = catalogue([0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]);
    const sel = await (await selector(tools, embedder, { minTools: 1, depth: 0 })).select({ prompt: 'q' });
    assert.ok(sel.tokens.selected > 0 && sel.tokens.selected < sel.tokens.catalogue);
  });
});

describe('zScores', () => {
  it('standardises present entries and leaves absent ones at 0', () => {
    const z = zScores(Float64Array.from([1, 2, 3, 100]), Uint8Array.from([1, 1, 1, 0]));
    assert.ok(Math.abs(z[1]!) < 1e-12);
    assert.ok(z[2]! > 0 && z[0]! < 0);
    assert.equal(z[3], 0);
  });

  it('takes the spread as at least minSd, so one non-zero value among zeros stays modest', () => {
    const values = Float64Array.from([1.3, ...new Array<number>(199).fill(0)]);
    assert.ok(zScores(values)[0]! > 14, 'the plain spread makes it huge');
    assert.ok(Math.abs(zScores(values, undefined, 0.45)[0]! - (1.3 - 1.3 / 200) / 0.45) < 1e-9);
    const wide = Float64Array.from([1, 2, 3, 4]);
    assert.deepEqual(zScores(wide, undefined, 0.45), zScores(wide), 'a wider spread is unchanged');
  });
});

describe('a lone lexical match beside the model', () => {
  /** Twelve tools: "memory_remember" is the model's clear best; "law_research" alone matches a word. */
  function loneMatch(): { tools: SelectableTool[]; embedder: ScriptedFakeEmbedder; lexical: (tools: readonly SelectableTool[]) => LexicalScorer } {
    const cos = [0.45, 0.4, 0.02, ...Array.from({ length: 9 }, (_, i) => 0.2 - 0.02 * i)];
    const names = ['memory_remember', 'memory_recall', 'law_research', ...Array.from({ length: 9 }, (_, i) => `other${i}_x`)];
    const tools = names.map((name) => ({ name, server: name.split('_')[0]!, description: `${name} tool` }));
    const byText = new Map(tools.map((t, i) => [embeddingTextFor(t), cos[i]!]));
    const embedder = new ScriptedFakeEmbedder((text) => {
      const c = byText.get(text);
      return c === undefined ? [1, 0] : [c, Math.sqrt(Math.max(0, 1 - c * c))];
    });
    // A FAKE lexical scorer: one word of the prompt ("travel") occurs in one tool's enum, with a weak score.
    const lexical = (): LexicalScorer => ({ score: () => names.map((n) => (n === 'law_research' ? 1.3 : 0)) });
    return { tools, embedder, lexical };
  }
  const prompt = 'remember what I told you about travel';
  const options = { lexicalWeight: 0.5, serverBoost: 0, clauseWeight: 0, clauseHead: 0, stepHead: 0 };

  it('does not outrank the model’s clear best when the lexical spread is floored', async () => {
    const { tools, embedder, lexical } = loneMatch();
    const s = await (await selector(tools, embedder, options, lexical)).select({ prompt });
    assert.equal(s.ranking[0]!.name, 'memory_remember');
  });

  it('outranked it without the floor (the defect the floor removes)', async () => {
    const { tools, embedder, lexical } = loneMatch();
    const s = await (await selector(tools, embedder, { ...options, lexicalSdFloor: 0 }, lexical)).select({ prompt });
    assert.equal(s.ranking[0]!.name, 'law_research');
  });
});

describe('a one-step prompt that names its app', () => {
  /** Two servers: "acctco" (a made-up name) with weak tools, "chat" with stronger ones. */
  function twoApps(): { tools: SelectableTool[]; embedder: ScriptedFakeEmbedder } {
    const spec: Array<[string, number]> = [
      ['chat_post', 0.6],
      ['chat_list_rooms', 0.55],
      ['chat_members', 0.5],
      ['acctco_list_deals', 0.42],
      ['acctco_get', 0.25],
      ...Array.from({ length: 8 }, (_, i): [string, number] => [`other${i}_x`, 0.2 - 0.02 * i]),
      ['memory_store', 0.28],
    ];
    const tools = spec.map(([name]) => ({ name, server: name.split('_')[0]!, description: `${name} tool` }));
    const byText = new Map(tools.map((t, i) => [embeddingTextFor(t), spec[i]![1]]));
    const embedder = new ScriptedFakeEmbedder((text) => {
      const c = byText.get(text);
      return c === undefined ? [1, 0] : [c, Math.sqrt(Math.max(0, 1 - c * c))];
    });
    return { tools, embedder };
  }
  const options = { serverBoost: 0, clauseWeight: 0, clauseHead: 0, stepHead: 0, companionHead: 0 };
  const rankOf = (s: Awaited<ReturnType<ToolSelector['select']>>, name: string): number => s.ranking.findIndex((r) => r.name === name);
  const withWords = async (tools: SelectableTool[], embedder: Embedder, extra: Partial<SelectionOptions>): Promise<ToolSelector> => {
    const index = new ToolIndex(embedder);
    const dictionary = new Map([['memory', 0]]);
    const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, lexicalWeight: 0, ...options, ...extra }, { index, spelling: { dictionary, known: new Set() } });
    s.setCatalogue(tools);
    await index.whenReady();
    return s;
  };

  it('lifts a made-up app name however weak its tools, and leaves it without the lift', async () => {
    const { tools, embedder } = twoApps();
    const prompt = 'get this month’s deals from acctco and post the total in the team room';
    const on = await (await withWords(tools, embedder, {})).select({ prompt });
    assert.ok(rankOf(on, 'acctco_list_deals') < rankOf(on, 'chat_members'), 'lifted above the other app');
    assert.match(on.tools.find((t) => t.name === 'acctco_list_deals')?.reason ?? '', /the prompt names acctco/);
    const off = await (await withWords(tools, embedder, { promptServerLift: 0 })).select({ prompt });
    assert.ok(rankOf(off, 'acctco_list_deals') > rankOf(off, 'chat_members'));
  });

  it('lifts a name that is also a plain word only when its tools are strong enough', async () => {
    const { tools, embedder } = twoApps();
    const on = await (await withWords(tools, embedder, {})).select({ prompt: 'post from memory what the team said' });
    const off = await (await withWords(tools, embedder, { promptServerLift: 0 })).select({ prompt: 'post from memory what the team said' });
    assert.equal(rankOf(on, 'memory_store'), rankOf(off, 'memory_store'), '0.28 is under half of the best 0.6');
  });
});

describe('topIndices', () => {
  it('returns the same best k as a full sort, ties by index, for many random score sets', () => {
    let seed = 1;
    const rand = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + Math.floor(rand() * 300);
      // Few distinct values, so ties are common.
      const scores = Float64Array.from({ length: n }, () => Math.floor(rand() * 20) / 4);
      const k = 1 + Math.floor(rand() * n);
      assert.deepEqual(topIndices(scores, k), rankIndices(scores).slice(0, k), `n=${n} k=${k}`);
    }
  });
});

describe('server-aware steps in the selector', () => {
  /** Two servers: "docs" has one strong and two weak tools, "misc" one middling tool. */
  function twoServers(): { tools: SelectableTool[]; embedder: ScriptedFakeEmbedder } {
    const spec: Array<[string, string, number]> = [
      ['docs_create', 'docs', 0.9],
      ['docs_add_paragraph', 'docs', 0.3],
      ['docs_export_pdf', 'docs', 0.28],
      ['misc_ping', 'misc', 0.36],
      ...Array.from({ length: 8 }, (_, i): [string, string, number] => [`other${i}_x`, `other${i}`, 0.05 * i - 0.2]),
    ];
    const tools = spec.map(([name, server]) => ({ name, server, description: `${name} tool` }));
    const byText = new Map(tools.map((t, i) => [embeddingTextFor(t), spec[i]![2]]));
    const embedder = new ScriptedFakeEmbedder((text) => {
      const c = byText.get(text);
      if (c === undefined) return [1, 0];
      return [c, Math.sqrt(Math.max(0, 1 - c * c))];
    });
    return { tools, embedder };
  }
  const rankOf = (s: Awaited<ReturnType<ToolSelector['select']>>, name: string): number => s.ranking.findIndex((r) => r.name === name);

  it('the server boost lifts a matching server’s weaker tools above a lone middling match', async () => {
    const { tools, embedder } = twoServers();
    const plain = await (await selector(tools, embedder, { serverBoost: 0, clauseWeight: 0 })).select({ prompt: 'make a report' });
    assert.ok(rankOf(plain, 'misc_ping') < rankOf(plain, 'docs_add_paragraph'), 'without the boost the lone match is ahead');
    const boosted = await (await selector(tools, embedder, { serverBoost: 0.5, clauseWeight: 0 })).select({ prompt: 'make a report' });
    assert.ok(rankOf(boosted, 'docs_add_paragraph') < rankOf(boosted, 'misc_ping'));
    assert.ok(rankOf(boosted, 'docs_export_pdf') < rankOf(boosted, 'misc_ping'));
  });

  it('clause matching scores each request of a multi-request prompt and blends in the best clause', async () => {
    const tools = ['calendar_add', 'mail_send', 'notes_write', 'misc_a', 'misc_b', 'misc_c'].map((name) => ({ name, server: name.split('_')[0]!, description: name }));
    const seen: string[] = [];
    // A FAKE lexical scorer: the whole prompt matches the generic tools; each clause matches one tool.
    const lexical = (): LexicalScorer => ({
      score: (text: string) => {
        seen.push(text);
        if (text === 'book the dentist on friday') return [1, 0, 0, 0, 0, 0];
        if (text === 'send Ana the invoice') return [0, 1, 0, 0, 0, 0];
        return [0.2, 0.2, 0, 1, 0.9, 0.8];
      },
    });
    const prompt = 'book the dentist on friday, then send Ana the invoice';
    const off = await (await selector(tools, undefined, { serverBoost: 0, clauseWeight: 0, clauseHead: 0, stepHead: 0, lexicalWeight: 1 }, lexical)).select({ prompt });
    assert.deepEqual(seen, [prompt]);
    seen.length = 0;
    const on = await (await selector(tools, undefined, { serverBoost: 0, clauseWeight: 0.3, clauseHead: 0, stepHead: 0, lexicalWeight: 1 }, lexical)).select({ prompt });
    assert.deepEqual(seen, [prompt, 'book the dentist on friday', 'send Ana the invoice']);
    const score = (s: typeof on, name: string): number => s.ranking.find((r) => r.name === name)!.score;
    assert.ok(score(on, 'calendar_add') > score(off, 'calendar_add'));
    assert.ok(score(on, 'misc_a') < score(off, 'misc_a'), 'the generic match is blended down');
  });

  it('sends each clause’s best tool even when the whole prompt ranks it low', async () => {
    const tools = ['calendar_add', 'mail_send', 'notes_write', 'misc_a', 'misc_b', 'misc_c'].map((name) => ({ name, server: name.split('_')[0]!, description: name }));
    // A FAKE lexical scorer, as above.
    const lexical = (): LexicalScorer => ({
      score: (text: string) => (text === 'book the dentist on friday' ? [1, 0, 0, 0, 0, 0] : text === 'send Ana the invoice' ? [0, 1, 0, 0, 0, 0] : [0.2, 0.2, 0, 1, 0.9, 0.8]),
    });
    const prompt = 'book the dentist on friday, then send Ana the invoice';
    const options = { serverBoost: 0, clauseWeight: 0, stepHead: 0, lexicalWeight: 1, lexicalZThreshold: 0, minTools: 1, depth: 0 };
    const without = await (await selector(tools, undefined, { ...options, clauseHead: 0 }, lexical)).select({ prompt });
    assert.deepEqual(without.tools.map((t) => t.name), ['misc_a']);
    const withHeads = await (await selector(tools, undefined, { ...options, clauseHead: 1 }, lexical)).select({ prompt });
    assert.deepEqual(withHeads.tools.map((t) => t.name).sort(), ['calendar_add', 'mail_send', 'misc_a']);
    assert.match(withHeads.tools.find((t) => t.name === 'mail_send')!.reason, /best for the clause "send Ana the invoice"/);
  });
});
