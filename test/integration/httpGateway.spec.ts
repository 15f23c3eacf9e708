import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EVERYTHING, MEMORY, REPO_ROOT, isAlive, tempDir, waitFor } from './serverHarness';
import { processesWith } from '../processes';

/**
 * `serve --http` as other MCP clients and a team see it: the built CLI on a loopback port, real
 * server-everything and server-memory behind it, and the SDK's streamable HTTP client holding the token.
 */

const CLI = path.join(REPO_ROOT, 'dist/cli.js');
const TOKEN = 'test-token-0123456789abcdef0123456789';


function text(result: unknown): string {
  return (result as CallToolResult).content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

interface Served {
  readonly child: ChildProcess;
  readonly url: URL;
  readonly stderr: () => string;
  readonly marker: string;
}

async function serve(extra: string[]): Promise<Served> {
  const dir = tempDir('http-gateway');
  const marker = `--http-gateway-test-${process.pid}-${Date.now()}`;
  const config = path.join(dir, 'mcp.json');
  writeFileSync(
    config,
    JSON.stringify({
      servers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        memory: { command: process.execPath, args: [MEMORY, marker], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } },
      },
    }),
  );
  const tokenFile = path.join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--dynamic', '--embeddings', 'none', '--config', config, '--cache-dir', path.join(dir, 'cache'), ...extra.map((a) => (a === 'TOKEN_FILE' ? tokenFile : a))], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await waitFor(() => /serving 2 server\(s\) at (\S+)/.test(stderr) || child.exitCode !== null, 'the gateway to listen', 30_000);
  const found = /serving 2 server\(s\) at (\S+)/.exec(stderr);
  assert.ok(found, stderr);
  return { child, url: new URL(found[1]!), stderr: () => stderr, marker };
}

async function connect(url: URL, token = TOKEN): Promise<{ client: Client; listChanged: () => number }> {
  const client = new Client({ name: 'http-gateway-test', version: '1.0.0' });
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
  });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return { client, listChanged: () => changed };
}

/**
 * One POST written by hand, for what fetch will not send: a chosen Host header, or a chosen source address.
 * Resolves with the status.
 */
function rawPost(url: URL, headers: Record<string, string>, body: string, options: { localAddress?: string; agent?: Agent } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', setHost: !('Host' in headers), headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, ...options },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Whether this machine routes a second loopback address (Linux does, macOS not by default). */
async function secondLoopback(): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(0, '127.0.0.2', () => probe.close(() => resolve(true)));
  });
}

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('mcp-tool-router serve --http', function () {
  this.timeout(120_000);
  let served: Served;

  before(async () => {
    served = await serve(['--token-file', 'TOKEN_FILE']);
  });

  after(async () => {
    served.child.kill('SIGTERM');
    await waitFor(() => served.child.exitCode !== null, 'the gateway to stop', 10_000);
  });

  it('answers 401 without the token, or with a wrong one, and names what to send', async () => {
    const none = await fetch(served.url, { method: 'POST', headers, body: initialize });
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.match(JSON.stringify(await none.json()), /Authorization: Bearer/);
    const wrong = await fetch(served.url, { method: 'POST', headers: { ...headers, Authorization: 'Bearer not-the-token-at-all-xxxx' }, body: initialize });
    assert.equal(wrong.status, 401);
    await assert.rejects(connect(served.url, 'wrong-token-wrong-token'), /Missing or wrong bearer token/);
  });

  it('refuses a foreign or null Origin, a non-loopback Host (DNS rebinding) and a Host that is no address', async () => {
    const auth = { ...headers, Authorization: `Bearer ${TOKEN}` };
    const origin = await fetch(served.url, { method: 'POST', headers: { ...auth, Origin: 'https://evil.example' }, body: initialize });
    assert.equal(origin.status, 403);
    const opaque = await fetch(served.url, { method: 'POST', headers: { ...auth, Origin: 'null' }, body: initialize });
    assert.equal(opaque.status, 403, 'a sandboxed frame or a file: page sends Origin: null');
    // fetch sets Host itself; a raw request shows what a rebound name, or a malformed one, would send.
    assert.equal(await rawPost(served.url, { ...auth, Host: 'evil.example' }, initialize), 403);
    assert.equal(await rawPost(served.url, { ...auth, Host: '127.999.999.999' }, initialize), 403);
    assert.equal(await rawPost(served.url, { ...auth, Host: `localhost:${served.url.port}` }, initialize), 200);
  });

  it('answers 429 to an address that keeps sending wrong tokens, and still serves the right token from another', async function () {
    if (!(await secondLoopback())) this.skip();
    const wrong = { ...headers, Authorization: 'Bearer not-the-token-at-all-xxxx' };
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const counts = new Map<number, number>();
    try {
      const FLOOD = 6000;
      for (let sent = 0; sent < FLOOD; sent += 8) {
        const statuses = await Promise.all(Array.from({ length: 8 }, () => rawPost(served.url, wrong, initialize, { localAddress: '127.0.0.2', agent })));
        for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
      }
    } finally {
      agent.destroy();
    }
    assert.deepEqual([...counts.keys()].sort(), [401, 429]);
    assert.ok(counts.get(429)! > counts.get(401)!, JSON.stringify([...counts]));
    // The flood came from 127.0.0.2; a client on 127.0.0.1 with the token is not locked out.
    const { client } = await connect(served.url);
    try {
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['toolRouter_searchTools', 'toolRouter_callTool']);
    } finally {
      await client.close();
    }
  });

  it('serves search and call to clients holding the token, each in its own session, over one process per server', async () => {
    const a = await connect(served.url);
    const b = await connect(served.url);
    try {
      const listed = await a.client.listTools();
      assert.deepEqual(listed.tools.map((t) => t.name), ['toolRouter_searchTools', 'toolRouter_callTool']);
      const found = await a.client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'add two numbers', limit: 3 } });
      assert.match(text(found), /everything_get-sum/);
      await waitFor(() => a.listChanged() > 0, 'list_changed for the searching session');
      // Sessions are apart: A's search changed A's list, not B's.
      assert.ok((await a.client.listTools()).tools.some((t) => t.name === 'everything_get-sum'));
      assert.deepEqual((await b.client.listTools()).tools.map((t) => t.name), ['toolRouter_searchTools', 'toolRouter_callTool']);
      assert.equal(b.listChanged(), 0);
      const called = await b.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_echo', arguments: { message: 'over http' } } });
      assert.match(text(called), /over http/);
      const stored = await a.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'memory_read_graph', arguments: {} } });
      assert.equal((stored as CallToolResult).isError, undefined, text(stored));
      // Two clients, one memory server process.
      if (existsSync('/proc')) assert.equal(processesWith(served.marker).length, 1);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it('stops its servers on SIGTERM', async () => {
    const pid = served.child.pid!;
    served.child.kill('SIGTERM');
    await waitFor(() => !isAlive(pid), 'the gateway to exit', 10_000);
    assert.match(served.stderr(), /stopping \(SIGTERM\)[\s\S]*stopped/);
    await waitFor(() => processesWith(served.marker).length === 0, 'the memory server to stop', 5000);
  });
});

describe('mcp-tool-router serve --http refusals', function () {
  this.timeout(30_000);

  const run = (args: string[]): { status: number | null; stderr: string } => {
    const dir = tempDir('http-refuse');
    const config = path.join(dir, 'mcp.json');
    writeFileSync(config, JSON.stringify({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
    const short = path.join(dir, 'short');
    writeFileSync(short, 'abc', { mode: 0o600 });
    const r = spawnSync(process.execPath, [CLI, 'serve', '--config', config, ...args.map((a) => (a === 'SHORT' ? short : a))], { encoding: 'utf8', timeout: 20_000 });
    return { status: r.status, stderr: r.stderr };
  };

  it('will not serve beyond loopback without a token', () => {
    const r = run(['--http', '--host', '0.0.0.0', '--no-auth']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /Refusing to serve on 0\.0\.0\.0 without a token/);
  });

  it('needs a token file or --no-auth, and a long token', () => {
    assert.match(run(['--http']).stderr, /needs --token-file FILE/);
    assert.match(run(['--http', '--token-file', 'SHORT']).stderr, /3 characters long/);
    assert.match(run(['--http', '--token-file', '/nonexistent/token']).stderr, /Cannot read the token file/);
    assert.match(run(['--port', '9']).stderr, /go with serve --http/);
  });
});
