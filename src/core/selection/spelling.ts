/**
 * Spelling tolerance: people type "hirng", "ordres", "thrusday", "onilne". Both rankers miss such words:
 * the lexical one needs the word's stem, and the model cuts an unknown word into pieces whose rows say
 * little. So before scoring, each unknown word one edit away from a known word (a letter missing, added,
 * changed, or two neighbours swapped) is read as that word.
 *
 * Three sources of words, none of them a list of typos:
 * - the catalogue's own words (tool names, descriptions, parameters, servers): known, and preferred as a
 *   correction, since a prompt's words are meant for these tools;
 * - an English dictionary, most common words first: known, and the next choice;
 * - the embedding model's own vocabulary: known (the model reads it as written), never suggested, since
 *   much of it is word pieces ("abou", "wrapp") and product names.
 * Left as written: words shorter than MIN_TYPO_LENGTH, words with digits or other scripts, words without
 * a vowel (acronyms: "gdpr", "tbsp"), capitalised words inside a sentence (names: "Kato", "Lena"), parts
 * of addresses, paths and emails, and whole prompts in another language (MAX_STRANGE_SHARE).
 * Pure: no I/O, no vscode.
 */

/**
 * Shorter words have too many neighbours one edit away to guess which was meant, and most lowercase first
 * names are four letters ("dana" is one letter from "data", "lisa" from "list").
 */
export const MIN_TYPO_LENGTH = 5;

export interface SpellingFix {
  readonly from: string;
  readonly to: string;
}

/** The word lists spelling tolerance reads prompts against (selectionEngine.ts loads them). */
export interface SpellingWords {
  /** An English dictionary, word → rank (0 the most common): known, and suggested after the catalogue's words. */
  readonly dictionary: ReadonlyMap<string, number>;
  /** Words left as written but never suggested: the embedding model's own vocabulary. */
  readonly known: ReadonlySet<string>;
}

export interface Corrected {
  /** The text with each fixed word replaced (the original's other characters kept as they were). */
  readonly text: string;
  readonly fixes: readonly SpellingFix[];
}

/**
 * A prompt in which more than this share of the words of three letters or more are strange (unknown,
 * and not one edit from a known word) is taken for another language and read as typed. Typos are one edit
 * from the word meant, so "depoly the login funtion again" has none; a French, Spanish, German or
 * Indonesian sentence has many.
 */
export const MAX_STRANGE_SHARE = 1 / 3;

/** Letters tried in place of, or beside, each letter of an unknown word. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

export class SpellingCorrector {
  /**
   * @param dictionary known words → their rank (0 the most common), shared by every catalogue
   * @param catalogueWords words of the tools' own texts (lowercase): known, and preferred over the dictionary
   * @param known further words to leave as written but never suggest (the model's vocabulary)
   */
  constructor(
    private readonly dictionary: ReadonlyMap<string, number>,
    private readonly catalogueWords: ReadonlySet<string>,
    private readonly known: ReadonlySet<string> = new Set(),
  ) {}

  private preference(word: string): number | undefined {
    if (this.catalogueWords.has(word)) return -1;
    return this.dictionary.get(word);
  }

  /** The known word one edit from `word`, the most preferred; undefined when it is known, a name or an acronym, or none is near. */
  suggest(word: string): string | undefined {
    const w = word.toLowerCase();
    if (w.length < MIN_TYPO_LENGTH || !/^[a-z]+$/.test(w) || !/[aeiouy]/.test(w) || this.isKnown(w)) return undefined;
    let best: string | undefined;
    let bestPreference = Infinity;
    for (const c of editsOf(w)) {
      const p = this.preference(c);
      if (p !== undefined && (p < bestPreference || (p === bestPreference && c < best!))) [best, bestPreference] = [c, p];
    }
    return best;
  }

  /** Whether a lowercase word is known: the catalogue's, the dictionary's, or left as typed. */
  private isKnown(w: string): boolean {
    return this.known.has(w) || this.preference(w) !== undefined;
  }

  /**
   * The text with its typos fixed, and what was fixed. A prompt that is mostly not English ("Quel temps
   * fera-t-il demain ?") is left as typed: its words are not typos, and "demain" is not "domain".
   */
  correct(text: string): Corrected {
    // Each plain word's suggestion, worked out once: it serves both the language check and the fixes.
    const words = [...text.matchAll(/[\p{L}\p{N}]+/gu)]
      .filter((m) => isPlainWord(text, m[0], m.index))
      .map((m) => ({ word: m[0], offset: m.index, to: this.suggest(m[0]) }));
    // Typos are one edit from a known word; another language's words mostly are not.
    const longer = words.filter((w) => [...w.word].length >= 3);
    const strange = longer.filter((w) => w.to === undefined && !this.isKnown(w.word.toLowerCase())).length;
    if (longer.length > 0 && strange / longer.length > MAX_STRANGE_SHARE) return { text, fixes: [] };
    const fixes: SpellingFix[] = [];
    let out = '';
    let at = 0;
    for (const { word, offset, to } of words) {
      if (to === undefined) continue;
      out += text.slice(at, offset) + to;
      at = offset + word.length;
      fixes.push({ from: word, to });
    }
    return { text: out + text.slice(at), fixes };
  }
}

/**
 * Whether a word is one to read for typos: not part of an address, path, file name, id or email (a
 * neighbouring `. / \ @ _ : #`), no digits, and not a capitalised word inside a sentence (a name).
 */
function isPlainWord(text: string, word: string, offset: number): boolean {
  if (/\p{N}/u.test(word)) return false;
  if (/[./\\@_:#]/.test(text[offset - 1] ?? '') || /[./\\@_:#]\w/.test(text.slice(offset + word.length, offset + word.length + 2))) return false;
  return !(/^\p{Lu}/u.test(word) && !startsSentence(text, offset));
}

/** Every string one edit from `word`: a letter removed, swapped with the next, changed, or added. */
function editsOf(word: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i <= word.length; i++) {
    const head = word.slice(0, i);
    const tail = word.slice(i);
    if (tail) out.add(head + tail.slice(1));
    if (tail.length > 1) out.add(head + tail[1] + tail[0] + tail.slice(2));
    for (const ch of ALPHABET) {
      if (tail && ch !== tail[0]) out.add(head + ch + tail.slice(1));
      out.add(head + ch + tail);
    }
  }
  out.delete(word);
  return out;
}

/** Whether the word at `offset` begins the text or a sentence (a capital there is no sign of a name). */
function startsSentence(text: string, offset: number): boolean {
  const before = text.slice(0, offset).trimEnd();
  return before === '' || /[.!?:;\n]$/.test(before);
}

/**
 * The words of a catalogue that spelling may correct towards: each tool's name, description, parameter
 * names and server, lowercased, ASCII letters only (other scripts are never corrected).
 */
export function catalogueWords(texts: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const text of texts) for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) out.add(w);
  return out;
}

/**
 * A dictionary file's words (one a line, most common first; `#` lines are comments) as word → rank.
 * Lines that are not lowercase ASCII words are skipped.
 */
export function parseDictionary(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const w = line.trim();
    if (/^[a-z]+$/.test(w) && !out.has(w)) out.set(w, out.size);
  }
  return out;
}
