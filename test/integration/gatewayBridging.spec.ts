import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableHTTPClientTransport2025 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { EVERYTHING, REPO_ROOT, tempDir, waitFor } from './serverHarness';

/**
 * The gateway bridges a routed server's questions across protocol revisions. Behind one `serve --http`:
 * server-everything (a 2025-11-25 server that asks for elicitation and sampling in the middle of a call) and
 * the 2026-07-28 test server (which asks through input_required). A 2026-07-28 client gets each server's
 * question as input_required and answers it; a 2025-11-25 client gets the 2026 server's question pushed on
 * its session. The user and the model behind the clients are FAKES that answer as scripted.
 */

const CLI = path.join(REPO_ROOT, 'dist/cli.js');
const MODERN_SERVER = path.join(REPO_ROOT, 'test/fixtures/servers/modernServer.mjs');
const TOKEN = 'bridging-token-0123456789abcdef0123456';
const CALL = 'toolRouter_callTool';
const auth = { Authorization: `Bearer ${TOKEN}` };

function text(result: unknown): string {
  return (result as CallToolResult).content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

async function startModernServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [MODERN_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /LISTENING (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the 2026-07-28 test server exited (${code}) before listening: ${out}`)));
  });
  return { child, url };
}

async function serveHttp(modernUrl: string): Promise<{ child: ChildProcess; url: URL }> {
  const dir = tempDir('gateway-bridging');
  const config = path.join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] }, modern: { type: 'http', url: modernUrl } } }));
  const tokenFile = path.join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--token-file', tokenFile, '--embeddings', 'none', '--config', config, '--cache-dir', path.join(dir, 'cache')], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await waitFor(() => /serving 2 server\(s\) at (\S+)/.test(stderr) || child.exitCode !== null, 'the gateway to listen', 30_000);
  const found = /serving 2 server\(s\) at (\S+)/.exec(stderr);
  assert.ok(found, stderr);
  return { child, url: new URL(found[1]!) };
}

/** What the FAKE user and model behind a client were asked. */
interface Asked {
  readonly questions: string[];
  readonly prompts: string[];
}

/** A 2.x client on 2026-07-28 that elicits and samples: the FAKE user answers with `content`, the FAKE model with a fixed reply. */
async function modernClient(url: URL, content: Record<string, unknown>): Promise<{ client: Client; asked: Asked }> {
  const client = new Client({ name: 'bridging-2026', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: 'auto' } });
  const asked: Asked = { questions: [], prompts: [] };
  client.setRequestHandler('elicitation/create', (request) => {
    asked.questions.push(request.params.message);
    return { action: 'accept', content: content as Record<string, string> };
  });
  client.setRequestHandler('sampling/createMessage', (request) => {
    asked.prompts.push(request.params.messages.map((m) => (m.content as { text?: string }).text ?? '').join(' '));
    return { role: 'assistant', content: { type: 'text', text: 'a reply from the FAKE model' }, model: 'fake-model' };
  });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: auth } }));
  return { client, asked };
}

async function legacyClient(url: URL, content: Record<string, unknown>): Promise<{ client: Client2025; asked: Asked }> {
  const client = new Client2025({ name: 'bridging-2025', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
  const asked: Asked = { questions: [], prompts: [] };
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.questions.push(request.params.message);
    return { action: 'accept', content: content as Record<string, string> };
  });
  client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', content: { type: 'text', text: 'a reply from the FAKE model' }, model: 'fake-model' }));
  await client.connect(new StreamableHTTPClientTransport2025(url, { requestInit: { headers: auth } }));
  return { client, asked };
}

describe('the gateway bridges a routed server’s questions between MCP revisions', function () {
  this.timeout(120_000);
  let modernServer: { child: ChildProcess; url: string };
  let served: { child: ChildProcess; url: URL };

  before(async function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    modernServer = await startModernServer();
    served = await serveHttp(modernServer.url);
  });

  after(async () => {
    served?.child.kill('SIGTERM');
    modernServer?.child.kill();
    if (served) await waitFor(() => served.child.exitCode !== null, 'the gateway to stop', 10_000);
  });

  it('a 2025-11-25 server’s elicitation and sampling reach a 2026-07-28 client as input_required, and its answers reach the server', async () => {
    const { client, asked } = await modernClient(served.url, { name: 'Ada Lovelace', check: true });
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const elicited = await client.callTool({ name: CALL, arguments: { name: 'everything_trigger-elicitation-request', arguments: {} } });
      assert.notEqual((elicited as CallToolResult).isError, true, text(elicited));
      assert.deepEqual(asked.questions, ['Please provide inputs for the following fields:'], 'the server’s own question, asked once');
      assert.match(text(elicited), /Ada Lovelace/, 'the server saw the client’s answer');

      const sampled = await client.callTool({ name: CALL, arguments: { name: 'everything_trigger-sampling-request', arguments: { prompt: 'say hello', maxTokens: 20 } } });
      assert.notEqual((sampled as CallToolResult).isError, true, text(sampled));
      assert.equal(asked.prompts.length, 1);
      assert.match(asked.prompts[0]!, /say hello/);
      assert.match(text(sampled), /a reply from the FAKE model/);
    } finally {
      await client.close();
    }
  });

  it('a 2026-07-28 server’s input_required reaches a 2026-07-28 client, and a 2025-11-25 client on its session', async () => {
    const modern = await modernClient(served.url, { colour: 'red' });
    const legacy = await legacyClient(served.url, { colour: 'green' });
    try {
      const call = { name: CALL, arguments: { name: 'modern_ask_colour', arguments: {} } };
      const fromModern = await modern.client.callTool(call);
      assert.deepEqual(modern.asked.questions, ['Your favourite colour?']);
      assert.match(text(fromModern), /colour: red/);
      const fromLegacy = await legacy.client.callTool(call);
      assert.deepEqual(legacy.asked.questions, ['Your favourite colour?']);
      assert.match(text(fromLegacy), /colour: green/);
    } finally {
      await modern.client.close();
      await legacy.client.close();
    }
  });

  it('a 2026-07-28 client listening for a resource hears its updates: the gateway subscribes upstream while it listens', async () => {
    const { client } = await modernClient(served.url, {});
    const uri = 'demo://resource/static/document/features.md';
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    const toggle = () => client.callTool({ name: CALL, arguments: { name: 'everything_toggle-subscriber-updates', arguments: {} } });
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    try {
      assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, [uri]);
      assert.notEqual((await toggle()).isError, true);
      await waitFor(() => updates.includes(uri), 'notifications/resources/updated on the listen stream', 30_000);
    } finally {
      await toggle();
      await subscription.close();
      await client.close();
    }
  });
});
