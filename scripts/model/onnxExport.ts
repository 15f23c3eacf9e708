/**
 * Writes the trained table as a standard sentence-embedding ONNX graph: inputs `input_ids` and
 * `attention_mask` (int64 [batch, seq]), output `last_hidden_state` (float [batch, seq, dim]). The table
 * is int8 with one float scale per row (IDF already folded in), so the graph is
 *   Gather(int8 table) → Cast → × (Gather(row scales) · attention_mask)[..., None]
 * and the engine's masked mean pooling plus L2 normalisation give the model's vectors.
 */
import fs from 'node:fs';
import { onnx } from 'onnx-proto';
import * as ort from 'onnxruntime-node';

/** Opset 13: Unsqueeze takes its axes as an input; supported by every onnxruntime of the last years. */
const OPSET = 13;
const IR_VERSION = 7;
const INT8_MAX = 127;

export interface QuantisedTable {
  readonly values: Int8Array;
  readonly scales: Float32Array;
  dequantise(): Float32Array;
}

/** Symmetric per-row int8: each row keeps its own scale, so rare and frequent tokens lose alike. */
export function quantiseRows(table: Float32Array, rows: number, dimension: number): QuantisedTable {
  const values = new Int8Array(rows * dimension);
  const scales = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let max = 0;
    for (let k = 0; k < dimension; k++) max = Math.max(max, Math.abs(table[r * dimension + k]!));
    const scale = max / INT8_MAX;
    scales[r] = scale;
    if (scale === 0) continue;
    for (let k = 0; k < dimension; k++) values[r * dimension + k] = Math.round(table[r * dimension + k]! / scale);
  }
  return {
    values,
    scales,
    dequantise(): Float32Array {
      const out = new Float32Array(rows * dimension);
      for (let r = 0; r < rows; r++) for (let k = 0; k < dimension; k++) out[r * dimension + k] = values[r * dimension + k]! * scales[r]!;
      return out;
    },
  };
}

function tensor(name: string, dataType: onnx.TensorProto.DataType, dims: number[], bytes: Uint8Array): onnx.ITensorProto {
  return { name, dataType, dims, rawData: bytes };
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function valueInfo(name: string, elemType: onnx.TensorProto.DataType, dims: Array<string | number>): onnx.IValueInfoProto {
  return {
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
  };
}

export function exportOnnxModel(file: string, table: QuantisedTable, dimension: number): void {
  const rows = table.scales.length;
  const T = onnx.TensorProto.DataType;
  const graph: onnx.IGraphProto = {
    name: 'tool_router_static_embedding',
    docString: 'Static token embeddings (int8 rows with per-row scales, IDF folded in). Mean-pool last_hidden_state over attention_mask and L2-normalise.',
    initializer: [
      tensor('embedding_int8', T.INT8, [rows, dimension], bytesOf(table.values)),
      tensor('embedding_row_scale', T.FLOAT, [rows], bytesOf(table.scales)),
      tensor('last_axis', T.INT64, [1], bytesOf(BigInt64Array.from([-1n]))),
    ],
    input: [valueInfo('input_ids', T.INT64, ['batch', 'sequence']), valueInfo('attention_mask', T.INT64, ['batch', 'sequence'])],
    output: [valueInfo('last_hidden_state', T.FLOAT, ['batch', 'sequence', dimension])],
    node: [
      { opType: 'Gather', input: ['embedding_int8', 'input_ids'], output: ['rows_int8'], name: 'gather_rows', attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] },
      { opType: 'Cast', input: ['rows_int8'], output: ['rows_float'], name: 'cast_rows', attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: T.FLOAT }] },
      { opType: 'Gather', input: ['embedding_row_scale', 'input_ids'], output: ['row_scale'], name: 'gather_scales', attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] },
      { opType: 'Cast', input: ['attention_mask'], output: ['mask_float'], name: 'cast_mask', attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: T.FLOAT }] },
      { opType: 'Mul', input: ['row_scale', 'mask_float'], output: ['masked_scale'], name: 'mask_scales' },
      { opType: 'Unsqueeze', input: ['masked_scale', 'last_axis'], output: ['masked_scale_3d'], name: 'scale_per_row' },
      { opType: 'Mul', input: ['rows_float', 'masked_scale_3d'], output: ['last_hidden_state'], name: 'scale_rows' },
    ],
  };
  const model: onnx.IModelProto = {
    irVersion: IR_VERSION,
    opsetImport: [{ domain: '', version: OPSET }],
    producerName: 'mcp-tool-router scripts/model/trainModel.ts',
    producerVersion: '1',
    docString: 'MCP Tool Router default embedding model; see README.md in this folder.',
    graph,
  };
  fs.writeFileSync(file, onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish());
}

/**
 * Runs the exported graph in onnxruntime-node on already tokenised texts, pools as the engine does
 * (masked mean, L2 norm), and returns the lowest cosine to the expected vectors.
 */
export async function verifyOnnxModel(file: string, tokenised: readonly Int32Array[], expected: readonly Float32Array[]): Promise<number> {
  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  try {
    const batch = tokenised.length;
    const seq = Math.max(1, ...tokenised.map((t) => t.length));
    const ids = new BigInt64Array(batch * seq);
    const mask = new BigInt64Array(batch * seq);
    tokenised.forEach((t, b) => t.forEach((id, s) => ((ids[b * seq + s] = BigInt(id)), (mask[b * seq + s] = 1n))));
    const out = await session.run({ input_ids: new ort.Tensor('int64', ids, [batch, seq]), attention_mask: new ort.Tensor('int64', mask, [batch, seq]) });
    const hidden = out['last_hidden_state']!;
    const dim = hidden.dims[2]!;
    const data = hidden.data as Float32Array;
    let worst = 1;
    for (let b = 0; b < batch; b++) {
      const v = new Float32Array(dim);
      const n = tokenised[b]!.length;
      for (let s = 0; s < n; s++) for (let k = 0; k < dim; k++) v[k] += data[(b * seq + s) * dim + k]! / n;
      let norm = 0;
      for (let k = 0; k < dim; k++) norm += v[k]! * v[k]!;
      norm = Math.sqrt(norm);
      let cos = 0;
      for (let k = 0; k < dim; k++) cos += (norm > 0 ? v[k]! / norm : 0) * expected[b]![k]!;
      const expectedZero = expected[b]!.every((x) => x === 0);
      worst = Math.min(worst, expectedZero && norm === 0 ? 1 : cos);
    }
    return worst;
  } finally {
    await session.release();
  }
}
