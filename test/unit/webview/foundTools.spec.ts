import assert from 'node:assert/strict';
import { isExtensionMessage, isStateMessage, isTurnAddedMessage } from '../../../src/webview/protocol';
import { callOutcomeText, foundRows } from '../../../src/webview/viewModel';
import { HOSTILE_DESCRIPTION, sampleState, sampleTurn } from './fixtures';

/** The panel's "found during the turn" list and the calls that asked first: protocol guards and view model. */

const FOUND = [
  { name: 'calendar_create_event', query: 'create a calendar event', step: 2, offered: true },
  { name: 'calendar_delete_event', query: 'create a calendar event', step: 2, offered: true, replaced: 'mail_read_message' },
  { name: 'files_write_file', query: 'save a file', step: 3, offered: false },
];

describe('panel: tools found during a turn', () => {
  it('carries found tools and call confirmations through the run-time guards', () => {
    const turn = sampleTurn(4, { found: FOUND, calls: [{ name: 'calendar_delete_event', ok: false, errorType: 'CANCELLED', latencyMs: 0, confirmation: 'declined' }] });
    assert.ok(isTurnAddedMessage({ type: 'turnAdded', turn, loops: [] }));
    assert.ok(isStateMessage({ type: 'state', state: { ...sampleState(), turns: [turn] } }));
    // Turns saved before the feature have no `found`: still accepted.
    assert.ok(isTurnAddedMessage({ type: 'turnAdded', turn: sampleTurn(5), loops: [] }));
  });

  it('rejects malformed found tools and confirmations', () => {
    for (const bad of [
      { found: 'calendar_create_event' },
      { found: [{ name: 'x', query: 'q', step: '2', offered: true }] },
      { found: [{ name: 'x', query: 'q', step: 2, offered: 'yes' }] },
      { found: [{ name: 'x', query: 'q', step: 2, offered: true, replaced: 7 }] },
      { found: [null] },
      { calls: [{ name: 'x', ok: true, latencyMs: 1, confirmation: 'maybe' }] },
      { calls: [{ name: 'x', ok: 'yes', latencyMs: 1 }] },
    ]) {
      const turn = { ...sampleTurn(4), ...bad };
      assert.ok(!isExtensionMessage({ type: 'turnAdded', turn, loops: [] }), JSON.stringify(bad));
    }
  });

  it('lists each found tool with its query, when it was offered, whether it was called, and its description as text', () => {
    const turn = sampleTurn(4, { found: FOUND, calls: [{ name: 'calendar_create_event', ok: true, latencyMs: 2 }] });
    const rows = foundRows(turn, { calendar_create_event: HOSTILE_DESCRIPTION });
    assert.deepEqual(
      rows.map((r) => [r.name, r.called, r.text]),
      [
        ['calendar_create_event', true, 'found with “create a calendar event” at step 2; offered from step 3'],
        ['calendar_delete_event', false, 'found with “create a calendar event” at step 2; offered from step 3 in place of mail_read_message'],
        ['files_write_file', false, 'found with “save a file” at step 3; not offered: the tool cap was full'],
      ],
    );
    assert.equal(rows[0]!.description, HOSTILE_DESCRIPTION, 'kept verbatim: main.ts sets it as text');
    assert.deepEqual(foundRows(sampleTurn(5)), []);
  });

  it('says how a call that asked first ended', () => {
    assert.equal(callOutcomeText({ name: 'x', ok: true, latencyMs: 1 }), 'ok');
    assert.equal(callOutcomeText({ name: 'x', ok: false, errorType: 'TIMEOUT', latencyMs: 1 }), 'TIMEOUT');
    assert.equal(callOutcomeText({ name: 'x', ok: true, latencyMs: 1, confirmation: 'confirmed' }), 'ok (run after you confirmed)');
    assert.equal(callOutcomeText({ name: 'x', ok: false, errorType: 'CANCELLED', latencyMs: 0, confirmation: 'declined' }), 'not run: you declined');
    assert.equal(callOutcomeText({ name: 'x', ok: false, errorType: 'CANCELLED', latencyMs: 0, confirmation: 'refused' }), 'not run: the destructive-tools policy refused it');
  });
});
