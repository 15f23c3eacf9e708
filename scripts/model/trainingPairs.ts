/**
 * The default model's training pairs (request → tool text), from the permitted splits only:
 * MetaTool `single`, Seal-Tools `dev`, and OpenAPI operations under permissive licenses as weak pairs.
 * MetaTool `multi`, Seal-Tools `test_in_domain`/`test_out_domain` and every BFCL split are kept for
 * measuring, and this module refuses to read them.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { toolEmbeddingText } from '../../src/core/selection/toolDocument';
import { DATA_DIR, REPO_ROOT, loadTools, readJsonl, type DataQuery } from './dataSets';
import { CATALOGUES, NON_ENGLISH_SERVERS } from '../data/catalogueList';
import { readNameLines, type NameLanguage, type NameLine, type NameType } from '../data/buildNameAliases';
import { loadQueriesFile, loadToolsFile } from '../../src/core/evaluation/retrievalData';
import { splitSteps } from '../../src/core/selection/steps';
import { lexicalTerms } from '../../src/core/selection/lexicalTerms';

export type PairSource = 'metatool' | 'seal' | 'openapi' | 'authored' | 'team' | 'bilingual' | 'paraphrase';

export interface TrainingPair {
  readonly source: PairSource;
  /** What a person asks (or, for OpenAPI, what the operation's summary says). */
  readonly query: string;
  /** The tool's embedding text, as built at run time by toolEmbeddingText. */
  readonly tool: string;
}

/** The only splits training may read; anything else in a queries file is a measurement split. */
export const TRAINING_SPLITS: Readonly<Record<'metatool' | 'seal-tools', string>> = { metatool: 'single', 'seal-tools': 'dev' };

/**
 * OpenAPI rows are used only when their spec's own license is one of these (the set data/benchmarks
 * README lists: Apache, MIT, BSD, CC0, CC-BY 3.0, public domain).
 */
export const PERMISSIVE_SPEC_LICENSE = /^(?:apache(?:[ -]?(?:2\.0|v2))?(?: license)?(?: 2\.0)?|mit(?: license| for oas 2\.0)?|bsd(?:3|-3-clause| license 2\.0)|cc0 1\.0|creative commons attribution 3\.0(?: australia)?|(?:u\.s\. )?public domain(?: license)?)$/i;

function queriesOf(folder: 'metatool' | 'seal-tools'): DataQuery[] {
  const split = TRAINING_SPLITS[folder];
  return readJsonl<DataQuery>(path.join(DATA_DIR, folder, 'queries.jsonl.gz')).filter((q) => q.split === split);
}

function toolPairs(folder: 'metatool' | 'seal-tools', source: PairSource, perToolCap = Infinity): TrainingPair[] {
  const textById = new Map(loadTools(folder).map((t) => [t.id, toolEmbeddingText(t)]));
  const pairs: TrainingPair[] = [];
  const perTool = new Map<string, number>();
  for (const q of queriesOf(folder)) {
    for (const id of q.gold) {
      const n = (perTool.get(id) ?? 0) + 1;
      perTool.set(id, n);
      if (n > perToolCap) continue;
      const tool = textById.get(id);
      if (tool === undefined) throw new Error(`${folder}: query ${q.id} needs tool "${id}", which tools.jsonl does not have`);
      pairs.push({ source, query: q.query, tool });
    }
  }
  return pairs;
}

interface OpenApiOperation {
  api: string;
  title: string;
  method: string;
  path: string;
  operationId?: string;
  summary?: string;
  description?: string;
  params?: Array<{ name: string; in?: string; description?: string }>;
  spec_license?: string;
}

/** Description text without markup: HTML tags, markdown links and emphasis, code ticks and bare URLs. */
export function plainText(s: string): string {
  return s
    .replace(/<[^>]{1,200}>/g, ' ')
    .replace(/\[([^\]]{0,200})\]\([^)]{0,500}\)/g, '$1')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/[`*#|>]+/g, ' ')
    .replace(/&[a-z]+;/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Long descriptions are cut at a sentence end near this length: the first sentences say what the tool does. */
const MAX_DESCRIPTION_CHARS = 300;

export function leadSentences(s: string, maxChars = MAX_DESCRIPTION_CHARS): string {
  if (s.length <= maxChars) return s;
  const cut = s.slice(0, maxChars);
  const end = cut.search(/[.!?]\s[^.!?]*$/);
  return end > 40 ? cut.slice(0, end + 1) : cut;
}

/** Headers like `X-Amz-Target` or `Authorization` say nothing about what an operation does. */
function isDescriptiveParameter(p: { name: string; in?: string }): boolean {
  return p.in !== 'header' && p.in !== 'cookie' && !/^x-/i.test(p.name);
}

export interface OpenApiStats {
  readonly rows: number;
  readonly licensed: number;
  readonly pairs: number;
}

/**
 * Weak pairs from REST operations: the summary (or, without one, the description's first sentence)
 * is the request; the tool text is `operationId: description` plus parameter names, or the operationId,
 * path words and parameter names when the description is the request. Duplicates (GitHub Enterprise's
 * many versions of one API) are dropped.
 */
export function openApiPairs(descriptionPairs = false): { pairs: TrainingPair[]; stats: OpenApiStats } {
  const rows = readJsonl<OpenApiOperation>(path.join(DATA_DIR, 'openapi', 'operations.jsonl.gz'));
  const pairs: TrainingPair[] = [];
  const seen = new Set<string>();
  let licensed = 0;
  for (const op of rows) {
    if (!op.spec_license || !PERMISSIVE_SPEC_LICENSE.test(op.spec_license.trim())) continue;
    // APIs whose catalogues are held out of the team set (dev, test) must stay unseen, weak pairs included.
    if (HELD_OUT_APIS.has(op.api)) continue;
    licensed++;
    const name = op.operationId?.trim() || op.method.toLowerCase();
    const parameters = (op.params ?? []).filter(isDescriptiveParameter).map((p) => ({ name: p.name }));
    const schema = { type: 'object', properties: Object.fromEntries(parameters.map((p) => [p.name, {}])) };
    // A summary that is one identifier ("getOrgTicket") only repeats the operationId.
    const rawSummary = plainText(op.summary ?? '');
    const summary = /\s/.test(rawSummary) ? rawSummary : '';
    const description = leadSentences(plainText(op.description ?? ''));
    // Without an operationId the path is the name; path parameters and AWS `#Action=` fragments are noise.
    const pathWords = op.operationId?.trim() ? '' : op.path.replace(/\{[^}]*\}/g, ' ').replace(/#.*$/, ' ');
    let query: string;
    let tool: string;
    if (summary && description && summary !== description) {
      query = summary;
      tool = toolEmbeddingText({ id: '', name, description, inputSchema: schema });
    } else {
      query = summary || leadSentences(description, 160);
      tool = toolEmbeddingText({ id: '', name: `${name} ${pathWords}`.trim(), description: '', inputSchema: schema });
    }
    const add = (q: string, t: string): void => {
      if (q.length < 8) return;
      const key = `${q.toLowerCase()}\u0000${t.toLowerCase()}`;
      if (seen.has(key)) return;
      seen.add(key);
      pairs.push({ source: 'openapi', query: q, tool: t });
    };
    add(query, tool);
    if (descriptionPairs && summary && description && summary !== description) {
      add(leadSentences(description, 160), toolEmbeddingText({ id: '', name, description: '', inputSchema: schema }));
    }
  }
  return { pairs, stats: { rows: rows.length, licensed, pairs: pairs.length } };
}

/** OpenAPI apis behind the team set's dev and test catalogues (scripts/data/catalogueList.ts). */
export const HELD_OUT_APIS: ReadonlySet<string> = new Set(CATALOGUES.flatMap((c) => (c.kind === 'openapi' && c.split !== 'train' ? [c.api] : [])));

/** The team-written request set (data/requests); only its train split is ever read for training. */
export const TEAM_REQUESTS_DIR = path.join(REPO_ROOT, 'data', 'requests');

/** Which of the team set's train requests the embedding model is paired with. */
export interface TeamPairFilter {
  /** Also the requests whose needed tools all come from catalogues described in another language than English. */
  readonly nonEnglishOnly: boolean;
  /** Also the requests that need a general-purpose tool they do not name (a non-empty `kinds`). */
  readonly unnamedNeed: boolean;
  /** Also pair each step of a task of several steps with the needed tool it shares the most words with. */
  readonly stepPairs?: boolean;
}

/**
 * One pair per (request, needed tool) of the team set's train split, less the requests `filter` leaves
 * out. A request that needs only non-English-described tools is one whose every needed tool comes from
 * such a catalogue (the catalogue list's `language` decides); one that also needs an English-described
 * tool stays.
 */
export function teamPairs(filter: TeamPairFilter = { nonEnglishOnly: true, unnamedNeed: true }): TrainingPair[] {
  const file = path.join(TEAM_REQUESTS_DIR, 'queries.jsonl');
  if (!fs.existsSync(file)) return [];
  const tools = loadToolsFile(path.join(TEAM_REQUESTS_DIR, 'tools.jsonl'));
  const textById = new Map(tools.map((t) => [t.id, toolEmbeddingText(t)]));
  const nonEnglish = new Set(tools.filter((t) => t.server !== undefined && NON_ENGLISH_SERVERS.has(t.server)).map((t) => t.id));
  const pairs: TrainingPair[] = [];
  for (const q of loadQueriesFile(file, 'train')) {
    if (!filter.nonEnglishOnly && q.gold.length > 0 && q.gold.every((id) => nonEnglish.has(id))) continue;
    if (!filter.unnamedNeed && q.kinds !== undefined) continue;
    const steps = filter.stepPairs ? splitSteps(q.query) : [];
    for (const id of q.gold) {
      const tool = textById.get(id);
      if (tool === undefined) throw new Error(`data/requests: request ${q.id} needs tool "${id}", which tools.jsonl does not have`);
      pairs.push({ source: 'team', query: q.query, tool });
      const step = steps.length > 1 ? stepFor(steps, tool) : undefined;
      if (step) pairs.push({ source: 'team', query: step, tool });
    }
  }
  return pairs;
}

/** The one step sharing the most terms with a tool's text; none when no step shares any, or two tie. */
function stepFor(steps: readonly string[], tool: string): string | undefined {
  const toolTerms = new Set(lexicalTerms(tool));
  const overlaps = steps.map((step) => new Set(lexicalTerms(step).filter((t) => toolTerms.has(t))).size);
  const best = Math.max(...overlaps);
  return best > 0 && overlaps.filter((o) => o === best).length === 1 ? steps[overlaps.indexOf(best)] : undefined;
}

interface AuthoredFile {
  servers: Array<{ server: string; tools: Array<{ name: string; description: string; params: string[]; requests: string[] }> }>;
}

export const AUTHORED_REQUESTS = path.join(__dirname, 'data', 'authoredRequests.json');

/** Requests written by the team for real kinds of MCP servers (scripts/model/data/README.md). */
export function authoredPairs(): TrainingPair[] {
  const file = JSON.parse(fs.readFileSync(AUTHORED_REQUESTS, 'utf8')) as AuthoredFile;
  const pairs: TrainingPair[] = [];
  for (const server of file.servers) {
    for (const t of server.tools) {
      const tool = toolEmbeddingText({ id: t.name, name: t.name, description: t.description, inputSchema: { type: 'object', properties: Object.fromEntries(t.params.map((p) => [p, {}])) } });
      for (const query of t.requests) pairs.push({ source: 'authored', query, tool });
    }
  }
  return pairs;
}

/** The team's bilingual pairs (data/bilingual/pairs*.jsonl): English beside Chinese, Japanese, Korean, Spanish, French, German. */
export const BILINGUAL_DIR = path.join(REPO_ROOT, 'data', 'bilingual');

/**
 * One pair per bilingual line, the English side as the query half when it is a request and either way
 * round otherwise: the contrastive loss is symmetric in what it teaches (the two texts' vectors meet).
 */
export function bilingualPairs(more = false): TrainingPair[] {
  return [...linePairs(BILINGUAL_DIR, 'bilingual'), ...(more ? linePairs(BILINGUAL_DIR, 'bilingual', /^more.*\.jsonl$/) : [])];
}

/**
 * The team's paraphrase pairs (data/paraphrase/pairs*.jsonl): requests as people write them beside the
 * terse names API catalogues give the same operation ("who's in our candidate pool?" ↔ "List Applicants"),
 * so that the model learns the words tasks use for what tools call otherwise.
 */
export const PARAPHRASE_DIR = path.join(REPO_ROOT, 'data', 'paraphrase');

export function paraphrasePairs(): TrainingPair[] {
  return linePairs(PARAPHRASE_DIR, 'paraphrase');
}

/** Every `{"a", "b"}` line of a folder's pairs*.jsonl files (or those `pattern` names), in file order, as one pair each. */
function linePairs(dir: string, source: 'bilingual' | 'paraphrase', pattern = /^pairs.*\.jsonl$/): TrainingPair[] {
  if (!fs.existsSync(dir)) return [];
  const files = fs.readdirSync(dir).filter((f) => pattern.test(f)).sort();
  return files
    .flatMap((f) => readJsonl<{ a: string; b: string }>(path.join(dir, f)))
    .filter((p) => typeof p.a === 'string' && typeof p.b === 'string' && p.a.trim() && p.b.trim())
    .map((p) => ({ source, query: p.a.trim(), tool: p.b.trim() }));
}

/**
 * Short requests that name a thing, per type and language: `[English, native]`, `{en}` and `{name}` standing
 * for the two names. Written for training only; scripts/evalNames.ts measures with other wording.
 */
const NAME_PHRASES: Readonly<Record<NameType, Readonly<Record<NameLanguage, ReadonlyArray<readonly [string, string]>>>>> = {
  place: {
    zh: [['weather in {en}', '{name}天气'], ['hotels in {en}', '{name}酒店'], ['how to get to {en}', '怎么去{name}'], ['map of {en}', '{name}地图'], ['things to do in {en}', '{name}旅游攻略'], ['flights to {en}', '飞往{name}的航班']],
    ja: [['weather in {en}', '{name}の天気'], ['hotels in {en}', '{name}のホテル'], ['how to get to {en}', '{name}への行き方'], ['map of {en}', '{name}の地図'], ['things to do in {en}', '{name}の観光スポット'], ['flights to {en}', '{name}行きの航空券']],
    ko: [['weather in {en}', '{name} 날씨'], ['hotels in {en}', '{name} 호텔'], ['how to get to {en}', '{name} 가는 방법'], ['map of {en}', '{name} 지도'], ['things to do in {en}', '{name} 가볼 만한 곳'], ['flights to {en}', '{name}행 항공권']],
  },
  app: {
    zh: [['open {en}', '打开{name}'], ['search on {en}', '在{name}上搜索'], ['log in to {en}', '登录{name}'], ['my {en} account', '我的{name}账号'], ['download {en}', '下载{name}']],
    ja: [['open {en}', '{name}を開く'], ['search on {en}', '{name}で検索'], ['log in to {en}', '{name}にログイン'], ['my {en} account', '{name}のアカウント'], ['download {en}', '{name}をダウンロード']],
    ko: [['open {en}', '{name} 열기'], ['search on {en}', '{name}에서 검색'], ['log in to {en}', '{name} 로그인'], ['my {en} account', '내 {name} 계정'], ['download {en}', '{name} 다운로드']],
  },
  brand: {
    zh: [['{en} stores nearby', '附近的{name}门店'], ['{en} stock price', '{name}股价'], ['{en} products', '{name}的产品'], ['{en} customer service', '{name}客服'], ['latest news about {en}', '{name}最新消息']],
    ja: [['{en} stores nearby', '近くの{name}の店舗'], ['{en} stock price', '{name}の株価'], ['{en} products', '{name}の製品'], ['{en} customer service', '{name}のカスタマーサービス'], ['latest news about {en}', '{name}の最新ニュース']],
    ko: [['{en} stores nearby', '근처 {name} 매장'], ['{en} stock price', '{name} 주가'], ['{en} products', '{name} 제품'], ['{en} customer service', '{name} 고객센터'], ['latest news about {en}', '{name} 최신 뉴스']],
  },
  dish: {
    zh: [['how do I cook {en}', '{name}的做法'], ['where to eat {en}', '哪里有好吃的{name}'], ['calories in {en}', '{name}的热量'], ['order {en} for delivery', '点一份{name}外卖']],
    ja: [['how do I cook {en}', '{name}のレシピ'], ['where to eat {en}', '{name}のおいしい店'], ['calories in {en}', '{name}のカロリー'], ['order {en} for delivery', '{name}をデリバリーで注文']],
    ko: [['how do I cook {en}', '{name} 레시피'], ['where to eat {en}', '{name} 맛집'], ['calories in {en}', '{name} 칼로리'], ['order {en} for delivery', '{name} 배달 주문']],
  },
  title: {
    zh: [['reviews of {en}', '{name}的评价'], ['where to watch {en}', '在哪里看{name}'], ['cast of {en}', '{name}演员表'], ['plot of {en}', '{name}剧情简介']],
    ja: [['reviews of {en}', '{name}のレビュー'], ['where to watch {en}', '{name}の配信サービス'], ['cast of {en}', '{name}のキャスト'], ['plot of {en}', '{name}のあらすじ']],
    ko: [['reviews of {en}', '{name} 리뷰'], ['where to watch {en}', '{name} 볼 수 있는 곳'], ['cast of {en}', '{name} 출연진'], ['plot of {en}', '{name} 줄거리']],
  },
  other: {
    zh: [['tell me about {en}', '介绍一下{name}'], ['news about {en}', '{name}相关新闻'], ['history of {en}', '{name}的历史'], ['facts about {en}', '{name}的资料']],
    ja: [['tell me about {en}', '{name}について教えて'], ['news about {en}', '{name}に関するニュース'], ['history of {en}', '{name}の歴史'], ['facts about {en}', '{name}の情報']],
    ko: [['tell me about {en}', '{name}에 대해 알려줘'], ['news about {en}', '{name} 관련 뉴스'], ['history of {en}', '{name}의 역사'], ['facts about {en}', '{name} 정보']],
  },
};

/** One request naming the line's thing on each side, the template picked by a hash of the line (fixed). */
export function namePhrasePair(line: NameLine): readonly [string, string] {
  const templates = NAME_PHRASES[line.type][line.lang];
  const pick = createHash('sha256').update(`${line.lang}\u0000${line.en}\u0000${line.name}`).digest().readUInt32BE(0) % templates.length;
  const [english, native] = templates[pick]!;
  return [english.replace('{en}', line.en), native.replace('{name}', line.name)];
}

/**
 * The team's names dictionary (data/bilingual/names.jsonl), train lines only: each English name beside its
 * Chinese, Japanese or Korean name ("Taobao" ↔ 淘宝), and one short request naming it on each side
 * ("weather in Tokyo" ↔ "東京の天気"). The held-out lines never reach training: they measure what the
 * model learns about names it has not seen.
 */
export function namePairs(): TrainingPair[] {
  const pairs: TrainingPair[] = [];
  for (const line of readNameLines()) {
    if (line.split !== 'train') continue;
    pairs.push({ source: 'bilingual', query: line.en, tool: line.name });
    const [english, native] = namePhrasePair(line);
    pairs.push({ source: 'bilingual', query: english, tool: native });
  }
  return pairs;
}

export interface PairOptions {
  /** At most this many MetaTool requests per tool (0: all). */
  readonly metatoolPerToolCap: number;
  /** Also pair an OpenAPI description with the bare operationId when the summary is already used (0/1). */
  readonly openApiDescriptionPairs: number;
  /** Use the OpenAPI weak pairs at all (0/1). */
  readonly openApi: number;
  /** Use the team's authored requests (0/1). */
  readonly authored: number;
  /** Use the train split of the team-written request set, data/requests (0/1). */
  readonly team: number;
  /** Also the team requests that need only tools described in another language than English (0/1). */
  readonly teamNonEnglishOnly: number;
  /** Also the team requests that need a general-purpose tool they do not name (0/1). */
  readonly teamUnnamedNeed: number;
  /** Also pair each step of the team's tasks of several steps with its tool (0/1; 0 when absent). */
  readonly teamStepPairs?: number;
  /** Use the team's bilingual pairs (0/1). */
  readonly bilingual: number;
  /** Also the third and fourth bilingual files, data/bilingual/more-*.jsonl (0/1). */
  readonly bilingualMore: number;
  /** Use the team's paraphrase pairs (0/1). */
  readonly paraphrase: number;
  /** With the bilingual pairs, also the names dictionary's train lines, namePairs (0/1; 1 when absent). */
  readonly bilingualNames?: number;
}

export function trainingPairs(options: PairOptions): { pairs: TrainingPair[]; openApi: OpenApiStats } {
  const openApi = options.openApi ? openApiPairs(options.openApiDescriptionPairs > 0) : { pairs: [], stats: { rows: 0, licensed: 0, pairs: 0 } };
  const metatool = toolPairs('metatool', 'metatool', options.metatoolPerToolCap > 0 ? options.metatoolPerToolCap : Infinity);
  const authored = options.authored ? authoredPairs() : [];
  const team = options.team ? teamPairs({ nonEnglishOnly: options.teamNonEnglishOnly > 0, unnamedNeed: options.teamUnnamedNeed > 0, stepPairs: (options.teamStepPairs ?? 0) > 0 }) : [];
  const bilingual = options.bilingual ? [...bilingualPairs(options.bilingualMore > 0), ...((options.bilingualNames ?? 1) > 0 ? namePairs() : [])] : [];
  const paraphrase = options.paraphrase ? paraphrasePairs() : [];
  return { pairs: [...metatool, ...toolPairs('seal-tools', 'seal'), ...openApi.pairs, ...authored, ...team, ...bilingual, ...paraphrase], openApi: openApi.stats };
}
