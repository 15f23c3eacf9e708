/**
 * `npm run eval:seeds`: its arguments are checked before any training starts, and the spread it prints is
 * the plain mean and sample standard deviation.
 */
import assert from 'node:assert/strict';
import { parseArgs, spread } from '../../../scripts/model/seedSpread';

describe('eval:seeds (scripts/model/seedSpread.ts)', () => {
  it('reads seeds, sets and training settings', () => {
    const args = parseArgs(['--seeds', '4,5', '--only', 'team_dev,metatool_multi', '--set', 'dimension=128', '--set', 'sealRepeats=3']);
    assert.deepEqual(args.seeds, [4, 5]);
    assert.deepEqual(args.sets, ['team_dev', 'metatool_multi']);
    assert.deepEqual(args.settings, ['dimension=128', 'sealRepeats=3']);
    assert.equal(args.keep, undefined);
  });

  it('defaults to three seeds over the four shared sets and the team dev split', () => {
    const args = parseArgs([]);
    assert.deepEqual(args.seeds, [1, 2, 3]);
    assert.ok(args.sets.includes('team_dev') && args.sets.includes('seal_test_out_domain'));
    assert.ok(!args.sets.includes('team_test'), 'the test split is never part of a tuning comparison');
  });

  it('refuses bad arguments, naming what was wrong', () => {
    assert.throws(() => parseArgs(['--seeds', '1,two']), /--seeds needs whole numbers.*"1,two"/);
    assert.throws(() => parseArgs(['--set', 'dimension']), /--set needs name=number.*"dimension"/);
    assert.throws(() => parseArgs(['--epochs', '2']), /Unknown argument "--epochs"/);
    assert.throws(() => parseArgs(['--seeds']), /--seeds needs a value/);
    assert.throws(() => parseArgs(['--only', '--seeds', '1']), /--only needs a value/);
  });

  it('gives the mean, the sample standard deviation and the range', () => {
    assert.deepEqual(spread([92.4, 92.5, 93]), { mean: 92.63, sd: 0.32, min: 92.4, max: 93 });
    assert.deepEqual(spread([95.6]), { mean: 95.6, sd: 0, min: 95.6, max: 95.6 });
  });
});
