/**
 * `npx tsx scripts/evalNames.ts`: how often lexical ranking finds the tool for a thing named in another
 * language than the tool's description, with the names dictionary (src/core/selection/nameAliases.ts) and
 * without it.
 *
 * For each language (zh, ja, ko), two catalogues are built from data/bilingual/names.jsonl: one tool per
 * name described in that language ("查询东京的实时天气…"), and one tool per English name described in
 * English. Every other name's tool is a distractor worded the same way, so only the name can single out
 * the right one. English requests ("what's the weather like in Tokyo") are ranked against the first
 * catalogue, requests in the language against the second. Figures are the share of requests with a
 * right tool among the first k (hit@k), apart for the names the shipped dictionary holds (train) and
 * those held out of it (eval): the held-out ones show what the dictionary leaves to the embedding model.
 * The requests and descriptions are worded here and nowhere else (training uses other wording).
 * With --model [DIR] the embedding model (the bundled one unless DIR is given) ranks the same catalogues
 * by cosine similarity too, as a "model" row: inference only, nothing is trained.
 * The last line is JSON: {split: {direction: {"with"|"without"|"model": {hit@k}}}}.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { OnnxEmbedder } from '../src/core/embedding/onnxEmbedder';
import { LexicalRanker } from '../src/core/selection/lexicalRanker';
import { loadNameAliases, NAME_ALIASES_FILE, type NameAliases } from '../src/core/selection/nameAliases';
import { toolEmbeddingText } from '../src/core/selection/toolDocument';
import { readNameLines, type NameLanguage, type NameLine, type NameSplit, type NameType } from './data/buildNameAliases';
import { describeError } from '../src/core/errors/describeError';

const ROOT = path.resolve(__dirname, '..');
const KS = [1, 5, 10] as const;
const LANGUAGES: readonly NameLanguage[] = ['zh', 'ja', 'ko'];

/** One kind of task about a named thing: the tool's description and a request, in English and each language. */
interface Intent {
  readonly tool: Readonly<Record<'en' | NameLanguage, string>>;
  readonly ask: Readonly<Record<'en' | NameLanguage, string>>;
}

/** `{n}` stands for the name in the text's language. */
const INTENTS: Readonly<Record<NameType, readonly Intent[]>> = {
  place: [
    {
      tool: { en: 'Current weather and the week ahead forecast for {n}', zh: '查询{n}的实时天气和未来一周预报', ja: '{n}の現在の天気と週間予報を取得します', ko: '{n}의 현재 날씨와 주간 예보를 조회합니다' },
      ask: { en: "what's the weather like in {n}", zh: '{n}今天会下雨吗', ja: '{n}は今日雨が降りますか', ko: '오늘 {n}에 비 와?' },
    },
    {
      tool: { en: 'Search hotels in {n} and compare nightly prices', zh: '搜索{n}的酒店并比较每晚价格', ja: '{n}のホテルを検索して宿泊料金を比較します', ko: '{n}의 호텔을 검색하고 숙박 요금을 비교합니다' },
      ask: { en: 'find me a cheap place to stay in {n}', zh: '帮我找{n}便宜的住处', ja: '{n}で安く泊まれるところを探して', ko: '{n}에서 싼 숙소 찾아줘' },
    },
  ],
  app: [
    {
      tool: { en: 'Search listings on {n} by keyword', zh: '按关键词搜索{n}上的内容', ja: '{n}の投稿や商品をキーワードで検索します', ko: '{n}에서 키워드로 게시물과 상품을 검색합니다' },
      ask: { en: 'look something up on {n} for me', zh: '帮我在{n}上找点东西', ja: '{n}でちょっと調べて', ko: '{n}에서 좀 찾아봐 줘' },
    },
    {
      tool: { en: 'Read recent notifications from your {n} account', zh: '读取你的{n}账号最近的通知', ja: '{n}アカウントの最近の通知を読み込みます', ko: '{n} 계정의 최근 알림을 읽어옵니다' },
      ask: { en: 'any new alerts on {n}?', zh: '{n}有没有新提醒', ja: '{n}に新しいお知らせはある？', ko: '{n}에 새 알림 있어?' },
    },
  ],
  brand: [
    {
      tool: { en: 'Locate {n} shops near a given address', zh: '查找指定地址附近的{n}门店', ja: '指定した住所の近くにある{n}の店舗を探します', ko: '지정한 주소 근처의 {n} 매장을 찾습니다' },
      ask: { en: 'where is the closest {n} shop', zh: '离我最近的{n}在哪', ja: '一番近い{n}はどこ', ko: '제일 가까운 {n} 어디야' },
    },
    {
      tool: { en: 'Latest share price and news for {n}', zh: '获取{n}的最新股价和新闻', ja: '{n}の最新株価とニュースを取得します', ko: '{n}의 최신 주가와 뉴스를 가져옵니다' },
      ask: { en: 'how is {n} doing on the market today', zh: '{n}今天股票怎么样', ja: '今日の{n}の株はどう', ko: '오늘 {n} 주식 어때' },
    },
  ],
  dish: [
    {
      tool: { en: 'Step-by-step cooking instructions for {n}', zh: '提供{n}的详细烹饪步骤', ja: '{n}の作り方を手順ごとに説明します', ko: '{n} 만드는 방법을 단계별로 알려줍니다' },
      ask: { en: 'find a {n} recipe', zh: '{n}怎么做', ja: '{n}の作り方を教えて', ko: '{n} 만드는 법 알려줘' },
    },
    {
      tool: { en: 'Find restaurants serving {n} nearby', zh: '查找附近供应{n}的餐厅', ja: '近くで{n}を出すお店を探します', ko: '근처에서 {n} 파는 식당을 찾습니다' },
      ask: { en: 'where can I get good {n} around here', zh: '附近哪里能吃到{n}', ja: 'この辺で{n}が食べられる店は？', ko: '이 근처에 {n} 먹을 데 있어?' },
    },
  ],
  title: [
    {
      tool: { en: 'Which streaming services currently offer {n}', zh: '查询哪些平台可以在线观看{n}', ja: '{n}を配信中のサービスを調べます', ko: '{n}을 볼 수 있는 스트리밍 서비스를 찾습니다' },
      ask: { en: 'where can I stream {n}', zh: '{n}在哪能看', ja: '{n}はどこで見られる？', ko: '{n} 어디서 볼 수 있어?' },
    },
    {
      tool: { en: 'Ratings and audience reviews of {n}', zh: '获取{n}的评分和观众评论', ja: '{n}の評価と感想を取得します', ko: '{n}의 평점과 관객 리뷰를 가져옵니다' },
      ask: { en: 'is {n} worth it, what do people say', zh: '{n}好看吗', ja: '{n}って面白い？', ko: '{n} 재밌어?' },
    },
  ],
  other: [
    {
      tool: { en: 'Encyclopedia summary of {n}', zh: '获取{n}的百科摘要', ja: '{n}の百科事典の要約を取得します', ko: '{n}에 대한 백과사전 요약을 가져옵니다' },
      ask: { en: 'give me a quick overview of {n}', zh: '简单说说{n}', ja: '{n}について簡単に説明して', ko: '{n} 간단히 설명해 줘' },
    },
    {
      tool: { en: 'Recent news articles mentioning {n}', zh: '搜索提到{n}的最新新闻', ja: '{n}に触れた最近の記事を検索します', ko: '{n}을 다룬 최근 기사를 검색합니다' },
      ask: { en: "what's new with {n} lately", zh: '{n}最近有什么新闻', ja: '{n}の最近の話題は？', ko: '요즘 {n} 소식 있어?' },
    },
  ],
};

/** The intent a name gets, fixed by a hash of the name, so its tool and its request are about the same task. */
function intentOf(type: NameType, key: string): Intent {
  const list = INTENTS[type];
  return list[createHash('sha256').update(key).digest().readUInt32BE(0) % list.length]!;
}

const fill = (template: string, name: string): string => template.replace('{n}', name);

interface Request {
  readonly query: string;
  readonly gold: ReadonlySet<string>;
  readonly split: NameSplit;
}

interface Direction {
  readonly tools: Array<{ id: string; name: string; description: string }>;
  readonly requests: Request[];
}

/**
 * The two directions for one language: English requests against tools described in the language, and
 * requests in the language against tools described in English. Lines sharing an English name or a name
 * share their split (buildNameAliases.ts), so each request has one.
 */
function directions(lines: readonly NameLine[], lang: NameLanguage): { toNative: Direction; toEnglish: Direction } {
  const mine = lines.filter((l) => l.lang === lang);
  const nativeIds = new Map<string, string>();
  const englishIds = new Map<string, string>();
  const toNative: Direction = { tools: [], requests: [] };
  const toEnglish: Direction = { tools: [], requests: [] };
  for (const l of mine) {
    if (!nativeIds.has(l.name)) {
      nativeIds.set(l.name, `${lang}_${nativeIds.size}`);
      toNative.tools.push({ id: nativeIds.get(l.name)!, name: `tool_${nativeIds.size}`, description: fill(intentOf(l.type, l.name).tool[lang], l.name) });
    }
    if (!englishIds.has(l.en)) {
      englishIds.set(l.en, `en_${englishIds.size}`);
      toEnglish.tools.push({ id: englishIds.get(l.en)!, name: `tool_${englishIds.size}`, description: fill(intentOf(l.type, l.en).tool.en, l.en) });
    }
  }
  const byEnglish = groupBy(mine, (l) => l.en);
  for (const [en, group] of byEnglish) {
    const intent = intentOf(group[0]!.type, group[0]!.name);
    toNative.requests.push({ query: fill(intent.ask.en, en), gold: new Set(group.map((l) => nativeIds.get(l.name)!)), split: group[0]!.split });
  }
  for (const [name, group] of groupBy(mine, (l) => l.name)) {
    const intent = intentOf(group[0]!.type, group[0]!.en);
    toEnglish.requests.push({ query: fill(intent.ask[lang], name), gold: new Set(group.map((l) => englishIds.get(l.en)!)), split: group[0]!.split });
  }
  return { toNative, toEnglish };
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    const list = out.get(k);
    if (list) list.push(t);
    else out.set(k, [t]);
  }
  return out;
}

type Hits = Record<`hit@${(typeof KS)[number]}`, number>;

/** For each request, the smallest k in KS whose top k holds a right tool (Infinity when none does). */
function firstHits(direction: Direction, aliases: NameAliases | false): number[] {
  const ranker = new LexicalRanker(direction.tools, { nameAliases: aliases });
  const kMax = KS[KS.length - 1];
  return direction.requests.map((r) => {
    const at = ranker.rank(r.query, kMax).findIndex((t) => r.gold.has(t.id));
    return at < 0 ? Infinity : at + 1;
  });
}

/** The same as firstHits, ranked by the embedding model's cosine similarity (ties count against the right tool). */
async function modelHits(direction: Direction, embedder: OnnxEmbedder): Promise<number[]> {
  const tools = await embedder.embed(direction.tools.map((t) => toolEmbeddingText(t)));
  const queries = await embedder.embed(direction.requests.map((r) => r.query));
  const index = new Map(direction.tools.map((t, i) => [t.id, i]));
  return queries.map((q, i) => {
    const scores = tools.map((t) => cosine(q, t));
    const best = Math.max(...[...direction.requests[i]!.gold].map((id) => scores[index.get(id)!]!));
    const rank = scores.filter((s) => s >= best).length;
    return rank <= KS[KS.length - 1] ? rank : Infinity;
  });
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

function hits(ranks: readonly number[]): Hits {
  const out = {} as Hits;
  for (const k of KS) out[`hit@${k}`] = ranks.length ? Math.round((1000 * ranks.filter((r) => r <= k).length) / ranks.length) / 10 : 0;
  return out;
}

async function main(): Promise<void> {
  const lines = readNameLines();
  const aliases = loadNameAliases(path.join(ROOT, NAME_ALIASES_FILE));
  const at = process.argv.indexOf('--model');
  const modelDir = at < 0 ? undefined : process.argv[at + 1] && !process.argv[at + 1]!.startsWith('--') ? path.resolve(process.argv[at + 1]!) : path.join(ROOT, 'media', 'model');
  const embedder = modelDir ? await OnnxEmbedder.load(modelDir) : undefined;
  const ranks: Record<string, number[]> = {};
  const keep = (key: string, values: number[]): void => void (ranks[key] ??= []).push(...values);
  const rows: string[] = [];
  for (const lang of LANGUAGES) {
    const { toNative, toEnglish } = directions(lines, lang);
    for (const [dir, direction] of [[`en→${lang}`, toNative], [`${lang}→en`, toEnglish]] as const) {
      const modes: Record<string, number[]> = { without: firstHits(direction, false), with: firstHits(direction, aliases) };
      if (embedder) modes['model'] = await modelHits(direction, embedder);
      for (const split of ['train', 'eval'] as const) {
        const group = dir.startsWith('en') ? 'to_native' : 'to_english';
        const cells: string[] = [];
        for (const [mode, all] of Object.entries(modes)) {
          const picked = all.filter((_, i) => direction.requests[i]!.split === split);
          keep(`${split}|${group}|${mode}`, picked);
          cells.push(fmt(hits(picked)));
        }
        const count = direction.requests.filter((r) => r.split === split).length;
        rows.push(`${dir.padEnd(6)} ${split.padEnd(5)} ${String(count).padStart(5)}  ${cells.join('   ')}`);
      }
    }
  }
  await embedder?.dispose();
  process.stdout.write(`a named thing's tool among ${lines.length} name lines' tools, hit@1 / @5 / @10\n`);
  process.stdout.write(`dir    split  reqs  lexical, no aliases   lexical + aliases${embedder ? '     embedding model' : ''}\n${rows.join('\n')}\n`);
  const summary: Record<string, Record<string, Record<string, Hits>>> = {};
  for (const [key, values] of Object.entries(ranks)) {
    const [split, group, mode] = key.split('|') as [string, string, string];
    ((summary[split] ??= {})[group] ??= {})[mode] = hits(values);
  }
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

const fmt = (h: Hits): string => KS.map((k) => h[`hit@${k}`].toFixed(1).padStart(5)).join(' ');

main().catch((error: unknown) => {
  process.stderr.write(`${describeError(error)}\n`);
  process.exit(1);
});
