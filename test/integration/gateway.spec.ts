import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EVERYTHING, MEMORY, REPO_ROOT, SCRIPTED, isAlive, tempDir, waitFor } from './serverHarness';
import { processesWith } from '../processes';

/**
 * `serve` as any MCP client sees it: the built CLI over stdio, driven by the SDK's own Client, with
 * server-everything and server-memory behind it. Selection uses the default model when media/model
 * exists, and keywords otherwise; every assertion holds either way.
 */

const CLI = path.join(REPO_ROOT, 'dist/cli.js');

interface SearchAnswer {
  method: string;
  tools: Array<{ name: string; server: string; description: string; score: number; inputSchema: { properties?: Record<string, unknown> } }>;
  next: string;
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content;
  return content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

interface Gateway {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  readonly stderr: () => string;
  readonly listChanged: () => number;
  readonly protocolErrors: Error[];
  closed: boolean;
}

/** server-everything and server-memory; `marker`, an argument server-memory ignores, finds its process. */
function referenceServers(dir: string, marker: string): Record<string, unknown> {
  return {
    everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    memory: { command: process.execPath, args: [MEMORY, marker], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } },
  };
}

/** Starts `node dist/cli.js serve` over the servers `servers(dir)` defines, with the SDK's client. */
async function startGateway(extraArgs: string[], servers: (dir: string) => Record<string, unknown>): Promise<Gateway> {
  const dir = tempDir('gateway');
  const config = path.join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ servers: servers(dir) }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--config', config, '--cache-dir', path.join(dir, 'cache'), ...extraArgs],
    cwd: dir,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let listChanged = 0;
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });
  const gateway: Gateway = { client, transport, stderr: () => stderr, listChanged: () => listChanged, protocolErrors: [], closed: false };
  client.onerror = (error) => gateway.protocolErrors.push(error);
  client.onclose = () => (gateway.closed = true);
  await client.connect(transport);
  return gateway;
}

async function search(client: Client, query: string, limit?: number): Promise<SearchAnswer> {
  const result = await client.callTool({ name: 'toolRouter_searchTools', arguments: { query, ...(limit !== undefined ? { limit } : {}) } });
  assert.ok(!result.isError, text(result));
  return JSON.parse(text(result)) as SearchAnswer;
}


describe('mcp-tool-router serve (the gateway over stdio)', function () {
  this.timeout(120_000);
  let gateway: Gateway;
  const marker = `--gateway-test-${process.pid}-${Date.now()}`;

  before(async function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    gateway = await startGateway(['--dynamic'], (dir) => referenceServers(dir, marker));
  });

  after(async () => {
    if (!gateway.closed) await gateway.client.close();
  });

  it('lists the search and call tools, and no routed tool before any search', async () => {
    const { tools } = await gateway.client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['toolRouter_searchTools', 'toolRouter_callTool'],
    );
    const searchTool = tools[0]!;
    assert.deepEqual(searchTool.inputSchema.required, ['query']);
    assert.ok(searchTool.inputSchema.properties?.['limit']);
  });

  it('finds everything_echo, with its schema, for "echo a message back"', async () => {
    const answer = await search(gateway.client, 'echo a message back', 5);
    assert.ok(['embedding+keyword', 'keyword-only'].includes(answer.method), answer.method);
    assert.ok(answer.tools.length > 0 && answer.tools.length <= 5, JSON.stringify(answer.tools.map((t) => t.name)));
    const echo = answer.tools.find((t) => t.name === 'everything_echo');
    assert.ok(echo, `everything_echo among ${answer.tools.map((t) => t.name).join(', ')}`);
    assert.equal(echo.server, 'everything');
    assert.ok(echo.inputSchema.properties?.['message'], 'the schema comes with the result');
    assert.equal(typeof echo.score, 'number');
    assert.match(answer.next, /toolRouter_callTool/);
  });

  it('announces the new subset with tools/list_changed, lists it, and calls a subset tool directly', async () => {
    await waitFor(() => gateway.listChanged() >= 1, 'tools/list_changed after the search');
    const { tools } = await gateway.client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('everything_echo'), names.join(', '));
    assert.ok(names.length <= 2 + 5, 'the subset is the search\'s top tools, no more');
    const echo = tools.find((t) => t.name === 'everything_echo')!;
    assert.match(echo.description ?? '', /^\[everything\]/);
    const result = await gateway.client.callTool({ name: 'everything_echo', arguments: { message: 'straight from the subset' } });
    assert.ok(!result.isError, text(result));
    assert.equal(text(result), 'Echo: straight from the subset');
  });

  it('calls any routed tool through toolRouter_callTool and returns the envelope', async () => {
    const result = await gateway.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_echo', arguments: { message: 'via the gateway' } } });
    assert.ok(!result.isError, text(result));
    const envelope = JSON.parse(text(result)) as { ok: boolean; content: Array<{ text: string }>; meta: { server: string; tool: string } };
    assert.equal(envelope.ok, true);
    assert.equal(envelope.content[0]?.text, 'Echo: via the gateway');
    assert.deepEqual([envelope.meta.server, envelope.meta.tool], ['everything', 'echo']);
  });

  it('answers invalid arguments with an isError result naming each path', async () => {
    const wrongType = await gateway.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_echo', arguments: { message: 42 } } });
    assert.equal(wrongType.isError, true);
    assert.match(text(wrongType), /INVALID_ARGUMENTS/);
    assert.match(text(wrongType), /\/message: must be string/);
    const missing = await gateway.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_get-sum', arguments: { a: 1 } } });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /\/b: is required but missing/);
  });

  it('answers unknown tools and bad gateway arguments with clear errors', async () => {
    const unknown = await gateway.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_ecko', arguments: {} } });
    assert.equal(unknown.isError, true);
    assert.match(text(unknown), /UNKNOWN_TOOL: There is no tool named "everything_ecko"\. Did you mean "everything_echo"/);
    const unknownDirect = await gateway.client.callTool({ name: 'no_such_tool', arguments: {} });
    assert.equal(unknownDirect.isError, true);
    assert.match(text(unknownDirect), /no_such_tool/);
    for (const limit of [0, 51, 2.5, 'many']) {
      const bad = await gateway.client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'echo', limit } });
      assert.equal(bad.isError, true, `limit ${String(limit)}`);
      assert.match(text(bad), /"limit" must be a whole number from 1 to 50/);
    }
    const noQuery = await gateway.client.callTool({ name: 'toolRouter_searchTools', arguments: { limit: 3 } });
    assert.equal(noQuery.isError, true);
    assert.match(text(noQuery), /"query" must be a non-empty string/);
    const extra = await gateway.client.callTool({ name: 'toolRouter_callTool', arguments: { tool: 'everything_echo' } });
    assert.equal(extra.isError, true);
    assert.match(text(extra), /unknown argument\(s\) "tool"/);
  });

  it('moves the subset to another server\'s tools on the next search, and those tools work directly', async () => {
    const before = gateway.listChanged();
    const answer = await search(gateway.client, 'create an entity for Alice in the knowledge graph', 5);
    assert.ok(answer.tools.some((t) => t.name === 'memory_create_entities'), answer.tools.map((t) => t.name).join(', '));
    await waitFor(() => gateway.listChanged() > before, 'tools/list_changed after the second search');
    const names = (await gateway.client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('memory_create_entities'), names.join(', '));
    assert.ok(!names.includes('everything_echo'), 'the old subset is gone');
    assert.ok(!names.includes('memory_delete_entities'), 'destructive tools stay out of the subset');
    const created = await gateway.client.callTool({ name: 'memory_create_entities', arguments: { entities: [{ name: 'Alice', entityType: 'person', observations: ['works at Acme'] }] } });
    assert.ok(!created.isError, text(created));
    const found = await gateway.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'memory_search_nodes', arguments: { query: 'Acme' } } });
    assert.ok(!found.isError, text(found));
    assert.match(text(found), /Alice/);
  });

  it('sends no list_changed when a search leaves the subset as it was', async () => {
    await search(gateway.client, 'create an entity for Alice in the knowledge graph', 5);
    const before = gateway.listChanged();
    await search(gateway.client, 'create an entity for Alice in the knowledge graph', 5);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(gateway.listChanged(), before);
  });

  it('kept stdout for the protocol, logging on stderr', () => {
    assert.deepEqual(gateway.protocolErrors, []);
    assert.match(gateway.stderr(), /serving 2 server\(s\) over stdio, with a dynamic tool subset/);
    assert.match(gateway.stderr(), /server "everything" is ready/);
  });

  it('stops its servers and exits when the client closes stdin', async () => {
    const pid = gateway.transport.pid!;
    assert.ok(processesWith(marker).length > 0 || !existsSync('/proc'), 'the memory server runs');
    // The SDK client ends stdin, and sends SIGTERM only if the process is still there 2 s later.
    await gateway.client.close();
    await waitFor(() => !isAlive(pid), 'the gateway process to exit', 5000);
    assert.match(gateway.stderr(), /stopping \(stdin closed\)[\s\S]*stopped/);
    await waitFor(() => processesWith(marker).length === 0, 'the memory server to stop', 5000);
  });
});

describe('mcp-tool-router serve without --dynamic', function () {
  this.timeout(120_000);

  it('lists only the gateway tools, refuses direct calls, and stops cleanly on SIGTERM', async () => {
    const marker = `--gateway-static-${process.pid}-${Date.now()}`;
    const gateway = await startGateway(['--embeddings', 'none'], (dir) => referenceServers(dir, marker));
    try {
      const answer = await search(gateway.client, 'add two numbers', 3);
      assert.equal(answer.method, 'keyword-only');
      assert.equal(answer.tools[0]?.name, 'everything_get-sum');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(gateway.listChanged(), 0);
      assert.deepEqual(
        (await gateway.client.listTools()).tools.map((t) => t.name),
        ['toolRouter_searchTools', 'toolRouter_callTool'],
      );
      const direct = await gateway.client.callTool({ name: 'everything_get-sum', arguments: { a: 1, b: 2 } });
      assert.equal(direct.isError, true);
      assert.match(text(direct), /no tool named "everything_get-sum".*toolRouter_callTool/);
      const routed = await gateway.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_get-sum', arguments: { a: 1, b: 2 } } });
      assert.match(text(routed), /The sum of 1 and 2 is 3/);

      process.kill(gateway.transport.pid!, 'SIGTERM');
      await waitFor(() => gateway.closed, 'the gateway to close after SIGTERM', 5000);
      assert.match(gateway.stderr(), /stopping \(SIGTERM\)[\s\S]*stopped/);
      await waitFor(() => processesWith(marker).length === 0, 'the memory server to stop', 5000);
    } finally {
      if (!gateway.closed) await gateway.client.close();
    }
  });
});

describe('mcp-tool-router serve --dynamic when the catalogue changes', function () {
  this.timeout(120_000);

  // The scripted server adds tools on request (with its own list_changed); no npm server does.
  it('sends list_changed only when a catalogue change touches the subset', async () => {
    const gateway = await startGateway(['--dynamic', '--embeddings', 'none'], () => ({ scripted: { command: process.execPath, args: [SCRIPTED] } }));
    const call = (name: string, args: Record<string, unknown>) => gateway.client.callTool({ name: 'toolRouter_callTool', arguments: { name, arguments: args } });
    try {
      const answer = await search(gateway.client, 'echo the message back', 3);
      assert.equal(answer.tools[0]?.name, 'scripted_echo');
      await waitFor(() => gateway.listChanged() >= 1, 'tools/list_changed after the search');
      const before = gateway.listChanged();

      // A new tool outside the subset changes the catalogue, not what the client lists.
      assert.ok(!(await call('scripted_add_tool', { name: 'unrelated' })).isError);
      const deadline = Date.now() + 10_000;
      while ((await call('scripted_unrelated', {})).isError) {
        if (Date.now() > deadline) throw new Error('the added tool never reached the router');
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(gateway.listChanged(), before);

      // "ECHO" collides with "echo" (names compare without case), so both get hash suffixes and the
      // subset's scripted_echo is gone from the router.
      assert.ok(!(await call('scripted_add_tool', { name: 'ECHO' })).isError);
      await waitFor(() => gateway.listChanged() > before, 'list_changed when a subset tool is renamed away');
      const names = (await gateway.client.listTools()).tools.map((t) => t.name);
      assert.ok(!names.includes('scripted_echo'), names.join(', '));

      const again = await search(gateway.client, 'echo the message back', 3);
      const renamed = again.tools.find((t) => /^scripted_echo_/.test(t.name));
      assert.ok(renamed, again.tools.map((t) => t.name).join(', '));
      const echo = await gateway.client.callTool({ name: renamed.name, arguments: { message: 'renamed' } });
      assert.equal(text(echo), 'Echo: renamed');
    } finally {
      if (!gateway.closed) await gateway.client.close();
    }
  });
});
