import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { GENERAL_KINDS, GeneralNeeds, cueText, promptFeatures, readNeedsFile, storeNeedsFile, toolFeatures, type GeneralNeedsFile } from '../../../src/core/selection/generalNeeds';
import { lexicalTerms } from '../../../src/core/selection/lexicalTerms';
import { OnnxEmbedder } from '../../../src/core/embedding/onnxEmbedder';
import { GENERAL_NEEDS_FILE, DEFAULT_MODEL_DIR, loadGeneralNeeds } from '../../../src/core/selection/selectionEngine';
import { ToolSelector, DEFAULT_SELECTION_OPTIONS } from '../../../src/core/selection/toolSelector';
import { LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import { GENERAL_BELOW_BEST, opensPage } from '../../../src/core/selection/generalLift';
import { rankableFor } from '../../../src/core/selection/toolIndex';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const K = GENERAL_KINDS.length;
const row = (kind: string, w: number): number[] => GENERAL_KINDS.map((k) => (k === kind ? w : 0));

/** A hand-made model: the shape #filename and the word "save" call for file_write; a tool named "write" is one. */
function tinyModel(extra: Partial<GeneralNeedsFile> = {}): GeneralNeedsFile {
  return {
    format: 'tool-router-general-needs',
    version: 1,
    kinds: GENERAL_KINDS,
    prompt: { bias: Array(K).fill(-4), weights: { '#filename': row('file_write', 5), 'w:sav': row('file_write', 3) } },
    tool: { bias: Array(K).fill(-4), weights: { 'n:writ': row('file_write', 8) } },
    ...extra,
  };
}

describe('unnamed needs: features', () => {
  it('reads shapes a word list cannot see: paths, file names, URLs, sites, percentages, money', () => {
    const names = (p: string): string[] => promptFeatures(p).map((f) => f.name);
    assert.ok(names('put the summary in ~/notes/week.md').includes('#path'));
    assert.ok(names('put the summary in ~/notes/week.md').includes('#filename'));
    assert.ok(names('what is on https://example.org/menu today').includes('#url'));
    assert.ok(names('compare prices on bestbuy.com').includes('#site'));
    assert.ok(names("what's 18% of that bill").includes('#percent'));
    assert.ok(names('split $120 three ways').includes('#money'));
    assert.ok(names('move the review to friday 13 march 2026').includes('#year'), 'a year makes a date absolute');
    assert.ok(!names('move the review to friday').includes('#year'));
    assert.ok(!names('list my open pull requests').some((n) => n.startsWith('#')), 'no shape in a plain request');
  });

  it('reads a date counted from today, in several languages, and not words that only look like one', () => {
    const surface = (p: string): string | undefined => promptFeatures(p).find((f) => f.name === '#relative_date')?.surface;
    assert.equal(surface('empty the basket if nothing came in today'), 'today');
    assert.equal(surface("set it back to unread from this morning's first message"), 'this morning');
    assert.equal(surface('did it catch anything in the last 15 minutes?'), 'last 15 minutes');
    assert.equal(surface('applications since monday'), 'since monday');
    assert.equal(surface('3 days ago'), '3 days ago');
    assert.equal(surface('明日の朝会の議事録を投稿して'), '明日');
    assert.equal(surface('내일 회의가 10시로 바뀌었다고 올려줘'), '내일');
    assert.equal(surface('¿qué tiempo hará mañana en Sevilla?'), 'mañana');
    for (const plain of ['sort by last name', 'go to the next page', 'the monday report template', 'a hierarchy of folders', 'the horizon line']) assert.equal(surface(plain), undefined, plain);
  });

  it('quotes the whole number a shape cuts, not the digit or two its pattern needs', () => {
    const surface = (p: string, name: string): string | undefined => promptFeatures(p).find((f) => f.name === name)?.surface;
    assert.equal(surface('compute 443 * 349 for me', '#arithmetic'), '443 * 349');
    assert.equal(surface("what's 18% of that bill", '#percent'), '18%');
    assert.equal(surface('split the bill of $1,184.50 six ways', '#money'), '$1,184.50');
    assert.equal(surface('square root of 2209.', '#number'), '2209', 'a full stop after the number is not part of it');
    assert.equal(surface('put it in ~/notes/week.md', '#path'), '~/notes/week.md', 'shapes that are not numbers are unchanged');
  });

  it('keeps the words as the lexical ranker stems them, with the word the user wrote for the reason', () => {
    const f = promptFeatures('Saving the report').find((x) => x.name === `w:${lexicalTerms('saving')[0]}`);
    assert.equal(f?.surface, 'saving');
  });

  it('reads a tool by name, description opening and schema, each group scaled so a long description does not drown the name', () => {
    const short = toolFeatures({ name: 'write_file', description: 'Write a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } });
    const long = toolFeatures({ name: 'write_file', description: `Write a file. ${'Other words here. '.repeat(40)}`, inputSchema: {} });
    assert.equal(short.get('n:writ'), long.get('n:writ'), 'the name weighs the same however long the description');
    assert.ok(short.has('p:path') && short.has('t:string'));
    assert.ok(long.has('s:no-parameters'));
    assert.ok([...long.keys()].filter((k) => k.startsWith('d:')).length <= 40);
  });

  it('says which cue weighed most, in words', () => {
    assert.equal(cueText({ name: '#path', surface: '~/notes/week.md' }), 'the prompt names a file path (~/notes/week.md)');
    assert.equal(cueText({ name: 'w:sav', surface: 'save' }), 'the prompt says "save"');
    assert.equal(cueText(undefined), 'the prompt as a whole');
  });
});

describe('unnamed needs: the models', () => {
  it('scores kinds for prompts and tools from the file, with the strongest cue', () => {
    const needs = new GeneralNeeds(tinyModel());
    const [top] = needs.promptNeeds('save it as notes.md');
    assert.equal(top!.kind, 'file_write');
    assert.ok(top!.probability > 0.9);
    assert.match(top!.cue, /names a file \(notes\.md\)/);
    assert.ok(needs.promptNeeds('hello there')[0]!.probability < 0.05);
    const p = needs.toolProbabilities({ name: 'fs_write', description: '' });
    assert.ok(p[GENERAL_KINDS.indexOf('file_write')]! > 0.8);
  });

  it('uses the vector model only with the embedding model it was trained on', () => {
    const dense = { modelId: 'onnx:test', bias: Array(K).fill(-4), weights: { 'v:0': row('time_now', 10), 'v:1': row('time_now', 0) } };
    const needs = new GeneralNeeds(tinyModel({ promptWithVector: dense }));
    const values = Float32Array.from([1, 0]);
    const time = (n: ReturnType<GeneralNeeds['promptNeeds']>): number => n.find((x) => x.kind === 'time_now')!.probability;
    assert.ok(time(needs.promptNeeds('anything due', { modelId: 'onnx:test', values })) > 0.99);
    assert.ok(time(needs.promptNeeds('anything due', { modelId: 'onnx:other', values })) < 0.05, 'another model falls back to words alone');
  });

  it('refuses a file that is not a needs model, and the engine turns the stage off with the reason', () => {
    assert.throws(() => new GeneralNeeds({ format: 'x' } as unknown as GeneralNeedsFile), /not a general-needs model/);
    const logged: string[] = [];
    assert.equal(loadGeneralNeeds('/nonexistent-root', (m) => logged.push(m)), undefined);
    assert.match(logged[0]!, /could not be read.*train:needs/);
  });

  it('stores a file compactly (version 2) and reads it back to the same weights', () => {
    const file = tinyModel();
    const stored = storeNeedsFile(file);
    assert.equal(stored.version, 2);
    assert.deepEqual(readNeedsFile(JSON.parse(JSON.stringify(stored))), file);
    assert.deepEqual(readNeedsFile(file), file, 'version 1 is read as it is');
    assert.throws(() => readNeedsFile({ ...stored, version: 3 }), /version 3 is not known here.*train:needs/);
    assert.throws(() => readNeedsFile({ ...stored, tool: { ...stored.tool, weights: [1] } }), /1 weights for \d+ features/);
    assert.throws(() => readNeedsFile({ format: 'x' }), /not a general-needs model/);
  });

  it('ships a needs file whose vector model is the bundled embedding model', async function () {
    this.timeout(30_000);
    const file = readNeedsFile(JSON.parse(fs.readFileSync(path.join(ROOT, GENERAL_NEEDS_FILE), 'utf8')));
    const embedder = await OnnxEmbedder.load(path.join(ROOT, DEFAULT_MODEL_DIR));
    try {
      assert.equal(file.promptWithVector?.modelId, embedder.modelId, 'retrain with npm run train:needs after npm run train:model');
    } finally {
      await embedder.dispose();
    }
  });
});

describe('unnamed needs in the selector', () => {
  const tools = [
    { name: 'files_write_file', server: 'files', description: 'Create or overwrite a file', originalName: 'write_file', annotations: { destructiveHint: true } },
    ...['list_issues', 'create_issue', 'close_issue', 'comment_issue', 'assign_issue', 'label_issue', 'open_issues_report', 'summarise_issues', 'watch_issue', 'move_issue'].map((n) => ({ name: `tracker_${n}`, server: 'tracker', description: `${n.replace('_', ' ')} in the tracker`, originalName: n })),
  ];
  const build = (generalBoost: number): ToolSelector => {
    const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, generalBoost, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(tinyModel()) });
    s.setCatalogue(tools);
    return s;
  };

  it('raises the general-purpose tool a cue calls for, with the cue and "asks before it runs" in its reason', async () => {
    const prompt = 'summarise the open issues and save it as notes.md';
    const off = await build(0).select({ prompt });
    assert.ok(!off.tools.some((t) => t.name === 'files_write_file'));
    const on = await build(16).select({ prompt });
    const write = on.tools.find((t) => t.name === 'files_write_file');
    assert.ok(write, JSON.stringify(on.tools.map((t) => t.name)));
    assert.ok(write.stages.includes('general:file_write'));
    assert.match(write.reason, /the prompt names a file \(notes\.md\) → files_write_file \(writes files/);
    assert.match(write.reason, /asks before it runs/);
    assert.equal(write.confirm, true);
    const score = (sel: typeof on): number => sel.ranking.find((r) => r.name === 'files_write_file')!.score;
    assert.ok(score(on) > score(off), `score ${score(on)} with the lift, ${score(off)} without`);
    const fourth = on.ranking.filter((r) => r.name !== 'files_write_file')[3]!.score;
    assert.ok(score(on) < fourth, 'the lift stops below the best four, so the named tools keep their places');
  });

  it('serves a document with the file writer when no tool makes documents, and not when one does', async () => {
    // "pdf" calls for convert_document; a tool named "…pdf…" is one.
    const model = tinyModel({
      prompt: { bias: Array(K).fill(-4), weights: { 'w:pdf': row('convert_document', 6) } },
      tool: { bias: Array(K).fill(-4), weights: { 'n:writ': row('file_write', 8), 'n:pdf': row('convert_document', 8) } },
    });
    const select = async (catalogue: typeof tools) => {
      const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, generalBoost: 16, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(model) });
      s.setCatalogue(catalogue);
      return s.select({ prompt: 'turn the open issues into a short pdf report' });
    };
    const without = await select(tools);
    const write = without.tools.find((t) => t.name === 'files_write_file');
    assert.ok(write, JSON.stringify(without.tools.map((t) => t.name)));
    assert.ok(write.stages.includes('general:file_write'));
    assert.match(write.reason, /and no tool here converts documents → files_write_file \(writes files/);
    const maker = { name: 'docs_make_pdf', server: 'docs', description: 'Make a PDF document from markdown', originalName: 'make_pdf' };
    const withMaker = await select([...tools, maker]);
    assert.ok(withMaker.tools.some((t) => t.name === 'docs_make_pdf' && t.stages.includes('general:convert_document')));
    assert.ok(!withMaker.tools.some((t) => t.name === 'files_write_file'), 'the writer stands in only when no tool makes documents');
  });

  it('lifts the best tool of each server of a needed kind, up to generalServers', async () => {
    // Two file servers, which may reach different folders: the first has two writers, the second one.
    const writer = (server: string, name: string, description: string) => ({ name: `${server}_${name}`, server, description, originalName: name });
    const catalogue = [...tools, writer('files', 'write_text', 'Create or overwrite a file'), writer('disk', 'write_file', 'Store bytes at a path')];
    const scores = async (generalServers: number): Promise<Map<string, number>> => {
      const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, generalBoost: 16, generalServers, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(tinyModel()) });
      s.setCatalogue(catalogue);
      return new Map((await s.select({ prompt: 'summarise the open issues and save it as notes.md' })).ranking.map((r) => [r.name, r.score]));
    };
    const [one, two] = [await scores(1), await scores(2)];
    const lifted = (of: Map<string, number>): number => Math.min(of.get('files_write_file')!, of.get('files_write_text')!);
    assert.ok(one.get('disk_write_file')! < lifted(one) - 1, 'one server: the kind\'s best two rise, the other server\'s writer stays');
    assert.ok(two.get('disk_write_file')! >= lifted(two) - GENERAL_BELOW_BEST - 1e-9, 'two servers: the other server\'s best rises just below them');
    const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, generalBoost: 16, generalServers: 2, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(tinyModel()) });
    s.setCatalogue(catalogue);
    const disk = (await s.select({ prompt: 'summarise the open issues and save it as notes.md' })).tools.find((t) => t.name === 'disk_write_file');
    assert.ok(disk?.stages.includes('general:file_write'), 'and it is sent, as the best of its server');
    assert.match(disk!.reason, /writes files, the best of disk, need/);
  });

  it('opens the page first when a prompt needs a browser: the tool that takes the address leads the kind', async () => {
    // "site" calls for a browser; every tool named "browser…" is one. "click" favours the click tool by words.
    const model = tinyModel({
      prompt: { bias: Array(K).fill(-4), weights: { [`w:${lexicalTerms('site')[0]}`]: row('browser', 6) } },
      tool: { bias: Array(K).fill(-4), weights: { 'n:browser': row('browser', 8) } },
    });
    const browser = ['click', 'hover', 'type', 'take_screenshot'].map((n) => ({ name: `web_browser_${n}`, server: 'web', description: `${n.replace('_', ' ')} on the open page`, originalName: `browser_${n}`, inputSchema: { type: 'object', properties: { element: { type: 'string' } }, required: ['element'] } }));
    const navigate = { name: 'web_browser_navigate', server: 'web', description: 'Go to an address', originalName: 'browser_navigate', inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } };
    const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, generalBoost: 16, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(model) });
    s.setCatalogue([...tools, ...browser, navigate]);
    const sel = await s.select({ prompt: 'see which running shoes are on sale on the shop site and click the cheapest' });
    const lifted = sel.tools.filter((t) => t.stages.includes('general:browser')).map((t) => t.name);
    assert.ok(lifted.includes('web_browser_navigate'), `lifted for the browser need: ${JSON.stringify(lifted)}`);
    assert.ok(lifted.includes('web_browser_click'), 'the tool the words ask for comes with it');
  });

  it('sends the tools that work the page with a browser need: start, read, click and type, of the same server', async () => {
    // "site" calls for a browser; every tool whose name says "browser", "navigate" or "element" is one.
    const model = tinyModel({
      prompt: { bias: Array(K).fill(-4), weights: { [`w:${lexicalTerms('site')[0]}`]: row('browser', 6) } },
      tool: { bias: Array(K).fill(-4), weights: Object.fromEntries(['browser', 'navigate', 'element'].map((w) => [`n:${lexicalTerms(w)[0]}`, row('browser', 8)])) },
    });
    const tool = (name: string, description: string, required: string[] = []) => ({ name: `sel_${name}`, server: 'sel', description, originalName: name, inputSchema: { type: 'object', properties: Object.fromEntries(required.map((r) => [r, { type: 'string' }])), required } });
    const selenium = [
      tool('start_browser', 'launches browser'),
      tool('navigate', 'navigates to a URL', ['url']),
      tool('interact_element', 'performs a mouse action on an element', ['value']),
      tool('send_keys_element', 'sends keys to an element, aka typing', ['value', 'text']),
      tool('get_element_text', 'gets the text content of an element', ['value']),
      tool('take_screenshot_browser', 'captures a screenshot of the current page'),
    ];
    // Of the browser's server, but not read as a browser tool: no hand of the page, though it comes first.
    selenium.splice(4, 0, tool('read_text_file', 'reads a text file from the disk', ['path']));
    // Another server's click tool is not this browser's hand.
    const other = { name: 'maps_click_marker', server: 'maps', description: 'Click a marker on the map', originalName: 'click_marker' };
    const select = async (pageHands: number) => {
      const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, pageHands, generalBoost: 16, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0, companionHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(model) });
      s.setCatalogue([...tools, ...selenium, other]);
      return s.select({ prompt: 'log in on the supplier site and tell me the price of oat milk' });
    };
    const on = await select(1);
    const names = on.tools.map((t) => t.name);
    assert.ok(on.tools.find((t) => t.name === 'sel_navigate')?.stages.includes('general:browser'), JSON.stringify(names));
    for (const [name, role] of [['sel_start_browser', 'starts the browser'], ['sel_get_element_text', 'reads the page'], ['sel_interact_element', 'clicks on the page'], ['sel_send_keys_element', 'types into the page']]) {
      const sent = on.tools.find((t) => t.name === name);
      assert.ok(sent, `${name} sent: ${JSON.stringify(names)}`);
      assert.ok(sent.stages.includes('page'));
      assert.match(sent.reason, new RegExp(`${role} for the browser need \\(sel_navigate\\)`));
    }
    assert.ok(!names.includes('maps_click_marker'));
    assert.ok(!names.includes('sel_read_text_file'), 'a tool the needs model does not read as a browser tool reads no page');
    assert.ok(!names.includes('sel_take_screenshot_browser'), 'a screenshot is no role of its own: the prompt asks for one or not');
    const off = (await select(0)).tools.map((t) => t.name);
    assert.ok(off.includes('sel_navigate') && !off.includes('sel_send_keys_element') && !off.includes('sel_start_browser'), JSON.stringify(off));
  });

  it('sends the page opener with a browser tool that acts on a page, even when the prompt reads as no browser need', async () => {
    // No prompt weight: the browser need is never read. Every tool named "browser…" is of the kind.
    const model = tinyModel({ prompt: { bias: Array(K).fill(-4), weights: {} }, tool: { bias: Array(K).fill(-4), weights: { 'n:browser': row('browser', 8) } } });
    const form = { name: 'web_browser_fill_form', server: 'web', description: 'Fill in the fields of a form on the open page', originalName: 'browser_fill_form', inputSchema: { type: 'object', properties: { fields: { type: 'array' } }, required: ['fields'] } };
    const navigate = { name: 'web_browser_navigate', server: 'web', description: 'Go to an address', originalName: 'browser_navigate', inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } };
    const select = async (pageOpeners: number) => {
      const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, pageOpeners, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0, companionHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(model) });
      s.setCatalogue([...tools, form, navigate]);
      return s.select({ prompt: 'fill in the contact form fields with my name and submit' });
    };
    const on = await select(1);
    assert.equal(on.tools[0]?.name, 'web_browser_fill_form');
    const opener = on.tools.find((t) => t.name === 'web_browser_navigate');
    assert.ok(opener, JSON.stringify(on.tools.map((t) => t.name)));
    assert.match(opener.reason, /opens the page that web_browser_fill_form acts on/);
    assert.ok(!(await select(0)).tools.some((t) => t.name === 'web_browser_navigate'), 'without the rule the opener stays out');
  });

  it('takes as the opener a tool of the same server that opens a page, even one not read as a browser tool', async () => {
    const model = tinyModel({ prompt: { bias: Array(K).fill(-4), weights: {} }, tool: { bias: Array(K).fill(-4), weights: { 'n:browser': row('browser', 8) } } });
    const shot = { name: 'research_browser_screenshot', server: 'research', description: 'Take a screenshot of the current page', originalName: 'browser_screenshot', inputSchema: { type: 'object', properties: {} } };
    const visit = { name: 'research_visit_page', server: 'research', description: 'Visit a page and return its content', originalName: 'visit_page', inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } };
    const elsewhere = { name: 'fetcher_fetch_url', server: 'fetcher', description: 'Fetch a url', originalName: 'fetch_url', inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } };
    const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0, companionHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(model) });
    s.setCatalogue([...tools, shot, visit, elsewhere]);
    const sel = await s.select({ prompt: 'a screenshot of the current page please' });
    assert.equal(sel.tools[0]?.name, 'research_browser_screenshot');
    assert.match(sel.tools.find((t) => t.name === 'research_visit_page')?.reason ?? '', /opens the page that research_browser_screenshot acts on/);
    assert.ok(!sel.tools.some((t) => t.name === 'fetcher_fetch_url'), 'another server\'s address tool opens no page for this one');
  });

  it('lifts a kind\'s runner-up only when it is likelier of the kind than not', async () => {
    // "tomorrow" calls for the clock; a clock tool is one, a tool named "current" looks a little like one.
    const model = tinyModel({
      prompt: { bias: Array(K).fill(-4), weights: { [`w:${lexicalTerms('tomorrow')[0]}`]: row('time_now', 6) } },
      tool: { bias: Array(K).fill(-4), weights: { 'n:clock': row('time_now', 8), [`n:${lexicalTerms('current')[0]}`]: row('time_now', 4.8) } },
    });
    const clock = { name: 'time_clock_now', server: 'time', description: 'The time now', originalName: 'clock_now' };
    const user = { name: 'books_current_user', server: 'books', description: 'The signed-in user of the accounting books', originalName: 'current_user' };
    const timeNow = (t: typeof clock) => new GeneralNeeds(model).toolProbabilities(t)[GENERAL_KINDS.indexOf('time_now')]!;
    assert.ok(timeNow(clock) > 0.8);
    assert.ok(timeNow(user) > DEFAULT_SELECTION_OPTIONS.generalToolMin && timeNow(user) < 0.5, String(timeNow(user)));
    const lifted = async (generalRunnerUpMin: number) => {
      const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, generalRunnerUpMin, generalBoost: 16, minTools: 1, depth: 0, clauseHead: 0, stepHead: 0 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(model) });
      s.setCatalogue([...tools, clock, user]);
      const sel = await s.select({ prompt: 'book the meeting room for tomorrow morning' });
      return sel.tools.filter((t) => t.stages.includes('general:time_now')).map((t) => t.name);
    };
    assert.deepEqual(await lifted(0.5), ['time_clock_now']);
    assert.deepEqual((await lifted(0.2)).sort(), ['books_current_user', 'time_clock_now'], 'below the bar it would come along');
  });

  it('tells a tool that opens a page by its required address or its name', () => {
    assert.equal(opensPage({ name: 'browser_navigate', inputSchema: { required: ['url'] } }), true);
    assert.equal(opensPage({ name: 'new_page', inputSchema: { required: ['pageUrl'] } }), true);
    assert.equal(opensPage({ name: 'navigate_page', inputSchema: { required: ['pageId'], properties: { pageId: {}, url: {} } } }), true, 'by its name, with an address it takes');
    assert.equal(opensPage({ name: 'browser_navigate_back', inputSchema: { properties: {} } }), false, 'going back opens no address');
    assert.equal(opensPage({ name: 'browser_click', inputSchema: { required: ['element'], properties: { url: {} } } }), false, 'an optional address is not one to open');
    assert.equal(opensPage({ name: 'curl_options', inputSchema: { required: ['curl'] } }), false);
  });

  it('reads each step of a task for needs too, where the rest of the task would drown its cue', async () => {
    // "save" calls for writing a file; "ticket" speaks against it. The whole task is below the need threshold, its second step above.
    const term = (w: string): string => `w:${lexicalTerms(w)[0]}`;
    const model = tinyModel({ prompt: { bias: Array(K).fill(-4), weights: { [term('save')]: row('file_write', 4.5), [term('ticket')]: row('file_write', -3) } } });
    const select = async (stepNeedMin: number) => {
      const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, generalBoost: 16, minTools: 1, depth: 0, clauseHead: 0, stepNeedMin }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)), needs: new GeneralNeeds(model) });
      s.setCatalogue(tools);
      return s.select({ prompt: 'close the login ticket, then save the summary' });
    };
    const lifted = (sel: Awaited<ReturnType<typeof select>>) => sel.tools.find((t) => t.name === 'files_write_file' && t.stages.includes('general:file_write'));
    assert.equal(lifted(await select(0)), undefined, 'read as a whole, the task needs no file written');
    const write = lifted(await select(DEFAULT_SELECTION_OPTIONS.stepNeedMin));
    assert.ok(write, 'its step "save the summary" does');
    assert.match(write.reason, /the prompt says "save"/);
  });

  it('raises nothing when no cue calls for a kind', async () => {
    const sel = await build(16).select({ prompt: 'close the login bug issue' });
    assert.ok(!sel.tools.some((t) => t.stages.some((s) => s.startsWith('general:'))));
  });
});
