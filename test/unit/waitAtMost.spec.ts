import assert from 'node:assert/strict';
import { waitAtMost } from '../../src/core/util/waitAtMost';

describe('waitAtMost', () => {
  it('resolves when the promise settles first', async () => {
    let done = false;
    await waitAtMost(Promise.resolve().then(() => (done = true)), 60_000);
    assert.equal(done, true);
  });

  it('resolves when the time is up first, the promise still pending', async () => {
    let settled = false;
    const never = new Promise<void>(() => undefined).finally(() => (settled = true));
    await waitAtMost(never, 10);
    assert.equal(settled, false);
  });

  it('passes a rejection on', async () => {
    await assert.rejects(waitAtMost(Promise.reject(new Error('boom')), 60_000), /boom/);
  });
});
