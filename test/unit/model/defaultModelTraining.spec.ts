/**
 * The pieces of `npm run train:model` on toy inputs: the WordPiece tokenizer is a standard one, the
 * trainer learns and is deterministic, int8 rows keep the vectors, and the exported graph runs in the real
 * onnxruntime with the engine's pooling. Plus the data rule: no training pair comes from a measured split.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { OnnxEmbedder } from '../../../src/core/embedding/onnxEmbedder';
import { splitIdentifiers } from '../../../src/core/embedding/textPreprocess';
import { exportOnnxModel, quantiseRows, verifyOnnxModel } from '../../../scripts/model/onnxExport';
import { DATA_DIR, MEASUREMENT_SETS, loadQueries } from '../../../scripts/model/dataSets';
import { ContrastiveTrainer, scheduledRateShare, SeededRandom, StaticEmbeddingModel, TableAverage, type TrainingExample } from '../../../scripts/model/staticEmbeddingModel';
import { HELD_OUT_APIS, PERMISSIVE_SPEC_LICENSE, TEAM_REQUESTS_DIR, TRAINING_SPLITS, teamPairs, trainingPairs, type TrainingPair } from '../../../scripts/model/trainingPairs';
import { loadQueriesFile, loadToolsFile } from '../../../src/core/evaluation/retrievalData';
import { toolEmbeddingText } from '../../../src/core/selection/toolDocument';
import { makeBatches, TRAINING_SETTINGS } from '../../../scripts/model/trainModel';
import { NON_ENGLISH_SERVERS } from '../../../scripts/data/catalogueList';
import { buildVocabulary, PAD_TOKEN, tokenizerConfig, tokenizerJson, UNK_TOKEN } from '../../../scripts/model/wordPieceVocabulary';

const TEXTS = [
  'read_text_file: Read the complete contents of a file',
  'list_directory: List the files in a directory',
  'send_email: Send an email message to a recipient',
  'getWeatherForecast: Weather forecast for a city',
  'show me the files in this folder',
  'what will the weather be like tomorrow',
  'email Bob the report',
  'read the file notes.txt',
];

function toyTokenizer(): { vocab: string[]; tokenizer: Tokenizer } {
  const vocab = buildVocabulary([...TEXTS, ...TEXTS], { minWordCount: 2, maxWords: 1000, maxPrefixPieces: 200, maxContinuationPieces: 200, maxPieceLength: 6 });
  return { vocab, tokenizer: new Tokenizer(tokenizerJson(vocab) as never, tokenizerConfig(128) as never) };
}

describe('default model training', () => {
  describe('WordPiece vocabulary', () => {
    it('is a standard tokenizer: [PAD] = 0, [UNK] = 1, lowercase, no [CLS]/[SEP]', () => {
      const { vocab, tokenizer } = toyTokenizer();
      assert.equal(vocab[0], PAD_TOKEN);
      assert.equal(vocab[1], UNK_TOKEN);
      const encoded = tokenizer.encode(splitIdentifiers('Read the FILE'));
      assert.deepEqual(encoded.tokens, ['read', 'the', 'file']);
    });

    it('splits unseen words into pieces instead of [UNK]', () => {
      const { tokenizer } = toyTokenizer();
      const tokens = tokenizer.encode('forecasting unreadable xylophone').tokens;
      assert.ok(!tokens.includes(UNK_TOKEN), tokens.join(' '));
      assert.ok(tokens.some((t) => t.startsWith('##')), tokens.join(' '));
    });
  });

  describe('ContrastiveTrainer', () => {
    function toyRun(seed: number): { losses: number[]; table: Float32Array } {
      const { vocab, tokenizer } = toyTokenizer();
      const encode = (t: string): Int32Array => Int32Array.from(tokenizer.encode(splitIdentifiers(t)).ids);
      const weights = new Float32Array(vocab.length).fill(1);
      weights[0] = 0;
      weights[1] = 0;
      const model = new StaticEmbeddingModel(vocab.length, 16, weights);
      model.initialise(new SeededRandom(seed), 1);
      const pairs: Array<[string, string]> = [
        [TEXTS[4]!, TEXTS[1]!],
        [TEXTS[5]!, TEXTS[3]!],
        [TEXTS[6]!, TEXTS[2]!],
        [TEXTS[7]!, TEXTS[0]!],
      ];
      const batch: TrainingExample[] = pairs.map(([q, t], i) => ({ query: encode(q), tool: encode(t), queryKey: i, toolKey: 100 + i }));
      const trainer = new ContrastiveTrainer(model, { temperature: 0.1, learningRate: 0.1 });
      const losses = Array.from({ length: 30 }, () => trainer.step(batch));
      return { losses, table: model.table };
    }

    it('lowers the loss on a toy batch', () => {
      const { losses } = toyRun(1);
      assert.ok(losses[losses.length - 1]! < losses[0]! * 0.5, `loss went from ${losses[0]} to ${losses[losses.length - 1]}`);
    });

    it('is deterministic for a seed', () => {
      assert.deepEqual(toyRun(7).table, toyRun(7).table);
      assert.notDeepEqual(toyRun(7).table, toyRun(8).table);
    });

    it('takes no step at a rate share of 0, and the schedule holds then falls to its final share', () => {
      const { vocab } = toyTokenizer();
      const model = new StaticEmbeddingModel(vocab.length, 8, new Float32Array(vocab.length).fill(1));
      model.initialise(new SeededRandom(3), 1);
      const before = Float32Array.from(model.table);
      const trainer = new ContrastiveTrainer(model, { temperature: 0.1, learningRate: 0.1 });
      trainer.rateScale = 0;
      const batch: TrainingExample[] = [
        { query: Int32Array.of(2, 3), tool: Int32Array.of(4), queryKey: 0, toolKey: 10 },
        { query: Int32Array.of(5), tool: Int32Array.of(6, 7), queryKey: 1, toolKey: 11 },
      ];
      trainer.step(batch);
      assert.deepEqual(model.table, before);
      trainer.rateScale = 1;
      trainer.step(batch);
      assert.notDeepEqual(model.table, before);
      assert.equal(scheduledRateShare(0, 0.1), 1);
      assert.equal(scheduledRateShare(0.5, 0.1), 1);
      assert.ok(Math.abs(scheduledRateShare(0.75, 0.1) - 0.55) < 1e-12);
      assert.ok(Math.abs(scheduledRateShare(1, 0.1) - 0.1) < 1e-12);
      assert.equal(scheduledRateShare(0.9, 1), 1);
    });

    it('places the team batches among the first share of the run when teamWithin is under 1', () => {
      const pairs: TrainingPair[] = [];
      const encoded = new Map<string, Int32Array>();
      for (let i = 0; i < 40; i++) {
        for (const source of ['team', 'metatool'] as const) {
          const query = `${source} request ${i}`;
          const tool = `${source} tool ${i}`;
          pairs.push({ source, query, tool });
          encoded.set(query, Int32Array.of(2 + i));
          encoded.set(tool, Int32Array.of(100 + i));
        }
      }
      const base = { ...TRAINING_SETTINGS, batchSize: 4, teamRepeats: 1, epochs: 1 };
      // Batches are of one source each, so a batch's first request says whose it is.
      const teamQueries = new Set(pairs.filter((p) => p.source === 'team').map((p) => encoded.get(p.query)));
      const isTeam = (batch: readonly TrainingExample[]): boolean => teamQueries.has(batch[0]!.query);
      const anywhere = makeBatches(pairs, encoded, { ...base, teamWithin: 1 }, new SeededRandom(5));
      const early = makeBatches(pairs, encoded, { ...base, teamWithin: 0.6 }, new SeededRandom(5));
      assert.equal(anywhere.length, 20);
      assert.equal(early.length, 20);
      const lastTeam = (batches: TrainingExample[][]): number => Math.max(...batches.map((b, i) => (isTeam(b) ? i : -1)));
      assert.ok(lastTeam(early) < 12, `a team batch at position ${lastTeam(early)} of 20, expected within the first 12`);
      assert.ok(lastTeam(anywhere) >= 12, 'with teamWithin 1 the team batches are spread over the whole run (seed 5)');
      assert.equal(early.filter(isTeam).length, 10);
    });

    it('averages the tail of a run: the mean of the states added, and nothing when none was', () => {
      const table = Float32Array.of(1, 2, 3);
      const average = new TableAverage(3);
      average.writeInto(table);
      assert.deepEqual(table, Float32Array.of(1, 2, 3));
      average.add(Float32Array.of(1, 2, 3));
      average.add(Float32Array.of(3, 4, 8));
      average.writeInto(table);
      assert.equal(average.count, 2);
      assert.deepEqual(table, Float32Array.of(2, 3, 5.5));
      assert.throws(() => average.add(new Float32Array(4)), /4 values, expected 3/);
    });
  });

  describe('int8 rows and the ONNX graph', () => {
    const rows = 5;
    const dim = 8;
    const random = new SeededRandom(3);
    const table = Float32Array.from({ length: rows * dim }, () => random.gaussian() * 3);
    table.fill(0, 0, dim); // a [PAD]-like zero row

    it('quantises each row within half a step of its scale', () => {
      const q = quantiseRows(table, rows, dim);
      const back = q.dequantise();
      for (let r = 0; r < rows; r++) for (let k = 0; k < dim; k++) assert.ok(Math.abs(back[r * dim + k]! - table[r * dim + k]!) <= q.scales[r]! / 2 + 1e-6);
      assert.equal(q.scales[0], 0);
    });

    it('runs in onnxruntime and loads through OnnxEmbedder as a standard folder', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tool-router-model-'));
      try {
        const q = quantiseRows(table, rows, dim);
        exportOnnxModel(path.join(dir, 'model.onnx'), q, dim);
        const dequantised = new StaticEmbeddingModel(rows, dim, new Float32Array(rows).fill(1), q.dequantise());
        const texts = [Int32Array.from([1, 2, 3]), Int32Array.from([4]), Int32Array.from([0, 0])];
        const worst = await verifyOnnxModel(path.join(dir, 'model.onnx'), texts, texts.map((t) => dequantised.embed(t)));
        assert.ok(worst > 0.9999, `cosine ${worst}`);

        const vocab = [PAD_TOKEN, UNK_TOKEN, 'alpha', 'beta', 'gamma'];
        fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
        fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(tokenizerConfig(16)));
        fs.writeFileSync(path.join(dir, 'tool_router_model.json'), JSON.stringify({ pooling: 'mean', preprocess: 'split-identifiers', maxLength: 16 }));
        const embedder = await OnnxEmbedder.load(dir);
        try {
          const [v] = await embedder.embed(['alphaBeta gamma']);
          const expected = dequantised.embed(Int32Array.from([2, 3, 4]));
          let cos = 0;
          for (let k = 0; k < dim; k++) cos += v![k]! * expected[k]!;
          assert.ok(cos > 0.9999, `cosine ${cos}`);
          assert.equal(embedder.dimension, dim);
        } finally {
          await embedder.dispose();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('training data', function () {
    // Reads the training and request sets from data/ (up to ~0.3 s a test idle); a loaded machine is several times slower.
    this.timeout(20_000);
    it('reads only MetaTool single and Seal-Tools dev', () => {
      assert.deepEqual(TRAINING_SPLITS, { metatool: 'single', 'seal-tools': 'dev' });
    });

    it('keeps OpenAPI rows under permissive licenses only', () => {
      for (const ok of ['Apache 2.0', 'Apache-2.0', 'MIT', 'BSD-3-Clause', 'CC0 1.0', 'Creative Commons Attribution 3.0', 'Public Domain']) assert.ok(PERMISSIVE_SPEC_LICENSE.test(ok), ok);
      for (const no of ['GPL-3.0', 'Creative Commons Attribution-NonCommercial 3.0', 'Proprietary', '']) assert.ok(!PERMISSIVE_SPEC_LICENSE.test(no), no);
    });

    (fs.existsSync(path.join(TEAM_REQUESTS_DIR, 'queries.jsonl')) ? it : it.skip)('leaves out the team requests that need only non-English-described tools when told to', () => {
      const file = path.join(TEAM_REQUESTS_DIR, 'queries.jsonl');
      const serverOf = new Map(loadToolsFile(path.join(TEAM_REQUESTS_DIR, 'tools.jsonl')).map((t) => [t.id, t.server ?? '']));
      const train = loadQueriesFile(file, 'train');
      const onlyNonEnglish = (gold: readonly string[]): boolean => gold.length > 0 && gold.every((id) => NON_ENGLISH_SERVERS.has(serverOf.get(id) ?? ''));
      const mixed = train.filter((q) => !onlyNonEnglish(q.gold) && q.gold.some((id) => NON_ENGLISH_SERVERS.has(serverOf.get(id) ?? '')));
      const dropped = train.filter((q) => onlyNonEnglish(q.gold));
      assert.ok(NON_ENGLISH_SERVERS.has('amap') && !NON_ENGLISH_SERVERS.has('everything'), 'the catalogue list marks the Chinese-described servers');
      assert.ok(dropped.length > 0 && mixed.length > 0, 'the train split has both kinds of request');
      const all = teamPairs({ nonEnglishOnly: true, unnamedNeed: true });
      const kept = teamPairs({ nonEnglishOnly: false, unnamedNeed: true });
      assert.equal(all.length - kept.length, dropped.reduce((n, q) => n + q.gold.length, 0));
      const keptQueries = new Set(kept.map((p) => p.query));
      assert.ok(dropped.every((q) => !keptQueries.has(q.query)), 'a request needing only Chinese-described tools is still paired');
      assert.ok(mixed.every((q) => keptQueries.has(q.query)), 'a request that also needs an English-described tool was dropped');
    });

    (fs.existsSync(path.join(TEAM_REQUESTS_DIR, 'queries.jsonl')) ? it : it.skip)('leaves out the team requests with an unnamed general-purpose need when told to, and only those', () => {
      const train = loadQueriesFile(path.join(TEAM_REQUESTS_DIR, 'queries.jsonl'), 'train');
      const unnamed = train.filter((q) => q.kinds !== undefined);
      const named = train.filter((q) => q.kinds === undefined);
      // `kinds` also lists needs no catalogue of the split provides, so it is at least as wide as `general`.
      assert.ok(unnamed.length >= train.filter((q) => q.general !== undefined).length, 'every request with a general-purpose gold tool has kinds');
      assert.ok(unnamed.every((q) => q.kinds!.length > 0), 'an empty kinds list is read as none');
      const all = teamPairs({ nonEnglishOnly: true, unnamedNeed: true });
      const kept = teamPairs({ nonEnglishOnly: true, unnamedNeed: false });
      assert.equal(all.length - kept.length, unnamed.reduce((n, q) => n + q.gold.length, 0));
      const keptQueries = new Set(kept.map((p) => p.query));
      assert.ok(unnamed.every((q) => !keptQueries.has(q.query)), 'a request with an unnamed need is still paired');
      assert.ok(named.every((q) => q.gold.length === 0 || keptQueries.has(q.query)), 'a request without an unnamed need was dropped');
      // Both filters together leave out the union of the two, and nothing else.
      const both = teamPairs({ nonEnglishOnly: false, unnamedNeed: false });
      const nonEnglishOnlyPairs = all.length - teamPairs({ nonEnglishOnly: false, unnamedNeed: true }).length;
      assert.ok(both.length < kept.length && all.length - both.length <= nonEnglishOnlyPairs + (all.length - kept.length));
    });

    it('trains the shipped embedding model without the team requests of unnamed needs or non-English-only tools', () => {
      assert.equal(TRAINING_SETTINGS.teamUnnamedNeed, 0);
      assert.equal(TRAINING_SETTINGS.teamNonEnglishOnly, 0);
    });

    (fs.existsSync(DATA_DIR) ? it : it.skip)('has no request of a measurement split among its pairs', function () {
      this.timeout(60_000);
      const { pairs } = trainingPairs({ metatoolPerToolCap: 0, openApi: 1, openApiDescriptionPairs: 0, authored: 1, team: 1, teamNonEnglishOnly: 1, teamUnnamedNeed: 1, bilingual: 1, bilingualMore: 1, paraphrase: 1 });
      const training = new Set(pairs.map((p) => p.query.trim().toLowerCase()));
      // The team set's held-out catalogues: neither their requests nor their tools' OpenAPI operations.
      const teamFile = path.join(TEAM_REQUESTS_DIR, 'queries.jsonl');
      if (fs.existsSync(teamFile)) {
        const heldOut = loadQueriesFile(teamFile).filter((q) => q.split !== 'train');
        const leaked = heldOut.filter((q) => training.has(q.query.trim().toLowerCase()));
        assert.equal(leaked.length, 0, `team set dev/test: ${leaked.slice(0, 3).map((q) => q.query).join(' | ')}`);
        // A held-out tool's text may reach training only as the identical text of a training catalogue's
        // tool (Google's generated `operations_list` is word for word the same in several APIs).
        const heldOutTools = new Set(heldOut.flatMap((q) => q.gold));
        const allTools = loadToolsFile(path.join(TEAM_REQUESTS_DIR, 'tools.jsonl'));
        const trainSplitTools = new Set(loadQueriesFile(teamFile, 'train').flatMap((q) => q.gold));
        const trainTexts = new Set(allTools.filter((t) => trainSplitTools.has(t.id)).map((t) => toolEmbeddingText(t)));
        const teamTools = new Set(pairs.filter((p) => p.source === 'team').map((p) => p.tool));
        const leakedTools = allTools.filter((t) => heldOutTools.has(t.id) && teamTools.has(toolEmbeddingText(t)) && !trainTexts.has(toolEmbeddingText(t)));
        assert.deepEqual(leakedTools.map((t) => t.id), [], 'a held-out tool is paired with a training request');
      }
      assert.ok(HELD_OUT_APIS.size >= 10, 'the dev and test catalogues name their OpenAPI apis');
      // Two- and three-word requests ("Get version") also occur as OpenAPI summaries by coincidence.
      const telling = (q: string): boolean => q.trim().split(/\s+/).length >= 4;
      for (const set of MEASUREMENT_SETS) {
        const leaked = loadQueries(set.folder, set.split).filter((q) => telling(q.query) && training.has(q.query.trim().toLowerCase()));
        assert.equal(leaked.length, 0, `${set.key}: ${leaked.slice(0, 3).map((q) => q.query).join(' | ')}`);
      }
    });
  });
});
