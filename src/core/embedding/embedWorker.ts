/**
 * The worker thread behind WorkerEmbedder (workerEmbedder.ts): it loads one local ONNX model folder, starts
 * its session at once, and embeds the texts it is sent, one message at a time. Bundled on its own as
 * dist/embedWorker.js, so the caller's thread never loads onnxruntime or the tokenizer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { describeError } from '../errors/describeError';
import { EmbeddingError } from './embedder';
import { OnnxEmbedder } from './onnxEmbedder';
import { setOnnxRuntimeFolder } from './ortRuntime';
import type { EmbedWorkerData, FromEmbedWorker, ToEmbedWorker, WorkerFailure } from './workerEmbedder';

const port = parentPort;
if (!port) throw new Error('embedWorker.js runs only as a worker thread (see WorkerEmbedder).');
const data = workerData as EmbedWorkerData;
if (data.runtimeFolder) setOnnxRuntimeFolder(data.runtimeFolder);

const send = (message: FromEmbedWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);
const failure = (error: unknown): WorkerFailure => (error instanceof EmbeddingError ? { kind: error.kind, message: error.message } : { message: describeError(error) });

const loading = OnnxEmbedder.load(data.folder);
loading.then(
  (embedder) => {
    send({ type: 'loaded', modelId: embedder.modelId, folder: embedder.folder, words: [...embedder.vocabularyWords()] });
    // The session starts now, on this thread, so the first prompt finds it ready.
    embedder.warmUp().then(
      () => send({ type: 'warm', dimension: embedder.dimension }),
      (error: unknown) => send({ type: 'warmFailed', error: failure(error) }),
    );
  },
  (error: unknown) => send({ type: 'loadFailed', error: failure(error) }),
);

port.on('message', (message: ToEmbedWorker) => {
  if (message.type === 'dispose') {
    void loading
      .then((embedder) => embedder.dispose())
      .catch(() => undefined)
      .finally(() => port.close());
    return;
  }
  const { id } = message;
  loading
    .then(async (embedder) => {
      const vectors = await embedder.embed(message.texts);
      // Each vector's buffer moves to the other thread rather than being copied; a shared one moves once.
      send({ type: 'result', id, vectors, dimension: embedder.dimension }, [...new Set(vectors.map((v) => v.buffer as ArrayBuffer))]);
    })
    .catch((error: unknown) => send({ type: 'failed', id, error: failure(error) }));
});
