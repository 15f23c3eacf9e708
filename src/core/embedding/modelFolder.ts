/**
 * Reading and checking a sentence-embedding folder for the local engine: where its files are, what its
 * optional configs ask for, and the digests that name it. Every problem is a MODEL_INVALID error that
 * names the folder and the file at fault.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { readBundledBytes } from '../util/bundledText';
import { describeError } from '../errors/describeError';
import { EmbeddingError } from './embedder';

/**
 * Token limit when nothing else says: tool descriptions rarely need more to be recognised, and attention
 * cost grows with the square of the length. A smaller model_max_length in tokenizer_config.json wins.
 */
export const DEFAULT_MAX_TOKENS = 256;

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

/** What the folder's optional tool_router_model.json may set. Other keys (a model card, figures) are ignored. */
export interface RouterModelConfig {
  pooling?: Pooling;
  preprocess?: Preprocess;
  maxLength?: number;
}

export function invalid(folder: string, problem: string, cause?: unknown): EmbeddingError {
  return new EmbeddingError('MODEL_INVALID', `Model folder ${folder}: ${problem}`, cause === undefined ? undefined : { cause });
}

export async function resolveModelFolder(folder: string): Promise<string> {
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

export async function findModelFile(dir: string): Promise<string> {
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

export async function readRequiredFile(dir: string, name: string): Promise<Buffer> {
  try {
    // The bundled model ships its tokenizer brotli-compressed (scripts/package.mjs); the bytes read are the original's.
    return await readBundledBytes(path.join(dir, name));
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw invalid(dir, missing
      ? `it has no ${name}. A sentence-embedding folder holds ${MODEL_FILE} and ${TOKENIZER_FILE}; export or download it again.`
      : `${name} could not be read (${describeError(error)}).`, error);
  }
}

export async function readOptionalJson(dir: string, name: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, name), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw invalid(dir, `${name} could not be read (${describeError(error)}).`, error);
  }
  return parseJson(dir, name, text);
}

export function parseJson(dir: string, name: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid(dir, `${name} is not valid JSON (${describeError(error)}). The download may be incomplete; fetch the folder again.`, error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(dir, `${name} holds ${Array.isArray(value) ? 'an array' : typeof value}, not a JSON object.`);
  }
  return value as Record<string, unknown>;
}

export function parseRouterConfig(dir: string, raw: Record<string, unknown> | undefined): RouterModelConfig {
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
export function parsePoolingConfig(dir: string, raw: Record<string, unknown> | undefined): Pooling | undefined {
  if (!raw) return undefined;
  const modes = Object.keys(raw).filter((key) => key.startsWith('pooling_mode_') && raw[key] === true);
  if (modes.length === 1 && modes[0] === 'pooling_mode_cls_token') return 'cls';
  if (modes.length === 1 && modes[0] === 'pooling_mode_mean_tokens') return 'mean';
  if (modes.length === 0) return undefined;
  throw invalid(dir, `${POOLING_CONFIG_FILE} asks for ${modes.join(' + ')}; only mean or CLS pooling is supported. Set "pooling" in ${ROUTER_MODEL_CONFIG_FILE} to choose one.`);
}

/** The tokenizer's own limit; absurd placeholders (1e30 in some exports) simply lose to the default. */
export function modelMaxLength(tokenizerConfig: Record<string, unknown>): number {
  const n = tokenizerConfig['model_max_length'];
  return typeof n === 'number' && Number.isFinite(n) && n >= 1 ? Math.floor(n) : Number.POSITIVE_INFINITY;
}

/** sha256 of model.onnx alone (to check the session's bytes) and of model.onnx + tokenizer.json (the id). */
export async function digestModel(modelPath: string, tokenizerBytes: Buffer): Promise<{ modelSha256: string; folderDigest: string }> {
  const model = createHash('sha256');
  const folder = createHash('sha256');
  try {
    await streamInto(modelPath, [model, folder]);
  } catch (error) {
    throw invalid(path.dirname(modelPath), `${path.basename(modelPath)} could not be read (${describeError(error)}).`, error);
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

/** The word-like tokens of a tokenizer.json's vocabulary: WordPiece, BPE and WordLevel keep a token → id object, Unigram a list of [piece, score]. */
export function wordTokens(tokenizerJson: unknown): string[] {
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
