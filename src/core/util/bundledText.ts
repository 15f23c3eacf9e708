import * as fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import { brotliDecompressSync } from 'node:zlib';
import { describeError } from '../errors/describeError';

/**
 * A bundled data file as text. The VSIX ships the larger ones brotli-compressed as `<file>.br`
 * (scripts/package.mjs, to stay within its size budget), while a clone has them plain; the plain file wins
 * when both are there. A `.br` file that does not decompress is an error naming it.
 */
export function readBundledText(file: string): string {
  if (fs.existsSync(file) || !fs.existsSync(`${file}.br`)) return fs.readFileSync(file, 'utf8');
  try {
    return brotliDecompressSync(fs.readFileSync(`${file}.br`)).toString('utf8');
  } catch (error) {
    throw new Error(`${file}.br is not brotli-compressed data (${describeError(error)})`, { cause: error });
  }
}

/**
 * A bundled file's bytes, read the same way as {@link readBundledText}: the plain file, else `<file>.br`
 * unpacked. With neither, the plain file's own read error (ENOENT) is thrown.
 */
export async function readBundledBytes(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    const compressed = (error as NodeJS.ErrnoException).code === 'ENOENT' ? await readFile(`${file}.br`).catch(() => undefined) : undefined;
    if (!compressed) throw error;
    try {
      return brotliDecompressSync(compressed);
    } catch (cause) {
      throw new Error(`${file}.br is not brotli-compressed data (${describeError(cause)})`, { cause });
    }
  }
}
