/**
 * A FIFO limiter: at most `limit` tasks run at once; the rest wait in order.
 * Waiting ends early when the caller's signal aborts or its wait limit passes, so a call that has run out
 * of time never holds a place in line. A free slot costs no timer: the fast path stays cheap.
 */

/** Thrown when a task waited longer than its `waitLimitMs` for a slot. */
export class QueueWaitTimeout extends Error {
  constructor(readonly waitedMs: number) {
    super(`waited ${waitedMs} ms for a free slot`);
    this.name = 'QueueWaitTimeout';
  }
}

export interface QueueRunOptions {
  readonly signal?: AbortSignal;
  /** Give up waiting for a slot after this long; the task is then never started. */
  readonly waitLimitMs?: number;
}

export class ConcurrencyQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private limit: number) {}

  setLimit(limit: number): void {
    this.limit = Math.max(1, limit);
    this.drain();
  }

  get pending(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  async run<T>(task: () => Promise<T>, options: QueueRunOptions = {}): Promise<T> {
    if (options.signal?.aborted) throw options.signal.reason;
    if (this.running < this.limit) this.running++;
    else await this.wait(options);
    try {
      return await task();
    } finally {
      this.running--;
      this.drain();
    }
  }

  private wait({ signal, waitLimitMs }: QueueRunOptions): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (): boolean => {
        const i = this.waiting.indexOf(start);
        if (i >= 0) this.waiting.splice(i, 1);
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        return i >= 0;
      };
      const onAbort = (): void => {
        if (leave()) reject(signal?.reason);
      };
      const start = (): void => {
        leave();
        this.running++;
        resolve();
      };
      this.waiting.push(start);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (waitLimitMs !== undefined) {
        timer = setTimeout(() => {
          if (leave()) reject(new QueueWaitTimeout(waitLimitMs));
        }, waitLimitMs);
        timer.unref?.();
      }
    });
  }

  private drain(): void {
    while (this.running < this.limit && this.waiting.length > 0) this.waiting[0]!();
  }
}
