/**
 * The default model in memory, and its training: a static embedding table whose text vector is the
 * weighted mean of its tokens' rows, L2-normalised. Trained with symmetric InfoNCE over in-batch
 * negatives and row-wise sparse Adagrad, in plain typed arrays (no ML library exists for Node here).
 * The recipe follows an earlier prototype of the project: a static table of token vectors, mean-pooled.
 */

/** A small, fast, seedable PRNG (mulberry32): training must give the same model on every run. */
export class SeededRandom {
  private state: number;
  private spare: number | undefined;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Standard normal (Box-Muller). */
  gaussian(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    const u = Math.max(this.next(), 1e-12);
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

export class StaticEmbeddingModel {
  /** Row-major [vocabSize × dimension]. */
  readonly table: Float32Array;

  /**
   * @param tokenWeights per-token weight (IDF); 0 for tokens that must never count ([PAD], [UNK], punctuation).
   */
  constructor(
    readonly vocabSize: number,
    readonly dimension: number,
    readonly tokenWeights: Float32Array,
    table?: Float32Array,
  ) {
    this.table = table ?? new Float32Array(vocabSize * dimension);
  }

  /** Rows drawn from N(0, initScale²/dimension): before training the model is a random projection of weighted bag-of-words, i.e. a lexical matcher. */
  initialise(random: SeededRandom, initScale: number): void {
    const sd = initScale / Math.sqrt(this.dimension);
    for (let t = 0; t < this.vocabSize; t++) {
      const zero = this.tokenWeights[t] === 0;
      for (let k = 0; k < this.dimension; k++) this.table[t * this.dimension + k] = zero ? 0 : random.gaussian() * sd;
    }
  }

  /** Weighted sum of the token rows into `out` (not normalised); returns its length. */
  accumulate(ids: Int32Array, out: Float32Array, offset = 0): number {
    const d = this.dimension;
    for (let k = 0; k < d; k++) out[offset + k] = 0;
    for (let i = 0; i < ids.length; i++) {
      const t = ids[i]!;
      const w = this.tokenWeights[t]!;
      if (w === 0) continue;
      const row = t * d;
      for (let k = 0; k < d; k++) out[offset + k] += w * this.table[row + k]!;
    }
    let s = 0;
    for (let k = 0; k < d; k++) s += out[offset + k]! * out[offset + k]!;
    return Math.sqrt(s);
  }

  /** The unit-length embedding of a tokenised text (a zero vector when no token counts). */
  embed(ids: Int32Array): Float32Array {
    const v = new Float32Array(this.dimension);
    const norm = this.accumulate(ids, v);
    if (norm > 0) for (let k = 0; k < this.dimension; k++) v[k] = v[k]! / norm;
    return v;
  }

  /** The table with each row multiplied by its token weight: what mean pooling over the ONNX output needs. */
  weightedTable(): Float32Array {
    const out = new Float32Array(this.table.length);
    const d = this.dimension;
    for (let t = 0; t < this.vocabSize; t++) {
      const w = this.tokenWeights[t]!;
      for (let k = 0; k < d; k++) out[t * d + k] = w * this.table[t * d + k]!;
    }
    return out;
  }
}

export interface TrainingExample {
  readonly query: Int32Array;
  readonly tool: Int32Array;
  /** Examples with the same key on either side are not negatives of each other (same text). */
  readonly queryKey: number;
  readonly toolKey: number;
}

export interface ContrastiveOptions {
  readonly temperature: number;
  readonly learningRate: number;
}

/**
 * Trains on one batch: symmetric InfoNCE (query→tool and tool→query) where every other pair in the batch
 * is a negative, except pairs that share the query or tool text (false negatives, masked). Returns the loss.
 */
export class ContrastiveTrainer {
  private readonly accumulators: Float32Array;
  private readonly gradient: Float32Array;
  private readonly touched: Uint8Array;
  /** Multiplies the learning rate for the next steps (a schedule over the run). */
  rateScale = 1;

  constructor(
    private readonly model: StaticEmbeddingModel,
    private readonly options: ContrastiveOptions,
  ) {
    this.accumulators = new Float32Array(model.vocabSize);
    this.gradient = new Float32Array(model.vocabSize * model.dimension);
    this.touched = new Uint8Array(model.vocabSize);
  }

  step(batch: readonly TrainingExample[]): number {
    const { model } = this;
    const d = model.dimension;
    const b = batch.length;
    const tau = this.options.temperature;
    const q = new Float32Array(b * d);
    const t = new Float32Array(b * d);
    const qNorm = new Float32Array(b);
    const tNorm = new Float32Array(b);
    for (let i = 0; i < b; i++) {
      qNorm[i] = normaliseInPlace(q, i * d, d, model.accumulate(batch[i]!.query, q, i * d));
      tNorm[i] = normaliseInPlace(t, i * d, d, model.accumulate(batch[i]!.tool, t, i * d));
    }

    // Logits S[i][j] = cos(q_i, t_j) / tau, with masked false negatives.
    const logits = new Float64Array(b * b);
    const masked = new Uint8Array(b * b);
    for (let i = 0; i < b; i++) {
      for (let j = 0; j < b; j++) {
        if (i !== j && (batch[i]!.toolKey === batch[j]!.toolKey || batch[i]!.queryKey === batch[j]!.queryKey)) {
          masked[i * b + j] = 1;
          continue;
        }
        let s = 0;
        for (let k = 0; k < d; k++) s += q[i * d + k]! * t[j * d + k]!;
        logits[i * b + j] = s / tau;
      }
    }

    // dLoss/dS for the mean of the row (query→tool) and column (tool→query) cross-entropies.
    const gS = new Float64Array(b * b);
    let loss = 0;
    for (let i = 0; i < b; i++) loss += softmaxGradient(logits, masked, gS, i * b, 1, b, i, 0.5 / b);
    for (let j = 0; j < b; j++) loss += softmaxGradient(logits, masked, gS, j, b, b, j, 0.5 / b);

    // Back to the unit vectors, then through the normalisation, then to the token rows.
    const gq = new Float32Array(d);
    const gt = new Float32Array(d);
    for (let i = 0; i < b; i++) {
      gq.fill(0);
      for (let j = 0; j < b; j++) {
        const g = gS[i * b + j]! / tau;
        if (g === 0) continue;
        for (let k = 0; k < d; k++) gq[k] += g * t[j * d + k]!;
      }
      this.backToRows(batch[i]!.query, q, i * d, qNorm[i]!, gq);
    }
    for (let j = 0; j < b; j++) {
      gt.fill(0);
      for (let i = 0; i < b; i++) {
        const g = gS[i * b + j]! / tau;
        if (g === 0) continue;
        for (let k = 0; k < d; k++) gt[k] += g * q[i * d + k]!;
      }
      this.backToRows(batch[j]!.tool, t, j * d, tNorm[j]!, gt);
    }
    this.applyAdagrad();
    return loss / b;
  }

  /** g is dLoss/dv for v = u/|u|; dLoss/du = (g − v(v·g))/|u|, and each token row gets its weight times that. */
  private backToRows(ids: Int32Array, vectors: Float32Array, offset: number, norm: number, g: Float32Array): void {
    if (norm === 0) return;
    const { model } = this;
    const d = model.dimension;
    let dot = 0;
    for (let k = 0; k < d; k++) dot += vectors[offset + k]! * g[k]!;
    for (let k = 0; k < d; k++) g[k] = (g[k]! - vectors[offset + k]! * dot) / norm;
    for (let i = 0; i < ids.length; i++) {
      const token = ids[i]!;
      const w = model.tokenWeights[token]!;
      if (w === 0) continue;
      this.touched[token] = 1;
      const row = token * d;
      for (let k = 0; k < d; k++) this.gradient[row + k] += w * g[k]!;
    }
  }

  /** Row-wise Adagrad: one accumulator per row (mean squared gradient), so rare tokens keep large steps. */
  private applyAdagrad(): void {
    const { model } = this;
    const d = model.dimension;
    const lr = this.options.learningRate * this.rateScale;
    for (let token = 0; token < model.vocabSize; token++) {
      if (!this.touched[token]) continue;
      this.touched[token] = 0;
      const row = token * d;
      let s = 0;
      for (let k = 0; k < d; k++) s += this.gradient[row + k]! * this.gradient[row + k]!;
      this.accumulators[token] += s / d;
      const scale = lr / (Math.sqrt(this.accumulators[token]!) + 1e-10);
      for (let k = 0; k < d; k++) {
        model.table[row + k] -= scale * this.gradient[row + k]!;
        this.gradient[row + k] = 0;
      }
    }
  }
}

/**
 * The learning rate's share at `progress` (0 at the first batch, 1 after the last) for a schedule that
 * holds it for the first half and lowers it linearly to `finalShare` over the second.
 */
export function scheduledRateShare(progress: number, finalShare: number): number {
  return progress <= 0.5 ? 1 : 1 - (1 - finalShare) * Math.min(1, (progress - 0.5) / 0.5);
}

/** The running mean of a table's successive states (averaging the end of one training run's path). */
export class TableAverage {
  private readonly sum: Float64Array;
  private states = 0;

  constructor(size: number) {
    this.sum = new Float64Array(size);
  }

  get count(): number {
    return this.states;
  }

  add(table: Float32Array): void {
    if (table.length !== this.sum.length) throw new Error(`TableAverage: a table of ${table.length} values, expected ${this.sum.length}.`);
    for (let k = 0; k < table.length; k++) this.sum[k] += table[k]!;
    this.states++;
  }

  /** Overwrites `table` with the mean of the states added (leaves it as it is when none was). */
  writeInto(table: Float32Array): void {
    if (this.states === 0) return;
    for (let k = 0; k < table.length; k++) table[k] = this.sum[k]! / this.states;
  }
}

function normaliseInPlace(v: Float32Array, offset: number, d: number, norm: number): number {
  if (norm > 0) for (let k = 0; k < d; k++) v[offset + k] = v[offset + k]! / norm;
  return norm;
}

/**
 * Softmax cross-entropy over one row or column of the logits (elements start + n·stride), the positive
 * at index `positive`; writes scale·(p − onehot) into `grad` and returns the loss.
 */
function softmaxGradient(logits: Float64Array, masked: Uint8Array, grad: Float64Array, start: number, stride: number, n: number, positive: number, scale: number): number {
  let max = -Infinity;
  for (let m = 0; m < n; m++) {
    const at = start + m * stride;
    if (!masked[at] && logits[at]! > max) max = logits[at]!;
  }
  let sum = 0;
  for (let m = 0; m < n; m++) {
    const at = start + m * stride;
    if (!masked[at]) sum += Math.exp(logits[at]! - max);
  }
  for (let m = 0; m < n; m++) {
    const at = start + m * stride;
    if (masked[at]) continue;
    const p = Math.exp(logits[at]! - max) / sum;
    grad[at] += scale * (p - (m === positive ? 1 : 0));
  }
  return -(logits[start + positive * stride]! - max - Math.log(sum));
}
