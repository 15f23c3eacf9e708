import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadInProcess, OnnxEmbedder } from '../../../src/core/embedding/onnxEmbedder';
import { createEmbedderWithFallback, createSelectionEngine, DEFAULT_MODEL_DIR } from '../../../src/core/selection/selectionEngine';
import { TINY_DIMENSION, writeTinyBertFolder } from './tinyBertFolder';

/**
 * A downloaded model folder that cannot be used gives way to the bundled model, and the reason is said.
 * The "bundled" model here is a tiny BERT folder at <root>/media/model, as the extension lays it out.
 */
describe('fallback to the bundled model', function () {
  this.timeout(20_000);
  let root: string;
  let bundled: string;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'model-fallback-'));
    bundled = await writeTinyBertFolder(path.join(root, DEFAULT_MODEL_DIR), { routerConfig: { pooling: 'mean' } });
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function embeddedFrom(embedder: OnnxEmbedder | undefined): Promise<string> {
    assert.ok(embedder instanceof OnnxEmbedder);
    const [v] = await embedder.embed(['read file']);
    assert.equal(v!.length, TINY_DIMENSION);
    const folder = embedder.folder;
    await embedder.dispose();
    return folder;
  }

  it('uses a working downloaded folder as it is', async () => {
    const good = await writeTinyBertFolder(path.join(root, 'good'), { poolingConfig: { pooling_mode_cls_token: true } });
    const { embedder, fallback } = await createEmbedderWithFallback({ provider: 'local', model: good }, root, loadInProcess);
    assert.equal(fallback, undefined);
    assert.equal(await embeddedFrom(embedder as OnnxEmbedder), good);
  });

  it('falls back when the folder is missing, and says which folder and why', async () => {
    const missing = path.join(root, 'not-there');
    const { embedder, fallback } = await createEmbedderWithFallback({ provider: 'local', model: missing }, root, loadInProcess);
    assert.match(fallback ?? '', /bundled default model is used instead/);
    assert.match(fallback ?? '', new RegExp(missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.match(fallback ?? '', /does not exist/);
    assert.equal(await embeddedFrom(embedder as OnnxEmbedder), bundled);
  });

  it('falls back when model.onnx is broken: the folder loads, but onnxruntime refuses the graph', async () => {
    const broken = await writeTinyBertFolder(path.join(root, 'broken'));
    await writeFile(path.join(broken, 'model.onnx'), 'these bytes are not an ONNX graph');
    const { embedder, fallback } = await createEmbedderWithFallback({ provider: 'local', model: broken }, root, loadInProcess);
    assert.match(fallback ?? '', /onnxruntime could not load model\.onnx/);
    assert.match(fallback ?? '', /Download the model again/);
    assert.equal(await embeddedFrom(embedder as OnnxEmbedder), bundled);
  });

  it('the selection engine reports the fallback, logs it, and ranks with the bundled model', async () => {
    const broken = await writeTinyBertFolder(path.join(root, 'broken-tokenizer'));
    await writeFile(path.join(broken, 'tokenizer.json'), '{ not json');
    const logged: string[] = [];
    const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: broken }, root, log: (m) => logged.push(m) });
    try {
      assert.match(engine.embedderFallback ?? '', /tokenizer\.json is not valid JSON/);
      assert.equal(engine.embedderProblem, undefined, 'selection still has embeddings');
      assert.ok(engine.index, 'an embedding index exists');
      assert.ok(logged.some((m) => m === engine.embedderFallback), 'the reason is logged');
    } finally {
      await engine.dispose();
    }
  });

  it('leaves the bundled model and other providers alone', async () => {
    const bundledOnly = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root });
    assert.equal(bundledOnly.embedderFallback, undefined);
    await bundledOnly.dispose();
    const none = await createEmbedderWithFallback({ provider: 'none', model: 'default' }, root, loadInProcess);
    assert.deepEqual(none, { embedder: undefined });
  });

  it('reports keywords only when the bundled model fails too', async () => {
    const emptyRoot = await mkdtemp(path.join(os.tmpdir(), 'model-fallback-empty-'));
    try {
      const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: path.join(emptyRoot, 'nope') }, root: emptyRoot });
      assert.equal(engine.index, undefined);
      assert.match(engine.embedderProblem ?? '', /does not exist/);
      await engine.dispose();
    } finally {
      await rm(emptyRoot, { recursive: true, force: true });
    }
  });
});
