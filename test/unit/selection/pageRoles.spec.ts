import assert from 'node:assert/strict';
import { pageRole } from '../../../src/core/selection/pageRoles';

describe('page roles', () => {
  it('reads the role from the words of a browser tool\'s name, whatever the server calls it', () => {
    const roles = (names: string[]) => names.map((n) => `${n}:${pageRole(n) ?? '-'}`);
    assert.deepEqual(roles(['start_browser', 'launchDriver', 'browser_click', 'interact', 'tap']), ['start_browser:start', 'launchDriver:start', 'browser_click:click', 'interact:click', 'tap:click']);
    assert.deepEqual(roles(['browser_type', 'fill_form', 'send_keys', 'type_text']), ['browser_type:type', 'fill_form:type', 'send_keys:type', 'type_text:type']);
    assert.deepEqual(roles(['browser_snapshot', 'take_snapshot', 'get_element_text', 'get_page_content']), ['browser_snapshot:read', 'take_snapshot:read', 'get_element_text:read', 'get_page_content:read']);
  });

  it('gives no role to the rest: screenshots, keys, heap snapshots, a start that is not the browser\'s', () => {
    for (const name of ['take_screenshot', 'press_key', 'take_heapsnapshot', 'navigate', 'close_session', 'start_trace', 'start_codegen_session', 'browser_tabs']) assert.equal(pageRole(name), undefined, name);
  });
});
