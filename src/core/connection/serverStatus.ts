/** What a connection says about itself (its state and why), and waiting on that state. */

/** How a connected server is reached. */
export type TransportKind = 'stdio' | 'streamable-http' | 'sse';

export type ServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped' | 'disabled';

export interface ServerStatus {
  readonly name: string;
  readonly state: ServerState;
  /** Why the server is not ready, in words a user can act on. */
  readonly reason?: string;
  readonly restarts: number;
  readonly toolCount: number;
  /** The transport in use once connected. */
  readonly transport?: TransportKind;
  /** The MCP revision spoken once connected: 2026-07-28, or the 2025 revision `initialize` agreed on. */
  readonly protocol?: string;
  readonly pid?: number;
  /** When the next restart attempt happens (epoch ms), while restarting. */
  readonly nextAttemptAt?: number;
  /** The server asked for OAuth sign-in and none was possible without the user (state `failed`). */
  readonly needsSignIn?: boolean;
}

/** The callers of whenSettled still waiting; released when the connection settles or their time runs out. */
export class SettledWaiters {
  private readonly waiters = new Set<() => void>();

  /** Resolves on {@link release} or after `timeoutMs`. */
  wait(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref?.();
      this.waiters.add(done);
    });
  }

  release(): void {
    for (const w of [...this.waiters]) w();
  }
}

/** What {@link waitUntilReady} watches. */
export interface WatchedState {
  readonly currentState: ServerState;
  onDidChangeStatus(listener: (status: ServerStatus) => void): () => void;
}

/** Resolves true when ready, false when the connection settles in another state or the time runs out. */
export async function waitUntilReady(connection: WatchedState, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (connection.currentState !== 'ready') {
    const state = connection.currentState;
    if (state === 'failed' || state === 'stopped' || state === 'disabled') return false;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise<void>((resolve) => {
      const off = connection.onDidChangeStatus(() => {
        off();
        clearTimeout(t);
        resolve();
      });
      const t = setTimeout(() => {
        off();
        resolve();
      }, left);
      t.unref?.();
    });
  }
  return true;
}
