/**
 * The embedding seam: every provider (the local ONNX engine, an Ollama or OpenAI-compatible endpoint)
 * turns texts into unit-length vectors behind this one interface. Selection only ever sees this.
 */
export interface Embedder {
  /**
   * Identifies the model and everything that changes its vectors (provider, model name or folder
   * digest, pooling, preprocessing). Cache keys start with it, so a new id never reuses old vectors.
   */
  readonly modelId: string;
  /** Vector length; known once the model is loaded (the ONNX engine reads it from the model). */
  readonly dimension: number;
  /**
   * Embeds each text; result i belongs to texts[i] and is L2-normalised (length 1), so a dot product
   * is the cosine. Rejects with an {@link EmbeddingError} whose message says what to do.
   */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Frees the model (ONNX session) or connections; the embedder is unusable afterwards. */
  dispose(): Promise<void>;
  /**
   * How many embed calls it takes at once to stay busy: more than 1 only for one that works off the
   * caller's thread (the worker). Unset means 1.
   */
  readonly concurrentCalls?: number;
}

/** A local model folder's embedder: its tokenizer's words, which spelling leaves as written, and a first run. */
export interface LocalModel extends Embedder {
  vocabularyWords(): readonly string[];
  /** Starts the model's session and runs one short text; rejects when the model cannot run. */
  warmUp(): Promise<void>;
}

/** Loads a local model folder: on this thread (onnxEmbedder.ts) or in a worker thread (workerEmbedder.ts). */
export type LocalModelLoader = (folder: string) => Promise<LocalModel>;

export function isLocalModel(embedder: Embedder | undefined): embedder is LocalModel {
  return typeof (embedder as Partial<LocalModel> | undefined)?.vocabularyWords === 'function';
}

export type EmbeddingErrorKind =
  /** The model folder is missing files, or a file is not what it claims to be. */
  | 'MODEL_INVALID'
  /** The endpoint could not be reached or kept failing. */
  | 'ENDPOINT_UNAVAILABLE'
  /** The endpoint answered with something that is not an embeddings response. */
  | 'BAD_RESPONSE'
  | 'TIMEOUT'
  | 'CANCELLED';

export class EmbeddingError extends Error {
  constructor(readonly kind: EmbeddingErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingError';
  }
}

/** Dot product of two unit vectors: their cosine similarity. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
}

/** Scales `v` to length 1 in place (a zero vector stays zero) and returns it. */
export function l2Normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  const norm = Math.sqrt(s);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}
