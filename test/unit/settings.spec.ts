import assert from 'node:assert/strict';
import { checkSetting, SETTING_DEFAULTS } from '../../src/extension/settingsSchema';

describe('checkSetting', () => {
  it('takes a value of the right type, and the default when unset', () => {
    assert.deepEqual(checkSetting('selection.cap', 40), { value: 40 });
    assert.deepEqual(checkSetting('selection.cap', undefined), { value: SETTING_DEFAULTS['selection.cap'] });
    assert.deepEqual(checkSetting('selection.allowDestructiveTools', false), { value: false });
    assert.deepEqual(checkSetting('embeddings.provider', 'ollama'), { value: 'ollama' });
  });

  it('falls back to the default, and says what was wrong and what is used instead', () => {
    const cap = checkSetting('selection.cap', 'lots');
    assert.equal(cap.value, SETTING_DEFAULTS['selection.cap']);
    assert.match(cap.problem ?? '', /toolRouter\.selection\.cap is "lots", which is not a number of at least 0; the default 25 is used/);
    assert.match(checkSetting('selection.allowDestructiveTools', 'sometimes').problem ?? '', /"confirm", "never" or "always"/);
    assert.match(checkSetting('embeddings.provider', 'cloud').problem ?? '', /one of local, ollama, openai, none/);
    assert.match(checkSetting('learning.enabled', 'yes').problem ?? '', /true or false/);
    assert.match(checkSetting('selection.coreTools', 'files_*').problem ?? '', /a list/);
    assert.match(checkSetting('loops.perTool', ['x']).problem ?? '', /an object/);
    assert.match(checkSetting('chat.maxSteps', -1).problem ?? '', /at least 0/);
  });
});
