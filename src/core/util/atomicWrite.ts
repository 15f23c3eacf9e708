/**
 * Writing a file through a temporary file and a rename, so that a crash or a full disk never leaves half
 * a file where a whole one was: readers see the old content or the new, nothing between. The temporary
 * name is unique per write (process id and random bytes), so two writes of one file at once do not
 * share it; a failed write removes its temporary file and throws.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, lstatSync, openSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { lstat, open, readlink, rename, rm, stat } from 'node:fs/promises';
import * as path from 'node:path';

export interface AtomicWriteOptions {
  /**
   * Permission bits the file gets (e.g. 0o600 for secrets), set exactly whatever the umask, before any
   * data is written; the platform's default for a new file otherwise.
   */
  readonly mode?: number;
  /** When the file exists, it keeps its permission bits (`mode` then applies only to a new file). */
  readonly keepMode?: boolean;
  /**
   * When the file is a symbolic link, write its target (which need not exist yet) in the target's own
   * folder, so the link stays a link; otherwise the rename replaces the link with a plain file.
   */
  readonly throughSymlink?: boolean;
}

/** Windows keeps no POSIX permission bits (a mode there only toggles read-only), so modes are left alone. */
const MODES_APPLY = process.platform !== 'win32';
/** The permission bits kept or set; set-user-id, set-group-id and sticky bits never carry over to new content. */
export const PERMISSION_BITS = 0o777;
/** Links followed in a row before giving up, as Linux does (MAXSYMLINKS): more is almost surely a loop. */
const MAX_SYMLINK_HOPS = 40;
/** What Node gives a new file when no mode is asked for (the umask then narrows it). */
const DEFAULT_NEW_FILE_MODE = 0o666;

function tempName(file: string): string {
  return `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
}

function tooManyLinks(file: string): Error {
  return new Error(`${file} leads through more than ${MAX_SYMLINK_HOPS} symbolic links in a row (a loop?); point the link at a file.`);
}

/** For a `.catch` of a stat: a missing file is `undefined`, any other failure is thrown on. */
function ifMissing(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw error;
}

/** The file a write of `file` through symbolic links lands in: the last link's target, or `file` itself. */
function symlinkTargetSync(file: string): string {
  let current = file;
  for (let hops = 0; hops <= MAX_SYMLINK_HOPS; hops++) {
    if (!lstatSync(current, { throwIfNoEntry: false })?.isSymbolicLink()) return current;
    // Resolved by hand rather than with realpath, which fails on a link whose target does not exist yet.
    current = path.resolve(path.dirname(current), readlinkSync(current));
  }
  throw tooManyLinks(file);
}

async function symlinkTarget(file: string): Promise<string> {
  let current = file;
  for (let hops = 0; hops <= MAX_SYMLINK_HOPS; hops++) {
    const info = await lstat(current).catch(ifMissing);
    if (!info?.isSymbolicLink()) return current;
    current = path.resolve(path.dirname(current), await readlink(current));
  }
  throw tooManyLinks(file);
}

/** The mode the temporary file gets, from the options and the mode of the file it replaces (if any). */
function modeFor(options: AtomicWriteOptions, existingMode: number | undefined): number | undefined {
  if (!MODES_APPLY) return undefined;
  if (options.keepMode && existingMode !== undefined) return existingMode & PERMISSION_BITS;
  return options.mode === undefined ? undefined : options.mode & PERMISSION_BITS;
}

export async function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const target = options.throughSymlink ? await symlinkTarget(file) : file;
  const existing = options.keepMode ? await stat(target).catch(ifMissing) : undefined;
  const mode = modeFor(options, existing?.mode);
  const temp = tempName(target);
  let created = false;
  try {
    // Created with the mode (never wider, whatever the umask) and set exactly before the data is in it,
    // so a secret is never readable by others, even for a moment.
    const handle = await open(temp, 'wx', mode ?? DEFAULT_NEW_FILE_MODE);
    created = true;
    try {
      if (mode !== undefined) await handle.chmod(mode);
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    if (created) await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

export function writeFileAtomicSync(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const target = options.throughSymlink ? symlinkTargetSync(file) : file;
  const existing = options.keepMode ? statSync(target, { throwIfNoEntry: false }) : undefined;
  const mode = modeFor(options, existing?.mode);
  const temp = tempName(target);
  let created = false;
  try {
    const fd = openSync(temp, 'wx', mode ?? DEFAULT_NEW_FILE_MODE);
    created = true;
    try {
      if (mode !== undefined) fchmodSync(fd, mode);
      writeFileSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
  } catch (error) {
    try {
      if (created) rmSync(temp, { force: true });
    } catch {
      // The temporary file could not be removed either; the error that matters is the write's.
    }
    throw error;
  }
}
