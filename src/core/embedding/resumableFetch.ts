/**
 * One pinned file brought to its full, checked content in a partial folder (see downloadModelFiles): the
 * bytes already there are kept when still right, the rest is asked for with a Range request, and the
 * whole file must match its pinned size and sha256.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { networkErrorDetail } from './errorDetails';
import { EmbeddingError } from './embedder';
import { copyBody, DOWNLOAD_STALL_TIMEOUT_MS, isWriteError, sizeOnDisk, watchStall, writeError, type StallWatch } from './downloadTransfer';

/** One file of a model: where it goes in the folder, where it comes from, and exactly what it must be. */
export interface ModelFileSource {
  /** Path inside the model folder, e.g. "model.onnx" or "1_Pooling/config.json". */
  readonly name: string;
  readonly url: string;
  /** Lower-case hex sha256 of the whole file. */
  readonly sha256: string;
  readonly bytes: number;
}

export interface ResumableJob {
  readonly file: ModelFileSource;
  readonly target: string;
  /** Bytes of this file on disk so far. */
  readonly report: (bytes: number) => void;
  readonly signal?: AbortSignal;
  readonly fetchImpl?: typeof fetch;
  readonly stallTimeoutMs?: number;
}

/** Brings one file in the partial folder to its full, checked content; returns its sha256. */
export async function fetchResumable(job: ResumableJob): Promise<string> {
  await mkdir(path.dirname(job.target), { recursive: true });
  const kept = await keptBytes(job.file, job.target);
  if (kept.sha256 !== undefined) {
    job.report(kept.bytes);
    return kept.sha256;
  }
  return new ResumedTransfer(job, kept.bytes).run();
}

/**
 * The bytes of `target` worth continuing from, with the sha256 when they are already the whole, right
 * file (an earlier attempt got it, then a later file failed). Anything longer or wrong is deleted.
 */
async function keptBytes(file: ModelFileSource, target: string): Promise<{ bytes: number; sha256?: string }> {
  const have = await sizeOnDisk(target);
  if (have < file.bytes) return { bytes: have };
  if (have === file.bytes) {
    const sha = await hashPrefix(target, createHash('sha256'), have).then((h) => h.digest('hex'));
    if (sha === file.sha256) return { bytes: have, sha256: sha };
  }
  await rm(target, { force: true });
  return { bytes: 0 };
}

/** One attempt at the rest of a file, from the `have` bytes kept; its state lives as long as the attempt. */
class ResumedTransfer {
  private readonly stallMs: number;
  private readonly stall: StallWatch;
  private handle: FileHandle | undefined;
  private received: number;

  constructor(
    private readonly job: ResumableJob,
    private readonly have: number,
  ) {
    this.stallMs = job.stallTimeoutMs ?? DOWNLOAD_STALL_TIMEOUT_MS;
    this.stall = watchStall(job.signal, this.stallMs);
    this.received = have;
  }

  async run(): Promise<string> {
    const { target } = this.job;
    try {
      const { body, append } = await this.respond();
      const hash = createHash('sha256');
      if (append) {
        await hashPrefix(target, hash, this.have);
      } else {
        this.received = 0; // a 200 is the whole file: what we held is replaced
      }
      this.handle = await open(target, append ? 'a' : 'w');
      this.job.report(this.received);
      await this.copy(body, this.handle, hash);
      return await this.verify(hash);
    } catch (error) {
      if (error instanceof EmbeddingError) throw error;
      throw writeError(target, error);
    } finally {
      this.stall.stop();
      await this.handle?.close();
    }
  }

  /** The body to write: the rest of the file after a matching 206 (appended), else the whole file. */
  private async respond(): Promise<{ body: ReadableStream<Uint8Array>; append: boolean }> {
    const { file } = this.job;
    let response = await this.request(this.have);
    let append = false;
    if (this.have > 0) {
      if (response.status === 206 && continuesAt(response, this.have, file.bytes)) {
        append = true;
      } else if (response.status !== 200) {
        // 416 or a range we did not ask for: the bytes we hold cannot be continued, so fetch the whole file.
        await response.body?.cancel();
        response = await this.request(0);
      }
    }
    if (response.status === 404) {
      await response.body?.cancel();
      throw new EmbeddingError('MODEL_INVALID', `${file.url} is gone (HTTP 404): the pinned file ${file.name} is no longer at its address. Choose another model, or use a custom URL.`);
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `Downloading ${file.name} from ${file.url} failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}. Try again later; the download continues where it stopped.`);
    }
    return { body: response.body, append };
  }

  private async request(from: number): Promise<Response> {
    const { file } = this.job;
    const headers: Record<string, string> = { 'accept-encoding': 'identity' }; // byte offsets must be the file's own
    if (from > 0) headers['range'] = `bytes=${from}-`;
    try {
      return await (this.job.fetchImpl ?? fetch)(file.url, { signal: this.stall.signal, redirect: 'follow', headers });
    } catch (error) {
      if (this.stall.signal.aborted) throw this.aborted(error, from);
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `Could not download ${file.name} from ${file.url} (${networkErrorDetail(error)}). Check your network connection; the download continues where it stopped.`, { cause: error });
    }
  }

  /** Writes the body after what is kept; more bytes than pinned delete the file, fewer are an error to retry. */
  private async copy(body: ReadableStream<Uint8Array>, sink: FileHandle, hash: Hash): Promise<void> {
    const { file, target } = this.job;
    try {
      await copyBody(body, {
        start: this.received,
        limit: file.bytes,
        onChunk: async (chunk) => {
          this.stall.reset();
          this.received += chunk.length;
          hash.update(chunk);
          await sink.write(chunk);
          this.job.report(this.received);
        },
        tooLarge: async () => {
          await sink.close();
          this.handle = undefined;
          await rm(target, { force: true });
          return new EmbeddingError('MODEL_INVALID', `${file.name} from ${file.url} is larger than the pinned ${file.bytes} bytes, so it is not the pinned file. The partial file was deleted and nothing was installed.`);
        },
      });
    } catch (error) {
      if (error instanceof EmbeddingError) throw error;
      if (this.stall.signal.aborted) throw this.aborted(error, this.received);
      if (isWriteError(error)) throw writeError(target, error);
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `The download of ${file.name} from ${file.url} broke off after ${this.received} of ${file.bytes} bytes (${networkErrorDetail(error)}). Try again; it continues from there.`, { cause: error });
    }
    if (this.received < file.bytes) {
      throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `The download of ${file.name} from ${file.url} ended after ${this.received} of ${file.bytes} bytes. Try again; it continues from there.`);
    }
  }

  /** The whole file's sha256, or the file deleted and an error when it is not the pinned one. */
  private async verify(hash: Hash): Promise<string> {
    const { file, target } = this.job;
    const sha = hash.digest('hex');
    if (sha !== file.sha256) {
      await this.handle?.close();
      this.handle = undefined;
      await rm(target, { force: true });
      throw new EmbeddingError('MODEL_INVALID', `${file.name} from ${file.url} has sha256 ${sha}, but ${file.sha256} was expected. The file changed on the server or was altered on the way; the partial file was deleted and nothing was installed.`);
    }
    return sha;
  }

  private aborted(cause: unknown, received: number): EmbeddingError {
    const { file } = this.job;
    return this.job.signal?.aborted
      ? new EmbeddingError('CANCELLED', `The model download was cancelled; nothing was installed. The ${received} bytes of ${file.name} received so far are kept, and the next download continues from there.`, { cause })
      : new EmbeddingError('TIMEOUT', `The download of ${file.name} from ${file.url} stalled: nothing arrived for ${Math.round(this.stallMs / 1000)} s. Check your connection and try again; it continues where it stopped.`, { cause });
  }
}

/** A 206 that continues exactly at `from` up to the end of a file of `size` bytes, unencoded. */
function continuesAt(response: Response, from: number, size: number): boolean {
  if ((response.headers.get('content-encoding') ?? 'identity') !== 'identity') return false;
  const match = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec((response.headers.get('content-range') ?? '').trim());
  if (!match) return false;
  return Number(match[1]) === from && Number(match[2]) === size - 1 && (match[3] === '*' || Number(match[3]) === size);
}

/** Feeds the first `bytes` bytes of `file` into `hash`. */
function hashPrefix(file: string, hash: Hash, bytes: number): Promise<Hash> {
  if (bytes === 0) return Promise.resolve(hash);
  return new Promise((resolve, reject) => {
    const stream = createReadStream(file, { start: 0, end: bytes - 1 });
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('error', (error) => reject(writeError(file, error)));
    stream.on('end', () => resolve(hash));
  });
}
