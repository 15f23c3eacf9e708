import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_MAX_TOKENS } from '../../../src/core/embedding/modelFolder';
import { ONNX_BATCH_SIZE, OnnxEmbedder, type OnnxEmbedderOptions } from '../../../src/core/embedding/onnxEmbedder';
import {
  TINY_DIMENSION, buildTinyBertOnnx, handCls, handHiddenStates, handMean, tinyTables, tinyTokenizerConfig, tinyTokenizerJson, tokenId, unit,
  writeTinyBertFolder, type TinyFolderOptions,
} from './tinyBertFolder';
import { rejectsWith } from './embeddingAssertions';

const TOLERANCE = 1e-5;

function ids(...tokens: string[]): number[] {
  return tokens.map(tokenId);
}

function assertClose(actual: Float32Array, expected: readonly number[], what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i]! - expected[i]!) < TOLERANCE, `${what}: [${i}] is ${actual[i]}, expected ${expected[i]}`);
  }
}

function assertUnit(v: Float32Array): void {
  let s = 0;
  for (const x of v) s += x * x;
  assert.ok(Math.abs(Math.sqrt(s) - 1) < TOLERANCE, `length ${Math.sqrt(s)} is not 1`);
}


describe('OnnxEmbedder', function () {
  // Generous: the first test loads the native runtime, and the machine may be busy (no timing is asserted).
  this.timeout(20_000);
  let root: string;
  const open: OnnxEmbedder[] = [];
  let folderCount = 0;

  async function folder(options: TinyFolderOptions = {}, name = `model-${++folderCount}`): Promise<string> {
    return writeTinyBertFolder(path.join(root, name), options);
  }

  async function load(dir: string, options?: OnnxEmbedderOptions): Promise<OnnxEmbedder> {
    const embedder = await OnnxEmbedder.load(dir, options);
    open.push(embedder);
    return embedder;
  }

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'onnx-embedder-'));
  });

  afterEach(async () => {
    for (const embedder of open.splice(0)) await embedder.dispose();
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  describe('pooling', () => {
    it('mean-pools the real tokens and normalises, matching a hand computation from the same tables', async () => {
      const embedder = await load(await folder());
      const [v] = await embedder.embed(['Read files by ID']);
      assertClose(v!, handMean(ids('[CLS]', 'read', 'file', '##s', 'by', 'id', '[SEP]'), tinyTables()), 'mean');
      assertUnit(v!);
      assert.equal(embedder.dimension, TINY_DIMENSION);
      assert.equal(embedder.pooling, 'mean');
    });

    it('takes the first token for CLS pooling', async () => {
      const embedder = await load(await folder(), { pooling: 'cls' });
      const [v] = await embedder.embed(['search the web']);
      assertClose(v!, handCls(ids('[CLS]', 'search', 'the', 'web', '[SEP]'), tinyTables()), 'cls');
      // CLS and mean really differ on this model, so the two checks are not the same check twice.
      const mean = handMean(ids('[CLS]', 'search', 'the', 'web', '[SEP]'), tinyTables());
      assert.ok(Math.abs(v![0]! - mean[0]!) > 1e-3);
    });

    it("reads CLS pooling from sentence-transformers' 1_Pooling/config.json", async () => {
      const embedder = await load(await folder({ poolingConfig: { word_embedding_dimension: 8, pooling_mode_cls_token: true, pooling_mode_mean_tokens: false } }));
      assert.equal(embedder.pooling, 'cls');
      const [v] = await embedder.embed(['send mail']);
      assertClose(v!, handCls(ids('[CLS]', 'send', 'mail', '[SEP]'), tinyTables()), 'cls from config');
    });

    it('reads mean pooling from 1_Pooling/config.json', async () => {
      const embedder = await load(await folder({ poolingConfig: { pooling_mode_cls_token: false, pooling_mode_mean_tokens: true } }));
      assert.equal(embedder.pooling, 'mean');
    });

    it('lets tool_router_model.json override 1_Pooling/config.json, and options override both', async () => {
      const dir = await folder({ poolingConfig: { pooling_mode_mean_tokens: true }, routerConfig: { pooling: 'cls' } });
      assert.equal((await load(dir)).pooling, 'cls');
      assert.equal((await load(dir, { pooling: 'mean' })).pooling, 'mean');
    });

    it('defaults to mean pooling and no preprocessing when the folder says nothing', async () => {
      const embedder = await load(await folder({ tokenizerConfig: null }));
      assert.equal(embedder.pooling, 'mean');
      assert.equal(embedder.preprocess, 'none');
      assert.equal(embedder.maxLength, DEFAULT_MAX_TOKENS);
    });

    it('refuses pooling modes it does not implement, saying how to choose one', async () => {
      const dir = await folder({ poolingConfig: { pooling_mode_max_tokens: true } });
      await rejectsWith(OnnxEmbedder.load(dir), 'MODEL_INVALID', /pooling_mode_max_tokens/, /tool_router_model\.json/);
    });

    it('uses a 2-D [batch, dim] output as it is, without pooling it again', async () => {
      const tables = tinyTables();
      const embedder = await load(await folder({ sentenceEmbeddingOnly: true }));
      const [short, long] = await embedder.embed(['list', 'list the files']);
      // The graph's own mean counts every position, padding included: proof that we did not re-pool.
      const shortIds = ids('[CLS]', 'list', '[SEP]');
      const hidden = handHiddenStates(shortIds, tables);
      const padded = [...hidden];
      for (let s = shortIds.length; s < 6; s++) {
        padded.push(Float64Array.from({ length: TINY_DIMENSION }, (_, d) => tables.word[0]![d]! + tables.type[0]![d]! + tables.position[s]![d]!));
      }
      const graphMean = new Float64Array(TINY_DIMENSION);
      for (const h of padded) for (let d = 0; d < TINY_DIMENSION; d++) graphMean[d]! += h[d]! / padded.length;
      assertClose(short!, unit(graphMean), 'padded graph mean');
      assertClose(long!, handMean(ids('[CLS]', 'list', 'the', 'file', '##s', '[SEP]'), tables), 'unpadded graph mean');
      assert.equal(embedder.dimension, TINY_DIMENSION);
    });

    it('takes token_embeddings when the model has no last_hidden_state', async () => {
      const embedder = await load(await folder({ hiddenOutputName: 'token_embeddings' }));
      const [v] = await embedder.embed(['get user']);
      assertClose(v!, handMean(ids('[CLS]', 'get', 'user', '[SEP]'), tinyTables()), 'token_embeddings');
    });
  });

  describe('inputs', () => {
    it('feeds only the inputs the model declares (no token_type_ids)', async () => {
      const embedder = await load(await folder({ withTokenTypeIds: false }));
      const [a, b] = await embedder.embed(['create issue', 'delete the directory']);
      assertClose(a!, handMean(ids('[CLS]', 'create', 'issue', '[SEP]'), tinyTables(), false), 'without token types');
      assertClose(b!, handMean(ids('[CLS]', 'delete', 'the', 'directory', '[SEP]'), tinyTables(), false), 'without token types, padded row');
    });

    it('splits identifiers before tokenising when the folder asks for it', async () => {
      const split = await load(await folder({ routerConfig: { preprocess: 'split-identifiers' } }));
      assert.equal(split.preprocess, 'split-identifiers');
      const [v] = await split.embed(['readFile']);
      assertClose(v!, handMean(ids('[CLS]', 'read', 'file', '[SEP]'), tinyTables()), 'split');
      const plain = await load(await folder());
      const [w] = await plain.embed(['readFile']);
      assertClose(w!, handMean(ids('[CLS]', '[UNK]', '[SEP]'), tinyTables()), 'not split: one unknown word');
    });

    it('embeds an empty text and an empty list', async () => {
      const embedder = await load(await folder());
      assert.deepEqual(await embedder.embed([]), []);
      const [v] = await embedder.embed(['']);
      assertClose(v!, handMean(ids('[CLS]', '[SEP]'), tinyTables()), 'empty text');
    });
  });

  describe('batching and truncation', () => {
    const words = ['read', 'write', 'file', 'list', 'get', 'user', 'search', 'web', 'send', 'mail', 'weather', 'for', 'city'];
    const texts = Array.from({ length: ONNX_BATCH_SIZE * 2 + 5 }, (_, i) => {
      const length = 1 + ((i * 7) % 11);
      return Array.from({ length }, (_, j) => words[(i + j * 3) % words.length]).join(' ');
    });

    it('gives the same vectors for one mixed-length batch as one text at a time, in input order', async () => {
      const embedder = await load(await folder());
      const together = await embedder.embed(texts);
      assert.equal(together.length, texts.length);
      for (let i = 0; i < texts.length; i++) {
        const [alone] = await embedder.embed([texts[i]!]);
        assertClose(together[i]!, Array.from(alone!), `text ${i}`);
      }
      // And each matches the hand computation, so order and padding are both right.
      const first = texts[0]!.split(' ');
      assertClose(together[0]!, handMean(ids('[CLS]', ...first, '[SEP]'), tinyTables()), 'text 0 by hand');
    });

    it('handles concurrent calls on one embedder and on two embedders sharing a folder', async () => {
      const dir = await folder();
      const a = await load(dir);
      const b = await load(dir, { pooling: 'cls' });
      const [x, y, z] = await Promise.all([a.embed(texts.slice(0, 40)), b.embed(texts.slice(0, 40)), a.embed(texts.slice(20, 60))]);
      for (let i = 0; i < 20; i++) assertClose(x[20 + i]!, Array.from(z[i]!), `concurrent ${i}`);
      const firstIds = ids('[CLS]', ...texts[0]!.split(' '), '[SEP]');
      assertClose(y[0]!, handCls(firstIds, tinyTables()), 'cls embedder');
    });

    it('cuts long texts to maxLength tokens, keeping the closing [SEP]', async () => {
      const embedder = await load(await folder(), { maxLength: 5 });
      const [v] = await embedder.embed(['read write file list get user']);
      assertClose(v!, handMean(ids('[CLS]', 'read', 'write', 'file', '[SEP]'), tinyTables()), 'truncated');
      const [w] = await embedder.embed(['read write file']);
      assertClose(v!, Array.from(w!), 'same as the text cut by hand');
    });

    it("takes the tokenizer's model_max_length when it is below the default", async () => {
      const embedder = await load(await folder({ tokenizerConfig: tinyTokenizerConfig(6) }));
      assert.equal(embedder.maxLength, 6);
      const [v] = await embedder.embed(['read write file list get user']);
      assertClose(v!, handMean(ids('[CLS]', 'read', 'write', 'file', 'list', '[SEP]'), tinyTables()), 'model_max_length 6');
    });

    it('ignores a placeholder model_max_length (1e30) and keeps the default', async () => {
      const embedder = await load(await folder({ tokenizerConfig: tinyTokenizerConfig(1e30) }));
      assert.equal(embedder.maxLength, DEFAULT_MAX_TOKENS);
    });

    it('lets tool_router_model.json set maxLength', async () => {
      const embedder = await load(await folder({ routerConfig: { maxLength: 4 } }));
      assert.equal(embedder.maxLength, 4);
      const [v] = await embedder.embed(['read write file list']);
      assertClose(v!, handMean(ids('[CLS]', 'read', 'write', '[SEP]'), tinyTables()), 'maxLength 4');
    });

    it('bounds very long texts (a megabyte) at the default limit', async () => {
      const embedder = await load(await folder());
      const [v] = await embedder.embed(['read file '.repeat(100_000)]);
      const body = Array.from({ length: DEFAULT_MAX_TOKENS - 2 }, (_, i) => (i % 2 === 0 ? 'read' : 'file'));
      assertClose(v!, handMean(ids('[CLS]', ...body, '[SEP]'), tinyTables()), 'huge text');
    });
  });

  describe('model id and errors', () => {
    it('builds the id from the folder name, the content digest, pooling, preprocessing and length', async () => {
      const embedder = await load(await folder({}, 'tiny-bert'));
      assert.match(embedder.modelId, /^onnx:tiny-bert:[0-9a-f]{12}:mean:none:256$/);
    });

    it('keeps the id for the same files and changes it with model.onnx, tokenizer.json, pooling, preprocessing and length', async () => {
      const a = await folder({}, 'same-a/tiny');
      const b = await folder({}, 'same-b/tiny');
      const base = (await load(a)).modelId;
      assert.equal((await load(b)).modelId, base, 'same files, same folder name');
      assert.notEqual((await load(a, { pooling: 'cls' })).modelId, base);
      assert.notEqual((await load(a, { preprocess: 'split-identifiers' })).modelId, base);
      assert.notEqual((await load(a, { maxLength: 128 })).modelId, base);

      await writeFile(path.join(b, 'model.onnx'), buildTinyBertOnnx({ tables: tinyTables(99) }));
      const changedModel = (await load(b)).modelId;
      assert.notEqual(changedModel, base, 'model.onnx changed');
      const tokenizer = tinyTokenizerJson();
      (tokenizer['normalizer'] as Record<string, unknown>)['lowercase'] = false;
      await writeFile(path.join(b, 'tokenizer.json'), JSON.stringify(tokenizer));
      assert.notEqual((await load(b)).modelId, changedModel, 'tokenizer.json changed');
    });

    it('shares one session between embedders of the same folder', async () => {
      const dir = await folder();
      const a = await load(dir);
      const b = await load(dir, { pooling: 'cls' });
      assert.equal(b.dimension, 0);
      await a.embed(['read']);
      assert.equal(b.dimension, TINY_DIMENSION, 'b sees the session a created');
      await a.dispose();
      const [v] = await b.embed(['read']);
      assertClose(v!, handCls(ids('[CLS]', 'read', '[SEP]'), tinyTables()), 'b still works after a is disposed');
    });

    it('finds model.onnx under onnx/, where Hugging Face repositories keep it', async () => {
      const dir = await folder();
      await mkdir(path.join(dir, 'onnx'));
      await rename(path.join(dir, 'model.onnx'), path.join(dir, 'onnx', 'model.onnx'));
      const [v] = await (await load(dir)).embed(['open file']);
      assertClose(v!, handMean(ids('[CLS]', 'open', 'file', '[SEP]'), tinyTables()), 'nested model');
    });

    it('names a missing folder and says what to set', async () => {
      const missing = path.join(root, 'no-such-model');
      await rejectsWith(OnnxEmbedder.load(missing), 'MODEL_INVALID', /no-such-model/, /does not exist/, /toolRouter\.embeddings\.model/);
    });

    it('names a missing model.onnx', async () => {
      const dir = await folder();
      await rm(path.join(dir, 'model.onnx'));
      await rejectsWith(OnnxEmbedder.load(dir), 'MODEL_INVALID', new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), /no model\.onnx/, /tokenizer\.json/);
    });

    it('names a missing tokenizer.json', async () => {
      const dir = await folder();
      await rm(path.join(dir, 'tokenizer.json'));
      await rejectsWith(OnnxEmbedder.load(dir), 'MODEL_INVALID', /no tokenizer\.json/, /download it again/);
    });

    it('names a tokenizer.json that is not JSON, or not a tokenizer', async () => {
      const dir = await folder();
      await writeFile(path.join(dir, 'tokenizer.json'), '{"model": ');
      await rejectsWith(OnnxEmbedder.load(dir), 'MODEL_INVALID', /tokenizer\.json is not valid JSON/);
      await writeFile(path.join(dir, 'tokenizer.json'), '{"model": {}}');
      await rejectsWith(OnnxEmbedder.load(dir), 'MODEL_INVALID', /tokenizer\.json could not be read as a tokenizer/);
    });

    it('names a bad field in tool_router_model.json', async () => {
      const dir = await folder({ routerConfig: { pooling: 'max' } });
      await rejectsWith(OnnxEmbedder.load(dir), 'MODEL_INVALID', /tool_router_model\.json, field "pooling"/, /"max"/);
      await writeFile(path.join(dir, 'tool_router_model.json'), JSON.stringify({ maxLength: -3 }));
      await rejectsWith(OnnxEmbedder.load(dir), 'MODEL_INVALID', /field "maxLength"/);
    });

    it('reports a corrupt model.onnx at the first embed, naming the file', async () => {
      const dir = await folder();
      await writeFile(path.join(dir, 'model.onnx'), Buffer.from('this is not an onnx model'));
      const embedder = await load(dir);
      await rejectsWith(embedder.embed(['read']), 'MODEL_INVALID', /onnxruntime could not load model\.onnx/, /download it again/);
    });

    it('refuses to run a model.onnx that changed after load (its id would lie)', async () => {
      const dir = await folder();
      const embedder = await load(dir);
      await writeFile(path.join(dir, 'model.onnx'), buildTinyBertOnnx({ tables: tinyTables(3) }));
      await rejectsWith(embedder.embed(['read']), 'MODEL_INVALID', /changed after the model was loaded/);
    });

    it('refuses a graph whose inputs are not token inputs', async () => {
      const dir = await folder();
      const model = buildTinyBertOnnx();
      // Rename an input in the encoded bytes: same length, so the protobuf stays valid.
      const patched = Buffer.from(model).toString('latin1').replaceAll('attention_mask', 'attention_mast');
      await writeFile(path.join(dir, 'model.onnx'), Buffer.from(patched, 'latin1'));
      await rejectsWith((await load(dir)).embed(['read']), 'MODEL_INVALID', /attention_mast/, /feature-extraction/);
    });

    it('rejects with CANCELLED when the signal is aborted or the embedder disposed', async () => {
      const embedder = await OnnxEmbedder.load(await folder());
      const controller = new AbortController();
      controller.abort();
      await rejectsWith(embedder.embed(['read'], controller.signal), 'CANCELLED');
      await embedder.dispose();
      await rejectsWith(embedder.embed(['read']), 'CANCELLED', /disposed/);
    });

    it('knows its dimension after warmUp', async () => {
      const embedder = await load(await folder());
      assert.equal(embedder.dimension, 0);
      await embedder.warmUp();
      assert.equal(embedder.dimension, TINY_DIMENSION);
    });
  });
});
