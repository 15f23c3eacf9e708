import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CLAUSE_WEIGHT, LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import { lexicalTerms } from '../../../src/core/selection/lexicalTerms';
import { loadNameAliases, NAME_ALIAS_WEIGHT, NAME_ALIASES_FILE, nameAliasTerms, NameAliases, shippedNameAliases, type NameAliasFile } from '../../../src/core/selection/nameAliases';
import type { RankableTool } from '../../../src/core/selection/toolDocument';
import { expectedSplits, readNameLines, shippedFile, type NameLine } from '../../../scripts/data/buildNameAliases';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A dictionary written for these tests, so they do not depend on which names the hash holds out. */
const SMALL: NameAliasFile = {
  names: {
    Taobao: ['淘宝', 'タオバオ'],
    'kung pao chicken': ['宫保鸡丁'],
    Tokyo: ['东京', '東京', '도쿄'],
    'Peking duck': ['北京烤鸭', '베이징 덕'],
    'New York': ['ニューヨーク'],
    Discord: ['ディスコード'],
    Kyo: ['京'],
  },
  notTriggers: ['Discord'],
};

const small = new NameAliases(SMALL);
const expand = (text: string, aliases = small): string[] => aliases.expand(text);

describe('name aliases', () => {
  describe('NameAliases', () => {
    it('adds the other-language names of an English name, tokenised as tool texts are', () => {
      const added = expand('find a kung pao chicken recipe');
      assert.deepEqual(added, lexicalTerms('宫保鸡丁'));
      // The added terms are the ones a Chinese description is indexed by.
      const description = new Set(lexicalTerms('提供宫保鸡丁的详细做法'));
      assert.ok(added.every((t) => description.has(t)), added.join(' '));
    });

    it('adds the English name and the other spellings of a name found inside a longer run of characters', () => {
      const added = new Set(expand('我想在淘宝上买手机壳'));
      for (const t of [...lexicalTerms('Taobao'), ...lexicalTerms('タオバオ')]) assert.ok(added.has(t), `${t} missing from ${[...added].join(' ')}`);
      const tokyo = new Set(expand('東京の天気'));
      for (const t of ['tokyo', '东京', '도쿄']) assert.ok(tokyo.has(t), t);
    });

    it('finds a katakana name whose character pairs shift with the characters before it', () => {
      // lexicalTerms splits at the long-vowel mark, so ニューヨーク's own pairs differ from those inside ホテルニューヨーク.
      assert.deepEqual(expand('ホテルニューヨークの予約'), lexicalTerms('New York'));
    });

    it('matches names written with or without spaces and middle dots', () => {
      assert.deepEqual(expand('베이징덕 맛집'), expand('베이징 덕 맛집'));
      assert.ok(expand('베이징덕 맛집').includes('duck'));
    });

    it('needs the whole English name, in order', () => {
      assert.deepEqual(expand('the chicken was kung pao style'), []);
      assert.deepEqual(expand('a new plan for York'), []);
      assert.ok(expand('flights to new york').length > 0);
    });

    it('does not expand an English name that is a common word, but still maps the other way', () => {
      assert.deepEqual(expand('open Discord'), []);
      assert.deepEqual(expand('ディスコードを開く'), lexicalTerms('Discord'));
    });

    it('ignores one-character names, and adds no one-character terms', () => {
      assert.deepEqual(expand('Kyo'), []);
      assert.deepEqual(expand('京'), []);
      // No term is a lone long-vowel mark, which would match most katakana words.
      assert.ok(!lexicalTerms('ニューヨーク').includes('ー') && !expand('flights to New York').includes('ー'));
    });

    it('reads an English name as one word where identifiers would be split', () => {
      const brands = new NameAliases({ names: { WeChat: ['微信'], LinkedIn: ['领英'] } });
      assert.deepEqual(brands.expand('message him on WeChat'), ['微信']);
      assert.deepEqual(brands.expand('send the chat log, then share the link'), []);
    });

    it('adds only the terms a prompt does not have yet', () => {
      const text = '在淘宝上搜索 Taobao';
      const added = nameAliasTerms(text, lexicalTerms(text), small);
      assert.deepEqual(added, lexicalTerms('タオバオ'));
    });
  });

  describe('lexical ranking', () => {
    const chinese: RankableTool[] = [
      { id: 'taobao_search', name: 'search_items', description: '在淘宝上按关键词搜索商品' },
      { id: 'jd_search', name: 'search_products', description: '在京东上按关键词搜索商品' },
      { id: 'weather', name: 'get_weather', description: '查询城市的天气预报' },
    ];
    const english: RankableTool[] = [
      { id: 'tokyo_guide', name: 'city_guide', description: 'Sights and events in Tokyo' },
      { id: 'osaka_guide', name: 'city_guide', description: 'Sights and events in Osaka' },
    ];

    it('finds a Chinese-described tool for an English prompt naming the thing, and only with aliases', () => {
      const prompt = 'search Taobao for phone cases';
      const [first, second] = new LexicalRanker(chinese, { nameAliases: small }).rank(prompt, 2);
      assert.ok(first?.id === 'taobao_search' && first.score > second!.score, JSON.stringify([first, second]));
      // Without them only the tools' English names match ("search"): the two shops tie.
      const without = new LexicalRanker(chinese, { nameAliases: false }).score(prompt);
      assert.equal(without[0], without[1]);
    });

    it('counts an added term at NAME_ALIAS_WEIGHT of the same word typed in the prompt', () => {
      const ranker = new LexicalRanker(chinese, { nameAliases: small });
      assert.ok(Math.abs(ranker.score('Taobao')[0]! - NAME_ALIAS_WEIGHT * ranker.score('淘宝')[0]!) < 1e-12);
    });

    it('finds an English-described tool for a Japanese prompt naming the place', () => {
      const prompt = '東京で今週末のイベントは？';
      assert.equal(new LexicalRanker(english, { nameAliases: small }).rank(prompt, 1)[0]?.id, 'tokyo_guide');
      assert.deepEqual(new LexicalRanker(english, { nameAliases: false }).rank(prompt, 2), []);
    });

    it('expands each clause of a multi-step prompt too', () => {
      const ranker = new LexicalRanker(chinese, { nameAliases: small });
      const gap = (scores: Float64Array): number => scores[0]! - scores[1]!;
      // Alone, the step is one clause; inside a two-step prompt its clause adds CLAUSE_WEIGHT times the name's part again.
      const alone = gap(ranker.score('search Taobao for an umbrella'));
      const inSteps = gap(ranker.score('check the weather, then search Taobao for an umbrella'));
      assert.ok(alone > 0 && Math.abs(inSteps - (1 + CLAUSE_WEIGHT) * alone) < 1e-9, `alone ${alone}, in steps ${inSteps}`);
    });

    it('leaves tool texts alone: a catalogue in the prompt\'s language ranks the same', () => {
      const prompt = 'events in Tokyo this weekend';
      const withAliases = new LexicalRanker(english, { nameAliases: small }).score(prompt);
      const without = new LexicalRanker(english, { nameAliases: false }).score(prompt);
      assert.deepEqual([...withAliases], [...without]);
    });
  });

  describe('the shipped dictionary', function () {
    // Reads names.jsonl (about 5,000 lines) and the shipped file; a loaded machine is several times slower.
    this.timeout(20_000);
    const lines = readNameLines();
    const file = JSON.parse(fs.readFileSync(path.join(ROOT, NAME_ALIASES_FILE), 'utf8')) as NameAliasFile;

    it('ships train lines only, and marks English names that come down to one common word', () => {
      const line = (en: string, name: string, type: NameLine['type'], split: NameLine['split'] = 'train'): NameLine => ({ lang: 'zh', en, name, type, split });
      const built = shippedFile([line('T map', '티맵', 'app'), line('The Glory', '黑暗荣耀', 'title'), line('WeChat', '微信', 'app'), line('Tokyo', '东京', 'place'), line('Osaka', '大阪', 'place', 'eval')]);
      assert.deepEqual(built.names, { 'T map': ['티맵'], 'The Glory': ['黑暗荣耀'], WeChat: ['微信'], Tokyo: ['东京'] });
      // Matched by `map` and `glori` alone, they would add 티맵 and 黑暗荣耀 to every prompt about maps or glory.
      assert.deepEqual(built.notTriggers, ['T map', 'The Glory']);
    });

    it('is what names.jsonl gives (run npx tsx scripts/data/buildNameAliases.ts after editing it)', () => {
      assert.deepEqual(file, JSON.parse(JSON.stringify(shippedFile(lines))));
    });

    it('has each line in the split its group hashes to, about a fifth held out, spread over languages and types', () => {
      const splits = expectedSplits(lines);
      const wrong = lines.filter((l, i) => l.split !== splits[i]);
      assert.deepEqual(wrong.slice(0, 3), []);
      assert.ok(lines.length >= 1500, `${lines.length} lines`);
      const held = lines.filter((l) => l.split === 'eval');
      assert.ok(held.length / lines.length > 0.15 && held.length / lines.length < 0.25, `${held.length} of ${lines.length} held out`);
      for (const key of ['lang', 'type'] as const) {
        for (const value of new Set(lines.map((l) => l[key]))) assert.ok(held.some((l) => l[key] === value), `no held-out line with ${key} ${value}`);
      }
    });

    it('holds no held-out name or English form', () => {
      const shippedNames = new Set(Object.values(file.names).flat());
      const shippedEnglish = new Set(Object.keys(file.names).map((e) => e.toLowerCase()));
      const leaked = lines.filter((l) => l.split === 'eval' && (shippedNames.has(l.name) || shippedEnglish.has(l.en.toLowerCase())));
      assert.deepEqual(leaked.slice(0, 3), []);
    });

    it('is found beside the code and expands prompts with a train name both ways', () => {
      const shipped = shippedNameAliases();
      assert.ok(shipped && shipped.size === Object.keys(file.names).length);
      const train = lines.find((l) => l.split === 'train' && l.lang === 'zh' && !(file.notTriggers ?? []).includes(l.en))!;
      const added = (text: string): string[] => nameAliasTerms(text, lexicalTerms(text));
      assert.ok(added(`tell me about ${train.en}`).some((t) => lexicalTerms(train.name).includes(t)), train.en);
      assert.ok(added(`介绍一下${train.name}`).some((t) => lexicalTerms(train.en).includes(t)), train.name);
      assert.ok(loadNameAliases(path.join(ROOT, NAME_ALIASES_FILE)).size > 1000);
    });
  });
});
