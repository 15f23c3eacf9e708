/**
 * The local engine: runs a standard sentence-embedding folder (model.onnx + tokenizer.json, as exported for
 * all-MiniLM-L6-v2, bge-small or gte-small, or our own default model) with onnxruntime-node.
 *
 * Texts are tokenised by @huggingface/tokenizers, cut to a bounded length (sequenceEncoder.ts), batched by
 * length, run, pooled (mean over real tokens, or the first token) and L2-normalised (onnxSession.ts). One
 * session per model file serves every embedder of that folder; it is created on the first embed and kept
 * until the last embedder is disposed. The folder's files and configs are read by modelFolder.ts.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { describeError } from '../errors/describeError';
import { EmbeddingError, type LocalModel, type LocalModelLoader } from './embedder';
import {
  DEFAULT_MAX_TOKENS,
  digestModel,
  findModelFile,
  invalid,
  modelMaxLength,
  parseJson,
  parsePoolingConfig,
  parseRouterConfig,
  readOptionalJson,
  readRequiredFile,
  resolveModelFolder,
  wordTokens,
  POOLING_CONFIG_FILE,
  ROUTER_MODEL_CONFIG_FILE,
  TOKENIZER_CONFIG_FILE,
  TOKENIZER_FILE,
  type Pooling,
  type Preprocess,
} from './modelFolder';
import { SharedModel } from './onnxSession';
import { padId, SequenceEncoder } from './sequenceEncoder';

/**
 * Texts per session run: after sorting by length, neighbours pad little, and one run's hidden state stays
 * modest beside the editor.
 */
export const ONNX_BATCH_SIZE = 32;
/** Hex digits of the folder digest in the model id: 48 bits, plenty to tell a user's model versions apart. */
export const MODEL_ID_DIGEST_HEX_CHARS = 12;

export interface OnnxEmbedderOptions {
  /** Overrides the folder's pooling (tool_router_model.json, then 1_Pooling/config.json, then mean). */
  readonly pooling?: Pooling;
  /** Overrides the folder's preprocessing (tool_router_model.json, then none). */
  readonly preprocess?: Preprocess;
  /** Overrides the token limit (tool_router_model.json, then min(256, tokenizer's model_max_length)). */
  readonly maxLength?: number;
}

/** Loads local models on the calling thread (the CLI, the scripts and the tests; the extension uses a worker). */
export const loadInProcess: LocalModelLoader = (folder) => OnnxEmbedder.load(folder);

export class OnnxEmbedder implements LocalModel {
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
      throw invalid(dir, `${TOKENIZER_FILE} could not be read as a tokenizer (${describeError(error)}). Export the folder again with a current transformers or sentence-transformers.`, error);
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
