import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, Server } from '@modelcontextprotocol/server';
import { RemoteCalls, STREAM_RESUME_GRACE_MS, toolCallRequest } from '../../../src/core/connection/toolCalls';

describe('tool calls on a connection', () => {
  it('ends the remote calls a dropped stream left unanswered after the grace period, not those answered meanwhile', async function () {
    this.timeout(STREAM_RESUME_GRACE_MS + 2_000);
    const calls = new RemoteCalls();
    const resumed = calls.begin();
    const lost = calls.begin();
    calls.streamDropped('SSE stream disconnected');
    calls.end(resumed);
    const done = calls.begin(); // started after the drop: not affected
    await new Promise((resolve) => setTimeout(resolve, STREAM_RESUME_GRACE_MS + 100));
    assert.equal(resumed.controller.signal.aborted, false);
    assert.equal(done.controller.signal.aborted, false);
    assert.equal(lost.controller.signal.aborted, true);
    assert.equal(lost.dropped, 'SSE stream disconnected');
    assert.equal((lost.controller.signal.reason as Error).message, 'SSE stream disconnected');
  });

  it('sends tools/call with the arguments, and passes the result on unchecked', async () => {
    const server = new Server({ name: 'echo', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/call', (request) => ({ content: [{ type: 'text', text: JSON.stringify(request.params) }], extra: 'kept' }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(clientSide);
    try {
      const request = toolCallRequest(client, { tool: 'echo', args: { a: 1 }, timeoutMs: 5_000, signal: undefined, definition: undefined, viaSdk: false }, () => undefined);
      const result = await request();
      assert.deepEqual(result['content'], [{ type: 'text', text: '{"name":"echo","arguments":{"a":1}}' }]);
      assert.equal(result['extra'], 'kept');
    } finally {
      await client.close();
    }
  });
});
