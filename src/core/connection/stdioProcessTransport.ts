import { spawn, type ChildProcess } from 'node:child_process';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';

/**
 * An MCP stdio client transport that owns its whole process tree.
 *
 * Differences from the SDK's `StdioClientTransport`, and why:
 * - The server starts in its own process group (POSIX), and `close()` signals the group, so servers
 *   launched through `npx`, shells or wrappers do not leave orphans. On Windows `taskkill /T` does the same.
 * - Lines on stdout that are not JSON-RPC are reported through `onStdoutNoise` and skipped instead of
 *   breaking the connection: some servers print banners or logs to stdout.
 * - One line may hold at most {@link MAX_LINE_BYTES}; a longer line ends the connection with a clear error
 *   rather than growing memory without bound.
 * - stderr is handed, line by line, to `onStderr` for the server's log.
 * - The server does not inherit the router's own variables (see {@link serverEnvironment}).
 */

/** 64 MiB: larger than any result the router keeps (the size cap cuts far below), small enough to be safe. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** After SIGTERM to the group, wait this long before SIGKILL. */
const TERMINATE_GRACE_MS = 1500;
/**
 * Variables the router reads for itself (the CLI takes `${input:ID}` values from MCP_TOOL_ROUTER_INPUT_<ID>).
 * They may hold any server's secrets, so no server inherits them; matched without regard to case, as Windows does.
 */
export const ROUTER_ENV_PREFIX = 'MCP_TOOL_ROUTER_';

/**
 * The environment a stdio server starts with: the parent's ordinary environment (PATH, HOME, proxies…)
 * minus the router's own variables, plus what the server is configured with, which wins.
 * Other servers' inputs never appear: they live only in their own server's `configured`.
 */
export function serverEnvironment(parentEnv: Readonly<Record<string, string | undefined>>, configured: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parentEnv)) {
    if (value === undefined || key.toUpperCase().startsWith(ROUTER_ENV_PREFIX)) continue;
    defineOwn(env, key, value);
  }
  for (const [key, value] of Object.entries(configured)) defineOwn(env, key, value);
  return env;
}

/** defineProperty, not assignment: a variable named `__proto__` must stay a variable. */
function defineOwn(target: Record<string, string>, key: string, value: string): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export interface StdioProcessOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly onStderr?: (line: string) => void;
  readonly onStdoutNoise?: (line: string) => void;
}

export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  private stderrRest = '';
  private closed = false;
  private drainWaiter: Promise<void> | undefined;
  /** Exit code or signal of the process, once it has exited. */
  exitInfo: string | undefined;

  constructor(private readonly options: StdioProcessOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Always null: stderr is read here, line by line, for the server's log. The SDK's client knows a stdio
   * transport by `stderr` and `pid`, and only then takes silence during its protocol probe for a 2025 server.
   */
  get stderr(): null {
    return null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('StdioProcessTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, [...this.options.args], {
        env: serverEnvironment(process.env, this.options.env),
        cwd: this.options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        // Own process group on POSIX so the whole tree can be signalled; hidden console window on Windows.
        detached: process.platform !== 'win32',
        windowsHide: true,
        shell: false,
      });
      this.child = child;
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.once('error', (error) => {
        if (!spawned) {
          const code = (error as NodeJS.ErrnoException).code;
          const hint = code === 'ENOENT' ? ` The command "${this.options.command}" was not found: check "command" and PATH.` : code === 'EACCES' ? ` The command "${this.options.command}" is not executable.` : '';
          reject(new Error(`Cannot start "${this.options.command}" (${error.message}).${hint}`));
        } else {
          this.onerror?.(error);
        }
      });
      child.once('exit', (code, signal) => {
        this.exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
      });
      child.once('close', () => this.finish());
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => this.onStderrText(text));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || stdin.destroyed) return Promise.reject(new Error('the server process is not running'));
    return new Promise((resolve, reject) => {
      const ok = stdin.write(JSON.stringify(message) + '\n', (error) => (error ? reject(error) : undefined));
      if (ok) resolve();
      else this.drained(stdin).then(resolve, reject);
    });
  }

  /**
   * One 'drain' listener shared by every write that hit backpressure: with a listener per write, a
   * thousand calls in flight tripped Node's listener-leak warning.
   */
  private drained(stdin: NodeJS.WritableStream): Promise<void> {
    this.drainWaiter ??= new Promise<void>((resolve) => {
      stdin.once('drain', () => {
        this.drainWaiter = undefined;
        resolve();
      });
    });
    return this.drainWaiter;
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closed) return;
    try {
      child.stdin?.end();
    } catch {
      // The pipe may already be gone; the signals below still end the process.
    }
    if (child.exitCode === null && child.signalCode === null) {
      killTree(child, 'SIGTERM');
      const exited = await waitForExit(child, TERMINATE_GRACE_MS);
      if (!exited) killTree(child, 'SIGKILL');
    } else {
      // The leader is gone but children in its group may remain.
      killTree(child, 'SIGKILL');
    }
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    // A crashed server may leave children in its group; they belong to us and go with it.
    if (this.child && (this.child.exitCode !== null || this.child.signalCode !== null)) killTree(this.child, 'SIGKILL');
    if (this.stderrRest) this.options.onStderr?.(this.stderrRest);
    this.stderrRest = '';
    this.chunks = [];
    this.onclose?.();
  }

  private onStdout(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      this.chunks.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
      this.chunks = [];
      this.bufferedBytes = 0;
      start = nl + 1;
      this.handleLine(line);
    }
    if (start < chunk.length) {
      this.chunks.push(chunk.subarray(start));
      this.bufferedBytes += chunk.length - start;
      if (this.bufferedBytes > MAX_LINE_BYTES) {
        this.chunks = [];
        this.bufferedBytes = 0;
        this.onerror?.(new Error(`the server wrote a line longer than ${MAX_LINE_BYTES} bytes to stdout; the connection is closed`));
        void this.close();
      }
    }
  }

  private handleLine(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch {
      this.options.onStdoutNoise?.(line.length > 500 ? `${line.slice(0, 500)}…` : line);
      return;
    }
    this.onmessage?.(message);
  }

  private onStderrText(text: string): void {
    const lines = (this.stderrRest + text).split(/\r?\n/);
    this.stderrRest = lines.pop() ?? '';
    if (this.stderrRest.length > 16_384) {
      lines.push(this.stderrRest);
      this.stderrRest = '';
    }
    for (const line of lines) this.options.onStderr?.(line);
  }
}

function killTree(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === 'win32') {
      spawn('taskkill', ['/pid', String(child.pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' }).on('error', () => undefined);
    } else {
      process.kill(-child.pid, signal);
    }
  } catch {
    // ESRCH: the group is already gone.
  }
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
