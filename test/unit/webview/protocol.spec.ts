import assert from 'node:assert/strict';
import {
  coalesce,
  describeRejected,
  isCostMessage,
  isExplain,
  isExtensionMessage,
  isSelectTurn,
  isServersMessage,
  isShowServerLog,
  isStateMessage,
  isTurnAddedMessage,
  isWebviewMessage,
  MAX_EXPLAIN_PROMPT_CHARS,
  type ExtensionMessage,
} from '../../../src/webview/protocol';
import { costSnapshot, sampleSelection, sampleState, sampleTurn } from './fixtures';

describe('panel protocol', () => {
  describe('messages from the webview (untrusted)', () => {
    it('accepts every well-formed message', () => {
      for (const m of [
        { type: 'ready' },
        { type: 'explain', id: 1, prompt: 'find my notes' },
        { type: 'resume' },
        { type: 'resetCostWindow' },
        { type: 'selectTurn', turn: 3 },
        { type: 'showServerLog', server: 'everything' },
      ]) {
        assert.ok(isWebviewMessage(m), JSON.stringify(m));
      }
    });

    it('rejects unknown types, wrong shapes and bad field values', () => {
      for (const m of [
        undefined,
        null,
        42,
        'ready',
        [],
        ['ready'],
        {},
        { type: 'Ready' },
        { type: 'run', command: 'rm -rf /' },
        { type: 'explain' },
        { type: 'explain', id: 1, prompt: '' },
        { type: 'explain', id: 1, prompt: '   ' },
        { type: 'explain', id: 1, prompt: 42 },
        { type: 'explain', id: 1, prompt: 'x'.repeat(MAX_EXPLAIN_PROMPT_CHARS + 1) },
        { type: 'explain', prompt: 'no request id' },
        { type: 'explain', id: 0, prompt: 'id must be positive' },
        { type: 'explain', id: 1.5, prompt: 'id must be whole' },
        { type: 'selectTurn' },
        { type: 'selectTurn', turn: '3' },
        { type: 'selectTurn', turn: 1.5 },
        { type: 'selectTurn', turn: -1 },
        { type: 'selectTurn', turn: Number.NaN },
        { type: 'showServerLog', server: '' },
        { type: 'showServerLog', server: { name: 'x' } },
        { type: 'showServerLog', server: 'x'.repeat(201) },
      ]) {
        assert.equal(isWebviewMessage(m), false, JSON.stringify(m) ?? String(m));
      }
    });

    it('narrows to the right message', () => {
      const m: unknown = { type: 'explain', id: 3, prompt: 'hello' };
      assert.ok(isExplain(m));
      assert.equal(m.prompt, 'hello');
      assert.equal(isSelectTurn(m), false);
      assert.equal(isShowServerLog({ type: 'showServerLog', server: 'memory' }), true);
    });

    it('describes a rejected message without echoing its content', () => {
      assert.match(describeRejected(null), /null/);
      assert.match(describeRejected([1]), /array/);
      assert.match(describeRejected({ prompt: 'x' }), /without a string "type"/);
      const long = describeRejected({ type: `evil${'x'.repeat(500)}`, secret: 'token-123' });
      assert.ok(long.length < 150, long);
      assert.ok(!long.includes('token-123'));
    });
  });

  describe('messages to the webview', () => {
    it('accepts the state snapshot and each update', () => {
      const state = sampleState();
      assert.ok(isStateMessage({ type: 'state', state }));
      assert.ok(isTurnAddedMessage({ type: 'turnAdded', turn: sampleTurn(2), loops: [] }));
      assert.ok(isCostMessage({ type: 'cost', cost: costSnapshot() }));
      assert.ok(isServersMessage({ type: 'servers', servers: state.servers, descriptions: {} }));
      assert.ok(isExtensionMessage({ type: 'explained', id: 1, selection: sampleSelection() }));
      assert.equal(isExtensionMessage({ type: 'explained', selection: sampleSelection() }), false, 'an answer without its request id');
      assert.ok(isExtensionMessage({ type: 'explainFailed', id: 2, prompt: 'p', message: 'no engine' }));
    });

    it('rejects snapshots with missing parts', () => {
      const state = sampleState();
      assert.equal(isStateMessage({ type: 'state', state: { ...state, cost: undefined } }), false);
      assert.equal(isStateMessage({ type: 'state', state: { ...state, turns: [{ turn: 1 }] } }), false);
      assert.equal(isTurnAddedMessage({ type: 'turnAdded', turn: sampleTurn(1) }), false);
      assert.equal(isExtensionMessage({ type: 'explained', id: 1, selection: { prompt: 'p' } }), false);
      assert.ok(isExtensionMessage({ type: 'explained', id: 1, selection: { ...sampleSelection(), readAs: [{ from: 'hirng', to: 'hiring' }] } }));
      assert.equal(isExtensionMessage({ type: 'explained', id: 1, selection: { ...sampleSelection(), readAs: 'hirng' } }), false, 'readAs must be a list');
      assert.equal(isExtensionMessage({ type: 'explained', id: 1, selection: { ...sampleSelection(), readAs: [{ from: 'hirng' }] } }), false, 'each fix names both words');
      assert.equal(isExtensionMessage({ type: 'cost', cost: { buckets: 'many' } }), false);
    });

    it('accepts servers with poisoning flags and rejects malformed flags', () => {
      const state = sampleState();
      const flags = { everything_echo: [{ kind: 'instruction', severity: 'high', reason: 'description tells the model to ignore its instructions', quarantined: true }] };
      const withFlags = (f: unknown): unknown => ({ type: 'servers', servers: { ...state.servers, flags: f }, descriptions: {} });
      assert.ok(isServersMessage(withFlags(flags)));
      assert.ok(isStateMessage({ type: 'state', state: { ...state, servers: { ...state.servers, flags } } }));
      assert.equal(isServersMessage(withFlags([])), false, 'an array, not a record');
      assert.equal(isServersMessage(withFlags({ t: 'high' })), false, 'a tool maps to a list');
      assert.equal(isServersMessage(withFlags({ t: [{ kind: 'x', severity: 'critical', reason: 'r' }] })), false, 'unknown severity');
      assert.equal(isServersMessage(withFlags({ t: [{ kind: 'x', severity: 'low' }] })), false, 'no reason');
      assert.equal(isServersMessage(withFlags({ t: [{ kind: 'x', severity: 'low', reason: 'r', quarantined: 'yes' }] })), false, 'quarantined is a boolean');
      assert.equal(isStateMessage({ type: 'state', state: { ...state, servers: { ...state.servers, flags: { t: [null] } } } }), false);
    });

    it('survives a JSON round trip (postMessage clones plain data)', () => {
      const state = JSON.parse(JSON.stringify(sampleState())) as unknown;
      assert.ok(isStateMessage({ type: 'state', state }));
    });
  });

  describe('coalesce', () => {
    it('keeps only the latest cost and servers snapshots, and every turn in order', () => {
      const cost1 = costSnapshot({ hourlyTokenCap: 1 });
      const cost2 = costSnapshot({ hourlyTokenCap: 2 });
      const servers = sampleState().servers;
      const batch: ExtensionMessage[] = [
        { type: 'cost', cost: cost1 },
        { type: 'turnAdded', turn: sampleTurn(1), loops: [] },
        { type: 'servers', servers, descriptions: {} },
        { type: 'turnAdded', turn: sampleTurn(2), loops: [] },
        { type: 'cost', cost: cost2 },
        { type: 'servers', servers, descriptions: { a: 'b' } },
      ];
      const out = coalesce(batch);
      assert.deepEqual(
        out.map((m) => m.type),
        ['turnAdded', 'turnAdded', 'cost', 'servers'],
      );
      assert.equal((out[2] as Extract<ExtensionMessage, { type: 'cost' }>).cost.limits.hourlyTokenCap, 2);
      assert.deepEqual((out[3] as Extract<ExtensionMessage, { type: 'servers' }>).descriptions, { a: 'b' });
    });

    it('drops updates that a later full state covers, but keeps replies', () => {
      const out = coalesce([
        { type: 'turnAdded', turn: sampleTurn(1), loops: [] },
        { type: 'explained', id: 1, selection: sampleSelection() },
        { type: 'cost', cost: costSnapshot() },
        { type: 'state', state: sampleState() },
        { type: 'cost', cost: costSnapshot() },
      ]);
      assert.deepEqual(
        out.map((m) => m.type),
        ['explained', 'state', 'cost'],
      );
    });

    it('leaves an empty batch empty', () => {
      assert.deepEqual(coalesce([]), []);
    });
  });
});
