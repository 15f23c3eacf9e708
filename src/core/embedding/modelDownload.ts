/**
 * Fetches a sentence-embedding folder (model.onnx, tokenizer.json and their optional configs) from a base
 * URL into a local folder, for the Download model… command and the CLI. Files stream to a staging folder
 * beside the destination while their sha256 is computed; the destination is replaced only when every file
 * arrived and matched its expected hash, so a failed or cancelled download never leaves a half model behind.
 *
 * {@link downloadModelFiles} does the same for a list of files each with its own URL, size and sha256 (the
 * pinned models), and resumes: what arrived survives a cancel, a failure or a crash in a partial folder
 * beside the destination, and the next attempt asks only for the rest (resumableFetch.ts, partialFolders.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rm, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { networkErrorDetail } from './errorDetails';
import { EmbeddingError } from './embedder';
import { copyBody, DOWNLOAD_STALL_TIMEOUT_MS, isWriteError, replaceFolder, sizeOnDisk, watchStall, writeError } from './downloadTransfer';
import { lockPartial, removeStalePartials } from './partialFolders';
import { fetchResumable, type ModelFileSource } from './resumableFetch';

export type { ModelFileSource } from './resumableFetch';

/** Without these the folder is not a model: a 404 on them is an error. */
export const REQUIRED_MODEL_FILES: readonly string[] = ['model.onnx', 'tokenizer.json'];
/** Fetched when the server has them; a 404 is fine. */
export const OPTIONAL_MODEL_FILES: readonly string[] = ['tokenizer_config.json', 'tool_router_model.json', '1_Pooling/config.json', 'config.json'];
/**
 * Largest file accepted: far above any sentence embedder the router runs, so a wrong URL pointing at
 * something huge cannot fill the disk.
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
  const { signal, reset: resetStall, stop: stopStall } = watchStall(job.signal, stallMs);
  const aborted = (cause: unknown): EmbeddingError =>
    job.signal?.aborted
      ? new EmbeddingError('CANCELLED', `The model download was cancelled; nothing was installed.`, { cause })
      : new EmbeddingError('TIMEOUT', `The download of ${file} from ${shownBase} stalled: nothing arrived for ${Math.round(stallMs / 1000)} s. Check your connection and try again.`, { cause });

  let handle: FileHandle | undefined;
  try {
    let response: Response;
    try {
      response = await (job.fetchImpl ?? fetch)(url, { signal, redirect: 'follow' });
    } catch (error) {
      if (signal.aborted) throw aborted(error);
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `Could not download ${file} from ${shownBase} (${networkErrorDetail(error)}). Check the URL and your network connection.`, { cause: error });
    }
    const accepted = await acceptedBody(job, response);
    if (!accepted) return undefined;
    const { body, total } = accepted;

    const target = path.join(job.staging, file);
    await mkdir(path.dirname(target), { recursive: true });
    handle = await open(target, 'wx');
    const hash = createHash('sha256');
    let done = 0;
    job.onProgress?.(0, total, file);
    try {
      const sink = handle;
      await copyBody(body, {
        limit: MAX_MODEL_FILE_BYTES,
        onChunk: async (chunk) => {
          resetStall();
          done += chunk.length;
          hash.update(chunk);
          await sink.write(chunk);
          job.onProgress?.(done, total, file);
        },
        tooLarge: async () => new EmbeddingError('MODEL_INVALID', `${file} at ${shownBase} is larger than the ${MAX_MODEL_FILE_BYTES} bytes a model file may have. Check the URL.`),
      });
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
    stopStall();
    await handle?.close();
  }
}

/** The body to save and its size when the server says it; undefined for an optional file the server lacks. */
async function acceptedBody(job: FileDownload, response: Response): Promise<{ body: ReadableStream<Uint8Array>; total: number | undefined } | undefined> {
  const { file, shownBase } = job;
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
  return { body: response.body, total };
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

// ---------------------------------------------------------------------------------------------------------
// A list of pinned files, resumable.

export interface DownloadModelFilesOptions {
  readonly files: readonly ModelFileSource[];
  /** The folder to create or replace. */
  readonly dest: string;
  /** Small files written as given once every download matched, e.g. tool_router_model.json. */
  readonly extraFiles?: Readonly<Record<string, string>>;
  /** Bytes on disk over the total of all files; `file` is the one being fetched. */
  readonly onProgress?: (done: number, total: number, file: string) => void;
  readonly signal?: AbortSignal;
  readonly fetchImpl?: typeof fetch;
  readonly stallTimeoutMs?: number;
}

/** Hex digits of the file-list digest in a partial folder's name: enough that two lists never share one. */
export const PARTIAL_KEY_HEX_CHARS = 16;

/**
 * Where the bytes of an unfinished download of `files` into `dest` are kept. The name carries a digest of
 * every file's name, URL, size and hash, so a different model or a re-pinned file never appends to them.
 */
export function partialFolderFor(dest: string, files: readonly ModelFileSource[]): string {
  const key = createHash('sha256');
  for (const f of files) key.update(`${f.name}\0${f.url}\0${f.bytes}\0${f.sha256.toLowerCase()}\n`);
  return `${path.resolve(dest)}.partial-${key.digest('hex').slice(0, PARTIAL_KEY_HEX_CHARS)}`;
}

/**
 * Downloads every file into a partial folder beside `dest`, checks each against its size and sha256, and
 * then puts the folder at `dest` in one rename. Returns the sha256 of every file, by name.
 *
 * Resume: bytes already in the partial folder are kept; the next attempt sends `Range: bytes=N-` and
 * appends when the server answers 206 with the matching Content-Range, and starts the file over on a 200.
 * Rejects with EmbeddingError: MODEL_INVALID (a file is not the pinned one: wrong hash or too large; that
 * partial file is deleted), ENDPOINT_UNAVAILABLE (network or HTTP failure), TIMEOUT (stalled) or CANCELLED.
 * In every case nothing is installed, and except for a wrong file the bytes received are kept.
 */
export async function downloadModelFiles(options: DownloadModelFilesOptions): Promise<Record<string, string>> {
  const files = checkFileList(options.files);
  const extra = Object.entries(options.extraFiles ?? {});
  for (const [name] of extra) {
    checkFolderPath(name);
    if (files.some((f) => f.name === name)) throw new TypeError(`"${name}" is both downloaded and written as an extra file.`);
  }
  const dest = path.resolve(options.dest);
  const partial = partialFolderFor(dest, files);
  await mkdir(partial, { recursive: true });
  const unlock = await lockPartial(partial);
  try {
    const total = files.reduce((sum, f) => sum + f.bytes, 0);
    const onDisk = await Promise.all(files.map((f) => sizeOnDisk(path.join(partial, f.name))));
    const done = onDisk.map((size, i) => Math.min(size, files[i]!.bytes));
    const report = (i: number, bytes: number): void => {
      done[i] = bytes;
      options.onProgress?.(done.reduce((a, b) => a + b, 0), total, files[i]!.name);
    };
    const hashes: Record<string, string> = {};
    for (let i = 0; i < files.length; i++) {
      hashes[files[i]!.name] = await fetchResumable({ ...options, file: files[i]!, target: path.join(partial, files[i]!.name), report: (bytes) => report(i, bytes) });
    }
    for (const [name, text] of extra) {
      const target = path.join(partial, name);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, text).catch((error: unknown) => {
        throw writeError(target, error);
      });
    }
    await replaceFolder(partial, dest);
    await removeStalePartials(dest);
    return hashes;
  } finally {
    await unlock();
  }
}

function checkFileList(files: readonly ModelFileSource[]): ModelFileSource[] {
  if (files.length === 0) throw new TypeError('A model download needs at least one file.');
  const seen = new Set<string>();
  return files.map((f) => {
    checkFolderPath(f.name);
    if (seen.has(f.name)) throw new TypeError(`"${f.name}" is listed twice in the model's files.`);
    seen.add(f.name);
    let url: URL;
    try {
      url = new URL(f.url);
    } catch {
      throw new TypeError(`The URL of ${f.name}, "${f.url}", is not a URL.`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`The URL of ${f.name}, "${f.url}", is not an http(s) URL.`);
    const sha = f.sha256.trim().toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(sha)) throw new TypeError(`The sha256 of ${f.name} must be 64 hex digits, not "${f.sha256}".`);
    if (!Number.isSafeInteger(f.bytes) || f.bytes < 1 || f.bytes > MAX_MODEL_FILE_BYTES) {
      throw new TypeError(`The size of ${f.name} must be a whole number of bytes from 1 to ${MAX_MODEL_FILE_BYTES}, not ${f.bytes}.`);
    }
    return { ...f, sha256: sha };
  });
}

/** A relative path that stays inside the model folder. */
function checkFolderPath(name: string): void {
  const normal = path.posix.normalize(name);
  if (name === '' || path.isAbsolute(name) || path.posix.isAbsolute(name) || normal.startsWith('..') || normal !== name || name.includes('\\')) {
    throw new TypeError(`"${name}" is not a plain relative path inside the model folder.`);
  }
}
