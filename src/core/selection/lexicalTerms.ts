/**
 * Turns text into the terms lexical ranking matches on: identifiers split, lowercased, stop words
 * dropped, and a light suffix stripper so that `files`/`file` and `creating`/`create` meet.
 */
import { splitIdentifiers } from '../embedding/textPreprocess';

/**
 * English function words plus the politeness and request words people wrap around a task ("can you
 * please help me…"). Action words that name what a tool does (`get`, `find`, `list`, `show`, `send`)
 * stay: they separate read tools from write tools.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him himself his ' +
    'how i if in into is it its itself just let lets me might more most must my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own please same shall she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up us very was we were what when where which while who whom why will with ' +
    'would you your yours yourself yourselves want wants need needs like hi hello hey thanks thank kindly help tell give s t ' +
    'd ll m re ve im id ive youre dont doesnt cant wont etc eg ie via using use used'
  ).split(/\s+/),
);

/**
 * Numbers of up to this many digits are values, not what a tool does: a prompt's "2027-03-14" met the
 * "e.g. 2025-03-23" of a date tool's schema. Longer ones can be names ("12306", the rail booking site).
 */
export const MAX_VALUE_DIGITS = 4;
const ALL_DIGITS = /^\d+$/;

/** Words that end in -s without being plurals; stripping them would merge `news` with `new`. */
const NOT_PLURAL: ReadonlySet<string> = new Set(['news', 'series', 'species', 'alias', 'canvas', 'atlas', 'bias', 'always', 'perhaps', 'lens', 'gas', 'physics', 'mathematics', 'economics', 'ethics', 'kubernetes']);

/** Words shorter than this are not stripped: `bus`, `gas`, `news` would lose meaning. */
const MIN_STEM_LENGTH = 3;

/**
 * A light suffix stripper: plurals, -ing, -ed, -ly and a final -e, so that `make`/`making`/`made` is not
 * needed but `create`/`creates`/`creating`/`created` meet. A full Porter stemmer conflates too much for
 * short tool descriptions.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= MIN_STEM_LENGTH || NOT_PLURAL.has(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(?:ches|shes|xes|zes)$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);

  if (w.endsWith('ing') && w.length - 3 >= MIN_STEM_LENGTH) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length - 2 >= MIN_STEM_LENGTH) w = undouble(w.slice(0, -2));
  else if (w.endsWith('ly') && w.length - 2 >= MIN_STEM_LENGTH) w = w.slice(0, -2);

  if (w.endsWith('e') && w.length - 1 >= MIN_STEM_LENGTH) w = w.slice(0, -1);
  if (w.endsWith('y') && w.length - 1 >= MIN_STEM_LENGTH) w = `${w.slice(0, -1)}i`;
  return w;
}

/** `running` → `runn` → `run`, but `fill` keeps its double l (l, s and z double in base forms). */
function undouble(w: string): string {
  const n = w.length;
  if (n >= 2 && w[n - 1] === w[n - 2] && !/[lsz]/.test(w[n - 1]!)) return w.slice(0, -1);
  return w;
}

const WORD = /[\p{L}\p{N}\u30FC\uFF70]+/gu;
const ALL_HIRAGANA = /^\p{Script=Hiragana}+$/u;

/**
 * Scripts written without spaces between words (Chinese, Japanese kana, and Korean, whose words run long
 * with particles attached). A run of them was one "word" before, so `查询天气预报` never met `天气`. The
 * katakana long-vowel mark (ー, and its half-width form) belongs to no script of its own: without it here,
 * ラーメン and ルート each left a lone ー that met every katakana word with one.
 */
const UNSPACED_SCRIPTS = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u30FC\\uFF70';
const UNSPACED = new RegExp(`[${UNSPACED_SCRIPTS}]+`, 'gu');
const HAS_UNSPACED = new RegExp(`[${UNSPACED_SCRIPTS}]`, 'u');
const UNSPACED_CHAR = new RegExp(`[${UNSPACED_SCRIPTS}]`, 'gu');

/**
 * A text counts as written in Chinese, Japanese or Korean when at least this share of its letters are of
 * those scripts: such descriptions often carry English identifiers and units among their characters.
 */
export const UNSPACED_SHARE = 0.3;

/** Whether a text is written mostly in Chinese, Japanese or Korean (see UNSPACED_SHARE). */
export function isUnspaced(text: string): boolean {
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  if (letters === 0) return false;
  return (text.match(UNSPACED_CHAR)?.length ?? 0) / letters >= UNSPACED_SHARE;
}

/**
 * Overlapping character pairs of an unspaced run (a lone character stays as it is): the usual indexing
 * for such text without a dictionary, since most Chinese words are two characters and a pair inside a
 * longer word still matches. `获取天气` → 获取, 取天, 天气.
 */
export function characterBigrams(run: string): string[] {
  const chars = [...run];
  if (chars.length < 2) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

/**
 * Each spaced word seen so far and its term (null for a stop word or a short number): a catalogue repeats
 * its words thousands of times, and building selection at start-up spent most of its time on them.
 */
const SPACED_TERMS = new Map<string, string | null>();
const MAX_REMEMBERED_WORDS = 100_000;

/** The terms of a text, in order, repeats kept (term frequency counts them). */
export function lexicalTerms(text: string): string[] {
  const out: string[] = [];
  const words = splitIdentifiers(text).toLowerCase().match(WORD);
  if (!words) return out;
  for (const word of words) {
    const known = SPACED_TERMS.get(word);
    if (known !== undefined) {
      if (known !== null) out.push(known);
      continue;
    }
    if (!HAS_UNSPACED.test(word)) {
      const term = STOP_WORDS.has(word) || (word.length <= MAX_VALUE_DIGITS && ALL_DIGITS.test(word)) ? null : stem(word);
      if (SPACED_TERMS.size >= MAX_REMEMBERED_WORDS) SPACED_TERMS.clear();
      SPACED_TERMS.set(word, term);
      if (term !== null) out.push(term);
      continue;
    }
    // Mixed runs ("12306余票", "api接口") keep their spaced part as a word and pair the rest.
    let last = 0;
    for (const m of word.matchAll(UNSPACED)) {
      if (m.index > last) out.push(stem(word.slice(last, m.index)));
      // A pair of hiragana is grammar (して, ある, ます) that every Japanese description has, not a word.
      for (const pair of characterBigrams(m[0])) if (!ALL_HIRAGANA.test(pair)) out.push(pair);
      last = m.index + m[0].length;
    }
    if (last < word.length) out.push(stem(word.slice(last)));
  }
  return out;
}

/** Identifier-split, lowercased words with nothing dropped or stripped: the plain BM25 floor's terms. */
export function plainTerms(text: string): string[] {
  return splitIdentifiers(text).toLowerCase().match(WORD) ?? [];
}
