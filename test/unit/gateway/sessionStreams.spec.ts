import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { SessionEventStore, answerLostCall, lostRequestId, withStreamRequest } from '../../../src/core/gateway/sessionStreams';

const RESULT: JSONRPCMessage = { jsonrpc: '2.0', id: 7, result: { content: [] } };
const PROGRESS: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } };

describe('sessionStreams (resumable 2025 answer streams, and lost calls)', () => {
  it('names a stream after the request it answers, so another gateway can tell which call was lost', async () => {
    const store = new SessionEventStore();
    const priming = await withStreamRequest({ jsonrpc: '2.0', id: 7, method: 'tools/call' }, () => store.storeEvent('stream-a', {} as JSONRPCMessage));
    assert.equal(lostRequestId(priming), 7);
    const textual = await withStreamRequest({ jsonrpc: '2.0', id: 'call-9', method: 'tools/call' }, () => store.storeEvent('stream-b', {} as JSONRPCMessage));
    assert.equal(lostRequestId(textual), 'call-9');
    // Later events of a stream keep its request, whatever context stores them.
    assert.equal(lostRequestId(await store.storeEvent('stream-a', RESULT)), 7);
    assert.equal(lostRequestId(await store.storeEvent('standalone', PROGRESS)), undefined, 'a stream without a request names none');
    assert.equal(lostRequestId('not an event id'), undefined);
    assert.equal(lostRequestId(undefined), undefined);
  });

  it('replays the events after the last one the client saw, without the priming event', async () => {
    const store = new SessionEventStore();
    const priming = await withStreamRequest({ jsonrpc: '2.0', id: 7, method: 'tools/call' }, () => store.storeEvent('stream-a', {} as JSONRPCMessage));
    const progress = await store.storeEvent('stream-a', PROGRESS);
    await store.storeEvent('stream-a', RESULT);
    assert.equal(await store.getStreamIdForEventId(priming), 'stream-a');
    const replayed = async (after: string): Promise<unknown[]> => {
      const sent: unknown[] = [];
      assert.equal(await store.replayEventsAfter(after, { send: async (_id, m) => void sent.push(m) }), 'stream-a');
      return sent;
    };
    assert.deepEqual(await replayed(priming), [PROGRESS, RESULT]);
    assert.deepEqual(await replayed(progress), [RESULT]);
    await assert.rejects(store.replayEventsAfter('-.unknown.1', { send: async () => undefined }), /No stream to resume/);
  });

  it('answers a lost call with a JSON-RPC error for its id on an SSE stream', () => {
    let head: { status?: number; headers?: Record<string, string> } = {};
    let body = '';
    const res = { writeHead: (status: number, headers: Record<string, string>) => (head = { status, headers }), end: (text: string) => (body = text) } as unknown as ServerResponse;
    answerLostCall(res, 7);
    assert.equal(head.status, 200);
    assert.equal(head.headers?.['Content-Type'], 'text/event-stream');
    const data = JSON.parse(/^event: message\ndata: (.*)\n\n$/.exec(body)![1]!) as { id: number; error: { code: number; message: string } };
    assert.equal(data.id, 7);
    assert.match(data.error.message, /stopped .*whether it ran is unknown/);
  });
});
