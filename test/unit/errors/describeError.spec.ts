import assert from 'node:assert/strict';
import { describeError } from '../../../src/core/errors/describeError';

describe('describeError', () => {
  it('gives the message of an Error, of its subclasses and of an Error with a cause, unchanged', () => {
    assert.equal(describeError(new Error('disk full')), 'disk full');
    assert.equal(describeError(new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') })), 'fetch failed');
    class ServerGone extends Error {}
    assert.equal(describeError(new ServerGone('server "notes" exited')), 'server "notes" exited');
    assert.equal(describeError(new Error('')), '');
  });

  it('gives a thrown string as it is, and other primitives as text', () => {
    assert.equal(describeError('no such tool'), 'no such tool');
    assert.equal(describeError(42), '42');
    assert.equal(describeError(undefined), 'undefined');
    assert.equal(describeError(null), 'null');
    assert.equal(describeError(Symbol('x')), 'Symbol(x)');
  });

  it('gives the message of an error-like object (another realm, a library\'s plain object)', () => {
    assert.equal(describeError({ message: 'quota exceeded', code: 429 }), 'quota exceeded');
  });

  it('gives the JSON of any other object, rather than "[object Object]"', () => {
    assert.equal(describeError({ code: 'ENOENT', path: '/x' }), '{"code":"ENOENT","path":"/x"}');
    assert.equal(describeError([1, 'two']), '[1,"two"]');
  });

  it('never throws: objects JSON cannot write, and objects without a prototype, get their tag', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic['self'] = cyclic;
    assert.equal(describeError(cyclic), '[object Object]');
    assert.equal(describeError({ big: 1n }), '[object Object]');
    const bare = Object.create(null) as Record<string, unknown>;
    assert.equal(describeError(bare), '{}');
    bare['big'] = 1n;
    assert.equal(describeError(bare), '[object Object]');
  });
});
