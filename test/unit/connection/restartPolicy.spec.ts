import assert from 'node:assert/strict';
import { MAX_CONSECUTIVE_FAILURES, RESTART_BACKOFF_MS, RestartPolicy, STABLE_UPTIME_MS } from '../../../src/core/connection/restartPolicy';

describe('restart policy', () => {
  const realNow = Date.now;
  let now = 1_000_000;
  beforeEach(() => {
    now = 1_000_000;
    Date.now = () => now;
  });
  afterEach(() => {
    Date.now = realNow;
  });

  it('walks the backoff, holding its last step, and gives up after MAX_CONSECUTIVE_FAILURES in a row', () => {
    const policy = new RestartPolicy();
    const delays: number[] = [];
    for (let i = 1; i < MAX_CONSECUTIVE_FAILURES; i++) {
      const next = policy.decide('the server exited (code 1)', false);
      assert.equal(next.kind, 'retry');
      if (next.kind !== 'retry') return;
      delays.push(next.delayMs);
      assert.equal(next.reason, `the server exited (code 1); restarting in ${Math.round(next.delayMs / 1000)} s (attempt ${i})`);
      assert.equal(policy.nextAttemptAt, now + next.delayMs);
    }
    assert.deepEqual(delays, [...RESTART_BACKOFF_MS, RESTART_BACKOFF_MS.at(-1)!].slice(0, MAX_CONSECUTIVE_FAILURES - 1));
    const last = policy.decide('the server exited (code 1)', false);
    assert.deepEqual(last, { kind: 'give-up', reason: `the server exited (code 1); gave up after ${MAX_CONSECUTIVE_FAILURES} failed starts in a row. Fix the configuration, then run "Restart Server".` });
  });

  it('gives up at once on a permanent failure, and says how to recover', () => {
    const next = new RestartPolicy().decide('could not start: "nope" was not found: check "command"...', true);
    assert.deepEqual(next, { kind: 'give-up', reason: 'could not start: "nope" was not found: check "command". Fix the configuration, then run "Restart Server".' });
  });

  it('starts the backoff over after a stable uptime, a reset or nothing at all', () => {
    const policy = new RestartPolicy([10, 20, 30]);
    assert.equal(policy.retrying, false);
    policy.decide('dropped', false);
    policy.decide('dropped', false);
    assert.equal(policy.retrying, true);
    policy.markReady();
    now += STABLE_UPTIME_MS - 1;
    assert.deepEqual(policy.decide('dropped', false), { kind: 'retry', reason: 'dropped; restarting in 0 s (attempt 3)', delayMs: 30 }, 'not stable long enough');
    policy.markReady();
    now += STABLE_UPTIME_MS;
    assert.deepEqual(policy.decide('dropped', false), { kind: 'retry', reason: 'dropped; restarting in 0 s (attempt 1)', delayMs: 10 });
    policy.reset();
    assert.equal(policy.retrying, false);
    policy.attemptStarted();
    assert.equal(policy.nextAttemptAt, undefined);
  });

  it('runs a scheduled restart once, and not at all once cancelled', async () => {
    Date.now = realNow;
    const policy = new RestartPolicy();
    let runs = 0;
    policy.schedule(0, () => runs++);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(runs, 1);
    policy.schedule(0, () => runs++);
    policy.cancel();
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(runs, 1);
  });
});
