/**
 * The arithmetic selection runs on every prompt over the whole catalogue: dot products, z-scores and
 * orderings by score. Each keeps its exact results (same sums in the same order, ties by index) while
 * avoiding work a plain version does, since it runs once per tool per prompt.
 */

/**
 * The ranking kept in a Selection: the best this many tools, best first. The panel cannot show more, and
 * `eval` needs 50; sorting all of a large catalogue on every prompt is wasted work.
 */
export const RANKING_LIMIT = 1000;

/** Up to this many, the best k are kept in one pass with a short sorted list; beyond it quickselect wins. */
const SMALL_K = 32;

/** Dot product of `q` with the row at `base` of a packed matrix; unrolled by four, which V8 runs about twice as fast. */
export function dot(matrix: Float32Array, base: number, q: Float64Array, dimension: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 3 < dimension; d += 4) {
    s0 += matrix[base + d]! * q[d]!;
    s1 += matrix[base + d + 1]! * q[d + 1]!;
    s2 += matrix[base + d + 2]! * q[d + 2]!;
    s3 += matrix[base + d + 3]! * q[d + 3]!;
  }
  for (; d < dimension; d++) s0 += matrix[base + d]! * q[d]!;
  return s0 + s1 + s2 + s3;
}

/**
 * (x − mean) / sd over the entries present (all when `present` is absent); absent entries get 0. The sd is
 * taken as at least `minSd`, so a spread that is nearly all zeros does not make its few non-zero values huge.
 */
export function zScores(values: Float64Array, present?: Uint8Array, minSd = 0): Float64Array {
  let n = 0;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    if (present && !present[i]) continue;
    sum += values[i]!;
    n++;
  }
  const mean = n ? sum / n : 0;
  let sq = 0;
  for (let i = 0; i < values.length; i++) if (!present || present[i]) sq += (values[i]! - mean) ** 2;
  const sd = n > 1 ? Math.max(minSd, Math.sqrt(sq / n)) : 0;
  const out = new Float64Array(values.length);
  if (sd === 0) return out;
  for (let i = 0; i < values.length; i++) if (!present || present[i]) out[i] = (values[i]! - mean) / sd;
  return out;
}

/** The indices of the k best scores, best first (ties by index), without sorting everything. */
export function topIndices(scores: ArrayLike<number>, k: number): number[] {
  const n = scores.length;
  if (k <= 0) return [];
  if (hasNaN(scores)) return rankByComparator(scores).slice(0, k);
  if (k >= n) return rankIndices(scores);
  if (k <= SMALL_K) return topFew(scores, k);
  // The k-th best value, by quickselect on a copy; then only the candidates at or above it are ranked.
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = scores[i]!;
  const kth = quickselectDescending(values, k - 1);
  const candidates: number[] = [];
  for (let i = 0; i < n; i++) if (scores[i]! >= kth) candidates.push(i);
  return rankSubset(scores, candidates).slice(0, k);
}

/** Indices sorted by score, best first (ties by index, so the order is deterministic). */
export function rankIndices(scores: ArrayLike<number>): number[] {
  if (hasNaN(scores)) return rankByComparator(scores);
  const all = new Array<number>(scores.length);
  for (let i = 0; i < all.length; i++) all[i] = i;
  return rankSubset(scores, all);
}

/**
 * `indices` ordered by score, best first, ties by index: a quicksort over (score, index) pairs held in
 * typed arrays, so no comparator is called. Every pair differs, so the order is the comparator's exactly.
 */
function rankSubset(scores: ArrayLike<number>, indices: readonly number[]): number[] {
  const m = indices.length;
  const values = new Float64Array(m);
  const order = new Int32Array(m);
  for (let j = 0; j < m; j++) {
    order[j] = indices[j]!;
    values[j] = scores[indices[j]!]!;
  }
  sortPairs(values, order, 0, m - 1, 2 * Math.ceil(Math.log2(m + 1)));
  return Array.from(order);
}

/** Below this many pairs, insertion sort beats partitioning. */
const INSERTION_SORT_MAX = 16;

/** Sorts pairs lo..hi (inclusive) best first; past `depth` partitions (a rare unlucky input) the builtin sort finishes. */
function sortPairs(values: Float64Array, order: Int32Array, lo: number, hi: number, depth: number): void {
  while (hi - lo > INSERTION_SORT_MAX) {
    if (depth-- === 0) return builtinSort(values, order, lo, hi);
    // The median of the first, middle and last pair as pivot, moved to the middle.
    const mid = (lo + hi) >>> 1;
    if (before(values, order, mid, lo)) swap(values, order, mid, lo);
    if (before(values, order, hi, lo)) swap(values, order, hi, lo);
    if (before(values, order, hi, mid)) swap(values, order, hi, mid);
    const pv = values[mid]!;
    const pi = order[mid]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pv || (values[i] === pv && order[i]! < pi)) i++;
      while (pv > values[j]! || (pv === values[j] && pi < order[j]!)) j--;
      if (i <= j) swap(values, order, i++, j--);
    }
    // The smaller side recursively, the larger in this loop: the stack stays logarithmic.
    if (j - lo < hi - i) {
      sortPairs(values, order, lo, j, depth);
      lo = i;
    } else {
      sortPairs(values, order, i, hi, depth);
      hi = j;
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    const v = values[i]!;
    const o = order[i]!;
    let j = i - 1;
    for (; j >= lo && (values[j]! < v || (values[j] === v && order[j]! > o)); j--) {
      values[j + 1] = values[j]!;
      order[j + 1] = order[j]!;
    }
    values[j + 1] = v;
    order[j + 1] = o;
  }
}

/** Whether pair a goes before pair b: a higher score, or the same score and a lower index. */
function before(values: Float64Array, order: Int32Array, a: number, b: number): boolean {
  return values[a]! > values[b]! || (values[a] === values[b] && order[a]! < order[b]!);
}

function swap(values: Float64Array, order: Int32Array, a: number, b: number): void {
  const v = values[a]!;
  values[a] = values[b]!;
  values[b] = v;
  const o = order[a]!;
  order[a] = order[b]!;
  order[b] = o;
}

function builtinSort(values: Float64Array, order: Int32Array, lo: number, hi: number): void {
  const pairs = Array.from({ length: hi - lo + 1 }, (_, k) => [values[lo + k]!, order[lo + k]!] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  pairs.forEach(([v, o], k) => {
    values[lo + k] = v;
    order[lo + k] = o;
  });
}

/** The k best in one pass, for small k: a sorted list of k where a later index enters only above an equal score. */
function topFew(scores: ArrayLike<number>, k: number): number[] {
  const best: number[] = [];
  for (let i = 0; i < scores.length; i++) {
    const v = scores[i]!;
    if (best.length === k && !(v > scores[best[k - 1]!]!)) continue;
    let at = best.length;
    while (at > 0 && v > scores[best[at - 1]!]!) at--;
    best.splice(at, 0, i);
    if (best.length > k) best.pop();
  }
  return best;
}

/** The value that would be at `position` if `values` were sorted best first (values is reordered). */
function quickselectDescending(values: Float64Array, position: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (position <= j) hi = j;
    else if (position >= i) lo = i;
    else return values[position]!;
  }
  return values[position]!;
}

function hasNaN(scores: ArrayLike<number>): boolean {
  for (let i = 0; i < scores.length; i++) if (Number.isNaN(scores[i])) return true;
  return false;
}

/** The plain ordering, kept for scores holding NaN, whose place only a comparator defines. */
function rankByComparator(scores: ArrayLike<number>): number[] {
  const idx = Array.from({ length: scores.length }, (_, i) => i);
  return idx.sort((a, b) => scores[b]! - scores[a]! || a - b);
}
