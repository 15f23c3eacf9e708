/**
 * Fetches a sentence-embedding folder (model.onnx, tokenizer.json and their optional configs) from a base
 * URL into a local folder, for the Download model… command and the CLI. Files stream to a staging folder
 * beside the destination while their sha256 is computed; the destination is replaced only when every file
 * arrived and matched its expected hash, so a failed or cancelled download never leaves a half model behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { errorText, networkErrorDetail } from './errorDetails';
import { EmbeddingError } from './embedder';

/** Without these the folder is not a model: a 404 on them is an error. */
export const REQUIRED_MODEL_FILES: readonly string[] = ['model.onnx', 'tokenizer.json'];
/** Fetched when the server has them; a 404 is fine. */
export const OPTIONAL_MODEL_FILES: readonly string[] = ['tokenizer_config.json', 'tool_router_model.json', '1_Pooling/config.json', 'config.json'];
/** A download that receives nothing for this long is given up: a dead connection, not a slow one. */
export const DOWNLOAD_STALL_TIMEOUT_MS = 60_000;
/**
 * Largest file accepted. The sentence embedders the router runs are tens of MB (bge-large is 1.3 GB);
 * a wrong URL pointing at something huge must not fill the disk.
 */
export const MAX_MODEL_FILE_BYTES = 2 * 1024 ** 3;

export interface DownloadModelOptions {
  /** The folder's base URL, e.g. https://huggingface.co/ORG/MODEL/resolve/main/ (a trailing slash is added). */
  readonly url: string;
  /** The folder to create or replace. */
  readonly dest: string;
  /** Expected sha256 (hex) per file name, e.g. { "model.onnx": "ab12…" }; a file named here must exist. */
  readonly expectedSha256?: Readonly<Record<string, string>>;
  /** Bytes received of `file`; total is its Content-Length, undefined when the server does not say. */
  readonly onProgress?: (done: number, total: number | undefined, file: string) => void;
  readonly signal?: AbortSignal;
  readonly fetchImpl?: typeof fetch;
  readonly stallTimeoutMs?: number;
}

/**
 * Downloads the folder and returns the sha256 (hex) of every file it fetched, by file name.
 * Rejects with EmbeddingError: MODEL_INVALID (a required file is missing, or a hash does not match),
 * ENDPOINT_UNAVAILABLE (network or HTTP failure), TIMEOUT (stalled) or CANCELLED.
 */
export async function downloadModelFolder(options: DownloadModelOptions): Promise<Record<string, string>> {
  const base = folderUrl(options.url);
  const expected = checkExpected(options.expectedSha256 ?? {});
  const dest = path.resolve(options.dest);
  const shownBase = `${base.origin}${base.pathname}`;
  await mkdir(path.dirname(dest), { recursive: true });
  // Beside the destination, so the final rename stays on one file system and is atomic.
  const staging = `${dest}.download-${process.pid}-${randomBytes(4).toString('hex')}`;
  await mkdir(staging);
  try {
    const hashes: Record<string, string> = {};
    for (const file of [...REQUIRED_MODEL_FILES, ...OPTIONAL_MODEL_FILES]) {
      const required = REQUIRED_MODEL_FILES.includes(file) || expected.has(file);
      const sha = await downloadFile({ ...options, base, shownBase, file, required, staging });
      if (sha === undefined) continue;
      const want = expected.get(file);
      if (want !== undefined && want !== sha) {
        throw new EmbeddingError('MODEL_INVALID', `${file} from ${shownBase} has sha256 ${sha}, but ${want} was expected. The file changed on the server or was altered on the way; check the URL and the expected hash. Nothing was installed.`);
      }
      hashes[file] = sha;
    }
    await replaceFolder(staging, dest);
    return hashes;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

interface FileDownload extends DownloadModelOptions {
  readonly base: URL;
  readonly shownBase: string;
  readonly file: string;
  readonly required: boolean;
  readonly staging: string;
}

/** Streams one file into the staging folder; its sha256, or undefined for an optional file the server lacks. */
async function downloadFile(job: FileDownload): Promise<string | undefined> {
  const { file, shownBase } = job;
  const url = new URL(file, job.base);
  const stallMs = job.stallTimeoutMs ?? DOWNLOAD_STALL_TIMEOUT_MS;
  const stall = new AbortController();
  let timer = setTimeout(() => stall.abort(), stallMs);
  const resetStall = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => stall.abort(), stallMs);
  };
  const signal = job.signal ? AbortSignal.any([job.signal, stall.signal]) : stall.signal;
  const aborted = (cause: unknown): EmbeddingError =>
    job.signal?.aborted
      ? new EmbeddingError('CANCELLED', `The model download was cancelled; nothing was installed.`, { cause })
      : new EmbeddingError('TIMEOUT', `The download of ${file} from ${shownBase} stalled: nothing arrived for ${Math.round(stallMs / 1000)} s. Check your connection and try again.`, { cause });

  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    let response: Response;
    try {
      response = await (job.fetchImpl ?? fetch)(url, { signal, redirect: 'follow' });
    } catch (error) {
      if (signal.aborted) throw aborted(error);
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `Could not download ${file} from ${shownBase} (${networkErrorDetail(error)}). Check the URL and your network connection.`, { cause: error });
    }
    if (response.status === 404 && !job.required) {
      await response.body?.cancel();
      return undefined;
    }
    if (response.status === 404) {
      await response.body?.cancel();
      throw new EmbeddingError('MODEL_INVALID', `${shownBase} has no ${file} (HTTP 404). The URL must be a model folder holding ${REQUIRED_MODEL_FILES.join(' and ')}; for Hugging Face use https://huggingface.co/ORG/MODEL/resolve/main/.`);
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `Downloading ${file} from ${shownBase} failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}. Try again later, or check the URL.`);
    }
    // Content-Length counts encoded bytes; with gzip it says nothing about what we receive.
    const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
    const lengthHeader = Number(response.headers.get('content-length') ?? Number.NaN);
    const total = !encoded && Number.isInteger(lengthHeader) && lengthHeader >= 0 ? lengthHeader : undefined;
    if (total !== undefined && total > MAX_MODEL_FILE_BYTES) {
      await response.body.cancel();
      throw new EmbeddingError('MODEL_INVALID', `${file} at ${shownBase} is ${total} bytes, more than the ${MAX_MODEL_FILE_BYTES} a model file may have. Check the URL.`);
    }

    const target = path.join(job.staging, file);
    await mkdir(path.dirname(target), { recursive: true });
    handle = await open(target, 'wx');
    const hash = createHash('sha256');
    let done = 0;
    job.onProgress?.(0, total, file);
    try {
      for await (const chunk of response.body) {
        resetStall();
        done += chunk.length;
        if (done > MAX_MODEL_FILE_BYTES) {
          throw new EmbeddingError('MODEL_INVALID', `${file} at ${shownBase} is larger than the ${MAX_MODEL_FILE_BYTES} bytes a model file may have. Check the URL.`);
        }
        hash.update(chunk);
        await handle.write(chunk);
        job.onProgress?.(done, total, file);
      }
    } catch (error) {
      if (error instanceof EmbeddingError) throw error;
      if (signal.aborted) throw aborted(error);
      if (isWriteError(error)) throw writeError(target, error);
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `The download of ${file} from ${shownBase} broke off after ${done} bytes (${networkErrorDetail(error)}). Try again.`, { cause: error });
    }
    if (total !== undefined && done !== total) {
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `The download of ${file} from ${shownBase} ended after ${done} of ${total} bytes. Try again.`);
    }
    return hash.digest('hex');
  } catch (error) {
    if (error instanceof EmbeddingError) throw error;
    throw writeError(path.join(job.staging, file), error);
  } finally {
    clearTimeout(timer);
    await handle?.close();
  }
}

/** Puts the staging folder at `dest`. An existing folder is moved aside first and restored if that fails. */
async function replaceFolder(staging: string, dest: string): Promise<void> {
  const exists = await stat(dest).then(() => true, () => false);
  if (!exists) {
    await rename(staging, dest);
    return;
  }
  const previous = `${dest}.previous-${process.pid}-${randomBytes(4).toString('hex')}`;
  await rename(dest, previous);
  try {
    await rename(staging, dest);
  } catch (error) {
    await rename(previous, dest).catch(() => undefined);
    throw writeError(dest, error);
  }
  await rm(previous, { recursive: true, force: true });
}

function folderUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`"${raw}" is not a URL. Give the model folder's address, e.g. https://huggingface.co/ORG/MODEL/resolve/main/`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`"${raw}" is not an http(s) URL.`);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  url.search = '';
  url.hash = '';
  return url;
}

function checkExpected(expected: Readonly<Record<string, string>>): Map<string, string> {
  const known = [...REQUIRED_MODEL_FILES, ...OPTIONAL_MODEL_FILES];
  const result = new Map<string, string>();
  for (const [file, hex] of Object.entries(expected)) {
    if (!known.includes(file)) throw new TypeError(`An expected sha256 is given for "${file}", which is not a model folder file (${known.join(', ')}).`);
    const sha = hex.trim().toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(sha)) throw new TypeError(`The expected sha256 for ${file} must be 64 hex digits, not "${hex}".`);
    result.set(file, sha);
  }
  return result;
}

function isWriteError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'EDQUOT';
}

function writeError(file: string, error: unknown): Error {
  return new Error(`Could not write ${file} (${errorText(error)}). Check free space and permissions; nothing was installed.`, { cause: error });
}
