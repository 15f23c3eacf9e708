import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
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

  it('refuses a foreign Origin and a non-loopback Host (DNS rebinding)', async () => {
    const auth = { ...headers, Authorization: `Bearer ${TOKEN}` };
    const origin = await fetch(served.url, { method: 'POST', headers: { ...auth, Origin: 'https://evil.example' }, body: initialize });
    assert.equal(origin.status, 403);
    // fetch sets Host itself; a raw request shows what a rebound name would send.
    const raw = spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'Host: evil.example', '-H', `Authorization: Bearer ${TOKEN}`, '-H', 'Content-Type: application/json', '-H', 'Accept: application/json, text/event-stream', '--data', initialize, served.url.href], { encoding: 'utf8' });
    if (raw.status === 0) assert.equal(raw.stdout, '403');
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
    writeFileSync(short, 'abc');
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
