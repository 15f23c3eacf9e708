import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, type CallToolResult } from '@modelcontextprotocol/server';
import { parseMcpConfig } from '../../../src/core/config/mcpConfigParser';
import type { ServerTool } from '../../../src/core/connection/serverConnection';
import { RouterGateway } from '../../../src/core/gateway/routerGateway';
import { LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import { rankableFor } from '../../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../../src/core/selection/toolSelector';
import { callPolicy, type DestructivePolicy } from '../../../src/core/policy/callPolicy';
import { ToolRouter } from '../../../src/core/router/toolRouter';
import { FakeConnectionBase } from './fakeConnection';

/**
 * The gateway as a 2.x client sees it, over the SDK's in-memory transport (no process, no socket; always the
 * 2025 revision), in front of a FAKE connection: a server that lists three tools and answers calls from a
 * table, through the connection seam. The real transports and servers are in the integration tests.
 */

const TOOLS: ServerTool[] = [
  { name: 'read_note', description: 'Read a note by its title', inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] }, annotations: { readOnlyHint: true } },
  { name: 'delete_note', description: 'Delete a note for good', inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] }, annotations: { destructiveHint: true } },
  { name: 'list_notes', description: 'List every note title', inputSchema: { type: 'object', properties: {} } },
];

class FakeConnection extends FakeConnectionBase {
  readonly calls: string[] = [];
  readonly currentState = 'ready' as const;
  readonly tools = TOOLS;
  // Offers nothing but tools: no resources, prompts or log level to pass on.
  readonly serverCapabilities = { tools: {} };
  async callTool(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.calls.push(tool);
    return { content: [{ type: 'text', text: `${tool} ${JSON.stringify(args)}` }] };
  }
  async request(method: string): Promise<Record<string, unknown>> {
    throw new Error(`the fake notes server does not answer ${method}`);
  }
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

async function setUp(policy: DestructivePolicy, answer?: 'accept' | 'decline' | 'never-answers', extra: { allowed?: string[]; confirmTimeoutMs?: number } = {}): Promise<{ client: Client; connection: FakeConnection; logs: string[]; close: () => Promise<void> }> {
  let connection: FakeConnection | undefined;
  const router = new ToolRouter({ createConnection: (def) => (connection = new FakeConnection(def)) });
  const parsed = await parseMcpConfig(JSON.stringify({ servers: { notes: { command: 'notes-server' } } }), { file: 'test.json' });
  await router.applyConfig(parsed.servers);
  const selector = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, callPolicy: callPolicy(policy, extra.allowed ?? []) }, { createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)) });
  const gateway = new RouterGateway(router, { selector }, { dynamicSubset: true, ...(extra.confirmTimeoutMs ? { confirmTimeoutMs: extra.confirmTimeoutMs } : {}) });
  const client = new Client({ name: 'in-memory', version: '1' }, { capabilities: answer ? { elicitation: { form: {} } } : {} });
  // FAKE user: answers the destructive-call question as scripted.
  if (answer) client.setRequestHandler('elicitation/create', () => (answer === 'never-answers' ? new Promise<never>(() => undefined) : { action: answer }));
  const logs: string[] = [];
  client.setNotificationHandler('notifications/message', (n) => void logs.push(String(n.params.data)));
  // Both halves from one package: the in-memory pair is linked through that package's own class.
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    connection: connection!,
    logs,
    close: async () => {
      await client.close();
      await gateway.close();
      await router.dispose();
    },
  };
}

describe('RouterGateway over the in-memory transport', () => {
  it('lists its two tools, searches, calls, and lists the search\'s tools after list_changed, logging it at the level asked', async () => {
    const g = await setUp('confirm');
    try {
      assert.deepEqual((await g.client.listTools()).tools.map((t) => t.name), ['toolRouter_searchTools', 'toolRouter_callTool']);
      await g.client.setLoggingLevel('info');
      const found = JSON.parse(text(await g.client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'read a note', limit: 2 } }))) as { tools: Array<{ name: string }> };
      assert.equal(found.tools[0]?.name, 'notes_read_note');
      const listed = (await g.client.listTools()).tools.map((t) => t.name);
      assert.ok(listed.includes('notes_read_note'), JSON.stringify(listed));
      assert.ok(!listed.includes('notes_delete_note'), 'a destructive tool is not listed directly under confirm');
      const called = await g.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'notes_read_note', arguments: { title: 'todo' } } });
      assert.match(text(called), /read_note \{\\"title\\":\\"todo\\"\}/);
      assert.ok(g.logs.some((l) => /tools\/list changed/.test(l)), JSON.stringify(g.logs));
    } finally {
      await g.close();
    }
  });

  it('asks before a destructive call (confirm) and does not run it when the user declines', async () => {
    const declined = await setUp('confirm', 'decline');
    try {
      const result = await declined.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'notes_delete_note', arguments: { title: 'todo' } } });
      assert.equal((result as CallToolResult).isError, true);
      assert.match(text(result), /NOT_APPROVED: The user declined/);
      assert.deepEqual(declined.connection.calls, []);
    } finally {
      await declined.close();
    }
    const accepted = await setUp('confirm', 'accept');
    try {
      await accepted.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'notes_delete_note', arguments: { title: 'todo' } } });
      assert.deepEqual(accepted.connection.calls, ['delete_note']);
    } finally {
      await accepted.close();
    }
  });

  it('refuses destructive calls and leaves such tools out of search under never', async () => {
    const g = await setUp('never');
    try {
      const found = JSON.parse(text(await g.client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'delete a note', limit: 5 } }))) as { tools: Array<{ name: string }> };
      assert.ok(!found.tools.some((t) => t.name === 'notes_delete_note'));
      const result = await g.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'notes_delete_note', arguments: { title: 'todo' } } });
      assert.match(text(result), /NOT_APPROVED: .*"never"/);
      assert.deepEqual(g.connection.calls, []);
    } finally {
      await g.close();
    }
  });

  it('refuses a destructive call under confirm for a client that cannot be asked, names the tool and how to allow it, and runs it once allowed', async () => {
    const g = await setUp('confirm');
    try {
      const found = JSON.parse(text(await g.client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'delete a note', limit: 5 } }))) as { tools: Array<{ name: string }> };
      assert.ok(!found.tools.some((t) => t.name === 'notes_delete_note'), 'a tool this client could never run is not offered');
      const result = await g.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'notes_delete_note', arguments: { title: 'todo' } } });
      assert.equal((result as CallToolResult).isError, true);
      assert.match(text(result), /NOT_APPROVED: "notes_delete_note" is marked destructive .* cannot ask the user/);
      assert.match(text(result), /"always"/);
      assert.match(text(result), /allowedDestructiveTools/);
      assert.deepEqual(g.connection.calls, [], 'the server was never called');
    } finally {
      await g.close();
    }
    const allowed = await setUp('confirm', undefined, { allowed: ['notes_delete_note'] });
    try {
      await allowed.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'notes_delete_note', arguments: { title: 'todo' } } });
      assert.deepEqual(allowed.connection.calls, ['delete_note']);
    } finally {
      await allowed.close();
    }
  });

  it('says a confirmation that timed out timed out, and does not run the call', async () => {
    const g = await setUp('confirm', 'never-answers', { confirmTimeoutMs: 200 });
    try {
      const result = await g.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'notes_delete_note', arguments: { title: 'todo' } } });
      assert.match(text(result), /NOT_APPROVED: The confirmation to run "notes_delete_note" timed out/);
      assert.doesNotMatch(text(result), /declined/);
      assert.deepEqual(g.connection.calls, []);
    } finally {
      await g.close();
    }
  });

  it('declares resources, prompts and completions even when no server offers them, and answers with empty lists', async () => {
    const g = await setUp('confirm');
    try {
      const capabilities = g.client.getServerCapabilities();
      assert.deepEqual([capabilities?.resources, capabilities?.prompts, capabilities?.completions], [{ subscribe: true, listChanged: true }, { listChanged: true }, {}]);
      assert.deepEqual((await g.client.listResources()).resources, []);
      assert.deepEqual((await g.client.listResourceTemplates()).resourceTemplates, []);
      assert.deepEqual((await g.client.listPrompts()).prompts, []);
      await assert.rejects(g.client.readResource({ uri: 'notes://todo' }), /No server behind the router offers the resource "notes:\/\/todo"/);
      await assert.rejects(g.client.getPrompt({ name: 'notes_daily' }), /There is no prompt named "notes_daily"/);
      assert.equal(g.client.getInstructions()?.startsWith('Every tool of the routed MCP servers is reachable through two tools'), true);
    } finally {
      await g.close();
    }
  });
});
