import * as fs from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';

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
    throw new Error(`${file}.br is not brotli-compressed data (${(error as Error).message})`, { cause: error });
  }
}
