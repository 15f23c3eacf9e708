/**
 * The partial folders of resumable downloads (see downloadModelFiles): one download at a time holds each,
 * and the ones no download can use any more are removed once a model is installed.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EmbeddingError } from './embedder';
import { writeError } from './downloadTransfer';

/** Downloads of partial folders under way in this process. */
const activePartials = new Set<string>();

/**
 * Takes the partial folder for this process: two windows downloading the same model would otherwise append
 * to the same files. A lock left by a process that is gone (a crash) is taken over.
 */
export async function lockPartial(partial: string): Promise<() => Promise<void>> {
  const busy = (who: string): EmbeddingError =>
    new EmbeddingError('ENDPOINT_UNAVAILABLE', `This model is already being downloaded (${who}); wait for that download to finish.`);
  if (activePartials.has(partial)) throw busy('in this window');
  const lock = `${partial}.lock`;
  try {
    await writeFile(lock, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError(lock, error);
    const pid = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && processIsAlive(pid)) throw busy(`by process ${pid}`);
    await writeFile(lock, String(process.pid)).catch((e: unknown) => {
      throw writeError(lock, e);
    });
  }
  activePartials.add(partial);
  return async () => {
    activePartials.delete(partial);
    await rm(lock, { force: true });
  };
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by someone else
  }
}

/**
 * Once a model is installed, the bytes kept for other pins of the same destination (a model re-pinned
 * since they were fetched) can never be used: remove them, unless another download holds them.
 */
export async function removeStalePartials(dest: string): Promise<void> {
  const prefix = `${path.basename(dest)}.partial-`;
  const names = await readdir(path.dirname(dest)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || name.endsWith('.lock')) continue;
    const folder = path.join(path.dirname(dest), name);
    if (names.includes(`${name}.lock`)) continue;
    await rm(folder, { recursive: true, force: true }).catch(() => undefined);
  }
}
