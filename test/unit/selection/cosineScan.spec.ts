import assert from 'node:assert/strict';
import { PackedVectors } from '../../../src/core/selection/cosineScan';
import { dot } from '../../../src/core/selection/rankMath';

let seed = 11;
const rand = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;

/** The plain loop over every row, as selection computed cosines before the kernel. */
function plain(matrix: Float32Array, rows: number, dimension: number, query: Float32Array, present: Uint8Array): Float64Array {
  const q = Float64Array.from(query);
  return Float64Array.from({ length: rows }, (_, i) => (present[i] ? dot(matrix, i * dimension, q, dimension) : 0));
}

describe('cosine scan', () => {
  it('runs the SIMD kernel on this Node and gives the plain loop’s results to the last bit', () => {
    for (const [rows, dimension] of [
      [1, 4],
      [7, 8],
      [300, 256],
      [65, 384],
    ] as const) {
      const vectors = new PackedVectors(rows, dimension);
      assert.equal(vectors.simd, true, 'WebAssembly SIMD runs on every Node the project supports');
      for (let i = 0; i < vectors.matrix.length; i++) vectors.matrix[i] = rand();
      const present = Uint8Array.from({ length: rows }, (_, i) => (i % 5 === 3 ? 0 : 1));
      for (let trial = 0; trial < 5; trial++) {
        const query = Float32Array.from({ length: dimension }, rand);
        const got = vectors.scan(query, present);
        const want = plain(vectors.matrix, rows, dimension, query, present);
        assert.deepEqual([...got], [...want], `${rows}×${dimension}`);
        assert.ok(got.some((x) => x !== 0));
      }
    }
  });

  it('falls back to the plain loop for a dimension that is not a multiple of four', () => {
    const vectors = new PackedVectors(3, 5);
    assert.equal(vectors.simd, false);
    vectors.matrix.set([1, 2, 3, 4, 5, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    assert.deepEqual([...vectors.scan(Float32Array.from([1, 1, 1, 1, 2]), Uint8Array.from([1, 1, 0]))], [20, 2, 0]);
  });

  it('keeps each scan’s results apart from the next', () => {
    const vectors = new PackedVectors(2, 4);
    vectors.matrix.set([1, 0, 0, 0, 0, 1, 0, 0]);
    const all = Uint8Array.from([1, 1]);
    const first = vectors.scan(Float32Array.from([0.5, 0.25, 0, 0]), all);
    vectors.scan(Float32Array.from([1, 1, 1, 1]), all);
    assert.deepEqual([...first], [0.5, 0.25]);
  });
});
