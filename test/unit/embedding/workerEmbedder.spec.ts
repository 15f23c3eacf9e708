import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EmbeddingError } from '../../../src/core/embedding/embedder';
import { OnnxEmbedder } from '../../../src/core/embedding/onnxEmbedder';
import { WORKER_RESTARTS, WorkerEmbedder } from '../../../src/core/embedding/workerEmbedder';
import { DEFAULT_MODEL_DIR } from '../../../src/core/selection/selectionEngine';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const MODEL = path.join(ROOT, DEFAULT_MODEL_DIR);
/** The worker from its TypeScript source (tsx compiles it), so the test needs no build. */
const WORKER = { script: path.join(ROOT, 'test/fixtures/workers/embedWorker.mjs') };
/** A fake worker that reports a model and exits on the first embed. */
const STOPPING = { script: path.join(ROOT, 'test/fixtures/workers/stoppingEmbedWorker.mjs') };
/** A fake worker that exits on its first embed the first time it runs in a folder, and answers after that. */
const ONCE = path.join(ROOT, 'test/fixtures/workers/onceStoppingEmbedWorker.mjs');

const isKind = (kind: string, pattern: RegExp) => (error: unknown) => error instanceof EmbeddingError && error.kind === kind && pattern.test(error.message);

/** The bundled model run in a worker thread, against the same model in-process. */
describe('WorkerEmbedder', function () {
  // Starting a worker compiles the embedding code with tsx: seconds on a loaded machine.
  this.timeout(60_000);

  it('gives the same model id, vocabulary and vectors as the model in-process', async () => {
    const [worker, local] = await Promise.all([WorkerEmbedder.load(MODEL, WORKER), OnnxEmbedder.load(MODEL)]);
    try {
      assert.equal(worker.modelId, local.modelId);
      assert.deepEqual(worker.vocabularyWords(), local.vocabularyWords());
      await worker.warmUp();
      assert.ok(worker.dimension > 0);
      const texts = ['look up the weather in Lyon tomorrow', '', '把这个文件翻译成英文', 'send the shortlist to the hiring room'];
      const [fromWorker, fromHere] = [await worker.embed(texts), await local.embed(texts)];
      assert.equal(fromWorker.length, texts.length);
      fromWorker.forEach((v, i) => assert.deepEqual([...v], [...fromHere[i]!], `vector ${i}`));
      assert.deepEqual(await worker.embed([]), []);
    } finally {
      await Promise.all([worker.dispose(), local.dispose()]);
    }
  });

  it('rejects a missing model folder as loading it here would, naming the folder', async () => {
    const missing = path.join(ROOT, 'no-such-model-folder');
    const here = await OnnxEmbedder.load(missing).then(
      () => assert.fail('loaded a missing folder'),
      (error: unknown) => error as EmbeddingError,
    );
    await assert.rejects(WorkerEmbedder.load(missing, WORKER), (error: unknown) => error instanceof EmbeddingError && error.kind === here.kind && error.message === here.message);
  });

  it('says to reinstall when its script cannot run', async () => {
    await assert.rejects(WorkerEmbedder.load(MODEL, { script: path.join(ROOT, 'no-such-worker.js') }), isKind('MODEL_INVALID', /no-such-worker\.js.*Reinstall the extension/s));
  });

  it('starts a worker that stopped again, and sends it the embeds that were pending', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'worker-restart-'));
    const restarts: string[] = [];
    const embedder = await WorkerEmbedder.load(folder, { script: ONCE, onRestart: (reason) => restarts.push(reason) });
    try {
      const first = embedder.embed(['read file', 'ab']);
      const second = embedder.embed(['sent while it restarts']);
      assert.deepEqual((await first).map((v) => [...v]), [[9, 2], [2, 2]]);
      assert.deepEqual((await second).map((v) => [...v]), [[22, 1]]);
      assert.deepEqual(restarts, ['exit code 5']);
      assert.deepEqual((await embedder.embed(['later'])).map((v) => [...v]), [[5, 1]]);
    } finally {
      await embedder.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('rejects the pending embed and every later one when the worker keeps stopping', async () => {
    const restarts: string[] = [];
    const embedder = await WorkerEmbedder.load('/nowhere', { ...STOPPING, onRestart: (reason) => restarts.push(reason) });
    await assert.rejects(embedder.embed(['read file']), isKind('MODEL_INVALID', new RegExp(`stopped \\(exit code 3, after ${WORKER_RESTARTS} restarts\\).*keywords`)));
    assert.equal(restarts.length, WORKER_RESTARTS);
    await assert.rejects(embedder.embed(['again']), isKind('MODEL_INVALID', /stopped/));
    await assert.rejects(embedder.warmUp(), isKind('MODEL_INVALID', /stopped/));
    await embedder.dispose();
  });

  it('answers a cancelled embed at once, and ends its thread when disposed', async () => {
    const embedder = await WorkerEmbedder.load(MODEL, WORKER);
    const controller = new AbortController();
    const cancelled = assert.rejects(embedder.embed(['read file'], controller.signal), isKind('CANCELLED', /cancelled/));
    controller.abort();
    await cancelled;
    const pending = assert.rejects(embedder.embed(['write file']), isKind('CANCELLED', /disposed/));
    await embedder.dispose();
    await pending;
    await assert.rejects(embedder.embed(['later']), isKind('CANCELLED', /disposed/));
    await embedder.dispose();
  });
});
