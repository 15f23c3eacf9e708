/**
 * The local ONNX embedder, run in a worker thread (embedWorker.ts). Loading a model (tokenizer, folder
 * digest, onnxruntime session) and every embedding run then happen off the caller's thread: in VS Code,
 * off the extension host's, which other extensions share and which the router needs for its own start.
 * This side keeps what the worker reported (model id, vocabulary, dimension) and passes texts and vectors
 * by message. A worker that stops on its own is started again (WORKER_RESTARTS times) and given the pending
 * embeds; after that, every pending and later embed is rejected with the reason.
 */
import { Worker } from 'node:worker_threads';
import { describeError } from '../errors/describeError';
import { EmbeddingError, type EmbeddingErrorKind, type LocalModel, type LocalModelLoader } from './embedder';
import { onnxRuntimeFolder } from './ortRuntime';

/** What the worker is started with. */
export interface EmbedWorkerData {
  readonly folder: string;
  readonly runtimeFolder?: string;
}

export type ToEmbedWorker = { readonly type: 'embed'; readonly id: number; readonly texts: readonly string[] } | { readonly type: 'dispose' };

export interface WorkerFailure {
  readonly kind?: EmbeddingErrorKind;
  readonly message: string;
}

export type FromEmbedWorker =
  | { readonly type: 'loaded'; readonly modelId: string; readonly folder: string; readonly words: readonly string[] }
  | { readonly type: 'loadFailed'; readonly error: WorkerFailure }
  | { readonly type: 'warm'; readonly dimension: number }
  | { readonly type: 'warmFailed'; readonly error: WorkerFailure }
  | { readonly type: 'result'; readonly id: number; readonly vectors: Float32Array[]; readonly dimension: number }
  | { readonly type: 'failed'; readonly id: number; readonly error: WorkerFailure };

export interface WorkerEmbedderOptions {
  /** The worker's script: dist/embedWorker.js in a build (tests start the TypeScript source through tsx). */
  readonly script: string;
  /** Told when a worker that stopped on its own is started again, with why it stopped. */
  readonly onRestart?: (reason: string) => void;
}

interface Pending {
  readonly texts: readonly string[];
  readonly resolve: (vectors: Float32Array[]) => void;
  readonly reject: (error: Error) => void;
}

type Loaded = Extract<FromEmbedWorker, { type: 'loaded' }>;

/** Embed calls kept with the worker: one running, the rest queued there, while the caller's thread is busy. */
export const WORKER_BATCHES_IN_FLIGHT = 4;

/**
 * A worker that stops on its own (a crash, an out-of-memory end) is started again this many times, its
 * pending embeds sent again; after that, selection stays on keywords and says why.
 */
export const WORKER_RESTARTS = 2;

/** Loads local models in worker threads started from `options.script`. */
export function loadInWorker(options: WorkerEmbedderOptions): LocalModelLoader {
  return (folder) => WorkerEmbedder.load(folder, options);
}

export class WorkerEmbedder implements LocalModel {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stopped: EmbeddingError | undefined;
  /** The worker embeds go to; undefined while one is being started again. */
  private live: Worker | undefined;
  private restarts = 0;
  private size = 0;
  private readonly warm: Promise<void>;
  private warmed: () => void = () => undefined;
  private coldFailed: (error: Error) => void = () => undefined;

  private constructor(
    worker: Worker,
    readonly modelId: string,
    /** The model folder as the worker resolved it; named in errors. */
    readonly folder: string,
    private readonly words: readonly string[],
    private readonly options: WorkerEmbedderOptions,
  ) {
    this.warm = new Promise<void>((resolve, reject) => {
      this.warmed = resolve;
      this.coldFailed = reject;
    });
    // Asked for or not: a failed first run is also the answer of every later embed.
    this.warm.catch(() => undefined);
    this.attach(worker);
  }

  /**
   * Starts a worker on `folder` and resolves once it has loaded the model (its session keeps starting in
   * the worker). Rejects as OnnxEmbedder.load does, with MODEL_INVALID naming the folder and file at fault.
   */
  static async load(folder: string, options: WorkerEmbedderOptions): Promise<WorkerEmbedder> {
    const { worker, loaded } = await startWorker(folder, options.script);
    return new WorkerEmbedder(worker, loaded.modelId, loaded.folder, loaded.words, options);
  }

  /** The index keeps this many batches with the worker, so it never waits for the caller's thread. */
  readonly concurrentCalls = WORKER_BATCHES_IN_FLIGHT;

  /** Vector length: 0 until the worker's session has run once. */
  get dimension(): number {
    return this.size;
  }

  /** The tokenizer's word-like tokens, as OnnxEmbedder.vocabularyWords gives them. */
  vocabularyWords(): readonly string[] {
    return this.words;
  }

  /** Resolves once the worker's session has run its first text; rejects when it could not. */
  warmUp(): Promise<void> {
    return this.warm;
  }

  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.stopped) return Promise.reject(this.stopped);
    if (signal?.aborted) return Promise.reject(new EmbeddingError('CANCELLED', 'Embedding was cancelled.', { cause: signal.reason }));
    if (texts.length === 0) return Promise.resolve([]);
    const id = this.nextId++;
    return new Promise<Float32Array[]>((resolve, reject) => {
      // A cancelled request is answered at once; the worker's late answer finds no one waiting.
      const onAbort = (): void => {
        this.pending.delete(id);
        reject(new EmbeddingError('CANCELLED', 'Embedding was cancelled.', { cause: signal?.reason }));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        texts,
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      // While a worker is started again, the call waits in `pending` and is sent once it is up.
      this.live?.postMessage({ type: 'embed', id, texts } satisfies ToEmbedWorker);
    });
  }

  /** Releases the model in the worker and ends it; pending embeds are rejected as cancelled. */
  async dispose(): Promise<void> {
    if (this.stopped?.kind === 'CANCELLED') return;
    this.stopped = new EmbeddingError('CANCELLED', `The embedder for ${this.folder} was disposed (the model setting changed or the extension is stopping).`);
    for (const call of this.pending.values()) call.reject(this.stopped);
    this.pending.clear();
    const worker = this.live;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'dispose' } satisfies ToEmbedWorker);
    // A worker that does not end within a second of being asked is ended.
    const timer = setTimeout(() => void worker.terminate(), 1000);
    await exited;
    clearTimeout(timer);
  }

  private attach(worker: Worker): void {
    this.live = worker;
    worker.on('message', (message: FromEmbedWorker) => this.received(message));
    worker.on('error', (error) => this.lost(worker, describeError(error)));
    worker.on('exit', (code) => this.lost(worker, `exit code ${code}`));
  }

  private received(message: FromEmbedWorker): void {
    if (message.type === 'warm') {
      this.size = message.dimension;
      this.warmed();
      return;
    }
    if (message.type === 'warmFailed') {
      this.coldFailed(asError(message.error));
      return;
    }
    if (message.type !== 'result' && message.type !== 'failed') return;
    const call = this.pending.get(message.id);
    if (!call) return;
    this.pending.delete(message.id);
    if (message.type === 'failed') return call.reject(asError(message.error));
    this.size = message.dimension;
    call.resolve(message.vectors);
  }

  /** The live worker stopped (an error, then its exit, come for one stop): started again, or the embedder stops. */
  private lost(worker: Worker, reason: string): void {
    if (worker !== this.live) return;
    this.live = undefined;
    if (this.stopped) return;
    if (this.restarts >= WORKER_RESTARTS) return this.stop(`${reason}, after ${this.restarts} restarts`);
    this.restarts++;
    this.options.onRestart?.(reason);
    void startWorker(this.folder, this.options.script).then(
      ({ worker: next, loaded }) => {
        if (this.stopped) return void next.terminate();
        if (loaded.modelId !== this.modelId) {
          void next.terminate();
          return this.stop(`${reason}; the model found on restarting is another one, ${loaded.modelId}`);
        }
        this.attach(next);
        for (const [id, call] of this.pending) next.postMessage({ type: 'embed', id, texts: call.texts } satisfies ToEmbedWorker);
      },
      (error: unknown) => this.stop(`${reason}; starting it again failed: ${describeError(error)}`),
    );
  }

  private stop(reason: string): void {
    this.stopped ??= new EmbeddingError('MODEL_INVALID', `The embedding worker for ${this.folder} stopped (${reason}). Selection uses keywords until the model setting changes or the window is reloaded.`);
    this.coldFailed(this.stopped);
    for (const call of this.pending.values()) call.reject(this.stopped);
    this.pending.clear();
  }
}

function asError(failure: WorkerFailure): EmbeddingError {
  return new EmbeddingError(failure.kind ?? 'MODEL_INVALID', failure.message);
}

/** Starts a worker on `folder` and waits for it to report the model loaded; it is ended if it cannot. */
function startWorker(folder: string, script: string): Promise<{ worker: Worker; loaded: Loaded }> {
  const runtimeFolder = onnxRuntimeFolder();
  const data: EmbedWorkerData = { folder, ...(runtimeFolder ? { runtimeFolder } : {}) };
  let worker: Worker;
  try {
    worker = new Worker(script, { workerData: data });
  } catch (error) {
    return Promise.reject(new EmbeddingError('MODEL_INVALID', `The embedding worker could not start from ${script} (${describeError(error)}). Reinstall the extension.`, { cause: error }));
  }
  return new Promise((resolve, reject) => {
    const fail = (error: Error): void => {
      cleanUp();
      void worker.terminate();
      reject(error);
    };
    const onMessage = (message: FromEmbedWorker): void => {
      if (message.type === 'loaded') {
        cleanUp();
        resolve({ worker, loaded: message });
      } else if (message.type === 'loadFailed') fail(asError(message.error));
    };
    const onError = (error: Error): void => fail(new EmbeddingError('MODEL_INVALID', `The embedding worker (${script}) failed while loading ${folder}: ${describeError(error)}. Reinstall the extension.`, { cause: error }));
    const onExit = (code: number): void => fail(new EmbeddingError('MODEL_INVALID', `The embedding worker (${script}) exited with code ${code} while loading ${folder}. Reinstall the extension.`));
    const cleanUp = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}
