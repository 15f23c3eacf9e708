import assert from 'node:assert/strict';
import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { assumeCompleteResults, withDefaultResultType } from '../../../src/core/connection/completeByDefault';

describe('a result without resultType is complete (2026-07-28)', () => {
  it('adds resultType "complete" to a result that names none, and leaves every other message alone', () => {
    assert.deepEqual(withDefaultResultType({ jsonrpc: '2.0', id: 1, result: { content: [] } }), { jsonrpc: '2.0', id: 1, result: { content: [], resultType: 'complete' } });
    const inputRequired = { jsonrpc: '2.0', id: 2, result: { resultType: 'input_required', requestState: 's' } } as JSONRPCMessage;
    assert.equal(withDefaultResultType(inputRequired), inputRequired);
    const error = { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'no' } } as JSONRPCMessage;
    assert.equal(withDefaultResultType(error), error);
    const request = { jsonrpc: '2.0', id: 4, method: 'roots/list' } as JSONRPCMessage;
    assert.equal(withDefaultResultType(request), request);
  });

  it('applies to every handler the client sets on the transport, also after connecting', async () => {
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    assumeCompleteResults(ours);
    const seen: JSONRPCMessage[] = [];
    ours.onmessage = (message) => void seen.push(message);
    await ours.start();
    await theirs.start();
    await theirs.send({ jsonrpc: '2.0', id: 7, result: { content: [] } });
    assert.deepEqual(seen, [{ jsonrpc: '2.0', id: 7, result: { content: [], resultType: 'complete' } }]);
  });
});
