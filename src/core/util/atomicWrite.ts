/**
 * Writing a file through a temporary file and a rename, so that a crash or a full disk never leaves half
 * a file where a whole one was: readers see the old content or the new, nothing between. The temporary
 * name is unique per write (process id and random bytes), so two writes of one file at once do not
 * share it; a failed write removes its temporary file and throws.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';

export interface AtomicWriteOptions {
  /** File mode for a new file (e.g. 0o600 for secrets); the platform's default otherwise. */
  readonly mode?: number;
}

function tempName(file: string): string {
  return `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
}

export async function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const temp = tempName(file);
  try {
    await writeFile(temp, data, options.mode === undefined ? {} : { mode: options.mode });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

export function writeFileAtomicSync(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const temp = tempName(file);
  try {
    writeFileSync(temp, data, options.mode === undefined ? {} : { mode: options.mode });
    renameSync(temp, file);
  } catch (error) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The temporary file could not be removed either; the error that matters is the write's.
    }
    throw error;
  }
}
