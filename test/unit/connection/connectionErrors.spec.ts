import assert from 'node:assert/strict';
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { callError, ConnectionError, droppedCallError, unavailableError, type FailedCall } from '../../../src/core/connection/connectionErrors';

const at: FailedCall = { server: 'notes', tool: 'read_note', timeoutMs: 500, superseded: false, ready: true, reason: undefined, remote: false };

function classify(error: unknown, where: Partial<FailedCall> = {}): { error: ConnectionError; reconnects: string[] } {
  const reconnects: string[] = [];
  const out = callError(error, { ...at, ...where }, (why) => void reconnects.push(why));
  assert.ok(out instanceof ConnectionError);
  return { error: out, reconnects };
}

describe('connection errors', () => {
  it('say why a server cannot be asked, and whether trying again soon can help', () => {
    assert.deepEqual(pick(unavailableError('notes', 'starting', undefined)), ['SERVER_UNAVAILABLE', 'Server "notes" is still starting; try again in a moment.', true]);
    assert.deepEqual(pick(unavailableError('notes', 'restarting', 'exited')), ['SERVER_UNAVAILABLE', 'Server "notes" is restarting: exited.', true]);
    assert.deepEqual(pick(unavailableError('notes', 'disabled', 'x')), ['SERVER_UNAVAILABLE', 'Server "notes" is disabled; enable it in the configuration to use its tools.', false]);
    assert.deepEqual(pick(unavailableError('notes', 'failed', 'bad command')), ['SERVER_UNAVAILABLE', 'Server "notes" has failed: bad command', false]);
    assert.deepEqual(pick(droppedCallError('notes', 'read_note', 'terminated')), ['SERVER_RESTARTED', 'The connection to server "notes" dropped while "read_note" was running (terminated), and the server did not resume the response. The call\'s effect is unknown, so check before retrying.', true]);
  });

  it('tell a timeout, a restart, the server\'s own error, an invalid result and a cancel apart', () => {
    assert.equal(classify(new SdkError(SdkErrorCode.RequestTimeout, 'timed out')).error.type, 'TIMEOUT');
    assert.equal(classify(new SdkError(SdkErrorCode.ConnectionClosed, 'closed'), { reason: 'exit code 1' }).error.message, 'Server "notes" stopped while "read_note" was running (exit code 1). The server is being restarted; the call\'s effect is unknown, so check before retrying.');
    assert.equal(classify(new ProtocolError(-32602, 'bad title'), { superseded: true }).error.type, 'SERVER_RESTARTED');
    assert.deepEqual(pick(classify(new ProtocolError(-32602, 'bad title')).error), ['PROTOCOL_ERROR', 'Server "notes" answered "read_note" with error -32602: bad title', false]);
    assert.equal(classify(new SdkError(SdkErrorCode.InvalidResult, 'no content')).error.type, 'INVALID_RESULT');
    assert.equal(classify(Object.assign(new Error('This operation was aborted'), { name: 'AbortError' })).error.type, 'CANCELLED');
    assert.equal(classify(new Error('boom'), { ready: false }).error.type, 'SERVER_RESTARTED');
  });

  it('reconnect a remote server that went away mid-call, and only a remote one', () => {
    const remote = classify(new TypeError('fetch failed'), { remote: true });
    assert.equal(remote.error.type, 'SERVER_RESTARTED');
    assert.deepEqual(remote.reconnects, ['the connection failed during a call: fetch failed']);
    const local = classify(new TypeError('fetch failed'));
    assert.deepEqual(pick(local.error), ['SERVER_UNAVAILABLE', 'Calling "read_note" on server "notes" failed: fetch failed', true]);
    assert.deepEqual(local.reconnects, []);
  });

  it('hide the configuration\'s secrets in what they say', () => {
    const { error } = classify(new Error('token s3cr3t refused'), { secrets: ['s3cr3t'] });
    assert.doesNotMatch(error.message, /s3cr3t/);
  });
});

function pick(error: ConnectionError): [string, string, boolean] {
  return [error.type, error.message, error.retryable];
}
