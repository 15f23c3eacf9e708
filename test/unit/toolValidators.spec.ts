import assert from 'node:assert/strict';
import { parseMcpConfig } from '../../src/core/config/mcpConfigParser';
import type { ServerTool } from '../../src/core/connection/serverConnection';
import { ToolRouter, type RoutedTool } from '../../src/core/router/toolRouter';
import { ToolValidators } from '../../src/core/router/toolValidators';
import { SchemaCompiler } from '../../src/core/schema/argumentValidator';
import { FakeConnectionBase } from './gateway/fakeConnection';

/**
 * Schemas compile when first needed (toolValidators.ts), not when the catalogue is built. The router runs
 * in front of a FAKE connection, because these tests must see whether a call reached the server at all;
 * the same refusals against real servers are in test/integration/router.spec.ts.
 */

const NUMBER_SCHEMA = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
/** Valid JSON, but not a schema: "nonsense" is no JSON Schema type, which only the compiler notices. */
const BROKEN_SCHEMA = { type: 'object', properties: { n: { type: 'nonsense' } } };

const TOOLS: ServerTool[] = [
  { name: 'count', description: 'Count to n', inputSchema: NUMBER_SCHEMA },
  { name: 'count_again', description: 'Count to n once more', inputSchema: structuredClone(NUMBER_SCHEMA) },
  { name: 'broken', description: 'A tool whose schema does not compile', inputSchema: BROKEN_SCHEMA },
  { name: 'unchecked', description: 'A tool with no schema' },
];

/** FAKE server: lists TOOLS, records every call that reaches it, and can announce a new tool list. */
class RecordingConnection extends FakeConnectionBase {
  readonly calls: string[] = [];
  readonly currentState = 'ready' as const;
  readonly serverCapabilities = { tools: {} };
  tools: readonly ServerTool[] = TOOLS;
  private readonly toolListeners = new Set<(tools: readonly ServerTool[]) => void>();
  async callTool(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.calls.push(tool);
    return { content: [{ type: 'text', text: `${tool} ${JSON.stringify(args)}` }] };
  }
  async request(method: string): Promise<Record<string, unknown>> {
    throw new Error(`the fake server does not answer ${method}`);
  }
  // Optional only to match the base class, which tells of no changes.
  override onDidChangeTools(listener?: (tools: readonly ServerTool[]) => void): () => void {
    if (listener) this.toolListeners.add(listener);
    return () => listener && this.toolListeners.delete(listener);
  }
  relist(): void {
    this.tools = this.tools.map((t) => structuredClone(t));
    this.toolListeners.forEach((l) => l(this.tools));
  }
}

interface Setup {
  readonly router: ToolRouter;
  readonly compiler: SchemaCompiler;
  readonly connections: Map<string, RecordingConnection>;
  readonly published: Array<readonly RoutedTool[]>;
}

async function startRouter(servers: Record<string, unknown>): Promise<Setup> {
  const compiler = new SchemaCompiler();
  const connections = new Map<string, RecordingConnection>();
  const router = new ToolRouter({
    schemaCompiler: compiler,
    createConnection: (def) => {
      const connection = new RecordingConnection(def);
      connections.set(def.name, connection);
      return connection;
    },
  });
  const published: Array<readonly RoutedTool[]> = [];
  router.onDidChangeTools((tools) => published.push(tools));
  const parsed = await parseMcpConfig(JSON.stringify({ servers }), { file: 'test.json' });
  await router.applyConfig(parsed.servers);
  return { router, compiler, connections, published };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('lazy schema compilation', () => {
  let setup: Setup | undefined;
  afterEach(async () => {
    await setup?.router.dispose();
    setup = undefined;
  });

  it('builds the catalogue without compiling, and marks a missing schema at once', async () => {
    setup = await startRouter({ s: { command: 'fake' } });
    assert.deepEqual(setup.router.listTools().map((t) => t.name), ['s_broken', 's_count', 's_count_again', 's_unchecked']);
    assert.equal(setup.compiler.stats.compiles, 0);
    assert.match(setup.router.getTool('s_unchecked')?.schemaProblem ?? '', /no input schema/);
  });

  it('refuses a tool whose schema does not compile at its first call, and then marks it in the listing', async () => {
    setup = await startRouter({ s: { command: 'fake' } });
    const refused = await setup.router.call('s_broken', { n: 1 });
    assert.equal(refused.ok === false && refused.error.type, 'SCHEMA_UNAVAILABLE');
    assert.match(refused.ok === false ? refused.error.message : '', /does not compile.*router\.allowUnvalidatedTools/);
    assert.deepEqual(setup.connections.get('s')?.calls, []);
    await nextTurn();
    const marked = setup.router.getTool('s_broken')?.schemaProblem;
    assert.match(marked ?? '', /does not compile/);
    // Those who listen (the server tree, the Call Tool picker) are told.
    assert.equal(setup.published.at(-1)?.find((t) => t.name === 's_broken')?.schemaProblem, marked);
    assert.equal(setup.router.getTool('s_count')?.schemaProblem, undefined);
  });

  it('marks a schema that does not compile without any call, once the background pass has run', async () => {
    setup = await startRouter({ s: { command: 'fake' } });
    await setup.router.whenSettled(1000);
    assert.match(setup.router.getTool('s_broken')?.schemaProblem ?? '', /does not compile/);
    assert.equal(setup.compiler.stats.compiles, 2);
  });

  it('calls a tool whose schema does not compile when its server allows unvalidated tools', async () => {
    setup = await startRouter({ lax: { command: 'fake', router: { allowUnvalidatedTools: true } } });
    const called = await setup.router.call('lax_broken', { n: 1 });
    assert.equal(called.ok, true, JSON.stringify(called));
    assert.deepEqual(setup.connections.get('lax')?.calls, ['broken']);
  });

  it("refuses a good tool's bad arguments before the server is called", async () => {
    setup = await startRouter({ s: { command: 'fake' } });
    const missing = await setup.router.call('s_count', {});
    assert.equal(missing.ok === false && missing.error.type, 'INVALID_ARGUMENTS');
    assert.deepEqual(missing.ok === false ? missing.error.issues : [], [{ path: '/n', message: 'is required but missing' }]);
    const wrongType = setup.router.checkArguments('s_count', { n: 'many' });
    assert.equal(wrongType.ok, false);
    assert.deepEqual(setup.connections.get('s')?.calls, []);
    const good = await setup.router.call('s_count', { n: 3 });
    assert.equal(good.ok, true, JSON.stringify(good));
    assert.deepEqual(setup.connections.get('s')?.calls, ['count']);
  });

  it('compiles each schema once: across tools, servers, calls, the background pass and a new tool list', async () => {
    setup = await startRouter({ a: { command: 'fake' }, b: { command: 'fake' } });
    for (const name of ['a_count', 'a_count_again', 'b_count', 'a_broken']) await setup.router.call(name, { n: 1 });
    assert.equal(setup.compiler.stats.compiles, 2, 'one for the number schema, one for the broken one');
    await setup.router.whenSettled(1000);
    setup.connections.get('a')?.relist();
    await setup.router.call('a_count', { n: 2 });
    await setup.router.whenSettled(1000);
    assert.equal(setup.compiler.stats.compiles, 2);
    assert.deepEqual(setup.connections.get('a')?.calls, ['count', 'count_again', 'count']);
  });
});

describe('ToolValidators', () => {
  it('compiles pending schemas in the background by itself and reports those that do not compile', async () => {
    const compiler = new SchemaCompiler();
    let reported!: () => void;
    const problems = new Promise<void>((resolve) => (reported = resolve));
    const validators = new ToolValidators(compiler, () => reported(), 0);
    const good = validators.forTool('s', NUMBER_SCHEMA, JSON.stringify(NUMBER_SCHEMA));
    const broken = validators.forTool('s', BROKEN_SCHEMA, JSON.stringify(BROKEN_SCHEMA));
    assert.equal(broken.problem, undefined, 'not known before compiling');
    validators.schedule();
    await problems;
    assert.equal(validators.pendingCount, 0);
    assert.equal(good.problem, undefined);
    assert.match(broken.problem ?? '', /does not compile/);
    assert.equal(compiler.stats.compiles, 2);
  });

  it('gives one schema of one server one slot, and forgets a removed server', async () => {
    const validators = new ToolValidators(new SchemaCompiler(), () => undefined);
    const text = JSON.stringify(NUMBER_SCHEMA);
    assert.equal(validators.forTool('s', NUMBER_SCHEMA, text), validators.forTool('s', structuredClone(NUMBER_SCHEMA), text));
    validators.forTool('t', NUMBER_SCHEMA, text);
    assert.equal(validators.pendingCount, 2);
    validators.forgetServer('t');
    assert.equal(validators.pendingCount, 1);
    await validators.whenChecked();
    assert.equal(validators.pendingCount, 0);
    validators.dispose();
  });
});
