/**
 * The onnxruntime side of the local engine: one session per model file, created on first use, shared by
 * every embedder of that file and released with the last; runs one batch at a time and pools its output.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type * as Ort from 'onnxruntime-node';
import { loadOnnxRuntime } from './ortRuntime';
import { describeError } from '../errors/describeError';
import { EmbeddingError, l2Normalize } from './embedder';
import { invalid, readRequiredFile, type Pooling } from './modelFolder';
import type { EncodedText } from './sequenceEncoder';

/**
 * Threads inside one operator. A query is a few dozen tokens, where waking and syncing a pool costs more
 * than it saves, and the extension host shares the machine with the editor itself.
 */
export const ONNX_INTRA_OP_THREADS = 1;

/** The inputs a sentence-embedding export may declare; anything else is not a model we can feed. */
const KNOWN_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'] as const;
type KnownInput = (typeof KNOWN_INPUTS)[number];
/** Outputs tried in order; otherwise the first output. */
const PREFERRED_OUTPUTS = ['last_hidden_state', 'token_embeddings'];

/** What a created session knows about its model. */
export interface LoadedSession {
  readonly ort: typeof Ort;
  readonly session: Ort.InferenceSession;
  /** Declared inputs among input_ids, attention_mask, token_type_ids. */
  readonly inputs: ReadonlySet<KnownInput>;
  readonly outputName: string;
}

/**
 * One onnxruntime session per model file (real path + sha256), shared by every embedder of that folder
 * whatever its pooling, and reference-counted so the last dispose releases it.
 */
export class SharedModel {
  private static readonly byKey = new Map<string, SharedModel>();

  private refs = 0;
  private loading: Promise<LoadedSession> | undefined;
  private loaded: LoadedSession | undefined;
  /** Runs one after another: they share the input buffers below. */
  private tail: Promise<unknown> = Promise.resolve();
  /** Input buffers reused across runs and grown as needed, so a query allocates no new arrays for them. */
  private readonly buffers = new Map<KnownInput, BigInt64Array>();
  dimension = 0;

  private constructor(
    private readonly key: string,
    private readonly folder: string,
    private readonly modelPath: string,
    private readonly modelSha256: string,
  ) {}

  static acquire(folder: string, modelPath: string, modelRealPath: string, modelSha256: string): SharedModel {
    const key = `${modelRealPath}\0${modelSha256}`;
    let model = SharedModel.byKey.get(key);
    if (!model) {
      model = new SharedModel(key, folder, modelPath, modelSha256);
      SharedModel.byKey.set(key, model);
    }
    model.refs++;
    return model;
  }

  async session(signal: AbortSignal | undefined): Promise<LoadedSession> {
    if (this.loaded) return this.loaded;
    this.loading ??= this.create().then(
      (loaded) => (this.loaded = loaded),
      (error: unknown) => {
        this.loading = undefined; // a later embed tries again (the file may have been fixed)
        throw error;
      },
    );
    if (!signal) return this.loading;
    return raceAbort(this.loading, signal);
  }

  run(batch: readonly EncodedText[], padId: number, pooling: Pooling): Promise<Float32Array[]> {
    const result = this.tail.then(() => this.runNow(batch, padId, pooling));
    this.tail = result.catch(() => undefined);
    return result;
  }

  async release(): Promise<void> {
    if (--this.refs > 0) return;
    SharedModel.byKey.delete(this.key);
    await this.tail;
    const loaded = this.loaded ?? (await this.loading?.catch(() => undefined));
    this.loaded = undefined;
    this.loading = undefined;
    await loaded?.session.release();
  }

  private async create(): Promise<LoadedSession> {
    // Loaded on first use: the native runtime costs start-up time that the HTTP provider never needs.
    const ort = await loadOnnxRuntime();
    const bytes = await readRequiredFile(this.folder, path.relative(this.folder, this.modelPath));
    // The model id was computed from the file at load; run exactly that file or say it changed.
    const sha = createHash('sha256').update(bytes).digest('hex');
    if (sha !== this.modelSha256) {
      throw invalid(this.folder, `${path.relative(this.folder, this.modelPath)} changed after the model was loaded (sha256 ${sha.slice(0, 12)}… instead of ${this.modelSha256.slice(0, 12)}…). Reload the window or run the command again to use the new file.`);
    }
    let session: Ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(bytes, {
        intraOpNumThreads: ONNX_INTRA_OP_THREADS,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3, // errors only: warnings about unused initializers would fill the log
      });
    } catch (error) {
      throw invalid(this.folder, `onnxruntime could not load ${path.relative(this.folder, this.modelPath)} (${describeError(error)}). The file may be truncated (download it again) or need a newer onnxruntime.`, error);
    }
    try {
      return this.describe(ort, session);
    } catch (error) {
      await session.release();
      throw error;
    }
  }

  private describe(ort: typeof Ort, session: Ort.InferenceSession): LoadedSession {
    const file = path.relative(this.folder, this.modelPath);
    const unknown = session.inputNames.filter((name) => !(KNOWN_INPUTS as readonly string[]).includes(name));
    if (unknown.length > 0 || !session.inputNames.includes('input_ids')) {
      throw invalid(this.folder, `${file} takes inputs [${session.inputNames.join(', ')}]; a sentence-embedding model takes input_ids and optionally attention_mask and token_type_ids. Export it as a feature-extraction model.`);
    }
    for (const meta of session.inputMetadata) {
      if (meta.isTensor && meta.type !== 'int64') {
        throw invalid(this.folder, `${file} wants ${meta.name} as ${meta.type}; only int64 token inputs are supported. Export the model with int64 inputs (the default of optimum and sentence-transformers).`);
      }
    }
    const outputName = PREFERRED_OUTPUTS.find((name) => session.outputNames.includes(name)) ?? session.outputNames[0];
    if (outputName === undefined) throw invalid(this.folder, `${file} has no outputs.`);
    const meta = session.outputMetadata[session.outputNames.indexOf(outputName)];
    if (meta?.isTensor) {
      if (meta.type !== 'float32') {
        throw invalid(this.folder, `${file} gives ${outputName} as ${meta.type}; only float32 outputs are supported. Use the float32 export of the model.`);
      }
      const last = meta.shape[meta.shape.length - 1];
      if ((meta.shape.length === 2 || meta.shape.length === 3) && typeof last === 'number') this.dimension = last;
    }
    return { ort, session, inputs: new Set(session.inputNames as KnownInput[]), outputName };
  }

  private async runNow(batch: readonly EncodedText[], padId: number, pooling: Pooling): Promise<Float32Array[]> {
    const loaded = this.loaded;
    if (!loaded) throw new EmbeddingError('CANCELLED', `The model in ${this.folder} was released while texts were waiting to be embedded.`);
    const rows = batch.length;
    let width = 1; // at least one position, so an empty text still makes a valid tensor
    for (const text of batch) width = Math.max(width, text.ids.length);
    const size = rows * width;
    const feeds: Record<string, Ort.Tensor> = {};
    const dims = [rows, width];
    const ids = this.buffer('input_ids', size);
    ids.fill(BigInt(padId));
    const mask = loaded.inputs.has('attention_mask') ? this.buffer('attention_mask', size).fill(0n) : undefined;
    const types = loaded.inputs.has('token_type_ids') ? this.buffer('token_type_ids', size).fill(0n) : undefined;
    for (let r = 0; r < rows; r++) {
      const text = batch[r]!;
      const base = r * width;
      for (let s = 0; s < text.ids.length; s++) {
        ids[base + s] = BigInt(text.ids[s]!);
        if (mask) mask[base + s] = 1n;
        if (types && text.typeIds) types[base + s] = BigInt(text.typeIds[s] ?? 0);
      }
    }
    feeds['input_ids'] = new loaded.ort.Tensor('int64', ids, dims);
    if (mask) feeds['attention_mask'] = new loaded.ort.Tensor('int64', mask, dims);
    if (types) feeds['token_type_ids'] = new loaded.ort.Tensor('int64', types, dims);

    let output: Ort.Tensor;
    try {
      const results = await loaded.session.run(feeds, [loaded.outputName]);
      output = results[loaded.outputName] as Ort.Tensor;
    } catch (error) {
      throw invalid(this.folder, `onnxruntime failed to run ${path.relative(this.folder, this.modelPath)} (${describeError(error)}). The model may not be a sentence-embedding export.`, error);
    }
    return this.pool(output, batch, width, pooling);
  }

  private pool(output: Ort.Tensor, batch: readonly EncodedText[], width: number, pooling: Pooling): Float32Array[] {
    const data = output.data;
    if (!(data instanceof Float32Array)) {
      throw invalid(this.folder, `the model's output is ${output.type}, not float32. Use the float32 export of the model.`);
    }
    const [rows, second, third] = output.dims;
    const file = path.relative(this.folder, this.modelPath);
    if (rows !== batch.length || (output.dims.length === 3 && second !== width) || (output.dims.length !== 2 && output.dims.length !== 3)) {
      throw invalid(this.folder, `${file} gave an output of shape [${output.dims.join(', ')}] for ${batch.length} texts of ${width} tokens; expected [${batch.length}, ${width}, dim] or [${batch.length}, dim].`);
    }
    const dim = output.dims.length === 2 ? second! : third!;
    this.dimension = dim;
    const vectors: Float32Array[] = [];
    if (output.dims.length === 2) {
      // Already pooled by the graph (a sentence_embedding output): use it as it is.
      for (let r = 0; r < rows; r++) vectors.push(l2Normalize(data.slice(r * dim, (r + 1) * dim)));
      return vectors;
    }
    for (let r = 0; r < rows; r++) {
      const base = r * width * dim;
      if (pooling === 'cls') {
        vectors.push(l2Normalize(data.slice(base, base + dim)));
        continue;
      }
      // Mean over the text's own tokens; padded positions carry hidden states too and must not count.
      const count = batch[r]!.ids.length;
      const v = new Float32Array(dim);
      for (let s = 0; s < count; s++) {
        const offset = base + s * dim;
        for (let d = 0; d < dim; d++) v[d]! += data[offset + d]!;
      }
      if (count > 0) for (let d = 0; d < dim; d++) v[d] = v[d]! / count;
      vectors.push(l2Normalize(v));
    }
    return vectors;
  }

  /** A view of exactly `size` elements over a reused buffer for `name`. */
  private buffer(name: KnownInput, size: number): BigInt64Array {
    let buffer = this.buffers.get(name);
    if (!buffer || buffer.length < size) {
      buffer = new BigInt64Array(Math.max(size, (buffer?.length ?? 0) * 2));
      this.buffers.set(name, buffer);
    }
    return buffer.length === size ? buffer : buffer.subarray(0, size);
  }
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new EmbeddingError('CANCELLED', 'Embedding was cancelled.', { cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new EmbeddingError('CANCELLED', 'Embedding was cancelled.', { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
