/**
 * Starts real MCP servers for integration tests: the npm reference servers and the scripted fault server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseMcpConfig } from '../../src/core/config/mcpConfigParser';
import type { ServerDefinition } from '../../src/core/config/serverConfig';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const EVERYTHING = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const MEMORY = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
export const FILESYSTEM = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const SCRIPTED = path.join(REPO_ROOT, 'test/fixtures/servers/scriptedServer.mjs');
/** Fast backoff for tests; production uses RESTART_BACKOFF_MS. */
export const TEST_BACKOFF_MS = [0, 50, 100, 200];

export function tempDir(label: string): string {
  return mkdtempSync(path.join(tmpdir(), `mcp-router-${label}-`));
}

/** Parses a config object through the real parser, failing the test on any error. */
export async function definitions(config: unknown, workspaceFolder = REPO_ROOT): Promise<ServerDefinition[]> {
  const parsed = await parseMcpConfig(JSON.stringify(config), { file: 'test-config.json', workspaceFolder });
  const errors = parsed.issues.filter((i) => i.severity === 'error');
  if (errors.length > 0) throw new Error(`test config has errors: ${JSON.stringify(errors)}`);
  return parsed.servers;
}

export function scripted(args: string[] = [], router: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [SCRIPTED, ...args], router };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface HttpServer {
  readonly url: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts server-everything over `streamableHttp` or `sse` on a free port and waits until it answers. */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse'): Promise<HttpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await fetch(`${base}/`, { signal: AbortSignal.timeout(1000) });
      break;
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server-everything (${mode}) did not start on ${port}: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: mode === 'sse' ? `${base}/sse` : `${base}/mcp`,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    },
  };
}

export function readLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
