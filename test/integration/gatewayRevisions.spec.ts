import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransport2025 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { MEMORY, REPO_ROOT, tempDir, waitFor } from './serverHarness';

/**
 * One `serve --http` (the built CLI, with a token, server-memory behind it) for clients of both revisions at
 * once: a 2.x Client in `auto` mode, which negotiates MCP 2026-07-28 and is answered without a session, and
 * a 1.x Client, which speaks 2025-11-25 in a session. Both search and call; a destructive call follows one
 * policy whatever the revision (refused for a client that cannot ask; asked with input_required on 2026).
 * Then `serve` over stdio for a 2.x client.
 */

const CLI = path.join(REPO_ROOT, 'dist/cli.js');
const TOKEN = 'revisions-token-0123456789abcdef01234';
const MODERN = '2026-07-28';
const SEARCH = 'toolRouter_searchTools';
const CALL = 'toolRouter_callTool';

function text(result: unknown): string {
  return (result as CallToolResult).content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

/** A config with server-memory on its own file, in a fresh folder. */
function memoryConfig(label: string): { dir: string; config: string } {
  const dir = tempDir(label);
  const config = path.join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ servers: { memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } } } }));
  return { dir, config };
}

async function serveHttp(): Promise<{ child: ChildProcess; url: URL }> {
  const { dir, config } = memoryConfig('gateway-revisions');
  const tokenFile = path.join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--token-file', tokenFile, '--embeddings', 'none', '--config', config, '--cache-dir', path.join(dir, 'cache')], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await waitFor(() => /serving 1 server\(s\) at (\S+)/.test(stderr) || child.exitCode !== null, 'the gateway to listen', 30_000);
  const found = /serving 1 server\(s\) at (\S+)/.exec(stderr);
  assert.ok(found, stderr);
  return { child, url: new URL(found[1]!) };
}

const auth = { Authorization: `Bearer ${TOKEN}` };

/** A 2.x client negotiating the revision; with `answer`, it declares elicitation and answers as scripted (a FAKE user). */
async function modernClient(url: URL, answer?: 'accept' | 'decline'): Promise<{ client: Client; asked: string[] }> {
  const client = new Client({ name: 'revisions-2026', version: '1.0.0' }, { capabilities: answer ? { elicitation: { form: {} } } : {}, versionNegotiation: { mode: 'auto' } });
  const asked: string[] = [];
  if (answer) {
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params.message);
      return { action: answer };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: auth } }));
  return { client, asked };
}

async function legacyClient(url: URL, answer?: 'accept'): Promise<Client2025> {
  const client = new Client2025({ name: 'revisions-2025', version: '1.0.0' }, { capabilities: answer ? { elicitation: { form: {} } } : {} });
  if (answer) client.setRequestHandler(ElicitRequestSchema, () => ({ action: answer }));
  await client.connect(new StreamableHTTPClientTransport2025(url, { requestInit: { headers: auth } }));
  return client;
}

/** One 2026-07-28 tools/call of the call tool, written by hand: the JSON-RPC answer, whatever it is. */
async function rawModernCall(url: URL, name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const params = {
    name: CALL,
    arguments: { name, arguments: args },
    _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } }, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } },
    ...extra,
  };
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': CALL },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

describe('serve answers MCP 2025-11-25 and 2026-07-28 clients at once', function () {
  this.timeout(120_000);
  let served: { child: ChildProcess; url: URL };

  before(async function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    served = await serveHttp();
  });

  after(async () => {
    served.child.kill('SIGTERM');
    await waitFor(() => served.child.exitCode !== null, 'the gateway to stop', 10_000);
  });

  it('serves a 2.x client on 2026-07-28 and a 1.x client on 2025 from one endpoint: both list, search and call', async () => {
    const modern = (await modernClient(served.url)).client;
    const legacy = await legacyClient(served.url);
    try {
      assert.equal(modern.getNegotiatedProtocolVersion(), MODERN);
      assert.equal(modern.getProtocolEra(), 'modern');
      assert.equal(legacy.getServerVersion()?.name, 'mcp-tool-router');
      for (const client of [modern, legacy]) {
        assert.deepEqual((await client.listTools()).tools.map((t) => t.name), [SEARCH, CALL]);
        const found = JSON.parse(text(await client.callTool({ name: SEARCH, arguments: { query: 'create entities in the knowledge graph', limit: 5 } }))) as { tools: Array<{ name: string }> };
        assert.ok(found.tools.some((t) => t.name === 'memory_create_entities'), JSON.stringify(found));
        const read = await client.callTool({ name: CALL, arguments: { name: 'memory_read_graph', arguments: {} } });
        assert.notEqual((read as CallToolResult).isError, true, text(read));
        assert.match(text(read), /"ok":true/);
      }
    } finally {
      await modern.close();
      await legacy.close();
    }
  });

  it('refuses a destructive call from a 2026 client that cannot ask, with the same NOT_APPROVED answer as for a 2025 one', async () => {
    const modern = (await modernClient(served.url)).client;
    const legacy = await legacyClient(served.url);
    try {
      const call = { name: CALL, arguments: { name: 'memory_delete_entities', arguments: { entityNames: ['nobody'] } } };
      const [fromModern, fromLegacy] = [await modern.callTool(call), await legacy.callTool(call)];
      assert.equal((fromModern as CallToolResult).isError, true);
      assert.match(text(fromModern), /NOT_APPROVED: "memory_delete_entities" is marked destructive .*cannot ask the user/);
      assert.equal(text(fromModern), text(fromLegacy));
      const found = JSON.parse(text(await modern.callTool({ name: SEARCH, arguments: { query: 'delete entities', limit: 10 } }))) as { tools: Array<{ name: string }> };
      assert.ok(!found.tools.some((t) => t.name === 'memory_delete_entities'), 'a tool this client could never run is not offered');
    } finally {
      await modern.close();
      await legacy.close();
    }
  });

  it('asks a 2026 client that elicits with input_required, runs the call on accept and not on decline', async () => {
    const accepting = await modernClient(served.url, 'accept');
    const declining = await modernClient(served.url, 'decline');
    try {
      const entity = (name: string) => ({ name: CALL, arguments: { name: 'memory_create_entities', arguments: { entities: [{ name, entityType: 'test', observations: ['made by gatewayRevisions'] }] } } });
      await accepting.client.callTool(entity('kept'));
      await accepting.client.callTool(entity('deleted'));
      const remove = (name: string) => ({ name: CALL, arguments: { name: 'memory_delete_entities', arguments: { entityNames: [name] } } });

      const declined = await declining.client.callTool(remove('kept'));
      assert.equal(declining.asked.length, 1);
      assert.match(declining.asked[0]!, /^Run memory_delete_entities\?/);
      assert.match(text(declined), /NOT_APPROVED: The user declined/);

      const accepted = await accepting.client.callTool(remove('deleted'));
      assert.equal(accepting.asked.length, 1, 'asked once, through input_required');
      assert.notEqual((accepted as CallToolResult).isError, true, text(accepted));
      const graph = text(await accepting.client.callTool({ name: CALL, arguments: { name: 'memory_read_graph', arguments: {} } }));
      assert.match(graph, /kept/);
      assert.doesNotMatch(graph, /\\"deleted\\"/);
    } finally {
      await accepting.client.close();
      await declining.client.close();
    }
  });

  it('runs a confirmed call once per confirmation, only for the call it was asked for, and refuses a forged state', async () => {
    const args = { entityNames: ['nobody'] };
    const first = await rawModernCall(served.url, 'memory_delete_entities', args);
    assert.equal(first.result?.['resultType'], 'input_required', JSON.stringify(first));
    const requestState = first.result?.['requestState'] as string;
    const answer = { inputResponses: { confirm: { action: 'accept', content: {} } }, requestState };

    const other = await rawModernCall(served.url, 'memory_delete_entities', { entityNames: ['somebody else'] }, answer);
    assert.match(JSON.stringify(other.result), /NOT_APPROVED: .*for another call/);
    const ran = await rawModernCall(served.url, 'memory_delete_entities', args, answer);
    assert.match(JSON.stringify(ran.result), /\\"ok\\":true/);
    const again = await rawModernCall(served.url, 'memory_delete_entities', args, answer);
    assert.match(JSON.stringify(again.result), /NOT_APPROVED: .*used already/);

    const forged = await rawModernCall(served.url, 'memory_delete_entities', args, { ...answer, requestState: `${requestState.slice(0, -4)}AAAA` });
    assert.equal(forged.error?.code, -32602, JSON.stringify(forged));
  });
});

describe('serve over stdio answers a 2026-07-28 client', function () {
  this.timeout(120_000);

  it('negotiates 2026-07-28 with a 2.x client in auto mode, searches and calls', async () => {
    const { dir, config } = memoryConfig('gateway-revisions-stdio');
    const client = new Client({ name: 'revisions-stdio', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--embeddings', 'none', '--config', config, '--cache-dir', path.join(dir, 'cache')], cwd: dir, stderr: 'ignore' }));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), [SEARCH, CALL]);
      const read = await client.callTool({ name: CALL, arguments: { name: 'memory_read_graph', arguments: {} } });
      assert.match(text(read), /"ok":true/);
    } finally {
      await client.close();
    }
  });
});
