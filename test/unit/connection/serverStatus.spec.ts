import assert from 'node:assert/strict';
import { SettledWaiters, waitUntilReady, type ServerState, type ServerStatus } from '../../../src/core/connection/serverStatus';
import { Emitter } from '../../../src/core/util/emitter';

/** A connection's state and its change event, moved by hand. */
class StateHolder {
  currentState: ServerState = 'starting';
  private readonly changed = new Emitter<ServerStatus>();
  onDidChangeStatus(listener: (status: ServerStatus) => void): () => void {
    return this.changed.on(listener);
  }
  move(state: ServerState): void {
    this.currentState = state;
    this.changed.fire({ name: 'notes', state, restarts: 0, toolCount: 0 });
  }
}

describe('waiting on a connection', () => {
  it('is ready once the state says so, through any number of changes', async () => {
    const holder = new StateHolder();
    const ready = waitUntilReady(holder, 5_000);
    holder.move('restarting');
    setTimeout(() => holder.move('ready'), 5);
    assert.equal(await ready, true);
  });

  it('is not ready when the connection fails, stops, or the time runs out', async () => {
    const holder = new StateHolder();
    const failing = waitUntilReady(holder, 5_000);
    holder.move('failed');
    assert.equal(await failing, false);
    holder.move('starting');
    assert.equal(await waitUntilReady(holder, 20), false);
  });

  it('releases every settled-waiter at once, or each after its own time', async () => {
    const waiters = new SettledWaiters();
    let released = 0;
    const a = waiters.wait(5_000).then(() => released++);
    const b = waiters.wait(5_000).then(() => released++);
    waiters.release();
    await Promise.all([a, b]);
    assert.equal(released, 2);
    await waiters.wait(10);
  });
});
