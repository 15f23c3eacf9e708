import assert from 'node:assert/strict';
import { ConcurrencyQueue, QueueWaitTimeout, type QueueRunOptions } from '../../src/core/router/concurrencyQueue';

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise callback run (no timers, no wall-clock time). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A queue plus bookkeeping: which tasks started, in what order, and how many ran at once. */
function harness(limit: number) {
  const queue = new ConcurrencyQueue(limit);
  const started: number[] = [];
  const gates = new Map<number, Deferred<void>>();
  let running = 0;
  let maxRunning = 0;
  const submit = (id: number, options?: QueueRunOptions): Promise<number> => {
    const gate = deferred();
    gates.set(id, gate);
    return queue.run(async () => {
      started.push(id);
      running++;
      maxRunning = Math.max(maxRunning, running);
      try {
        await gate.promise;
        return id;
      } finally {
        running--;
      }
    }, options);
  };
  const finish = async (id: number): Promise<void> => {
    gates.get(id)!.resolve();
    await settle();
  };
  return { queue, started, submit, finish, maxRunning: () => maxRunning };
}

describe('ConcurrencyQueue', () => {
  it('starts tasks at once while under the limit', async () => {
    const h = harness(2);
    const a = h.submit(1);
    const b = h.submit(2);
    await settle();
    assert.deepEqual(h.started, [1, 2]);
    assert.equal(h.queue.active, 2);
    assert.equal(h.queue.pending, 0);
    await h.finish(1);
    await h.finish(2);
    assert.deepEqual(await Promise.all([a, b]), [1, 2]);
    assert.equal(h.queue.active, 0);
  });

  it('never runs more than `limit` tasks at once, and does reach the limit', async () => {
    const h = harness(3);
    const results = Array.from({ length: 10 }, (_, i) => h.submit(i));
    await settle();
    assert.equal(h.queue.active, 3);
    assert.equal(h.queue.pending, 7);
    // Finish tasks out of submission order, one at a time.
    for (const id of [1, 0, 3, 2, 5, 4, 7, 6, 9, 8]) {
      assert.ok(h.queue.active <= 3);
      await h.finish(id);
    }
    assert.deepEqual(await Promise.all(results), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(h.maxRunning(), 3);
    assert.equal(h.queue.active, 0);
    assert.equal(h.queue.pending, 0);
  });

  it('starts waiting tasks in FIFO order', async () => {
    const h = harness(1);
    const all = [0, 1, 2, 3, 4].map((id) => h.submit(id));
    await settle();
    assert.deepEqual(h.started, [0]);
    for (const id of [0, 1, 2, 3, 4]) await h.finish(id);
    assert.deepEqual(h.started, [0, 1, 2, 3, 4]);
    await Promise.all(all);
  });

  it('passes a task rejection to the caller and frees the slot', async () => {
    const queue = new ConcurrencyQueue(1);
    const failing = queue.run(() => Promise.reject(new Error('task failed')));
    const next = queue.run(async () => 'next');
    await assert.rejects(failing, /task failed/);
    assert.equal(await next, 'next');
    assert.equal(queue.active, 0);
  });

  it('frees the slot when a task throws synchronously', async () => {
    const queue = new ConcurrencyQueue(1);
    await assert.rejects(
      queue.run(() => {
        throw new Error('sync throw');
      }),
      /sync throw/,
    );
    assert.equal(queue.active, 0);
    assert.equal(await queue.run(async () => 7), 7);
  });

  describe('abort', () => {
    it('rejects a waiting task with the signal reason and never runs it', async () => {
      const h = harness(1);
      const first = h.submit(1);
      const controller = new AbortController();
      const waiting = h.submit(2, { signal: controller.signal });
      await settle();
      assert.equal(h.queue.pending, 1);
      const reason = new Error('caller gave up');
      controller.abort(reason);
      await assert.rejects(waiting, (e) => e === reason);
      assert.equal(h.queue.pending, 0);
      assert.equal(h.queue.active, 1, 'the running task keeps its slot');
      await h.finish(1);
      assert.equal(await first, 1);
      assert.deepEqual(h.started, [1]);
      assert.equal(h.queue.active, 0);
    });

    it('frees nothing wrongly: the limit still holds after an abort', async () => {
      const h = harness(1);
      const first = h.submit(1);
      const controller = new AbortController();
      const aborted = h.submit(2, { signal: controller.signal });
      const third = h.submit(3);
      await settle();
      controller.abort(new Error('stop'));
      await assert.rejects(aborted, /stop/);
      await settle();
      assert.deepEqual(h.started, [1], 'task 3 must wait for task 1, not take the aborted task\u2019s place');
      assert.equal(h.queue.active, 1);
      await h.finish(1);
      assert.deepEqual(h.started, [1, 3]);
      await h.finish(3);
      assert.deepEqual(await Promise.all([first, third]), [1, 3]);
      assert.equal(h.maxRunning(), 1);
      assert.equal(h.queue.active, 0);
    });

    it('keeps FIFO order for the others when a task in the middle of the line aborts', async () => {
      const h = harness(1);
      const controller = new AbortController();
      const tasks = [h.submit(0), h.submit(1), h.submit(2, { signal: controller.signal }), h.submit(3)];
      await settle();
      controller.abort(new Error('middle'));
      await assert.rejects(tasks[2]!, /middle/);
      for (const id of [0, 1, 3]) await h.finish(id);
      assert.deepEqual(h.started, [0, 1, 3]);
      await Promise.all([tasks[0], tasks[1], tasks[3]]);
    });

    it('rejects at once when the signal is already aborted, even with a free slot', async () => {
      const h = harness(2);
      const reason = new Error('already aborted');
      await assert.rejects(h.submit(1, { signal: AbortSignal.abort(reason) }), (e) => e === reason);
      assert.deepEqual(h.started, []);
      assert.equal(h.queue.active, 0);
      assert.equal(h.queue.pending, 0);
    });

    it('does not affect a task that has already started', async () => {
      const h = harness(1);
      const controller = new AbortController();
      const running = h.submit(1, { signal: controller.signal });
      await settle();
      controller.abort(new Error('too late'));
      await h.finish(1);
      assert.equal(await running, 1);
      assert.equal(h.queue.active, 0);
    });

    it('does not affect a task that waited and then started', async () => {
      const h = harness(1);
      const controller = new AbortController();
      const first = h.submit(1);
      const second = h.submit(2, { signal: controller.signal });
      await settle();
      await h.finish(1);
      assert.deepEqual(h.started, [1, 2]);
      controller.abort(new Error('too late'));
      await h.finish(2);
      assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    });
  });

  describe('waitLimitMs', () => {
    it('gives up waiting with QueueWaitTimeout once the wait limit passes, and never starts the task', async () => {
      const h = harness(1);
      const first = h.submit(1);
      const waiting = h.submit(2, { waitLimitMs: 1 });
      await assert.rejects(waiting, (e) => e instanceof QueueWaitTimeout && e.waitedMs === 1 && e.name === 'QueueWaitTimeout' && /waited 1 ms for a free slot/.test(e.message));
      assert.equal(h.queue.pending, 0);
      assert.equal(h.queue.active, 1);
      await h.finish(1);
      assert.equal(await first, 1);
      assert.deepEqual(h.started, [1]);
      assert.equal(h.queue.active, 0);
    });

    it('gives up with a wait limit of 0 when the queue is full', async () => {
      const h = harness(1);
      const first = h.submit(1);
      await assert.rejects(h.submit(2, { waitLimitMs: 0 }), QueueWaitTimeout);
      await h.finish(1);
      await first;
      assert.deepEqual(h.started, [1]);
    });

    it('does not apply when a slot is free', async () => {
      const h = harness(1);
      const only = h.submit(1, { waitLimitMs: 0 });
      await settle();
      assert.deepEqual(h.started, [1]);
      await h.finish(1);
      assert.equal(await only, 1);
    });

    it('lets a task that gets its slot in time run normally', async () => {
      const h = harness(1);
      const first = h.submit(1);
      const second = h.submit(2, { waitLimitMs: 3_600_000 });
      await settle();
      await h.finish(1);
      assert.deepEqual(h.started, [1, 2]);
      await h.finish(2);
      assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    });

    it('keeps the line moving for the others after a task times out', async () => {
      const h = harness(1);
      const first = h.submit(1);
      const timedOut = h.submit(2, { waitLimitMs: 1 });
      const third = h.submit(3);
      await assert.rejects(timedOut, QueueWaitTimeout);
      assert.equal(h.queue.pending, 1);
      await h.finish(1);
      assert.deepEqual(h.started, [1, 3]);
      await h.finish(3);
      assert.deepEqual(await Promise.all([first, third]), [1, 3]);
    });

    it('ends with whichever comes first: an abort before the wait limit rejects with the abort reason', async () => {
      const h = harness(1);
      const first = h.submit(1);
      const controller = new AbortController();
      const reason = new Error('aborted first');
      const waiting = h.submit(2, { signal: controller.signal, waitLimitMs: 3_600_000 });
      await settle();
      controller.abort(reason);
      await assert.rejects(waiting, (e) => e === reason);
      await h.finish(1);
      await first;
      assert.deepEqual(h.started, [1]);
    });
  });

  describe('setLimit', () => {
    it('starts waiting tasks at once when the limit rises', async () => {
      const h = harness(1);
      const all = [0, 1, 2, 3].map((id) => h.submit(id));
      await settle();
      assert.equal(h.queue.pending, 3);
      h.queue.setLimit(3);
      await settle();
      assert.deepEqual(h.started, [0, 1, 2]);
      assert.equal(h.queue.active, 3);
      assert.equal(h.queue.pending, 1);
      for (const id of [0, 1, 2, 3]) await h.finish(id);
      await Promise.all(all);
      assert.equal(h.maxRunning(), 3);
    });

    it('lets running tasks finish when the limit falls, and starts new ones only below it', async () => {
      const h = harness(3);
      const all = [0, 1, 2, 3].map((id) => h.submit(id));
      await settle();
      h.queue.setLimit(1);
      assert.equal(h.queue.active, 3);
      await h.finish(0);
      await h.finish(1);
      assert.deepEqual(h.started, [0, 1, 2], 'two tasks still running: no room under a limit of 1');
      await h.finish(2);
      assert.deepEqual(h.started, [0, 1, 2, 3]);
      await h.finish(3);
      await Promise.all(all);
    });

    it('treats a limit below 1 as 1', async () => {
      const h = harness(1);
      const all = [0, 1].map((id) => h.submit(id));
      await settle();
      h.queue.setLimit(0);
      await h.finish(0);
      assert.deepEqual(h.started, [0, 1], 'the queue must not stall');
      await h.finish(1);
      await Promise.all(all);
    });
  });
});
