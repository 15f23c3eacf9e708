import assert from 'node:assert/strict';
import type { NearMiss, Selection } from '../../../src/core/selection/selectionTypes';
import { coalesce, isExtensionMessage, isPinnedMessage, isPinTool, isStateMessage, isWebviewMessage, MAX_TOOL_NAME_CHARS, type PinReply } from '../../../src/webview/protocol';
import { CORE_TOOLS_SETTING, explainedText, nearMissRows, pinRefusal, pinStatusText } from '../../../src/webview/nearMissView';
import { costSummary } from '../../../src/webview/costView';
import { costSnapshot, HOSTILE_DESCRIPTION, sampleSelection, sampleState, sampleTurn } from './fixtures';

/** The panel's "Not sent" list and its Pin button: guards on both sides, the rows, and what the status line says. */

const NEAR_MISSES: readonly NearMiss[] = [
  { name: 'memory_search_nodes', score: 0.15, cosine: 0.33, lexical: 1.2, why: 'below-count', reason: 'ranked 5th; 4 tools were sent' },
  { name: 'memory_open_nodes', score: -0.1, why: 'below-cutoff', reason: 'score -0.10 under the cutoff 0.20' },
  { name: 'everything_add', score: -0.3, cosine: 0.05, why: 'over-cap', reason: 'over the cap of 4' },
  { name: 'memory_delete_entities', score: 0.9, cosine: 0.5, why: 'policy', reason: 'marked destructive' },
];

describe('panel: tools not sent (near misses)', () => {
  describe('protocol', () => {
    it('carries a selection with near misses through the guards, and one without (older selections)', () => {
      const selection = sampleSelection({ nearMisses: NEAR_MISSES });
      assert.ok(isExtensionMessage({ type: 'explained', id: 1, selection }));
      assert.ok(isStateMessage({ type: 'state', state: { ...sampleState(), turns: [sampleTurn(1, { selection })] } }));
      assert.ok(isExtensionMessage(JSON.parse(JSON.stringify({ type: 'explained', id: 2, selection }))), 'survives postMessage cloning');
      // Selections a webview saved before near misses existed come back from getState without them.
      const { nearMisses: _dropped, ...older } = sampleSelection();
      assert.ok(isExtensionMessage({ type: 'explained', id: 3, selection: older }));
      assert.deepEqual(nearMissRows(older as Selection), []);
    });

    it('rejects malformed near misses', () => {
      const good = NEAR_MISSES[0];
      for (const bad of [
        'memory_search_nodes',
        [null],
        [{ ...good, name: 7 }],
        [{ ...good, score: '0.1' }],
        [{ ...good, score: Number.NaN }],
        [{ ...good, cosine: 'high' }],
        [{ ...good, lexical: Number.POSITIVE_INFINITY }],
        [{ ...good, why: 'because' }],
        [{ ...good, reason: undefined }],
      ]) {
        assert.equal(isExtensionMessage({ type: 'explained', id: 1, selection: { ...sampleSelection(), nearMisses: bad } }), false, JSON.stringify(bad));
      }
    });

    it('accepts a pin request from the webview and rejects bad ones', () => {
      assert.ok(isWebviewMessage({ type: 'pinTool', tool: 'memory_search_nodes' }));
      assert.ok(isPinTool({ type: 'pinTool', tool: 'x'.repeat(MAX_TOOL_NAME_CHARS) }));
      for (const bad of [{ type: 'pinTool' }, { type: 'pinTool', tool: '' }, { type: 'pinTool', tool: '   ' }, { type: 'pinTool', tool: ['a'] }, { type: 'pinTool', tool: 'x'.repeat(MAX_TOOL_NAME_CHARS + 1) }, { type: 'pintool', tool: 'a' }]) {
        assert.equal(isWebviewMessage(bad), false, JSON.stringify(bad));
      }
    });

    it('accepts the pin answer and rejects malformed ones', () => {
      assert.ok(isExtensionMessage({ type: 'pinned', tool: 'a', outcome: 'added', scope: 'workspace' }));
      assert.ok(isPinnedMessage({ type: 'pinned', tool: 'a', outcome: 'failed', scope: 'user', detail: 'read-only settings' }));
      for (const bad of [
        { type: 'pinned', tool: 'a', outcome: 'done', scope: 'workspace' },
        { type: 'pinned', tool: 'a', outcome: 'added', scope: 'folder' },
        { type: 'pinned', outcome: 'added', scope: 'workspace' },
        { type: 'pinned', tool: 'a', outcome: 'refused', scope: 'workspace', detail: 42 },
      ]) {
        assert.equal(isExtensionMessage(bad), false, JSON.stringify(bad));
      }
    });

    it('never drops a pin answer when a full state follows in the same batch', () => {
      const out = coalesce([
        { type: 'pinned', tool: 'a', outcome: 'added', scope: 'workspace' },
        { type: 'cost', cost: costSnapshot() },
        { type: 'state', state: sampleState() },
      ]);
      assert.deepEqual(
        out.map((m) => m.type),
        ['pinned', 'state'],
      );
    });
  });

  describe('view model', () => {
    it('lists each near miss with its score on the chosen tools’ scale, why, and the selector’s reason', () => {
      const rows = nearMissRows(sampleSelection({ nearMisses: NEAR_MISSES }), { memory_search_nodes: HOSTILE_DESCRIPTION });
      assert.deepEqual(
        rows.map((r) => [r.name, r.scoreText, r.whyText, r.reason]),
        [
          ['memory_search_nodes', 'cosine 0.33', 'fewer tools wanted', 'ranked 5th; 4 tools were sent'],
          ['memory_open_nodes', 'score -0.10', 'under the cutoff', 'score -0.10 under the cutoff 0.20'],
          ['everything_add', 'cosine 0.05', 'over the cap', 'over the cap of 4'],
          ['memory_delete_entities', 'cosine 0.50', 'kept out by a policy', 'marked destructive'],
        ],
      );
      // The sample's cosine scale runs from -0.2 to 1.
      assert.ok(Math.abs((rows[0]?.bar ?? -1) - (0.33 + 0.2) / 1.2) < 1e-9);
      assert.equal(rows[1]?.bar, undefined, 'no cosine: no bar on a cosine scale');
      assert.equal(rows[0]?.description, HOSTILE_DESCRIPTION, 'descriptions stay plain strings (rendered as text)');
    });

    it('offers Pin except where a policy kept the tool out (core tools still obey policies)', () => {
      const rows = nearMissRows(sampleSelection({ nearMisses: NEAR_MISSES }));
      assert.deepEqual(
        rows.map((r) => r.pinnable),
        [true, true, true, false],
      );
    });

    it('uses fused scores for the bars when nothing has a cosine', () => {
      const selection = sampleSelection({
        method: 'keyword-only',
        tools: [{ name: 'a', score: 2, stages: ['keyword:lexical'], tier: 2, reason: 'r' }],
        ranking: [{ name: 'a', score: 2 }, { name: 'b', score: 0 }],
        dropped: [],
        nearMisses: [{ name: 'b', score: 0, why: 'below-cutoff', reason: 'under the cutoff' }],
      });
      const [row] = nearMissRows(selection);
      assert.equal(row?.scoreText, 'score 0.00');
      assert.equal(row?.bar, 0);
    });

    it('has no rows for a selection without near misses', () => {
      assert.deepEqual(nearMissRows(sampleSelection()), []);
      assert.deepEqual(nearMissRows(sampleSelection({ nearMisses: [] })), []);
    });

    it('says what a pin did and where, naming the setting', () => {
      const reply = (outcome: PinReply['outcome'], extra: Partial<PinReply> = {}): PinReply => ({ tool: 'memory_search_nodes', outcome, scope: 'workspace', ...extra });
      assert.equal(pinStatusText(reply('added')), `Pinned memory_search_nodes: added to ${CORE_TOOLS_SETTING} in this workspace's settings, so it is sent with every prompt.`);
      assert.match(pinStatusText(reply('added', { scope: 'user' })), /your user settings \(no folder is open\)/);
      assert.equal(pinStatusText(reply('already')), `memory_search_nodes is already in ${CORE_TOOLS_SETTING}.`);
      assert.equal(pinStatusText(reply('refused', { detail: 'no server offers a tool of that name now' })), 'Did not pin memory_search_nodes: no server offers a tool of that name now.');
      assert.match(pinStatusText(reply('failed', { detail: 'the file is read-only' })), /failed: the file is read-only\. Add it to toolRouter\.selection\.coreTools by hand\./);
    });

    it('refuses to pin a tool no server offers, or a name that would read as a glob', () => {
      const offered = new Set(['memory_search_nodes', 'odd*name', 'brace{x}']);
      assert.equal(pinRefusal('memory_search_nodes', offered), undefined);
      assert.match(pinRefusal('memory_gone', offered) ?? '', /no server offers/);
      assert.match(pinRefusal('odd*name', offered) ?? '', /read as a pattern/);
      assert.match(pinRefusal('brace{x}', offered) ?? '', /read as a pattern/);
    });

    it('announces an explanation briefly', () => {
      assert.equal(explainedText(sampleSelection({ nearMisses: NEAR_MISSES })), 'Explained: 4 tools chosen, 4 close behind not sent.');
      assert.equal(explainedText(sampleSelection({ tools: [sampleSelection().tools[0]!] })), 'Explained: 1 tool chosen.');
    });

    it('keys the paused alert by when the pause began', () => {
      const snapshot = costSnapshot({ hourlyTokenCap: 100 }, (cost) => void cost.record({ promptTokens: 150, completionTokens: 0 }));
      const summary = costSummary(snapshot);
      assert.equal(summary.paused, true);
      assert.equal(summary.pausedAt, snapshot.paused?.at);
      assert.equal(costSummary(costSnapshot()).pausedAt, undefined);
    });
  });
});
