/**
 * Standard sentence-embedding models a user with a network may download instead of the bundled one.
 * Every file is pinned by URL (a Hugging Face commit, never `main`), byte size and sha256, so what is
 * installed is exactly what was reviewed; a changed file on the server is a hard error, not a new model.
 *
 * Each entry also carries what the folder itself does not say reliably (pooling, token limit): the
 * download writes it as tool_router_model.json, which OnnxEmbedder reads before any other config.
 * Where each size and hash comes from: docs/decisions.md, "Embedding: pinned models".
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { downloadModelFiles, type DownloadModelFilesOptions } from './modelDownload';
import { DEFAULT_MAX_TOKENS, MODEL_FILE, ROUTER_MODEL_CONFIG_FILE, TOKENIZER_CONFIG_FILE, TOKENIZER_FILE, type Pooling } from './modelFolder';

export interface PinnedModelFile {
  /** Where the file goes in the model folder ("model.onnx", "tokenizer.json", …). */
  readonly name: string;
  readonly url: string;
  /** Lower-case hex sha256 of the file's bytes (for a Git LFS file, its `oid sha256`). */
  readonly sha256: string;
  readonly bytes: number;
}

export interface PinnedModel {
  /** Stable id; also the folder name under the extension's global storage. */
  readonly id: string;
  readonly label: string;
  /** The repository and commit the files come from. */
  readonly source: string;
  readonly dimension: number;
  readonly pooling: Pooling;
  /** Token limit the embedder cuts texts to. */
  readonly maxLength: number;
  /** SPDX identifier of the model's license. */
  readonly license: string;
  readonly licenseUrl: string;
  /** One line on what the model is good at, shown where the user chooses. */
  readonly goodAt: string;
  readonly files: readonly PinnedModelFile[];
}

const MINILM_REVISION = '751bff37182d3f1213fa05d7196b954e230abad9';
const MINILM_BASE = `https://huggingface.co/Xenova/all-MiniLM-L6-v2/resolve/${MINILM_REVISION}`;
const BGE_SMALL_REVISION = 'ea104dacec62c0de699686887e3f920caeb4f3e3';
const BGE_SMALL_BASE = `https://huggingface.co/Xenova/bge-small-en-v1.5/resolve/${BGE_SMALL_REVISION}`;

/** Xenova's tokenizer_config.json (BertTokenizer, lower case, [PAD]): the same file in both repositories. */
const XENOVA_BERT_TOKENIZER_CONFIG = { sha256: '9261e7d79b44c8195c1cada2b453e55b00aeb81e907a6664974b4d7776172ab3', bytes: 366 };

export const PINNED_MODELS: readonly PinnedModel[] = [
  {
    id: 'all-MiniLM-L6-v2-int8',
    label: 'all-MiniLM-L6-v2 (int8)',
    source: `Xenova/all-MiniLM-L6-v2@${MINILM_REVISION}`,
    dimension: 384,
    // sentence-transformers trained it with mean pooling over at most 256 word pieces (its model card).
    pooling: 'mean',
    maxLength: 256,
    license: 'Apache-2.0',
    licenseUrl: 'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2',
    goodAt: 'Small and fast general-purpose English sentence embeddings; the usual baseline for semantic search.',
    files: [
      // Earlier versions of this file have other hashes: the URL names a commit, never main.
      { name: MODEL_FILE, url: `${MINILM_BASE}/onnx/model_quantized.onnx`, sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1', bytes: 22_972_370 },
      { name: TOKENIZER_FILE, url: `${MINILM_BASE}/tokenizer.json`, sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0', bytes: 711_661 },
      { name: TOKENIZER_CONFIG_FILE, url: `${MINILM_BASE}/tokenizer_config.json`, ...XENOVA_BERT_TOKENIZER_CONFIG },
    ],
  },
  {
    id: 'bge-small-en-v1.5-int8',
    label: 'bge-small-en-v1.5 (int8)',
    source: `Xenova/bge-small-en-v1.5@${BGE_SMALL_REVISION}`,
    dimension: 384,
    // BAAI's model card: the sentence vector is the [CLS] token's hidden state, then normalised. Tool texts
    // and prompts fit within the router's usual token limit, below the model's own, at a fraction of the cost.
    pooling: 'cls',
    maxLength: DEFAULT_MAX_TOKENS,
    license: 'MIT',
    licenseUrl: 'https://huggingface.co/BAAI/bge-small-en-v1.5',
    goodAt: 'Stronger English retrieval at the same 384 dimensions; a larger download and somewhat slower than MiniLM.',
    files: [
      { name: MODEL_FILE, url: `${BGE_SMALL_BASE}/onnx/model_quantized.onnx`, sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4', bytes: 34_014_426 },
      { name: TOKENIZER_FILE, url: `${BGE_SMALL_BASE}/tokenizer.json`, sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66', bytes: 711_396 },
      { name: TOKENIZER_CONFIG_FILE, url: `${BGE_SMALL_BASE}/tokenizer_config.json`, ...XENOVA_BERT_TOKENIZER_CONFIG },
    ],
  },
];

export function findPinnedModel(id: string): PinnedModel | undefined {
  return PINNED_MODELS.find((model) => model.id === id);
}

/** Bytes to download for the whole model. */
export function pinnedModelBytes(model: PinnedModel): number {
  return model.files.reduce((sum, file) => sum + file.bytes, 0);
}

/**
 * The tool_router_model.json written beside the files: pooling and token limit for OnnxEmbedder, and a
 * record of what was installed (OnnxEmbedder ignores the other keys).
 */
export function pinnedRouterConfig(model: PinnedModel): Record<string, unknown> {
  return {
    pooling: model.pooling,
    maxLength: model.maxLength,
    pinned: { id: model.id, source: model.source, license: model.license, files: Object.fromEntries(model.files.map((f) => [f.name, { sha256: f.sha256, bytes: f.bytes }])) },
  };
}

export type DownloadPinnedModelOptions = Omit<DownloadModelFilesOptions, 'files' | 'extraFiles'>;

/**
 * Downloads a pinned model into `dest` (resumable, every file checked; see downloadModelFiles) and writes
 * its tool_router_model.json, so the folder loads with the right pooling and token limit.
 */
export function downloadPinnedModel(model: PinnedModel, options: DownloadPinnedModelOptions): Promise<Record<string, string>> {
  return downloadModelFiles({
    ...options,
    files: model.files,
    extraFiles: { [ROUTER_MODEL_CONFIG_FILE]: `${JSON.stringify(pinnedRouterConfig(model), null, 2)}\n` },
  });
}

/**
 * Whether `folder` holds this pinned model as downloadPinnedModel left it: its record names the model and
 * every file has its pinned size. (Hashes were checked at download; the loader re-reads model.onnx anyway.)
 */
export async function isPinnedModelInstalled(model: PinnedModel, folder: string): Promise<boolean> {
  let record: unknown;
  try {
    record = (JSON.parse(await readFile(path.join(folder, ROUTER_MODEL_CONFIG_FILE), 'utf8')) as { pinned?: unknown }).pinned;
  } catch {
    return false;
  }
  if (typeof record !== 'object' || record === null || (record as { id?: unknown }).id !== model.id) return false;
  // A model re-pinned to new files since is not installed, even under the same id.
  const recorded = (record as { files?: Record<string, { sha256?: unknown }> }).files ?? {};
  if (!model.files.every((f) => recorded[f.name]?.sha256 === f.sha256)) return false;
  const sizes = await Promise.all(model.files.map((f) => stat(path.join(folder, f.name)).then((s) => s.size, () => -1)));
  return sizes.every((size, i) => size === model.files[i]!.bytes);
}
