import assert from 'node:assert/strict';
import { l2Normalize, type Embedder } from '../../../src/core/embedding/embedder';
import { LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';
import { ToolIndex, embeddingTextFor, rankableFor } from '../../../src/core/selection/toolIndex';
import { isUnspaced } from '../../../src/core/selection/lexicalTerms';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../../src/core/selection/toolSelector';

/**
 * A FAKE embedder: each tool text gets the cosine with the prompt that the test chooses, so the fusion
 * can be checked exactly. The real model's cross-lingual matching is measured by eval:select.
 */
class ScriptedFakeEmbedder implements Embedder {
  readonly modelId = 'fake:scripted';
  readonly dimension = 2;
  constructor(private readonly cosineOf: (text: string) => number | undefined) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const c = this.cosineOf(t) ?? 1; // the prompt is the unit vector (1, 0)
      return l2Normalize(Float32Array.from([c, Math.sqrt(Math.max(0, 1 - c * c))]));
    });
  }
  async dispose(): Promise<void> {}
}

const TOOLS: SelectableTool[] = [
  // Described in Chinese: an English prompt can only meet its name's words.
  { name: 'maps_weather', server: 'maps', description: '根据城市名称查询实时天气和未来三天的天气预报' },
  // Described in English, sharing the prompt's words but not its meaning.
  { name: 'news_city_headlines', server: 'news', description: 'Latest city headlines for tomorrow in a city' },
  ...Array.from({ length: 20 }, (_, i) => ({ name: `misc_tool${i}`, server: 'misc', description: `unrelated helper ${i} for invoices` })),
];
/** Ranks with the model's cosines for [maps_weather, news_city_headlines] set by the test. */
async function rank(crossScript: number, prompt: string, [weather, news]: [number, number]): Promise<string[]> {
  const cosine = new Map<string, number>([
    [embeddingTextFor(TOOLS[0]!), weather],
    [embeddingTextFor(TOOLS[1]!), news],
  ]);
  const index = new ToolIndex(new ScriptedFakeEmbedder((t) => cosine.get(t) ?? (t.startsWith('misc') ? 0.1 : undefined)));
  const selector = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, crossScript, serverBoost: 0, companionHead: 0 }, { index, createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)) });
  selector.setCatalogue(TOOLS);
  await index.whenReady();
  return (await selector.select({ prompt })).ranking.map((r) => r.name);
}

describe('cross-script fusion', () => {
  it('tells text written mostly in Chinese, Japanese or Korean from the rest', () => {
    assert.equal(isUnspaced('根据城市名称查询实时天气'), true);
    assert.equal(isUnspaced('getWeather: 根据城市名称查询实时天气 (v2)'), true);
    assert.equal(isUnspaced('Get the weather for a city, e.g. 北京'), false);
    assert.equal(isUnspaced('Get the weather for a city'), false);
    assert.equal(isUnspaced('12345'), false);
  });

  it('a tool described in another script is not held back by words it cannot share with the prompt', async () => {
    const prompt = 'what will the city be like tomorrow, do I need an umbrella';
    const off = await rank(0, prompt, [0.8, 0.3]);
    const on = await rank(1, prompt, [0.8, 0.3]);
    assert.ok(off.indexOf('news_city_headlines') < off.indexOf('maps_weather'), `without it the word match wins: ${off.slice(0, 3).join(', ')}`);
    assert.equal(on[0], 'maps_weather', `with it the model's match leads: ${on.slice(0, 3).join(', ')}`);
  });

  it('changes nothing for tools in the prompt\'s own script', async () => {
    const prompt = 'latest city headlines';
    const off = await rank(0, prompt, [0.3, 0.8]);
    const on = await rank(1, prompt, [0.3, 0.8]);
    assert.equal(off[0], 'news_city_headlines');
    assert.equal(on[0], 'news_city_headlines');
  });
});
