import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { definitions, FILESYSTEM, MEMORY, REPO_ROOT, TEST_BACKOFF_MS, tempDir } from './serverHarness';
import { ToolRouter } from '../../src/core/router/toolRouter';
import { runChatTurn, type CallConfirmation, type ChatToolDefinition } from '../../src/core/chat/chatTurn';
import { CostMonitor } from '../../src/core/guards/costMonitor';
import { LoopDetector } from '../../src/core/guards/loopDetector';
import type { Selection } from '../../src/core/selection/selectionTypes';
import { ScriptedFakeModel } from '../unit/chat/scriptedFakes';

/**
 * Routing a server through the router widens nothing and runs nothing unasked, shown with the real
 * reference servers and the built CLI: roots are announced only when given, and destructive calls follow
 * the one call policy on every surface (`call`, `select`, `serve`).
 */

const CLI = path.join(REPO_ROOT, 'dist/cli.js');

function run(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, cwd });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
}

/** A parent folder holding a secret, and the one folder the filesystem server is configured with. */
function filesystemLayout(serverRouter: Record<string, unknown> = {}): { parent: string; allowed: string; secret: string; config: string } {
  const parent = tempDir('roots');
  const allowed = path.join(parent, 'allowed');
  mkdirSync(allowed);
  writeFileSync(path.join(allowed, 'notes.md'), 'public notes\n');
  const secret = path.join(parent, 'secret.txt');
  writeFileSync(secret, 'the secret outside the configured folder\n');
  const config = path.join(parent, 'mcp.json');
  writeFileSync(config, JSON.stringify({ servers: { files: { command: process.execPath, args: [FILESYSTEM, allowed], router: serverRouter } } }));
  return { parent, allowed, secret, config };
}

function readText(layout: { parent: string; config: string }, file: string, extra: string[] = []): { code: number | null; stdout: string; stderr: string } {
  return run(['call', 'files_read_text_file', '--args', JSON.stringify({ path: file }), '--config', layout.config, '--wait', '30000', ...extra], layout.parent);
}

describe('roots: a routed server reaches only what its configuration gives it', function () {
  this.timeout(120_000);

  before(function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
  });

  it('run from the parent folder, the filesystem server still reaches only its configured folder', () => {
    const layout = filesystemLayout();
    const inside = readText(layout, path.join(layout.allowed, 'notes.md'));
    assert.equal(inside.code, 0, inside.stderr);
    assert.match(inside.stdout, /public notes/);
    const outside = readText(layout, layout.secret);
    assert.notEqual(outside.code, 0, outside.stdout);
    assert.doesNotMatch(outside.stdout, /the secret outside/);
    assert.match(outside.stdout, /Access denied|outside allowed/i);
  });

  it('announces a root only when the user gives --root, and a server configured with "roots": false is never told', () => {
    const layout = filesystemLayout();
    // Given on purpose, the root replaces the server's folders (what the README warns about).
    const given = readText(layout, layout.secret, ['--root', layout.parent]);
    assert.equal(given.code, 0, given.stderr);
    assert.match(given.stdout, /the secret outside/);

    const closed = filesystemLayout({ roots: false });
    const refused = readText(closed, closed.secret, ['--root', closed.parent]);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.doesNotMatch(refused.stdout, /the secret outside/);
  });

  it('takes roots from the config\'s router block, relative to the config file', () => {
    const layout = filesystemLayout();
    const config = JSON.parse(JSON.stringify({ router: { roots: ['.'] }, servers: { files: { command: process.execPath, args: [FILESYSTEM, layout.allowed] } } })) as unknown;
    writeFileSync(layout.config, JSON.stringify(config));
    const r = readText(layout, layout.secret);
    assert.equal(r.code, 0, r.stderr);
  });
});

describe('destructive tools follow one call policy in the CLI', function () {
  this.timeout(120_000);
  let dir: string;
  let config: string;

  before(function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    dir = tempDir('policy');
    config = path.join(dir, 'mcp.json');
    writeFileSync(config, JSON.stringify({ servers: { memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } } } }));
    const created = run(['call', 'memory_create_entities', '--args', JSON.stringify({ entities: [{ name: 'Ana', entityType: 'person', observations: ['likes tea'] }] }), '--config', config], dir);
    assert.equal(created.code, 0, created.stderr);
  });

  const graph = (): string => run(['call', 'memory_read_graph', '--args', '{}', '--config', config], dir).stdout;
  const deleteAna = (extra: string[], file = config): ReturnType<typeof run> => run(['call', 'memory_delete_entities', '--args', JSON.stringify({ entityNames: ['Ana'] }), '--config', file, ...extra], dir);

  it('refuses under --destructive-tools never, and under "destructiveTools": "never" in the config, saying how to allow it', () => {
    const refused = deleteAna(['--destructive-tools', 'never']);
    assert.equal(refused.code, 2, refused.stdout);
    assert.match(refused.stderr, /NOT_APPROVED: "memory_delete_entities" is marked destructive and the destructive-tools policy is "never"/);
    assert.match(refused.stderr, /--allow-destructive memory_delete_entities/);
    const strict = path.join(dir, 'strict.json');
    writeFileSync(strict, JSON.stringify({ router: { destructiveTools: 'never' }, servers: { memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } } } }));
    assert.equal(deleteAna([], strict).code, 2);
    assert.match(graph(), /Ana/, 'nothing was deleted');
  });

  it('select leaves destructive tools out under never, with the reason', () => {
    const r = run(['select', 'delete the entity Ana from my knowledge graph', '--config', config, '--destructive-tools', 'never', '--embeddings', 'none'], dir);
    assert.equal(r.code, 0, r.stderr);
    const tools = r.stdout.split('dropped:')[0]!;
    assert.doesNotMatch(tools, /memory_delete_entities/);
    assert.match(r.stdout.split('dropped:')[1] ?? '', /memory_delete_entities .*policy is "never"/);
  });

  it('rejects an unknown policy by name', () => {
    const r = deleteAna(['--destructive-tools', 'sometimes']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--destructive-tools must be confirm, never or always; got "sometimes"/);
  });

  it('runs a destructive call the person typed under the default confirm: naming the tool is the confirmation', () => {
    const r = deleteAna([]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(graph(), /Ana/);
  });
});

describe('the gateway refuses a destructive call for a client that cannot be asked', function () {
  this.timeout(120_000);

  async function gatewayClient(dir: string, extra: string[]): Promise<Client> {
    const config = path.join(dir, 'mcp.json');
    writeFileSync(config, JSON.stringify({ servers: { memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } } } }));
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--config', config, '--cache-dir', path.join(dir, 'cache'), '--embeddings', 'none', ...extra], cwd: dir, stderr: 'pipe' });
    // A plain SDK client, like curl behind an MCP library: it declares no elicitation.
    const client = new Client({ name: 'no-elicitation', version: '1.0.0' });
    await client.connect(transport);
    return client;
  }

  const call = (client: Client, name: string, args: unknown): Promise<CallToolResult> =>
    client.callTool({ name: 'toolRouter_callTool', arguments: { name, arguments: args } }) as Promise<CallToolResult>;

  it('under the default policy: not run, and the answer names the tool and how to allow it; allowed by name, it runs', async () => {
    const dir = tempDir('gateway-policy');
    const client = await gatewayClient(dir, []);
    try {
      await call(client, 'memory_create_entities', { entities: [{ name: 'Ana', entityType: 'person', observations: [] }] });
      const refused = await call(client, 'memory_delete_entities', { entityNames: ['Ana'] });
      assert.equal(refused.isError, true);
      assert.match(text(refused), /NOT_APPROVED: "memory_delete_entities" is marked destructive .*cannot ask the user/);
      assert.match(text(refused), /--destructive-tools always/);
      assert.match(text(refused), /--allow-destructive memory_delete_entities/);
      assert.match(text(await call(client, 'memory_read_graph', {})), /Ana/, 'the server was never asked to delete');
    } finally {
      await client.close();
    }
    const allowed = await gatewayClient(dir, ['--allow-destructive', 'memory_delete_entities']);
    try {
      const result = await call(allowed, 'memory_delete_entities', { entityNames: ['Ana'] });
      assert.ok(!result.isError, text(result));
      assert.doesNotMatch(text(await call(allowed, 'memory_read_graph', {})), /Ana/);
    } finally {
      await allowed.close();
    }
  });
});

describe('@router asks before what its servers do not mark safe (real servers, a FAKE scripted model)', function () {
  this.timeout(120_000);
  const FORMS = path.join(REPO_ROOT, 'test/fixtures/servers/formsServer.mjs');
  let router: ToolRouter;
  let dir: string;

  before(async () => {
    dir = tempDir('router-asks');
    router = new ToolRouter({ backoffMs: TEST_BACKOFF_MS });
    await router.applyConfig(await definitions({ servers: { memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } }, forms: { command: process.execPath, args: [FORMS] } } }));
    for (const name of ['memory_create_entities', 'forms_order_pizza']) assert.ok(await router.waitForTool(name, 30_000), `${name} is listed`);
  });

  after(async () => {
    await router.dispose();
  });

  /** One turn as the participant wires it: the definitions and hints come from the router. */
  async function turn(calls: Array<{ name: string; input: object }>, answers: boolean[]): Promise<{ asked: CallConfirmation[]; ran: string[]; answers: string[] }> {
    const names = calls.map((c) => c.name).filter((n) => router.getTool(n));
    const tools: ChatToolDefinition[] = names.map((n) => router.getTool(n)!).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations }));
    const selection = { tools: names.map((name) => ({ name, stages: ['embedding'], tier: 2, reason: 'test' })) } as unknown as Selection;
    const asked: CallConfirmation[] = [];
    const result = await runChatTurn({
      prompt: 'do the things',
      history: [],
      selection,
      tools,
      model: new ScriptedFakeModel([{ text: '', toolCalls: calls.map((c, i) => ({ callId: `c${i}`, name: c.name, input: c.input })) }, { text: 'done', toolCalls: [] }]),
      router,
      loops: new LoopDetector(),
      cost: new CostMonitor({}),
      turn: 1,
      confirm: async (c) => {
        asked.push(c);
        return answers.shift() ? { answer: 'yes' } : { answer: 'no' };
      },
      hintsOf: (name) => router.getTool(name)?.annotations,
    });
    return { asked, ran: result.calls.filter((c) => c.envelope.ok).map((c) => c.call.name), answers: result.calls.map((c) => (c.envelope.ok ? 'ok' : `${c.envelope.error.type}: ${c.envelope.error.message}`)) };
  }

  it('runs read-only and additive tools unasked, and asks before destructive and unannotated ones', async () => {
    const { asked, ran } = await turn(
      [
        { name: 'memory_create_entities', input: { entities: [{ name: 'Ana', entityType: 'person', observations: [] }] } },
        { name: 'memory_read_graph', input: {} },
        { name: 'forms_order_pizza', input: { size: 'large', slices: 8 } },
        { name: 'memory_delete_entities', input: { entityNames: ['Ana'] } },
      ],
      [true, false],
    );
    assert.deepEqual(asked.map((a) => [a.tool, a.markedDestructive]), [['forms_order_pizza', false], ['memory_delete_entities', true]]);
    assert.deepEqual(ran, ['memory_create_entities', 'memory_read_graph', 'forms_order_pizza']);
    const graph = await router.call('memory_read_graph', {});
    assert.ok(graph.ok && JSON.stringify(graph.content).includes('Ana'), 'the declined delete never reached the server');
  });

  it('answers a name no server lists with the router\'s own error, naming what it may have meant, and asks nobody', async () => {
    const { asked, answers } = await turn([{ name: 'forms_order_pizzas', input: { size: 'large', slices: 8 } }], []);
    assert.deepEqual(asked, []);
    assert.match(answers[0]!, /^UNKNOWN_TOOL: There is no tool named "forms_order_pizzas"\..*Did you mean "forms_order_pizza"/);
  });
});
