import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
  type Resource,
  type ResourceTemplate,
  type Prompt,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { EVERYTHING, REPO_ROOT, tempDir, waitFor } from './serverHarness';

/**
 * A faithful gateway: the SDK's own Client, pointed at a server directly and through the built CLI gateway
 * (`serve`, stdio), sees the same resources, templates, prompts (named {server}_{prompt}), completions,
 * structured output, subscriptions, log messages and instructions. server-everything is the reference;
 * test/fixtures/servers/mcpAppServer.mjs adds an MCP App (a tool whose UI is a ui:// resource) and pages
 * its resources one at a time.
 */

const CLI = path.join(REPO_ROOT, 'dist/cli.js');
const APP = path.join(REPO_ROOT, 'test/fixtures/servers/mcpAppServer.mjs');

interface Peer {
  readonly client: Client;
  readonly stderr: () => string;
  readonly updates: string[];
  readonly logs: Array<LoggingMessageNotification['params']>;
}

async function connect(command: string, args: string[], cwd?: string): Promise<Peer> {
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe', ...(cwd ? { cwd } : {}) });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return connectOver(transport, () => stderr);
}

async function connectOver(transport: Transport, stderr: () => string): Promise<Peer> {
  const client = new Client({ name: 'passthrough-test', version: '1.0.0' });
  const peer: Peer = { client, stderr, updates: [], logs: [] };
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void peer.updates.push(n.params.uri));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void peer.logs.push(n.params));
  await client.connect(transport);
  return peer;
}

/** `node dist/cli.js serve --embeddings none` over `servers`, as a client starts it. */
async function gateway(servers: Record<string, unknown>, extraArgs: string[] = []): Promise<Peer> {
  const dir = tempDir('passthrough');
  const config = path.join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ servers }));
  return connect(process.execPath, [CLI, 'serve', '--config', config, '--cache-dir', path.join(dir, 'cache'), '--embeddings', 'none', ...extraArgs], dir);
}

/** Every page of a list, following nextCursor; also says how many pages it took. */
async function allPages<T>(page: (cursor?: string) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const result = await page(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    pages++;
  } while (cursor !== undefined && pages < 50);
  return { items, pages };
}

const resourcesOf = (c: Client) => allPages<Resource>(async (cursor) => {
  const r = await c.listResources(cursor !== undefined ? { cursor } : {});
  return { items: r.resources, nextCursor: r.nextCursor };
});
const templatesOf = (c: Client) => allPages<ResourceTemplate>(async (cursor) => {
  const r = await c.listResourceTemplates(cursor !== undefined ? { cursor } : {});
  return { items: r.resourceTemplates, nextCursor: r.nextCursor };
});
const promptsOf = (c: Client) => allPages<Prompt>(async (cursor) => {
  const r = await c.listPrompts(cursor !== undefined ? { cursor } : {});
  return { items: r.prompts, nextCursor: r.nextCursor };
});

/** The text of a read's first content (a blob reads as empty). */
function firstText(result: ReadResourceResult): string {
  const first = result.contents[0];
  return first && 'text' in first ? first.text : '';
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

describe('the gateway passes through what server-everything offers besides tools', function () {
  this.timeout(120_000);
  let direct: Peer;
  let routed: Peer;

  before(async function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    [direct, routed] = await Promise.all([connect(process.execPath, [EVERYTHING, 'stdio']), gateway({ everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } }, ['--dynamic'])]);
  });

  after(async () => {
    await Promise.all([direct?.client.close(), routed?.client.close()]);
  });

  it('declares resources (with subscribe), prompts, completions and logging, and merges the server\'s instructions after its own', () => {
    const capabilities = routed.client.getServerCapabilities();
    assert.deepEqual(capabilities?.resources, { subscribe: true, listChanged: true });
    assert.deepEqual(capabilities?.prompts, { listChanged: true });
    assert.ok(capabilities?.completions && capabilities.logging && capabilities.tools);
    const instructions = routed.client.getInstructions() ?? '';
    assert.match(instructions, /^Every tool of the routed MCP servers is reachable/);
    const own = direct.client.getInstructions()!.trim();
    assert.ok(instructions.includes(`\n\n[everything] ${own.slice(0, 200)}`), instructions.slice(0, 400));
  });

  it('lists the same resources, every page, keeping each URI and showing the server in the title', async () => {
    const [mine, theirs] = await Promise.all([resourcesOf(routed.client), resourcesOf(direct.client)]);
    assert.equal(theirs.items.length, 7);
    assert.deepEqual(mine.items.map((r) => [r.uri, r.name, r.mimeType, r.description]), theirs.items.map((r) => [r.uri, r.name, r.mimeType, r.description]));
    assert.deepEqual(mine.items.map((r) => r.title), theirs.items.map((r) => `[everything] ${r.title ?? r.name}`));
  });

  it('lists the same templates and reads a listed and a templated resource the same', async () => {
    const [mine, theirs] = await Promise.all([templatesOf(routed.client), templatesOf(direct.client)]);
    assert.ok(theirs.items.length >= 2);
    assert.deepEqual(mine.items.map((t) => [t.uriTemplate, t.name, t.mimeType]), theirs.items.map((t) => [t.uriTemplate, t.name, t.mimeType]));

    const uri = 'demo://resource/static/document/architecture.md';
    assert.deepEqual(await routed.client.readResource({ uri }), await direct.client.readResource({ uri }));
    // A template's resource is made at each read (with the time in it): the same resource, the same form.
    const templated = 'demo://resource/dynamic/text/3';
    const [a, b] = await Promise.all([routed.client.readResource({ uri: templated }), direct.client.readResource({ uri: templated })]);
    assert.deepEqual(a.contents.map((c) => [c.uri, c.mimeType]), b.contents.map((c) => [c.uri, c.mimeType]));
    assert.match(firstText(a), /^Resource 3: This is a plaintext resource/);
  });

  it('answers a resource no server offers with the spec\'s "not found" error', async () => {
    await assert.rejects(routed.client.readResource({ uri: 'nowhere://nothing' }), (error: Error & { code?: number; data?: unknown }) => {
      // SDK 2.x sends "not found" as -32602 with the URI in data, on every revision (the 2026-07-28 spec's form).
      assert.equal(error.code, -32602);
      assert.deepEqual(error.data, { uri: 'nowhere://nothing' });
      assert.match(error.message, /No server behind the router offers the resource "nowhere:\/\/nothing"/);
      return true;
    });
  });

  it('lists the same prompts under {server}_{prompt} names and gets one with arguments', async () => {
    const [mine, theirs] = await Promise.all([promptsOf(routed.client), promptsOf(direct.client)]);
    assert.equal(theirs.items.length, 4);
    assert.deepEqual(mine.items.map((p) => p.name), theirs.items.map((p) => `everything_${p.name}`));
    assert.deepEqual(mine.items.map((p) => [p.title, p.description, p.arguments]), theirs.items.map((p) => [p.title, p.description, p.arguments]));
    const args = { city: 'Lisbon', state: 'Estremadura' };
    assert.deepEqual(await routed.client.getPrompt({ name: 'everything_args-prompt', arguments: args }), await direct.client.getPrompt({ name: 'args-prompt', arguments: args }));
    await assert.rejects(routed.client.getPrompt({ name: 'everything_no-such-prompt' }), /There is no prompt named "everything_no-such-prompt"/);
  });

  it('completes a prompt argument (by its routed name) and a template variable as the server does', async () => {
    const prompt = { ref: { type: 'ref/prompt' as const, name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } };
    const theirs = await direct.client.complete(prompt);
    assert.deepEqual(theirs.completion.values, ['Engineering']);
    assert.deepEqual(await routed.client.complete({ ...prompt, ref: { type: 'ref/prompt', name: 'everything_completable-prompt' } }), theirs);
    const template = { ref: { type: 'ref/resource' as const, uri: 'demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: '7' } };
    assert.deepEqual(await routed.client.complete(template), await direct.client.complete(template));
  });

  it('passes structured output on, for a listed tool called directly and through toolRouter_callTool', async () => {
    const args = { location: 'Chicago' };
    const theirs = await direct.client.callTool({ name: 'get-structured-content', arguments: args });
    assert.ok(theirs.structuredContent);
    const viaCallTool = await routed.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_get-structured-content', arguments: args } });
    assert.deepEqual(viaCallTool.structuredContent, theirs.structuredContent);

    const search = await routed.client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'get structured content weather', limit: 3 } });
    const hit = (JSON.parse(text(search)) as { tools: Array<{ name: string; outputSchema?: unknown }> }).tools.find((t) => t.name === 'everything_get-structured-content');
    assert.ok(hit?.outputSchema, 'the search hit carries the output schema');
    const listed = (await routed.client.listTools()).tools.find((t) => t.name === 'everything_get-structured-content');
    const original = (await direct.client.listTools()).tools.find((t) => t.name === 'get-structured-content');
    assert.deepEqual(listed?.outputSchema, original?.outputSchema);
    // The SDK client checks structured content against the listed output schema: this call passes that check.
    const called = await routed.client.callTool({ name: 'everything_get-structured-content', arguments: args });
    assert.deepEqual(called.structuredContent, theirs.structuredContent);
  });

  it('forwards a resource subscription and the server\'s update to the subscribed client', async () => {
    const uri = 'demo://resource/static/document/features.md';
    await routed.client.subscribeResource({ uri });
    const toggle = () => routed.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_toggle-subscriber-updates', arguments: {} } });
    assert.ok(!(await toggle()).isError);
    try {
      await waitFor(() => routed.updates.includes(uri), 'notifications/resources/updated through the gateway');
    } finally {
      await toggle();
    }
    await routed.client.unsubscribeResource({ uri });
  });

  it('forwards the server\'s log messages with the server as their logger', async () => {
    await routed.client.setLoggingLevel('debug');
    const toggle = () => routed.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_toggle-simulated-logging', arguments: {} } });
    assert.ok(!(await toggle()).isError);
    try {
      await waitFor(() => routed.logs.some((l) => l.logger === 'everything' && /level.message/.test(String(l.data))), 'a simulated log message through the gateway');
    } finally {
      await toggle();
    }
  });
});

describe('the gateway passes MCP Apps through: the tool\'s UI metadata and its ui:// resource', function () {
  this.timeout(120_000);
  let direct: Peer;
  let routed: Peer;
  const app = (label: string) => ({ command: process.execPath, args: [APP, '--label', label] });

  before(async function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    // Two instances list the same ui:// page: the first in the configuration keeps it.
    [direct, routed] = await Promise.all([connect(process.execPath, [APP, '--label', 'weather']), gateway({ weather: app('weather'), backup: app('backup') }, ['--dynamic'])]);
  });

  after(async () => {
    await Promise.all([direct?.client.close(), routed?.client.close()]);
  });

  it('lists a found tool with its _meta.ui, output schema, annotations, icons and title', async () => {
    const search = await routed.client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'show the weather forecast for a city', limit: 1 } });
    assert.equal((JSON.parse(text(search)) as { tools: Array<{ name: string }> }).tools[0]?.name, 'weather_show_weather');
    const listed = (await routed.client.listTools()).tools.find((t) => t.name === 'weather_show_weather');
    const original = (await direct.client.listTools()).tools[0]!;
    assert.ok(listed, 'the search\'s tool is listed');
    assert.deepEqual(listed._meta, { ui: { resourceUri: 'ui://weather/view.html' } });
    assert.deepEqual([listed._meta, listed.outputSchema, listed.annotations, listed.icons, listed.title], [original._meta, original.outputSchema, original.annotations, original.icons, original.title]);
    const called = await routed.client.callTool({ name: 'weather_show_weather', arguments: { city: 'Porto' } });
    assert.deepEqual(called.structuredContent, { city: 'Porto', celsius: 21, level: 'unset' });
  });

  it('reads the tool\'s ui:// resource the same as the server does, from the first server that lists it', async () => {
    const uri = (await routed.client.listTools()).tools.find((t) => t.name === 'weather_show_weather')?._meta?.['ui'] as { resourceUri: string };
    const mine = await routed.client.readResource({ uri: uri.resourceUri });
    assert.deepEqual(mine, await direct.client.readResource({ uri: uri.resourceUri }));
    assert.equal(mine.contents[0]?.mimeType, 'text/html;profile=mcp-app');
    assert.match(firstText(mine), /weather weather/);
  });

  it('walks both servers\' one-per-page lists with its cursors, offering a shared URI once', async () => {
    const { items, pages } = await resourcesOf(routed.client);
    assert.deepEqual(items.map((r) => r.uri), ['ui://weather/view.html', 'note://weather/readme', 'note://weather/changes', 'note://backup/readme', 'note://backup/changes']);
    assert.ok(pages >= 5, `${pages} pages`);
    assert.match(routed.stderr(), /servers "weather" and "backup" both offer "ui:\/\/weather\/view\.html"; the gateway offers the one of "weather"/);
    const note = await routed.client.readResource({ uri: 'note://backup/changes' });
    assert.equal(firstText(note), 'changes of backup');
    await assert.rejects(routed.client.listResources({ cursor: 'not-a-cursor' }), /was not made by this gateway/);
  });

  it('tells each server the log level the client set, and forwards their messages at or above it', async () => {
    await routed.client.setLoggingLevel('warning');
    const called = await routed.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'backup_show_weather', arguments: { city: 'Faro' } } });
    assert.equal((called.structuredContent as { level?: string }).level, 'warning');
    await waitFor(() => routed.logs.some((l) => l.logger === 'backup' && /no station in Faro/.test(String(l.data))), 'the warning through the gateway');
    assert.ok(!routed.logs.some((l) => l.logger === 'backup' && l.level === 'debug'), 'nothing below the level');
  });

  it('merges each server\'s instructions after its own, one paragraph each', () => {
    const instructions = routed.client.getInstructions() ?? '';
    assert.match(instructions, /\n\n\[weather\] The weather server shows forecasts\.\n\n\[backup\] The backup server shows forecasts\.$/);
  });
});

describe('serve --http: each session gets the passthrough, and updates only for what it subscribed to', function () {
  this.timeout(120_000);
  let child: ReturnType<typeof spawn>;
  let stderr = '';
  const sessions: Peer[] = [];

  before(async function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    const dir = tempDir('passthrough-http');
    const config = path.join(dir, 'mcp.json');
    writeFileSync(config, JSON.stringify({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
    child = spawn(process.execPath, [CLI, 'serve', '--http', '--no-auth', '--embeddings', 'none', '--config', config, '--cache-dir', path.join(dir, 'cache')], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor(() => /serving 1 server\(s\) at (\S+)/.test(stderr) || child.exitCode !== null, 'the gateway to listen', 30_000);
    const url = new URL(/serving 1 server\(s\) at (\S+)/.exec(stderr)![1]!);
    for (let i = 0; i < 2; i++) sessions.push(await connectOver(new StreamableHTTPClientTransport(url), () => stderr));
  });

  after(async () => {
    await Promise.all(sessions.map((s) => s.client.close()));
    child?.kill('SIGTERM');
    await waitFor(() => child.exitCode !== null || child.signalCode !== null, 'the gateway to stop', 10_000);
  });

  it('gives every session the prompts, resources and instructions', async () => {
    for (const session of sessions) {
      assert.equal((await promptsOf(session.client)).items.filter((p) => p.name.startsWith('everything_')).length, 4);
      assert.equal((await resourcesOf(session.client)).items.length, 7);
      assert.match(session.client.getInstructions() ?? '', /\n\n\[everything\] /);
    }
  });

  it('sends a resource update to the session that subscribed, not to the other', async () => {
    const [subscriber, other] = sessions as [Peer, Peer];
    const uri = 'demo://resource/static/document/startup.md';
    await subscriber.client.subscribeResource({ uri });
    const toggle = () => other.client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_toggle-subscriber-updates', arguments: {} } });
    assert.ok(!(await toggle()).isError);
    try {
      await waitFor(() => subscriber.updates.includes(uri), 'the update at the subscribed session');
      await other.client.ping();
      assert.deepEqual(other.updates, []);
    } finally {
      await toggle();
    }
  });
});
