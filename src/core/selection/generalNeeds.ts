/**
 * Unnamed needs: the general-purpose tools a task needs without naming them. "…and put the summary in
 * ~/notes/week.md" needs a file-writing tool, "anything due this friday?" needs today's date, "compare
 * prices on a shopping site" needs a web page. Ranking by similarity misses these, because the prompt's
 * words are about the task, not the tool.
 *
 * Two small linear models, both trained from labelled data by scripts/model/trainNeeds.ts (no list of
 * known tool names anywhere):
 * - the tool model reads a tool's name, description and input schema and says how likely it is to be a
 *   general-purpose tool of each kind, so a new server's write tool is recognised too;
 * - the prompt model reads a prompt's words and its shapes (a path, a file name, a URL, a site, a
 *   percentage, an amount with a unit, a time of day, a date counted from today…) and says how likely
 *   the task needs each kind.
 * The selector raises the tools of the kinds a prompt calls for, and says which cue called for them.
 */
import { lexicalTerms } from './lexicalTerms';
import type { SelectableTool } from './selectionTypes';
import { splitIdentifiers } from '../embedding/textPreprocess';

/** The kinds of general-purpose need, as the training data labels them. */
export const GENERAL_KINDS = ['file_write', 'file_read', 'file_list', 'time_now', 'web_fetch', 'web_search', 'calculate', 'convert_document', 'browser', 'memory', 'run_command'] as const;
export type GeneralKind = (typeof GENERAL_KINDS)[number];

/** How each kind reads in a reason: "the prompt names a file path → files_write_file (writes files)". */
export const KIND_LABELS: Readonly<Record<GeneralKind, string>> = {
  file_write: 'writes files',
  file_read: 'reads files',
  file_list: 'lists files',
  time_now: 'tells the date and time',
  web_fetch: 'opens web pages',
  web_search: 'searches the web',
  calculate: 'calculates',
  convert_document: 'converts documents',
  browser: 'browses web pages',
  memory: 'remembers things between chats',
  run_command: 'runs commands on this machine',
};

/** A feature of a prompt, with the words it came from (for the reason). */
export interface PromptFeature {
  readonly name: string;
  readonly surface: string;
}

const WEEKDAY = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday';
const UNIT = 'minutes?|hours?|days?|nights?|weeks?|weekends?|months?|years?|quarters?';
/** Relative dates written in letters, matched as whole words. */
const SPELLED_DATES = [
  `today(?:'?s)?|tonight|tomorrow|yesterday|overdue|this (?:morning|afternoon|evening|week|weekend|month|quarter|year|${WEEKDAY})`,
  `(?:last|next|coming|past|previous) (?:\\d+ |few |couple of )?(?:${UNIT}|${WEEKDAY})`,
  `(?:\\d+|a|an|one|two|three|few|couple of) (?:${UNIT}) (?:ago|from now)|in (?:\\d+|a|an|one|two|three) (?:${UNIT})`,
  `since (?:${WEEKDAY}|yesterday|last)`,
  "hoy|mañana|ayer|heute|morgen|gestern|übermorgen|aujourd'hui|demain|hier|oggi|domani|ieri|hoje|amanhã|ontem",
].join('|');
/** Relative dates in Chinese, Japanese and Korean, which have no spaces to bound a word. */
const CJK_DATES = '今日|明日|昨日|明後日|今週|来週|先週|今月|来月|先月|今朝|今夜|今晚|今天|明天|昨天|后天|本周|下周|上周|这周|本月|下个月|上个月|오늘|내일|어제|모레|이번 ?주|다음 ?주|지난 ?주|이번 ?달';
/** "today", "last week", "3 days ago", "since monday", 明日, 내일, mañana…: a date that means nothing without today's. */
const RELATIVE_DATE = new RegExp(`(?<![\\p{L}\\p{N}])(?:${SPELLED_DATES})(?![\\p{L}\\p{N}])|${CJK_DATES}`, 'iu');

/**
 * Shapes in a prompt that a word list cannot see. Each is a pattern over the text, not over tool names;
 * which kinds they call for, and how strongly, is learned.
 */
const SHAPES: ReadonlyArray<{ readonly name: string; readonly pattern: RegExp; readonly says: string }> = [
  { name: '#path', pattern: /(?:^|[\s"'(])(?:~|\.{1,2}|[a-z]:)?[\\/][\w. -]*[\\/]?[\w.-]*/i, says: 'names a file path' },
  { name: '#filename', pattern: /\b[\w-]+\.(?:md|txt|csv|tsv|json|jsonl|ya?ml|xml|log|ini|toml|html?|rtf|tex|py|ts|js|sh|sql)\b/i, says: 'names a file' },
  { name: '#document', pattern: /\b[\w-]+\.(?:pdf|docx?|pptx?|xlsx?|odt|epub)\b|\b(?:pdf|docx|word doc|powerpoint|slides?|spreadsheet)\b/i, says: 'names a document' },
  { name: '#url', pattern: /\bhttps?:\/\/\S+|\bwww\.\S+/i, says: 'has a URL' },
  { name: '#site', pattern: /\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|ai|app|gov|edu|co|uk|de|fr|jp|cn|info|news|tv)\b/i, says: 'names a site' },
  { name: '#percent', pattern: /\d\s?%|\bper ?cent\b/i, says: 'has a percentage' },
  { name: '#money', pattern: /[$€£¥₹]\s?\d|\d\s?(?:usd|eur|gbp|jpy|dollars?|euros?|pounds?|bucks)\b/i, says: 'has an amount of money' },
  { name: '#quantity', pattern: /\d(?:[\d,.]*)\s?(?:[a-z]{1,12}\b|°)/i, says: 'has a quantity' },
  { name: '#arithmetic', pattern: /\d\s*[+\-*/×÷^]\s*\d/, says: 'has arithmetic' },
  { name: '#clock', pattern: /\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b/i, says: 'has a time of day' },
  { name: '#date', pattern: /\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\/\d{1,2}(?:\/\d{2,4})?\b/, says: 'has a date' },
  // A year makes a date absolute ("friday 13 march 2026"), which needs no clock; a relative one does.
  { name: '#year', pattern: /\b(?:19|20)\d{2}\b/, says: 'has a year' },
  // A date counted from today, in any language of the data: one feature, so a rare phrasing shares
  // what the common ones teach.
  { name: '#relative_date', pattern: RELATIVE_DATE, says: 'has a date counted from today' },
  { name: '#number', pattern: /\d/, says: 'has numbers' },
];

const SHAPE_SAYS: ReadonlyMap<string, string> = new Map(SHAPES.map((s) => [s.name, s.says]));

/** Words of a prompt as features (`w:` + the lexical ranker's term), plus its shapes (`#…`). */
export function promptFeatures(prompt: string): PromptFeature[] {
  const out = new Map<string, PromptFeature>();
  for (const shape of SHAPES) {
    const m = shape.pattern.exec(prompt);
    if (m) out.set(shape.name, { name: shape.name, surface: wholeNumbers(prompt, m.index, m.index + m[0].length).trim() });
  }
  const words = splitIdentifiers(prompt).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    for (const term of lexicalTerms(word)) {
      if (/^\d+$/.test(term)) continue;
      const name = `w:${term}`;
      if (!out.has(name)) out.set(name, { name, surface: word });
    }
  }
  return [...out.values()];
}

/**
 * The text from `start` to `end`, widened over the digits of a number it cuts: the shapes match a digit or
 * two ("3 * 3" of "443 * 349", "8%" of "18%"), and a reason should quote the number the user wrote.
 */
function wholeNumbers(text: string, start: number, end: number): string {
  const partOfNumber = (at: number): boolean => /\d/.test(text[at] ?? '') || (/[.,]/.test(text[at] ?? '') && /\d/.test(text[at - 1] ?? '') && /\d/.test(text[at + 1] ?? ''));
  if (/\d/.test(text[start] ?? '')) while (start > 0 && partOfNumber(start - 1)) start--;
  if (/\d/.test(text[end - 1] ?? '')) while (end < text.length && partOfNumber(end)) end++;
  return text.slice(start, end);
}

/**
 * What the tool model reads of a tool, each feature with its value: name words (`n:`), the description's
 * first words (`d:`), parameter names (`p:`) and schema types and formats (`t:`, `f:`). Each group is
 * scaled by 1/√(its size), so a long description or a large schema does not drown the name.
 */
export function toolFeatures(tool: Pick<SelectableTool, 'name' | 'description' | 'inputSchema' | 'originalName' | 'originalDescription'>, read?: ReadTerms): Map<string, number> {
  const groups: Array<Set<string>> = [new Set(), new Set(), new Set()];
  const [names, words, schema] = groups as [Set<string>, Set<string>, Set<string>];
  for (const t of read?.name ?? lexicalTerms(tool.originalName ?? tool.name)) names.add(`n:${t}`);
  for (const t of (read?.description ?? lexicalTerms(tool.originalDescription ?? tool.description)).slice(0, MAX_DESCRIPTION_TERMS)) words.add(`d:${t}`);
  const input = tool.inputSchema as { properties?: Record<string, unknown> } | undefined;
  const props = input && typeof input === 'object' && input.properties && typeof input.properties === 'object' ? input.properties : {};
  const keys = Object.keys(props);
  if (keys.length === 0) schema.add('s:no-parameters');
  for (const key of keys.slice(0, MAX_SCHEMA_PROPERTIES)) {
    for (const t of lexicalTerms(key)) schema.add(`p:${t}`);
    const prop = props[key] as { type?: unknown; format?: unknown } | undefined;
    if (prop && typeof prop === 'object') {
      if (typeof prop.type === 'string') schema.add(`t:${prop.type}`);
      if (typeof prop.format === 'string') schema.add(`f:${prop.format}`);
    }
  }
  const out = new Map<string, number>();
  for (const group of groups) for (const f of group) out.set(f, (out.get(f) ?? 0) + 1 / Math.sqrt(group.size));
  return out;
}

/** A tool's name and description terms (lexicalTerms of its own name and description), when already read. */
export interface ReadTerms {
  readonly name: readonly string[];
  readonly description: readonly string[];
}

/**
 * A description's opening says what the tool does; long ones go on about usage and edge cases ("do not use
 * this to read…"), whose words would make a write tool look like a read tool.
 */
const MAX_DESCRIPTION_TERMS = 40;

/** Schemas with hundreds of properties are data models, not arguments; the first ones say enough. */
const MAX_SCHEMA_PROPERTIES = 40;

/** One linear model per kind over named sparse features: score = bias + Σ weight × value. */
export interface LinearKindModel {
  readonly bias: readonly number[];
  /** Feature → one weight per kind (aligned with `kinds`). */
  readonly weights: Readonly<Record<string, readonly number[]>>;
}

/** The file scripts/model/trainNeeds.ts writes. */
export interface GeneralNeedsFile {
  readonly format: 'tool-router-general-needs';
  readonly version: 1;
  readonly kinds: readonly GeneralKind[];
  /** The prompt model over words and shapes alone: used with any embedder, or none. */
  readonly prompt: LinearKindModel;
  /**
   * The prompt model that also reads the prompt's vector from one embedding model (features `v:0`…): a
   * linear probe on the vector carries cues to words the sparse model never saw ("since monday" → the date).
   * Used only when the selector's embedder is that model.
   */
  readonly promptWithVector?: LinearKindModel & { readonly modelId: string };
  readonly tool: LinearKindModel;
  /** What it was trained on, for the model card and `--version`. */
  readonly trainedOn?: Readonly<Record<string, number>>;
}

/**
 * A model as stored (version 2): its feature names once, and every weight in hundredths, feature-major
 * (feature f's weight for kind k at f × kinds + k). The weights are trained to two decimals, so this is
 * exact; brotli packs it a sixth smaller than version 1's one array per feature, room the VSIX needs.
 */
export interface StoredKindModel {
  readonly bias: readonly number[];
  readonly features: readonly string[];
  readonly weights: readonly number[];
}

/** The needs file as written to disk: version 2 of GeneralNeedsFile, each model stored compactly. */
export interface StoredNeedsFile extends Omit<GeneralNeedsFile, 'version' | 'prompt' | 'promptWithVector' | 'tool'> {
  readonly version: 2;
  readonly prompt: StoredKindModel;
  readonly promptWithVector?: StoredKindModel & { readonly modelId: string };
  readonly tool: StoredKindModel;
}

/** The stored form of a needs file (what train:needs writes). */
export function storeNeedsFile(file: GeneralNeedsFile): StoredNeedsFile {
  const store = (model: LinearKindModel): StoredKindModel => {
    const features = Object.keys(model.weights).sort();
    return { bias: model.bias.map(hundredths), features, weights: features.flatMap((f) => model.weights[f]!.map(hundredths)) };
  };
  const { promptWithVector, prompt, tool, version: _version, ...rest } = file;
  return { ...rest, version: 2, prompt: store(prompt), ...(promptWithVector ? { promptWithVector: { modelId: promptWithVector.modelId, ...store(promptWithVector) } } : {}), tool: store(tool) };
}

/** A needs file as parsed from disk, version 1 or 2, in the form GeneralNeeds reads; throws on anything else. */
export function readNeedsFile(json: unknown): GeneralNeedsFile {
  const file = json as Partial<StoredNeedsFile> | Partial<GeneralNeedsFile> | undefined;
  if (file?.format !== 'tool-router-general-needs') throw new Error('not a general-needs model (format tool-router-general-needs)');
  if (file.version === 1) return file as GeneralNeedsFile;
  if (file.version !== 2) throw new Error(`general-needs model version ${String(file.version)} is not known here (1 or 2); run npm run train:needs in a clone`);
  const stored = file as StoredNeedsFile;
  const K = stored.kinds.length;
  const expand = (model: StoredKindModel): LinearKindModel => {
    if (model.weights.length !== model.features.length * K) throw new Error(`general-needs model: ${model.weights.length} weights for ${model.features.length} features × ${K} kinds`);
    const weights: Record<string, number[]> = {};
    model.features.forEach((f, i) => (weights[f] = model.weights.slice(i * K, (i + 1) * K).map((w) => w / 100)));
    return { bias: model.bias.map((b) => b / 100), weights };
  };
  const { promptWithVector, prompt, tool, version: _version, ...rest } = stored;
  return { ...rest, version: 1, prompt: expand(prompt), ...(promptWithVector ? { promptWithVector: { modelId: promptWithVector.modelId, ...expand(promptWithVector) } } : {}), tool: expand(tool) };
}

function hundredths(x: number): number {
  return Math.round(x * 100);
}

/** What the prompt model says a prompt needs: the kind, its probability, and the cue that weighed most. */
export interface PromptNeed {
  readonly kind: GeneralKind;
  readonly probability: number;
  /** "the prompt names a file path (~/notes/week.md)" */
  readonly cue: string;
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

export class GeneralNeeds {
  /** promptWithVector's `v:d` weights as one dimension-major matrix (d × kinds), read on every prompt. */
  private readonly vectorWeights: Float64Array | undefined;

  constructor(readonly file: GeneralNeedsFile) {
    if (file.format !== 'tool-router-general-needs' || file.version !== 1) throw new Error('not a general-needs model (format tool-router-general-needs, version 1)');
    const dense = file.promptWithVector;
    if (dense) {
      const K = file.kinds.length;
      let dimension = 0;
      while (dense.weights[`v:${dimension}`] || dense.weights[`v:${dimension + 1}`]) dimension++;
      const matrix = new Float64Array(dimension * K);
      for (let d = 0; d < dimension; d++) dense.weights[`v:${d}`]?.forEach((w, k) => (matrix[d * K + k] = w));
      this.vectorWeights = matrix;
    }
  }

  get kinds(): readonly GeneralKind[] {
    return this.file.kinds;
  }

  /** Each kind's probability that the tool is a general-purpose tool of that kind. */
  toolProbabilities(tool: Parameters<typeof toolFeatures>[0], read?: ReadTerms): Float64Array {
    const scores = Float64Array.from(this.file.tool.bias);
    for (const [f, value] of toolFeatures(tool, read)) {
      const w = this.file.tool.weights[f];
      if (!w) continue;
      for (let k = 0; k < scores.length; k++) scores[k]! += w[k]! * value;
    }
    return scores.map(sigmoid);
  }

  /**
   * Each kind the prompt may need, most likely first, with the cue that weighed most for it. With the
   * prompt's vector from the model `promptWithVector` was trained on, that model is used.
   */
  promptNeeds(prompt: string, vector?: { readonly modelId: string; readonly values: Float32Array }): PromptNeed[] {
    const features = promptFeatures(prompt);
    const dense = this.file.promptWithVector;
    const useVector = dense !== undefined && vector !== undefined && vector.modelId === dense.modelId;
    const model = useVector ? dense : this.file.prompt;
    const scores = Float64Array.from(model.bias);
    if (useVector && this.vectorWeights) {
      const K = scores.length;
      const dimension = Math.min(vector.values.length, this.vectorWeights.length / K);
      for (let d = 0; d < dimension; d++) {
        const x = vector.values[d]!;
        for (let k = 0; k < K; k++) scores[k]! += this.vectorWeights[d * K + k]! * x;
      }
    }
    const best: Array<{ feature: PromptFeature; weight: number } | undefined> = new Array(scores.length);
    for (const f of features) {
      const w = model.weights[f.name];
      if (!w) continue;
      for (let k = 0; k < scores.length; k++) {
        scores[k]! += w[k]!;
        if (w[k]! > 0 && (!best[k] || w[k]! > best[k]!.weight)) best[k] = { feature: f, weight: w[k]! };
      }
    }
    return this.file.kinds
      .map((kind, k) => ({ kind, probability: sigmoid(scores[k]!), cue: cueText(best[k]?.feature) }))
      .sort((a, b) => b.probability - a.probability);
  }
}

/** The cue as a reason's first half: "the prompt names a file path (~/notes/week.md)" or 'the prompt says "save"'. */
export function cueText(feature: PromptFeature | undefined): string {
  if (!feature) return 'the prompt as a whole';
  const says = SHAPE_SAYS.get(feature.name);
  const surface = feature.surface.length > 40 ? `${feature.surface.slice(0, 39)}…` : feature.surface;
  if (says) return `the prompt ${says} (${surface})`;
  return `the prompt says "${surface}"`;
}
