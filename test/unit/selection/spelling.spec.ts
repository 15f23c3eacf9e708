import assert from 'node:assert/strict';
import path from 'node:path';
import { loadSpellingWords } from '../../../src/core/selection/selectionEngine';
import { catalogueWords, parseDictionary, SpellingCorrector } from '../../../src/core/selection/spelling';
import { LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';
import { rankableFor } from '../../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../../src/core/selection/toolSelector';

const ROOT = path.resolve(__dirname, '..', '..', '..');
/** The word lists the extension ships (media/spelling). */
const WORDS = loadSpellingWords(ROOT)!;
const DICTIONARY = WORDS.dictionary;

describe('spelling tolerance', () => {
  const speller = new SpellingCorrector(DICTIONARY, catalogueWords(['list applicants', 'list orders', 'get holidays', 'ats']), new Set(['gmail', 'nodejs', ...WORDS.names]));

  it('ships a dictionary of common English words, most common first', () => {
    assert.ok(DICTIONARY.size > 50_000, `${DICTIONARY.size} words`);
    for (const w of ['hiring', 'orders', 'thursday', 'sneaker', 'layoffs', 'germany', 'german']) assert.ok(DICTIONARY.has(w), w);
    assert.ok(DICTIONARY.get('the')! < DICTIONARY.get('sneaker')!);
    for (const w of ['jorge', 'dana', 'kevin']) assert.ok(WORDS.names.has(w), w);
  });

  it('reads each kind of one-edit typo as the word meant', () => {
    const cases: Array<[string, string]> = [
      ['hirng', 'hiring'], // a letter left out
      ['carreers', 'careers'], // a letter added
      ['ordres', 'orders'], // two letters swapped
      ['thrusday', 'thursday'],
      ['sevring', 'serving'],
      ['holdiays', 'holidays'],
    ];
    for (const [typo, meant] of cases) assert.equal(speller.suggest(typo), meant, typo);
  });

  it('prefers the catalogue’s own word to a commoner dictionary word, and suggests no known-only word', () => {
    const dictionary = parseDictionary('wheat\ncheat\n');
    assert.equal(new SpellingCorrector(dictionary, new Set()).suggest('xheat'), 'wheat', 'both one edit away: the commoner word');
    assert.equal(new SpellingCorrector(dictionary, new Set(['cheat'])).suggest('xheat'), 'cheat', 'the catalogue word first');
    assert.equal(new SpellingCorrector(parseDictionary('\n'), new Set(), new Set(['wheat'])).suggest('xheat'), undefined, 'known-only words are never suggested');
    assert.equal(new SpellingCorrector(dictionary, new Set()).suggest('xxeat'), undefined, 'two edits away: left alone');
  });

  it('leaves known words, names, acronyms, short words, numbers and other scripts as typed', () => {
    const text = 'Ask Kato about the sneaker layoffs, gdpr, tbsp, lsit, order 4471, 天气, gmail nodejs, and tell jorge';
    const { text: out, fixes } = speller.correct(text);
    assert.equal(out, text);
    assert.deepEqual(fixes, []);
  });

  it('reads a prompt in another language as typed: its words are not typos', () => {
    for (const text of ['Quel temps fera-t-il demain à Paris ? Merci de répondre vite', '¿Cuál es el tiempo en Madrid mañana? Necesito saberlo para el viaje', 'Apakah produk dengan ID 12345XYZ masih tersedia dalam ukuran M dan warna merah?']) {
      assert.deepEqual(speller.correct(text).fixes, [], text);
    }
    // Alone, "demain" would be read as "domain": the sentence around it says French.
    assert.equal(speller.suggest('demain'), 'domain');
    // An English prompt with two typos in four words is still English.
    assert.equal(speller.correct('depoly the login funtion again').text, 'deploy the login function again');
  });

  it('leaves addresses, paths, file names and emails as typed', () => {
    assert.deepEqual(speller.correct('is https://frendly.example/holdiays up? mail holdiays@ordres.dev about ~/ordres/holdiays.md').fixes, []);
  });

  it('corrects a capitalised word at the start of a sentence, and reports every fix', () => {
    const { text, fixes } = speller.correct('Thrusday: show the ordres. Hirng news?');
    assert.equal(text, 'thursday: show the orders. hiring news?');
    assert.deepEqual(fixes, [
      { from: 'Thrusday', to: 'thursday' },
      { from: 'ordres', to: 'orders' },
      { from: 'Hirng', to: 'hiring' },
    ]);
  });

  it('parses a dictionary file: comments and non-words skipped, first rank kept', () => {
    assert.deepEqual([...parseDictionary('# words\nthe\nCafé\nof\nthe\n\n3d\nand\n')], [
      ['the', 0],
      ['of', 1],
      ['and', 2],
    ]);
  });

  it('a missing dictionary turns the stage off and says how to get it back', () => {
    const logged: string[] = [];
    assert.equal(loadSpellingWords(path.join(ROOT, 'no-such-folder'), (m) => logged.push(m)), undefined);
    assert.match(logged[0]!, /read as typed.*words\.txt could not be read.*Reinstall the extension/s);
  });

  it('the selector ranks with the corrected prompt and reports how it read it', async () => {
    const tools: SelectableTool[] = [
      // The orders tool last: with no word matching, ties keep catalogue order, so it cannot come first by chance.
      { name: 'shop_products_list', server: 'shop', description: 'List products', inputSchema: {} },
      { name: 'ats_jobs_list', server: 'ats', description: 'List open jobs we are hiring for', inputSchema: {} },
      { name: 'weather_forecast', server: 'weather', description: 'Forecast for a city', inputSchema: {} },
      { name: 'shop_orders_list', server: 'shop', description: 'List orders', inputSchema: {} },
    ];
    const deps = { createLexical: (list: readonly SelectableTool[]) => new LexicalRanker(list.map(rankableFor)) };
    const run = async (spelling: number): Promise<{ first: string; readAs: unknown }> => {
      const selector = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, minTools: 1, spelling }, { ...deps, spelling: { dictionary: DICTIONARY, known: new Set() } });
      selector.setCatalogue(tools);
      const s = await selector.select({ prompt: 'how many ordres came in yesterday' });
      return { first: s.tools[0]!.name, readAs: s.readAs };
    };
    assert.deepEqual(await run(1), { first: 'shop_orders_list', readAs: [{ from: 'ordres', to: 'orders' }] });
    const off = await run(0);
    assert.equal(off.readAs, undefined);
    assert.notEqual(off.first, 'shop_orders_list', 'as typed, "ordres" matches no tool');
  });
});
