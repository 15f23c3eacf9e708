/**
 * The names dictionary in the embedding model's training pairs: every train line paired both as names and
 * inside a short request, behind `bilingualNames`, and not one held-out line.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { readNameLines } from '../../../scripts/data/buildNameAliases';
import { DATA_DIR } from '../../../scripts/model/dataSets';
import { bilingualPairs, namePairs, namePhrasePair, trainingPairs, type PairOptions, type TrainingPair } from '../../../scripts/model/trainingPairs';

describe('name pairs for training', function () {
  // Reads names.jsonl (about 5,000 lines); a loaded machine is several times slower.
  this.timeout(20_000);
  const lines = readNameLines();
  const pairs = namePairs();
  const key = (query: string, tool: string): string => `${query}\u0000${tool}`;
  const keys = new Set(pairs.map((p) => key(p.query, p.tool)));

  it('pairs each train line\'s English name with its name, and a request naming it on each side', () => {
    const train = lines.filter((l) => l.split === 'train');
    assert.ok(train.length > 1000);
    for (const line of train) {
      assert.ok(keys.has(key(line.en, line.name)), `${line.en} ↔ ${line.name}`);
      const [english, native] = namePhrasePair(line);
      assert.ok(english.includes(line.en) && native.includes(line.name) && !native.includes('{'), `${english} ↔ ${native}`);
      assert.ok(keys.has(key(english, native)), `${english} ↔ ${native}`);
    }
    assert.equal(pairs.length, 2 * train.length);
    assert.ok(pairs.every((p) => p.source === 'bilingual'));
  });

  it('leaves out every held-out line, as names and inside requests', () => {
    const held = lines.filter((l) => l.split === 'eval');
    assert.ok(held.length > 500);
    const englishSides = new Set(pairs.map((p) => p.query.toLowerCase()));
    const nameSides = new Set(pairs.map((p) => p.tool));
    const phrases = new Set(held.flatMap((l) => namePhrasePair(l)));
    const leaked = held.filter((l) => englishSides.has(l.en.toLowerCase()) || nameSides.has(l.name));
    assert.deepEqual(leaked.slice(0, 3), []);
    assert.deepEqual(pairs.filter((p) => phrases.has(p.query) || phrases.has(p.tool)).slice(0, 3), []);
  });

  (fs.existsSync(DATA_DIR) ? it : it.skip)('joins the bilingual pairs unless bilingualNames is 0', function () {
    // Reads the MetaTool and Seal-Tools training splits twice.
    this.timeout(60_000);
    const options: PairOptions = { metatoolPerToolCap: 0, openApi: 0, openApiDescriptionPairs: 0, authored: 0, team: 0, teamNonEnglishOnly: 0, teamUnnamedNeed: 0, bilingual: 1, bilingualMore: 0, paraphrase: 0 };
    const bilingual = (o: PairOptions): TrainingPair[] => trainingPairs(o).pairs.filter((p) => p.source === 'bilingual');
    assert.deepEqual(bilingual(options), [...bilingualPairs(), ...pairs]);
    assert.deepEqual(bilingual({ ...options, bilingualNames: 0 }), bilingualPairs());
    assert.deepEqual(bilingual({ ...options, bilingual: 0 }), []);
  });
});
