import assert from 'node:assert/strict';
import { formatSelection } from '../../../src/cli/selectCommands';
import { readAsText } from '../../../src/core/selection/selectionTypes';
import { sampleSelection } from '../webview/fixtures';

describe('how a prompt was read, in the CLI', () => {
  it('select prints a spelling line only when a typo was read as another word', () => {
    assert.doesNotMatch(formatSelection(sampleSelection()), /spelling:/);
    const out = formatSelection(sampleSelection({ readAs: [{ from: 'knowlege', to: 'knowledge' }] }));
    assert.match(out.split('\n')[1]!, /^spelling: read "knowlege" as "knowledge"$/);
  });

  it('names every fix, in the prompt’s order', () => {
    assert.equal(readAsText({ readAs: [{ from: 'hirng', to: 'hiring' }, { from: 'ordres', to: 'orders' }] }), 'read "hirng" as "hiring", "ordres" as "orders"');
    assert.equal(readAsText({}), '');
  });
});
