import assert from 'node:assert/strict';
import { MAX_CURSOR_LENGTH, decodeCursor, encodeCursor } from '../../../src/core/gateway/gatewayCursor';

describe('gateway list cursors', () => {
  it('round-trips a server and its own cursor, whatever characters either holds', () => {
    for (const position of [{ server: 'everything' }, { server: 'my server.v2', cursor: 'b64/==+?&' }, { server: 'ünï', cursor: '' }, { server: 'x', cursor: '{"v":1}' }]) {
      const text = encodeCursor(position);
      assert.match(text, /^[A-Za-z0-9_-]+$/, 'opaque, URL-safe text');
      assert.deepEqual(decodeCursor(text), position);
    }
  });

  it('refuses what it did not make: other servers\' cursors, damaged text, other versions and shapes, and very long text', () => {
    const made = (payload: unknown): string => Buffer.from(JSON.stringify(payload)).toString('base64url');
    for (const text of [
      '',
      '2', // a routed server's own cursor, sent back to the gateway
      'not a cursor!',
      encodeCursor({ server: 'a' }).slice(0, -3),
      made({ v: 2, s: 'a' }),
      made({ v: 1 }),
      made({ v: 1, s: '' }),
      made({ v: 1, s: 'a', c: 3 }),
      made(['a', 'b']),
      'A'.repeat(MAX_CURSOR_LENGTH + 1),
    ]) {
      assert.equal(decodeCursor(text), undefined, text.slice(0, 40));
    }
  });
});
