/** Deterministic vectors for the cache kill test: a loaded entry must equal what was written for its text. */
import { createHash } from 'node:crypto';

export const CACHE_TEST_MODEL = 'reliability/kill-test';
export const CACHE_TEST_DIMENSION = 384;

export function expectedVector(text: string): Float32Array {
  const seed = createHash('sha256').update(text).digest();
  const v = new Float32Array(CACHE_TEST_DIMENSION);
  for (let i = 0; i < v.length; i++) v[i] = (seed[i % seed.length]! - 128) / 128 + i / 1000;
  return v;
}
