/**
 * Names across languages: a prompt says "Taobao" while the tool that serves it says 淘宝, or says 東京 while
 * the tool says Tokyo. Lexical ranking cannot meet such pairs (no shared characters), so the prompt's terms
 * gain the other-language forms of every name they contain, from a dictionary the extension ships
 * (media/names/name-aliases.json, built from the train lines of data/bilingual/names.jsonl by
 * scripts/data/buildNameAliases.ts). Only prompts are expanded, never tool texts, so catalogues in one
 * language rank as before, and the added terms count for less than the prompt's own (NAME_ALIAS_WEIGHT).
 * Pure apart from reading that file once, on first use.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readBundledText } from '../util/bundledText';
import { lexicalTerms, stem, STOP_WORDS } from './lexicalTerms';

/** The shipped dictionary, relative to the extension's (or repository's) root. */
export const NAME_ALIASES_FILE = path.join('media', 'names', 'name-aliases.json');

/** The shipped file: each English form with its names in Chinese, Japanese and Korean. */
export interface NameAliasFile {
  /** English form → its names in the other languages. */
  readonly names: Readonly<Record<string, readonly string[]>>;
  /**
   * English forms that are also common words in another sense ("Discord", "Excel", "The Glory"): a prompt
   * that says them is not expanded, but a prompt that names the thing in another language still gains them.
   */
  readonly notTriggers?: readonly string[];
}

/**
 * Names shorter than this many characters are not matched: a lone Han character or syllable occurs inside
 * too many unrelated words.
 */
const MIN_NAME_CHARACTERS = 2;

/**
 * The weight of an added term against the prompt's own. Below 1 so that a name's other-language forms
 * find tools nothing else matches without outranking tools that match the words the prompt used.
 */
export const NAME_ALIAS_WEIGHT = 0.5;

/**
 * The words an English name is matched by: Latin letters and digits, lowercase, stop words dropped,
 * stemmed as lexical terms are, but identifiers not split: "WeChat" and "LinkedIn" stay one word each,
 * where lexicalTerms would read them as `chat` and `link`.
 */
export function nameWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{Script=Latin}\p{M}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w)).map(stem);
}

/**
 * What a name is matched by inside a prompt: lowercase, without spaces or middle dots, since people write
 * 베이징 덕 and 베이징덕, ロード・オブ・ザ・リング and ロードオブザリング alike.
 */
function compact(text: string): string {
  return text.toLowerCase().replace(/[\s\u00b7\u30fb\u2027]+/g, '');
}

interface Entry {
  readonly english: string;
  readonly names: readonly string[];
}

export class NameAliases {
  private readonly entries: Entry[] = [];
  /** English forms, matched as a run of the prompt's terms: first term → (run, entry). */
  private readonly englishRuns = new Map<string, Array<{ run: readonly string[]; entry: number }>>();
  /**
   * Names in Chinese, Japanese or Korean, matched in the prompt's text itself rather than in its character
   * pairs, whose edges shift with the characters around a name: first character → (name, entries).
   */
  private readonly names = new Map<string, Array<{ name: string; entries: number[] }>>();
  /** Each form's terms, worked out when first needed: loading stays a JSON parse and one pass. */
  private readonly termsOf = new Map<string, readonly string[]>();

  /** @param terms the tokenisation tool texts get, so the added terms are the ones tools are indexed by */
  constructor(
    file: NameAliasFile,
    private readonly terms: (text: string) => string[] = lexicalTerms,
  ) {
    const notTriggers = new Set(file.notTriggers ?? []);
    const byName = new Map<string, { name: string; entries: number[] }>();
    for (const [english, all] of Object.entries(file.names)) {
      const names = all.filter((n) => [...compact(n)].length >= MIN_NAME_CHARACTERS);
      if (names.length === 0) continue;
      const entry = this.entries.push({ english, names }) - 1;
      if (!notTriggers.has(english)) {
        const run = nameWords(english);
        if (run.length > 0) pushTo(this.englishRuns, run[0]!, { run, entry });
      }
      for (const name of names) {
        const key = compact(name);
        let slot = byName.get(key);
        if (!slot) byName.set(key, (slot = { name: key, entries: [] }));
        slot.entries.push(entry);
      }
    }
    for (const slot of byName.values()) pushTo(this.names, slot.name[0]!, slot);
  }

  /** English forms the dictionary holds. */
  get size(): number {
    return this.entries.length;
  }

  /**
   * The terms to add for the names a prompt mentions, none twice: an English name adds its names in the
   * other languages; a name in another language adds its English forms and its other spellings.
   */
  expand(text: string): string[] {
    const out = new Set<string>();
    const add = (form: string): void => {
      for (const t of this.formTerms(form)) out.add(t);
    };
    const words = nameWords(text);
    for (let i = 0; i < words.length; i++) {
      for (const { run, entry } of this.englishRuns.get(words[i]!) ?? []) if (startsAt(words, i, run)) this.entries[entry]!.names.forEach(add);
    }
    const compacted = compact(text);
    for (let i = 0; i < compacted.length; i++) {
      for (const { name, entries } of this.names.get(compacted[i]!) ?? []) {
        if (!compacted.startsWith(name, i)) continue;
        for (const entry of entries) {
          const { english, names } = this.entries[entry]!;
          add(english);
          for (const other of names) if (compact(other) !== name) add(other);
        }
      }
    }
    return [...out];
  }

  /** A form's terms less those of one character (a lone kana or letter), which match too many texts. */
  private formTerms(form: string): readonly string[] {
    let t = this.termsOf.get(form);
    if (!t) this.termsOf.set(form, (t = this.terms(form).filter((term) => [...term].length > 1)));
    return t;
  }
}

function pushTo<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function startsAt(terms: readonly string[], at: number, run: readonly string[]): boolean {
  if (at + run.length > terms.length) return false;
  for (let j = 1; j < run.length; j++) if (terms[at + j] !== run[j]) return false;
  return true;
}

/** Reads a name dictionary file; throws with the file's path when it is missing or malformed. */
export function loadNameAliases(file: string): NameAliases {
  const parsed = JSON.parse(readBundledText(file)) as Partial<NameAliasFile>;
  if (typeof parsed.names !== 'object' || parsed.names === null) throw new Error(`${file} has no "names" object`);
  return new NameAliases(parsed as NameAliasFile);
}

/**
 * How many folders up from this module the root may be: src/core/selection in a clone, dist/ in the
 * bundles (the CLI and the extension), out/bench and out/test/extension for the benches and tests.
 */
const MAX_ROOT_DEPTH = 4;

let shipped: NameAliases | null | undefined;

/**
 * The dictionary the extension ships, read on first use and kept; undefined (names are then not expanded)
 * when the file is not beside the code (a bundle copied without its media folder) or cannot be read.
 */
export function shippedNameAliases(): NameAliases | undefined {
  if (shipped === undefined) {
    shipped = null;
    for (let dir = __dirname, i = 0; i <= MAX_ROOT_DEPTH; i++, dir = path.dirname(dir)) {
      const file = path.join(dir, NAME_ALIASES_FILE);
      if (!fs.existsSync(file) && !fs.existsSync(`${file}.br`)) continue;
      try {
        shipped = loadNameAliases(file);
      } catch {
        // A damaged file must not stop ranking; the unit tests read the shipped one and would fail first.
      }
      break;
    }
  }
  return shipped ?? undefined;
}

/**
 * The terms a prompt gains from the names it mentions, less those it has already (`terms`, its
 * lexicalTerms): what lexical ranking adds at NAME_ALIAS_WEIGHT. `aliases` defaults to the shipped dictionary.
 */
export function nameAliasTerms(text: string, terms: readonly string[], aliases: NameAliases | undefined = shippedNameAliases()): string[] {
  if (!aliases) return [];
  const own = new Set(terms);
  return aliases.expand(text).filter((t) => !own.has(t));
}
