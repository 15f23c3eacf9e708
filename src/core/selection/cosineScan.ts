import { dot } from './rankMath';

/**
 * The cosine of a prompt with every tool: one dot product per row of the catalogue's packed vectors, the
 * hottest loop of selection. Where WebAssembly SIMD runs (Node 16.4 and later), a small kernel does it two
 * lanes at a time with the very arithmetic of the plain loop (`dot`): four running sums of double
 * products, each added in order, then summed in order. Its results are the same to the last bit, and it
 * runs several times faster. Elsewhere, or for a dimension that is not a multiple of four, `dot` runs.
 */

/** Vectors of unit length, one row per tool, packed for scanning. */
export class PackedVectors {
  /** The rows, `dimension` floats each (inside the kernel's memory when it runs). */
  readonly matrix: Float32Array;
  private readonly kernel: { scan: Scan; query: Float64Array; out: Float64Array; queryAt: number; outAt: number } | undefined;

  constructor(readonly rows: number, readonly dimension: number) {
    const kernel = dimension > 0 && dimension % 4 === 0 ? kernelScan() : undefined;
    if (!kernel) {
      this.matrix = new Float32Array(rows * dimension);
      return;
    }
    // Memory: the rows (a multiple of 16 bytes, so what follows is aligned), the query as doubles, the results.
    const queryAt = rows * dimension * 4;
    const outAt = queryAt + dimension * 8;
    const memory = kernel.memory(outAt + rows * 8);
    this.matrix = new Float32Array(memory.buffer, 0, rows * dimension);
    this.kernel = { scan: kernel.bind(memory), query: new Float64Array(memory.buffer, queryAt, dimension), out: new Float64Array(memory.buffer, outAt, rows), queryAt, outAt };
  }

  /** Whether the SIMD kernel scans these vectors (else the plain loop does). */
  get simd(): boolean {
    return this.kernel !== undefined;
  }

  /** Each row's dot product with `query` where `present`, else 0. */
  scan(query: Float32Array, present: Uint8Array): Float64Array {
    const out = new Float64Array(this.rows);
    const k = this.kernel;
    if (k) {
      k.query.set(query);
      k.scan(0, k.queryAt, k.outAt, this.rows, this.dimension);
      for (let i = 0; i < this.rows; i++) if (present[i]) out[i] = k.out[i]!;
      return out;
    }
    // Widened once: each product is the same double either way, and the loop reads one array of floats fewer.
    const q = Float64Array.from(query);
    for (let i = 0; i < this.rows; i++) if (present[i]) out[i] = dot(this.matrix, i * this.dimension, q, this.dimension);
    return out;
  }
}

type Scan = (matrixAt: number, queryAt: number, outAt: number, rows: number, dimension: number) => void;

const WASM_PAGE_BYTES = 65536;

/** The part of the WebAssembly API used here; the Node typings this project builds with leave it out. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}
const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: object | null | undefined;

/** The kernel bound to a memory, or undefined where WebAssembly SIMD cannot run. */
function kernelScan(): { memory: (bytes: number) => WasmMemory; bind: (memory: WasmMemory) => Scan } | undefined {
  if (!wasm) return undefined;
  if (compiled === undefined) {
    try {
      compiled = new wasm.Module(kernelModule());
    } catch {
      compiled = null;
    }
  }
  const module = compiled;
  if (!module) return undefined;
  return {
    memory: (bytes) => new wasm.Memory({ initial: Math.max(1, Math.ceil(bytes / WASM_PAGE_BYTES)) }),
    bind: (memory) => new wasm.Instance(module, { env: { memory } }).exports['scan'] as Scan,
  };
}

// The module's bytes, written out from the WebAssembly binary format. Locals: 0 matrix pointer (moves
// along the rows), 1 query, 2 out pointer (moves), 3 rows, 4 dimension; 5 row, 6 d, 7 query pointer;
// 8 lanes (s0, s1), 9 lanes (s2, s3).
const I32 = 0x7f;
const V128 = 0x7b;
const [BLOCK, LOOP, END, BR, BR_IF, VOID] = [0x02, 0x03, 0x0b, 0x0c, 0x0d, 0x40];
const [GET, SET, I32_CONST, I32_GE_U, I32_ADD, F64_ADD, F64_STORE] = [0x20, 0x21, 0x41, 0x4f, 0x6a, 0xa0, 0x39];
const simd = (op: number): number[] => [0xfd, ...leb(op)];
const V128_LOAD = simd(0x00);
const V128_LOAD64_ZERO = simd(0x5d);
const V128_CONST_ZERO = [...simd(0x0c), ...new Array<number>(16).fill(0)];
const F64X2_PROMOTE_LOW = simd(0x5f);
const F64X2_EXTRACT = simd(0x21);
const F64X2_ADD = simd(0xf0);
const F64X2_MUL = simd(0xf2);
/** Memory access immediates: alignment (log2 of 8 bytes) and offset. Constants stay below 64, where signed and unsigned LEB128 agree. */
const at = (offset: number): number[] => [3, ...leb(offset)];
const add = (local: number, n: number): number[] => [GET, local, I32_CONST, ...leb(n), I32_ADD, SET, local];

function kernelModule(): Uint8Array {
  /** lanes += promote(two floats of the row at +rowOffset) × (two doubles of the query at +queryOffset) */
  const step = (lanes: number, rowOffset: number, queryOffset: number): number[] => [GET, lanes, GET, 0, ...V128_LOAD64_ZERO, ...at(rowOffset), ...F64X2_PROMOTE_LOW, GET, 7, ...V128_LOAD, ...at(queryOffset), ...F64X2_MUL, ...F64X2_ADD, SET, lanes];
  const lane = (lanes: number, k: number): number[] => [GET, lanes, ...F64X2_EXTRACT, k];
  const body = [
    ...vector([[...leb(3), I32], [...leb(2), V128]]),
    ...[BLOCK, VOID, LOOP, VOID, GET, 5, GET, 3, I32_GE_U, BR_IF, 1],
    ...[...V128_CONST_ZERO, SET, 8, ...V128_CONST_ZERO, SET, 9, GET, 1, SET, 7, I32_CONST, 0, SET, 6],
    ...[BLOCK, VOID, LOOP, VOID, GET, 6, GET, 4, I32_GE_U, BR_IF, 1],
    ...step(8, 0, 0),
    ...step(9, 8, 16),
    ...add(0, 16),
    ...add(7, 32),
    ...add(6, 4),
    ...[BR, 0, END, END],
    // out[row] = ((s0 + s1) + s2) + s3
    ...[GET, 2, ...lane(8, 0), ...lane(8, 1), F64_ADD, ...lane(9, 0), F64_ADD, ...lane(9, 1), F64_ADD, F64_STORE, ...at(0)],
    ...add(2, 8),
    ...add(5, 1),
    ...[BR, 0, END, END, END],
  ];
  const name = (s: string): number[] => [...leb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector([[0x60, ...vector([[I32], [I32], [I32], [I32], [I32]]), 0]])),
    ...section(2, vector([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])),
    ...section(3, vector([[0]])),
    ...section(7, vector([[...name('scan'), 0x00, 0]])),
    ...section(10, vector([[...leb(body.length), ...body]])),
  ]);
}

function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

function section(id: number, bytes: number[]): number[] {
  return [id, ...leb(bytes.length), ...bytes];
}

function vector(items: number[][]): number[] {
  return [...leb(items.length), ...items.flat()];
}
