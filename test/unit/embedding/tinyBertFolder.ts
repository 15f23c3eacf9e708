/**
 * A tiny BERT-shaped sentence-embedding folder that the tests build themselves: a real ONNX graph (made with
 * onnx-proto, run by the real onnxruntime-node) and a real WordPiece tokenizer.json (read by the real
 * @huggingface/tokenizers). Its hidden state is a sum of embedding-table rows, so every expected vector
 * can be computed by hand from the same tables.
 *
 * last_hidden_state[b, s] = word[input_ids[b, s]] + type[token_type_ids[b, s]] + position[s]
 *                           + attention_mask[b, s] * maskBias
 *
 * [PAD]'s word row is far from zero and padded positions still get their word and position rows, as in a
 * real BERT: a pooling that forgets the attention mask gives visibly different vectors.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { onnx } from 'onnx-proto';
import { SeededRandom } from '../../../scripts/model/staticEmbeddingModel';

export const TINY_DIMENSION = 8;
/** Positions the graph has rows for, as many as a BERT: texts at the default limit (256) fit. */
export const TINY_MAX_POSITIONS = 512;

/** Ids are the indices. [PAD] is 0 as in BERT's vocabulary. */
export const TINY_VOCAB: readonly string[] = [
  '[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]',
  'read', 'write', 'file', 'list', 'get', 'user', 'by', 'id', 'the', 'a', 'search', 'web', 'send', 'mail',
  'text', 'delete', 'directory', 'weather', 'for', 'city', 'create', 'issue', 'open',
  '##s', '##ing', '##er', '##ed', '##y', '.', ',', '?', 'un',
];

export function tokenId(token: string): number {
  const id = TINY_VOCAB.indexOf(token);
  if (id < 0) throw new Error(`"${token}" is not in the tiny vocabulary`);
  return id;
}

export interface TinyTables {
  readonly word: Float32Array[];
  readonly type: Float32Array[];
  readonly position: Float32Array[];
  readonly maskBias: Float32Array;
}

/** Deterministic pseudo-random tables (mulberry32), values in [-1, 1), stored as float32 like the graph. */
export function tinyTables(seed = 7): TinyTables {
  const random = new SeededRandom(seed);
  const next = (): number => random.next();
  const row = (): Float32Array => Float32Array.from({ length: TINY_DIMENSION }, () => next() * 2 - 1);
  const word = TINY_VOCAB.map(() => row());
  word[0] = new Float32Array(TINY_DIMENSION).fill(5); // [PAD]: loud, so leaking padding into a mean shows
  return {
    word,
    type: [row(), row()],
    position: Array.from({ length: TINY_MAX_POSITIONS }, () => row()),
    maskBias: row(),
  };
}

/** Hidden states of one unpadded sequence, computed by hand from the tables (token type 0 throughout). */
export function handHiddenStates(ids: readonly number[], tables: TinyTables, withTokenTypes = true): Float64Array[] {
  return ids.map((id, s) => {
    const h = new Float64Array(TINY_DIMENSION);
    for (let d = 0; d < TINY_DIMENSION; d++) {
      h[d] = tables.word[id]![d]! + tables.position[s]![d]! + tables.maskBias[d]! + (withTokenTypes ? tables.type[0]![d]! : 0);
    }
    return h;
  });
}

export function unit(v: ArrayLike<number>): number[] {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  const n = Math.sqrt(s);
  return Array.from(v, (x) => x / n);
}

export function handMean(ids: readonly number[], tables: TinyTables, withTokenTypes = true): number[] {
  const hidden = handHiddenStates(ids, tables, withTokenTypes);
  const mean = new Float64Array(TINY_DIMENSION);
  for (const h of hidden) for (let d = 0; d < TINY_DIMENSION; d++) mean[d]! += h[d]! / hidden.length;
  return unit(mean);
}

export function handCls(ids: readonly number[], tables: TinyTables, withTokenTypes = true): number[] {
  return unit(handHiddenStates(ids, tables, withTokenTypes)[0]!);
}

export interface TinyModelOptions {
  readonly tables?: TinyTables;
  /** false builds a model that declares only input_ids and attention_mask (like DistilBERT exports). */
  readonly withTokenTypeIds?: boolean;
  /** Name of the [batch, sequence, dim] output; default last_hidden_state. */
  readonly hiddenOutputName?: string;
  /** Adds a 2-D [batch, dim] output, the unmasked mean over positions, as the first and only output. */
  readonly sentenceEmbeddingOnly?: boolean;
}

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

function floatInitializer(name: string, rows: readonly Float32Array[] | Float32Array): onnx.ITensorProto {
  const list = rows instanceof Float32Array ? [rows] : rows;
  const data = list.flatMap((r) => Array.from(r));
  return { name, dataType: FLOAT, dims: rows instanceof Float32Array ? [rows.length] : [list.length, TINY_DIMENSION], floatData: data };
}

function int64Initializer(name: string, values: number[], scalar: boolean): onnx.ITensorProto {
  return { name, dataType: INT64, dims: scalar ? [] : [values.length], int64Data: values };
}

function tensorValue(name: string, elemType: number, dims: Array<string | number>): onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) },
      },
    },
  };
}

function node(opType: string, input: string[], output: string[], attribute: onnx.IAttributeProto[] = []): onnx.INodeProto {
  return { opType, input, output, attribute, name: `${opType}_${output[0]}` };
}

/** Encodes the tiny graph as an ONNX model (IR 8, opset 13). */
export function buildTinyBertOnnx(options: TinyModelOptions = {}): Uint8Array {
  const tables = options.tables ?? tinyTables();
  const withTypes = options.withTokenTypeIds ?? true;
  const hiddenName = options.hiddenOutputName ?? 'last_hidden_state';
  const nodes: onnx.INodeProto[] = [
    node('Gather', ['word_embeddings', 'input_ids'], ['words']),
    node('Shape', ['input_ids'], ['ids_shape']),
    node('Gather', ['ids_shape', 'one'], ['seq_len'], [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }]),
    node('Range', ['zero', 'seq_len', 'one'], ['positions']),
    node('Gather', ['position_embeddings', 'positions'], ['position_rows']),
    node('Cast', ['attention_mask'], ['mask_float'], [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }]),
    node('Unsqueeze', ['mask_float', 'last_axis'], ['mask_3d']),
    node('Mul', ['mask_3d', 'mask_bias'], ['mask_rows']),
  ];
  let sum = 'words';
  if (withTypes) {
    nodes.push(node('Gather', ['token_type_embeddings', 'token_type_ids'], ['type_rows']));
    nodes.push(node('Add', ['words', 'type_rows'], ['with_types']));
    sum = 'with_types';
  }
  nodes.push(node('Add', [sum, 'position_rows'], ['with_positions']));
  nodes.push(node('Add', ['with_positions', 'mask_rows'], [hiddenName]));
  const outputs = [tensorValue(hiddenName, FLOAT, ['batch', 'sequence', TINY_DIMENSION])];
  if (options.sentenceEmbeddingOnly) {
    nodes.push(node('ReduceMean', [hiddenName], ['sentence_embedding'], [
      { name: 'axes', type: onnx.AttributeProto.AttributeType.INTS, ints: [1] },
      { name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 0 },
    ]));
    outputs.splice(0, 1, tensorValue('sentence_embedding', FLOAT, ['batch', TINY_DIMENSION]));
  }
  const inputs = [tensorValue('input_ids', INT64, ['batch', 'sequence']), tensorValue('attention_mask', INT64, ['batch', 'sequence'])];
  if (withTypes) inputs.push(tensorValue('token_type_ids', INT64, ['batch', 'sequence']));
  const initializer = [
    floatInitializer('word_embeddings', tables.word),
    floatInitializer('position_embeddings', tables.position),
    floatInitializer('mask_bias', tables.maskBias),
    int64Initializer('zero', [0], true),
    int64Initializer('one', [1], true),
    int64Initializer('last_axis', [-1], false),
  ];
  if (withTypes) initializer.push(floatInitializer('token_type_embeddings', tables.type));
  const model: onnx.IModelProto = {
    irVersion: 8,
    producerName: 'mcp-tool-router tests',
    opsetImport: [{ domain: '', version: 13 }],
    graph: { name: 'tiny_bert', node: nodes, input: inputs, output: outputs, initializer },
  };
  return onnx.ModelProto.encode(model).finish();
}

/** A WordPiece tokenizer.json in the shape `tokenizers` saves for bert-base-uncased. */
export function tinyTokenizerJson(): Record<string, unknown> {
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  const vocab = Object.fromEntries(TINY_VOCAB.map((t, i) => [t, i]));
  const specialToken = (t: string): Record<string, unknown> => ({ id: t, ids: [tokenId(t)], tokens: [t] });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: special.map((content) => ({
      id: tokenId(content), content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
    })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: { '[CLS]': specialToken('[CLS]'), '[SEP]': specialToken('[SEP]') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

export function tinyTokenizerConfig(modelMaxLength = 512): Record<string, unknown> {
  return {
    do_lower_case: true,
    model_max_length: modelMaxLength,
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    mask_token: '[MASK]',
    tokenizer_class: 'BertTokenizer',
  };
}

export interface TinyFolderOptions extends TinyModelOptions {
  /** Written as tokenizer_config.json; null leaves the file out. */
  readonly tokenizerConfig?: Record<string, unknown> | null;
  /** Written as 1_Pooling/config.json when given. */
  readonly poolingConfig?: Record<string, unknown>;
  /** Written as tool_router_model.json when given. */
  readonly routerConfig?: Record<string, unknown>;
}

/** Writes model.onnx, tokenizer.json and the optional config files into `dir` (created if needed). */
export async function writeTinyBertFolder(dir: string, options: TinyFolderOptions = {}): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'model.onnx'), buildTinyBertOnnx(options));
  await writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  const tokenizerConfig = options.tokenizerConfig === undefined ? tinyTokenizerConfig() : options.tokenizerConfig;
  if (tokenizerConfig) await writeFile(path.join(dir, 'tokenizer_config.json'), JSON.stringify(tokenizerConfig));
  if (options.poolingConfig) {
    await mkdir(path.join(dir, '1_Pooling'), { recursive: true });
    await writeFile(path.join(dir, '1_Pooling', 'config.json'), JSON.stringify(options.poolingConfig));
  }
  if (options.routerConfig) await writeFile(path.join(dir, 'tool_router_model.json'), JSON.stringify(options.routerConfig));
  return dir;
}
