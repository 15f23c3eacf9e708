/**
 * The local engine: runs a standard sentence-embedding folder (model.onnx + tokenizer.json, as exported for
 * all-MiniLM-L6-v2, bge-small or gte-small, or our own default model) with onnxruntime-node.
 *
 * Texts are tokenised by @huggingface/tokenizers, cut to a bounded length, batched by length, run, pooled
 * (mean over real tokens, or the first token) and L2-normalised. One session per model file serves every
 * embedder of that folder; it is created on the first embed and kept until the last embedder is disposed.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { readBundledBytes } from '../util/bundledText';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type * as Ort from 'onnxruntime-node';
import { loadOnnxRuntime } from './ortRuntime';
import { errorText } from './errorDetails';
import { EmbeddingError, l2Normalize, type Embedder } from './embedder';
import { splitIdentifiers } from './textPreprocess';

/**
 * Texts per session run. After sorting by length, 32 neighbours pad little, and one run of a MiniLM-sized
 * model at 256 tokens holds about 32 × 256 × 384 floats (12 MB) of hidden state: modest for the editor.
 */
export const ONNX_BATCH_SIZE = 32;
/**
 * Token limit when nothing else says: tool descriptions rarely need more to be recognised, and attention
 * cost grows with the square of the length. A smaller model_max_length in tokenizer_config.json wins.
 */
export const DEFAULT_MAX_TOKENS = 256;
/**
 * Threads inside one operator. A query is a few dozen tokens, where waking and syncing a pool costs more
 * than it saves, and the extension host shares a small machine (2 cores here) with the editor itself.
 */
export const ONNX_INTRA_OP_THREADS = 1;
/**
 * Before tokenising, texts are cut to maxLength × this many characters. No vocabulary we run averages
 * tokens this long, so the first maxLength tokens are unchanged; a 1 MB description is not tokenised whole.
 */
export const MAX_CHARS_PER_TOKEN_BEFORE_CUT = 32;
/** Hex digits of the folder digest in the model id: 48 bits, plenty to tell a user's model versions apart. */
export const MODEL_ID_DIGEST_HEX_CHARS = 12;

export const MODEL_FILE = 'model.onnx';
/** Where Hugging Face repositories keep the ONNX export, tried when the folder root has no model.onnx. */
export const NESTED_MODEL_FILE = path.join('onnx', 'model.onnx');
export const TOKENIZER_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
/** Our own settings for a folder; they take precedence over sentence-transformers' pooling config. */
export const ROUTER_MODEL_CONFIG_FILE = 'tool_router_model.json';
export const POOLING_CONFIG_FILE = path.join('1_Pooling', 'config.json');

export type Pooling = 'mean' | 'cls';
export type Preprocess = 'split-identifiers' | 'none';

export interface OnnxEmbedderOptions {
  /** Overrides the folder's pooling (tool_router_model.json, then 1_Pooling/config.json, then mean). */
  readonly pooling?: Pooling;
  /** Overrides the folder's preprocessing (tool_router_model.json, then none). */
  readonly preprocess?: Preprocess;
  /** Overrides the token limit (tool_router_model.json, then min(256, tokenizer's model_max_length)). */
  readonly maxLength?: number;
}

/** The inputs a sentence-embedding export may declare; anything else is not a model we can feed. */
const KNOWN_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'] as const;
type KnownInput = (typeof KNOWN_INPUTS)[number];
/** Outputs tried in order; otherwise the first output. */
const PREFERRED_OUTPUTS = ['last_hidden_state', 'token_embeddings'];

/** What the folder's optional tool_router_model.json may set. Other keys (a model card, figures) are ignored. */
interface RouterModelConfig {
  pooling?: Pooling;
  preprocess?: Preprocess;
  maxLength?: number;
}

/** A text after tokenising and cutting: ids (and token types when the model takes them). */
interface EncodedText {
  readonly index: number;
  readonly ids: readonly number[];
  readonly typeIds: readonly number[] | undefined;
}

export class OnnxEmbedder implements Embedder {
  private disposed = false;

  private constructor(
    readonly modelId: string,
    /** The folder as resolved (real path); named in errors. */
    readonly folder: string,
    readonly pooling: Pooling,
    readonly preprocess: Preprocess,
    /** Tokens per text, special tokens included. */
    readonly maxLength: number,
    private readonly encoder: SequenceEncoder,
    private readonly model: SharedModel,
    /** The tokenizer's word-like tokens (see {@link vocabularyWords}). */
    private readonly words: readonly string[],
  ) {}

  /**
   * The tokens of the tokenizer's vocabulary that read as lowercase words (markers of a word's start, `Ġ`
   * and `▁`, removed; continuation pieces `##…` left out). Spelling tolerance leaves these as written,
   * since the model has rows of its own for them.
   */
  vocabularyWords(): readonly string[] {
    return this.words;
  }

  /**
   * Reads and checks the folder (tokenizer, configs, digest) without starting onnxruntime; the session is
   * created on the first embed. Rejects with MODEL_INVALID naming the folder and the file at fault.
   */
  static async load(folder: string, options: OnnxEmbedderOptions = {}): Promise<OnnxEmbedder> {
    const dir = await resolveModelFolder(folder);
    const modelPath = await findModelFile(dir);
    const tokenizerBytes = await readRequiredFile(dir, TOKENIZER_FILE);
    const tokenizerJson = parseJson(dir, TOKENIZER_FILE, tokenizerBytes.toString('utf8'));
    const tokenizerConfig = (await readOptionalJson(dir, TOKENIZER_CONFIG_FILE)) ?? {};
    const routerConfig = parseRouterConfig(dir, await readOptionalJson(dir, ROUTER_MODEL_CONFIG_FILE));
    const folderPooling = parsePoolingConfig(dir, await readOptionalJson(dir, POOLING_CONFIG_FILE));

    const pooling = options.pooling ?? routerConfig.pooling ?? folderPooling ?? 'mean';
    const preprocess = options.preprocess ?? routerConfig.preprocess ?? 'none';
    const maxLength = options.maxLength ?? routerConfig.maxLength ?? Math.min(DEFAULT_MAX_TOKENS, modelMaxLength(tokenizerConfig));
    if (!Number.isInteger(maxLength) || maxLength < 1) {
      throw invalid(dir, `the token limit ${maxLength} is not a positive whole number. Fix maxLength in ${ROUTER_MODEL_CONFIG_FILE} or in the options.`);
    }

    let encoder: SequenceEncoder;
    try {
      const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
      encoder = new SequenceEncoder(tokenizer, padId(tokenizerJson, tokenizerConfig, tokenizer), maxLength, preprocess);
    } catch (error) {
      throw invalid(dir, `${TOKENIZER_FILE} could not be read as a tokenizer (${errorText(error)}). Export the folder again with a current transformers or sentence-transformers.`, error);
    }
    if (encoder.specialCount >= maxLength) {
      throw invalid(dir, `the token limit ${maxLength} leaves no room for text after the tokenizer's ${encoder.specialCount} special tokens. Raise maxLength.`);
    }

    const { modelSha256, folderDigest } = await digestModel(modelPath, tokenizerBytes);
    const modelId = `onnx:${path.basename(path.resolve(folder))}:${folderDigest.slice(0, MODEL_ID_DIGEST_HEX_CHARS)}:${pooling}:${preprocess}:${maxLength}`;
    // Keyed by the file's real path: Hugging Face snapshots link model.onnx to a shared blob.
    const model = SharedModel.acquire(dir, modelPath, await realpath(modelPath), modelSha256);
    return new OnnxEmbedder(modelId, dir, pooling, preprocess, maxLength, encoder, model, wordTokens(tokenizerJson));
  }

  /** Vector length: 0 until the session exists (the first embed, or {@link warmUp}). */
  get dimension(): number {
    return this.model.dimension;
  }

  /** Creates the session and runs one short text, so the first real query pays neither. */
  async warmUp(signal?: AbortSignal): Promise<void> {
    await this.embed(['warm up'], signal);
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.checkUsable(signal);
    if (texts.length === 0) return [];
    const session = await this.model.session(signal);
    this.checkUsable(signal);
    const encoded = texts.map((text, index) => this.encoder.encode(text, index, session.inputs.has('token_type_ids')));
    // Neighbours of similar length share a batch, so little of each run is padding.
    const order = texts.length > 1 ? [...encoded].sort((a, b) => a.ids.length - b.ids.length) : encoded;
    const results = new Array<Float32Array>(texts.length);
    for (let start = 0; start < order.length; start += ONNX_BATCH_SIZE) {
      this.checkUsable(signal);
      const batch = order.slice(start, start + ONNX_BATCH_SIZE);
      const vectors = await this.model.run(batch, this.encoder.padId, this.pooling);
      for (let i = 0; i < batch.length; i++) results[batch[i]!.index] = vectors[i]!;
    }
    return results;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.model.release();
  }

  private checkUsable(signal: AbortSignal | undefined): void {
    if (this.disposed) throw new EmbeddingError('CANCELLED', `The embedder for ${this.folder} was disposed (the model setting changed or the extension is stopping).`);
    if (signal?.aborted) throw new EmbeddingError('CANCELLED', 'Embedding was cancelled.', { cause: signal.reason });
  }
}

/** Tokenises one text the way the model expects, and cuts it to the limit keeping the closing special tokens. */
class SequenceEncoder {
  /** Special tokens the post-processor puts before and after a single text ([CLS] … [SEP] for BERT). */
  private readonly prefixCount: number;
  private readonly suffixCount: number;
  private readonly maxChars: number;

  constructor(
    private readonly tokenizer: Tokenizer,
    readonly padId: number,
    private readonly maxLength: number,
    private readonly preprocess: Preprocess,
  ) {
    // Learn the template from the tokenizer itself: where a probe word's bare ids sit in its framed ids.
    const bare = tokenizer.encode('a', { add_special_tokens: false }).ids;
    const framed = tokenizer.encode('a').ids;
    const at = bare.length > 0 ? indexOfRun(framed, bare) : -1;
    this.prefixCount = at >= 0 ? at : 0;
    this.suffixCount = at >= 0 ? framed.length - at - bare.length : 0;
    this.maxChars = maxLength * MAX_CHARS_PER_TOKEN_BEFORE_CUT;
  }

  get specialCount(): number {
    return this.prefixCount + this.suffixCount;
  }

  encode(text: string, index: number, withTypes: boolean): EncodedText {
    let prepared = this.preprocess === 'split-identifiers' ? splitIdentifiers(text) : text;
    if (prepared.length > this.maxChars) prepared = prepared.slice(0, this.maxChars);
    const encoding = this.tokenizer.encode(prepared, { return_token_type_ids: withTypes });
    let ids = encoding.ids;
    let typeIds = withTypes ? encoding.token_type_ids : undefined;
    if (ids.length > this.maxLength) {
      // Keep the first tokens and the closing special tokens, as the Rust tokenizer's truncation does.
      const head = this.maxLength - this.suffixCount;
      const cut = <T>(list: readonly T[]): T[] => [...list.slice(0, head), ...list.slice(list.length - this.suffixCount)];
      ids = cut(ids);
      if (typeIds) typeIds = cut(typeIds);
    }
    return { index, ids, typeIds };
  }
}

/** What a created session knows about its model. */
interface LoadedSession {
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
class SharedModel {
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
      throw invalid(this.folder, `onnxruntime could not load ${path.relative(this.folder, this.modelPath)} (${errorText(error)}). The file may be truncated (download it again) or need a newer onnxruntime.`, error);
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
      throw invalid(this.folder, `onnxruntime failed to run ${path.relative(this.folder, this.modelPath)} (${errorText(error)}). The model may not be a sentence-embedding export.`, error);
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

async function resolveModelFolder(folder: string): Promise<string> {
  let dir: string;
  try {
    dir = await realpath(folder);
  } catch (error) {
    throw invalid(folder, `the folder does not exist. Set toolRouter.embeddings.model to a folder holding ${MODEL_FILE} and ${TOKENIZER_FILE}, or to "default".`, error);
  }
  if (!(await stat(dir)).isDirectory()) {
    throw invalid(folder, `it is a file, not a folder. Point the setting at the folder that holds ${MODEL_FILE} and ${TOKENIZER_FILE}.`);
  }
  return dir;
}

async function findModelFile(dir: string): Promise<string> {
  for (const name of [MODEL_FILE, NESTED_MODEL_FILE]) {
    const file = path.join(dir, name);
    try {
      if ((await stat(file)).isFile()) return file;
    } catch {
      // try the next place
    }
  }
  throw invalid(dir, `it has no ${MODEL_FILE} (nor ${NESTED_MODEL_FILE}). A sentence-embedding folder holds ${MODEL_FILE} and ${TOKENIZER_FILE}, as exported for all-MiniLM-L6-v2; export or download it again.`);
}

async function readRequiredFile(dir: string, name: string): Promise<Buffer> {
  try {
    // The bundled model ships its tokenizer brotli-compressed (scripts/package.mjs); the bytes read are the original's.
    return await readBundledBytes(path.join(dir, name));
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw invalid(dir, missing
      ? `it has no ${name}. A sentence-embedding folder holds ${MODEL_FILE} and ${TOKENIZER_FILE}; export or download it again.`
      : `${name} could not be read (${errorText(error)}).`, error);
  }
}

async function readOptionalJson(dir: string, name: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, name), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw invalid(dir, `${name} could not be read (${errorText(error)}).`, error);
  }
  return parseJson(dir, name, text);
}

function parseJson(dir: string, name: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid(dir, `${name} is not valid JSON (${errorText(error)}). The download may be incomplete; fetch the folder again.`, error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(dir, `${name} holds ${Array.isArray(value) ? 'an array' : typeof value}, not a JSON object.`);
  }
  return value as Record<string, unknown>;
}

function parseRouterConfig(dir: string, raw: Record<string, unknown> | undefined): RouterModelConfig {
  if (!raw) return {};
  const config: RouterModelConfig = {};
  const fieldError = (field: string, expected: string): EmbeddingError =>
    invalid(dir, `${ROUTER_MODEL_CONFIG_FILE}, field "${field}": ${JSON.stringify(raw[field])} is not ${expected}. Fix the file or remove the field.`);
  if (raw['pooling'] !== undefined) {
    if (raw['pooling'] !== 'mean' && raw['pooling'] !== 'cls') throw fieldError('pooling', '"mean" or "cls"');
    config.pooling = raw['pooling'];
  }
  if (raw['preprocess'] !== undefined) {
    if (raw['preprocess'] !== 'split-identifiers' && raw['preprocess'] !== 'none') throw fieldError('preprocess', '"split-identifiers" or "none"');
    config.preprocess = raw['preprocess'];
  }
  if (raw['maxLength'] !== undefined) {
    const n = raw['maxLength'];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw fieldError('maxLength', 'a positive whole number');
    config.maxLength = n;
  }
  return config;
}

/** sentence-transformers' 1_Pooling/config.json: one mode set to true. */
function parsePoolingConfig(dir: string, raw: Record<string, unknown> | undefined): Pooling | undefined {
  if (!raw) return undefined;
  const modes = Object.keys(raw).filter((key) => key.startsWith('pooling_mode_') && raw[key] === true);
  if (modes.length === 1 && modes[0] === 'pooling_mode_cls_token') return 'cls';
  if (modes.length === 1 && modes[0] === 'pooling_mode_mean_tokens') return 'mean';
  if (modes.length === 0) return undefined;
  throw invalid(dir, `${POOLING_CONFIG_FILE} asks for ${modes.join(' + ')}; only mean or CLS pooling is supported. Set "pooling" in ${ROUTER_MODEL_CONFIG_FILE} to choose one.`);
}

/** The tokenizer's own limit; absurd placeholders (1e30 in some exports) simply lose to the default. */
function modelMaxLength(tokenizerConfig: Record<string, unknown>): number {
  const n = tokenizerConfig['model_max_length'];
  return typeof n === 'number' && Number.isFinite(n) && n >= 1 ? Math.floor(n) : Number.POSITIVE_INFINITY;
}

/** The pad id: tokenizer.json's padding, else the config's pad_token, else 0 (BERT's [PAD]). */
function padId(tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown>, tokenizer: Tokenizer): number {
  const padding = tokenizerJson['padding'];
  if (typeof padding === 'object' && padding !== null) {
    const id = (padding as Record<string, unknown>)['pad_id'];
    if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return id;
  }
  const raw = tokenizerConfig['pad_token'];
  // pad_token is a string, or an AddedToken-shaped object in older exports.
  const token = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)['content'] : undefined;
  if (typeof token === 'string') {
    const id = tokenizer.token_to_id(token);
    if (id !== undefined) return id;
  }
  return 0;
}

/** sha256 of model.onnx alone (to check the session's bytes) and of model.onnx + tokenizer.json (the id). */
async function digestModel(modelPath: string, tokenizerBytes: Buffer): Promise<{ modelSha256: string; folderDigest: string }> {
  const model = createHash('sha256');
  const folder = createHash('sha256');
  try {
    await streamInto(modelPath, [model, folder]);
  } catch (error) {
    throw invalid(path.dirname(modelPath), `${path.basename(modelPath)} could not be read (${errorText(error)}).`, error);
  }
  folder.update(tokenizerBytes);
  return { modelSha256: model.digest('hex'), folderDigest: folder.digest('hex') };
}

function streamInto(file: string, hashes: Hash[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = createReadStream(file);
    stream.on('data', (chunk) => {
      for (const hash of hashes) hash.update(chunk);
    });
    stream.on('error', reject);
    stream.on('end', resolve);
  });
}

function indexOfRun(haystack: readonly number[], needle: readonly number[]): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
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

function invalid(folder: string, problem: string, cause?: unknown): EmbeddingError {
  return new EmbeddingError('MODEL_INVALID', `Model folder ${folder}: ${problem}`, cause === undefined ? undefined : { cause });
}

/** The word-like tokens of a tokenizer.json's vocabulary: WordPiece, BPE and WordLevel keep a token → id object, Unigram a list of [piece, score]. */
function wordTokens(tokenizerJson: unknown): string[] {
  const model = (tokenizerJson as { model?: { vocab?: unknown } } | undefined)?.model;
  const vocab = model?.vocab;
  const tokens = Array.isArray(vocab) ? vocab.map((entry) => (Array.isArray(entry) ? entry[0] : undefined)) : vocab && typeof vocab === 'object' ? Object.keys(vocab) : [];
  const out: string[] = [];
  for (const token of tokens) {
    if (typeof token !== 'string' || token.startsWith('##')) continue;
    const word = token.replace(/^[\u0120\u2581]/, '');
    if (/^[a-z]+$/.test(word)) out.push(word);
  }
  return out;
}
