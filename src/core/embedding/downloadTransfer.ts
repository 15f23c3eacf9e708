/**
 * What both model downloads share: the stall timer, the size-bounded copy loop, the swap of a finished
 * folder into place, and the wording of a failed write.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, stat } from 'node:fs/promises';
import { describeError } from '../errors/describeError';

/** A download that receives nothing for this long is given up: a dead connection, not a slow one. */
export const DOWNLOAD_STALL_TIMEOUT_MS = 60_000;

/** A signal aborted when nothing arrived for a while (or by the caller's signal); `reset` on each chunk. */
export interface StallWatch {
  readonly signal: AbortSignal;
  readonly reset: () => void;
  readonly stop: () => void;
}

/** A timer that aborts the returned signal when nothing arrives for `stallMs`; also aborted by `outer`. */
export function watchStall(outer: AbortSignal | undefined, stallMs: number): StallWatch {
  const stall = new AbortController();
  let timer = setTimeout(() => stall.abort(), stallMs);
  return {
    signal: outer ? AbortSignal.any([outer, stall.signal]) : stall.signal,
    reset: () => {
      clearTimeout(timer);
      timer = setTimeout(() => stall.abort(), stallMs);
    },
    stop: () => clearTimeout(timer),
  };
}

/**
 * The one streaming loop of both downloads: hands each chunk of a response body to `onChunk` in order,
 * and stops with `tooLarge()`'s error as soon as the byte count (from `start`) would pass `limit`, before
 * the chunk is written. Network and write errors are left to the caller, which knows what to say.
 */
export async function copyBody(
  body: AsyncIterable<Uint8Array>,
  options: { readonly start?: number; readonly limit: number; readonly onChunk: (chunk: Uint8Array) => Promise<void>; readonly tooLarge: () => Promise<Error> },
): Promise<void> {
  let count = options.start ?? 0;
  for await (const chunk of body) {
    count += chunk.length;
    if (count > options.limit) throw await options.tooLarge();
    await options.onChunk(chunk);
  }
}

/** Puts the staging folder at `dest`. An existing folder is moved aside first and restored if that fails. */
export async function replaceFolder(staging: string, dest: string): Promise<void> {
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

/** Bytes of `file` on disk; 0 when it is missing or not a file. */
export async function sizeOnDisk(file: string): Promise<number> {
  try {
    const info = await stat(file);
    return info.isFile() ? info.size : 0;
  } catch {
    return 0;
  }
}

export function isWriteError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'EDQUOT';
}

export function writeError(file: string, error: unknown): Error {
  return new Error(`Could not write ${file} (${describeError(error)}). Check free space and permissions; nothing was installed.`, { cause: error });
}
