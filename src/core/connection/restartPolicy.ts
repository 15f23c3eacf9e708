/**
 * When a server that exited or dropped is started again: at once for a flaky server, ever more slowly for
 * a broken one, and not at all once it has failed too often in a row or cannot start without a fix.
 */

/** Restart backoff: 0, 1, 2, 5, 10, 30, 60 s, then 60 s for every later attempt: a flaky server comes back at once, a broken one costs a start a minute. */
export const RESTART_BACKOFF_MS: readonly number[] = [0, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000];
/** A server that was ready this long counts as healthy again: its next crash restarts at the start of the backoff. */
export const STABLE_UPTIME_MS = 60_000;
/** After this many failures in a row the server is marked failed and waits for a manual restart (about 3 minutes of tries). */
export const MAX_CONSECUTIVE_FAILURES = 8;

/** What to do after a failure, with the reason to show in the server's status. */
export type RestartDecision = { readonly kind: 'give-up'; readonly reason: string } | { readonly kind: 'retry'; readonly reason: string; readonly delayMs: number };

export class RestartPolicy {
  private consecutiveFailures = 0;
  private readyAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private nextAt: number | undefined;

  /** `backoff` is shortened in tests; production uses {@link RESTART_BACKOFF_MS}. */
  constructor(private readonly backoff: readonly number[] = RESTART_BACKOFF_MS) {}

  /** When the scheduled restart happens (epoch ms); undefined once it has started or none is due. */
  get nextAttemptAt(): number | undefined {
    return this.nextAt;
  }

  /** True while the failures since the last (re)start are being retried. */
  get retrying(): boolean {
    return this.consecutiveFailures > 0;
  }

  /** A start or a manual restart: the backoff begins again from its first step. */
  reset(): void {
    this.consecutiveFailures = 0;
  }

  /** An attempt to connect begins: no restart is pending any more. */
  attemptStarted(): void {
    this.nextAt = undefined;
  }

  /** The server is ready: once it has stayed so for {@link STABLE_UPTIME_MS}, its next failure counts as the first. */
  markReady(): void {
    this.readyAt = Date.now();
  }

  /** Counts a failure and decides: give up (permanent, or too many in a row) or retry after the next backoff step. */
  decide(reason: string, permanent: boolean): RestartDecision {
    if (this.readyAt > 0 && Date.now() - this.readyAt >= STABLE_UPTIME_MS) this.consecutiveFailures = 0;
    this.readyAt = 0;
    this.consecutiveFailures++;
    if (permanent || this.consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
      const why = permanent ? reason : `${reason}; gave up after ${this.consecutiveFailures} failed starts in a row`;
      return { kind: 'give-up', reason: `${why.replace(/\.+$/, '')}. Fix the configuration, then run "Restart Server".` };
    }
    const delayMs = this.backoff[Math.min(this.consecutiveFailures - 1, this.backoff.length - 1)] ?? 0;
    this.nextAt = Date.now() + delayMs;
    return { kind: 'retry', reason: `${reason}; restarting in ${Math.round(delayMs / 1000)} s (attempt ${this.consecutiveFailures})`, delayMs };
  }

  /** Runs `restart` after `delayMs`, unless {@link cancel} comes first. */
  schedule(delayMs: number, restart: () => void): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      restart();
    }, delayMs);
    this.timer.unref?.();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
