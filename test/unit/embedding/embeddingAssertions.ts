import assert from 'node:assert/strict';
import { EmbeddingError } from '../../../src/core/embedding/embedder';

/** Asserts that `promise` rejects with an EmbeddingError of `kind` whose message matches every pattern. */
export async function rejectsWith(promise: Promise<unknown>, kind: EmbeddingError['kind'], ...patterns: RegExp[]): Promise<EmbeddingError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof EmbeddingError, `expected an EmbeddingError, got ${String(error)}`);
    assert.equal(error.kind, kind, error.message);
    for (const pattern of patterns) assert.match(error.message, pattern);
    return error;
  }
  assert.fail(`expected ${kind}`);
}
