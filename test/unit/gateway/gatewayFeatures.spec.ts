import assert from 'node:assert/strict';
import { ProtocolErrorCode, type LoggingLevel, type Prompt, type Resource, type ResourceTemplateType as ResourceTemplate } from '@modelcontextprotocol/server';
import { parseMcpConfig } from '../../../src/core/config/mcpConfigParser';
import type { ServerDefinition } from '../../../src/core/config/serverConfig';
import type { ServerState, ServerStatus, ServerTool } from '../../../src/core/connection/serverConnection';
import type { ServerNotice } from '../../../src/core/connection/serverNotices';
import { decodeCursor, encodeCursor } from '../../../src/core/gateway/gatewayCursor';
import { FeatureDirectory, RESOURCE_NOT_FOUND } from '../../../src/core/gateway/featureDirectory';
import { GatewayHub, type GatewaySession } from '../../../src/core/gateway/gatewayHub';
import { ToolRouter } from '../../../src/core/router/toolRouter';
import { Emitter } from '../../../src/core/util/emitter';
import { FakeConnectionBase } from './fakeConnection';

/**
 * The gateway's lists, routing and sharing, over FAKE connections (servers that answer lists page by
 * page from a table, through the connection seam): paging across servers with the gateway's cursors,
 * which server owns a URI or a prompt name, and what sessions share. The real servers are in
 * test/integration/gatewayPassthrough.spec.ts.
 */

interface Offer {
  readonly resources?: Resource[][];
  readonly templates?: ResourceTemplate[];
  readonly prompts?: Prompt[][];
  readonly tools?: ServerTool[];
  readonly subscribe?: boolean;
  readonly logging?: boolean;
}

class FakeFeatureServer extends FakeConnectionBase {
  readonly requests: Array<{ method: string; params: Record<string, unknown> }> = [];
  readonly notices = new Emitter<ServerNotice>();
  private readonly statusEvents = new Emitter<ServerStatus>();
  currentState: ServerState = 'ready';
  constructor(definition: ServerDefinition, private readonly offer: Offer) {
    super(definition);
  }
  get tools(): readonly ServerTool[] {
    return this.offer.tools ?? [];
  }
  get serverCapabilities(): Record<string, unknown> | undefined {
    if (this.currentState !== 'ready') return undefined;
    const o = this.offer;
    return { tools: {}, ...(o.resources || o.templates ? { resources: o.subscribe ? { subscribe: true } : {} } : {}), ...(o.prompts ? { prompts: {} } : {}), ...(o.logging ? { logging: {} } : {}) };
  }
  /** Moves the fake to `state` and tells the router, as a real connection does. */
  setState(state: ServerState): void {
    this.currentState = state;
    this.statusEvents.fire(this.status);
  }
  async request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.requests.push({ method, params });
    const at = Number(params['cursor'] ?? 0);
    const page = <T>(pages: T[][] | undefined, key: string): Record<string, unknown> => ({ [key]: pages?.[at] ?? [], ...(pages && at + 1 < pages.length ? { nextCursor: String(at + 1) } : {}) });
    if (method === 'resources/list') return page(this.offer.resources, 'resources');
    if (method === 'resources/templates/list') return page(this.offer.templates ? [this.offer.templates] : undefined, 'resourceTemplates');
    if (method === 'prompts/list') return page(this.offer.prompts, 'prompts');
    return {};
  }
  async callTool(): Promise<Record<string, unknown>> {
    return { content: [] };
  }
  override onDidChangeStatus(listener: (s: ServerStatus) => void): () => void {
    return this.statusEvents.on(listener);
  }
  override onDidNotify(listener: (n: ServerNotice) => void): () => void {
    return this.notices.on(listener);
  }
}

const resource = (uri: string, name = uri.split('/').pop()!): Resource => ({ uri, name });

/** A router over fake servers, in the order given (the configuration's order). */
async function routerOver(offers: Record<string, Offer>): Promise<{ router: ToolRouter; servers: Map<string, FakeFeatureServer>; logs: string[] }> {
  const servers = new Map<string, FakeFeatureServer>();
  const router = new ToolRouter({
    createConnection: (def) => {
      const fake = new FakeFeatureServer(def, offers[def.name]!);
      servers.set(def.name, fake);
      return fake;
    },
  });
  const config = Object.fromEntries(Object.keys(offers).map((name) => [name, { command: `${name}-server` }]));
  await router.applyConfig((await parseMcpConfig(JSON.stringify({ servers: config }), { file: 'test.json' })).servers);
  return { router, servers, logs: [] };
}

async function everyPage<T>(directory: FeatureDirectory, kind: 'resources' | 'resourceTemplates' | 'prompts'): Promise<{ items: T[]; cursors: string[] }> {
  const items: T[] = [];
  const cursors: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await directory.listPage(kind, cursor);
    items.push(...(page.items as T[]));
    cursor = page.nextCursor;
    if (cursor !== undefined) cursors.push(cursor);
  } while (cursor !== undefined && cursors.length < 20);
  return { items, cursors };
}

function rejectsWith(code: number, pattern: RegExp): (error: Error & { code?: number }) => boolean {
  return (error) => {
    assert.equal(error.code, code, error.message);
    assert.match(error.message, pattern);
    return true;
  };
}

describe('the gateway\'s lists across servers (FeatureDirectory)', () => {
  it('walks the servers in configuration order, a server page per gateway page, passing each server its own cursor', async () => {
    // "zeta" comes first in the configuration although it sorts last: lists follow the configuration.
    const { router, servers } = await routerOver({
      zeta: { resources: [[resource('z://1')], [resource('z://2')]] },
      tools_only: {},
      empty: { resources: [[]] },
      alpha: { resources: [[resource('a://1'), resource('a://2')]] },
    });
    const directory = new FeatureDirectory(router, () => undefined);
    const { items, cursors } = await everyPage<Resource>(directory, 'resources');
    assert.deepEqual(items.map((r) => r.uri), ['z://1', 'z://2', 'a://1', 'a://2']);
    // The empty server costs no page of its own: the answer that reaches it goes on to the next server.
    assert.deepEqual(cursors.map(decodeCursor), [{ server: 'zeta', cursor: '1' }, { server: 'empty' }]);
    assert.deepEqual(servers.get('zeta')!.requests.map((r) => r.params), [{}, { cursor: '1' }]);
    assert.deepEqual(servers.get('tools_only')!.requests, [], 'a server without resources is not asked');
    assert.deepEqual(items.map((r) => r.title), ['[zeta] 1', '[zeta] 2', '[alpha] 1', '[alpha] 2']);
    await router.dispose();
  });

  it('offers nothing of a server that is not ready, and goes on after it when a cursor points at it', async () => {
    const { router, servers } = await routerOver({ first: { resources: [[resource('f://1')], [resource('f://2')]] }, second: { resources: [[resource('s://1')]] } });
    const directory = new FeatureDirectory(router, () => undefined);
    const page = await directory.listPage('resources', undefined);
    servers.get('first')!.setState('disabled');
    const rest = await directory.listPage('resources', page.nextCursor);
    assert.deepEqual(rest.items.map((r) => r.uri), ['s://1']);
    assert.deepEqual((await everyPage<Resource>(directory, 'resources')).items.map((r) => r.uri), ['s://1']);
    await assert.rejects(directory.resourceOwner('f://1'), rejectsWith(RESOURCE_NOT_FOUND, /No server behind the router offers the resource "f:\/\/1"/));
    await router.dispose();
  });

  it('refuses a cursor it did not make, or one naming a server no longer configured', async () => {
    const { router } = await routerOver({ only: { resources: [[resource('o://1')]] } });
    const directory = new FeatureDirectory(router, () => undefined);
    await assert.rejects(directory.listPage('resources', '1'), rejectsWith(ProtocolErrorCode.InvalidParams, /not made by this gateway.*without a cursor/));
    await assert.rejects(directory.listPage('resources', encodeCursor({ server: 'gone' })), rejectsWith(ProtocolErrorCode.InvalidParams, /server "gone", which is no longer configured/));
    await router.dispose();
  });

  it('keeps a URI two servers list with the first in the configuration, warns once, and routes reads there', async () => {
    const { router } = await routerOver({ main: { resources: [[resource('ui://shared/view.html'), resource('m://own')]] }, copy: { resources: [[resource('ui://shared/view.html'), resource('c://own')]] } });
    const logs: string[] = [];
    const directory = new FeatureDirectory(router, (m) => logs.push(m));
    for (let i = 0; i < 2; i++) {
      assert.deepEqual((await everyPage<Resource>(directory, 'resources')).items.map((r) => r.uri), ['ui://shared/view.html', 'm://own', 'c://own']);
    }
    assert.deepEqual(logs, ['servers "main" and "copy" both offer "ui://shared/view.html"; the gateway offers the one of "main", which comes first in the configuration']);
    assert.equal((await directory.resourceOwner('ui://shared/view.html')).name, 'main');
    assert.equal((await directory.resourceOwner('c://own')).name, 'copy');
    await router.dispose();
  });

  it('routes an unlisted URI to the server of the MCP App tool that names it, else by template, else by reading the lists', async () => {
    const app: ServerTool = { name: 'show', inputSchema: { type: 'object' }, _meta: { ui: { resourceUri: 'ui://app/page.html' } } };
    const { router } = await routerOver({
      lister: { resources: [[], [resource('l://deep')]] },
      templated: { templates: [{ uriTemplate: 'files://{path}', name: 'file' }] },
      app: { resources: [[]], tools: [app] },
    });
    const directory = new FeatureDirectory(router, () => undefined);
    assert.equal((await directory.resourceOwner('ui://app/page.html')).name, 'app');
    assert.equal((await directory.resourceOwner('files://notes.txt')).name, 'templated');
    assert.equal((await directory.templateOrResourceOwner('files://{path}')).name, 'templated');
    assert.equal((await directory.resourceOwner('l://deep')).name, 'lister', 'found on the second page of a list never asked for');
    await router.dispose();
  });

  it('names prompts {server}_{prompt} with the tools\' rules and maps them back, listed or not', async () => {
    const { router, servers } = await routerOver({ notes: { prompts: [[{ name: 'daily summary' }], [{ name: 'plan' }]] }, 'my.docs': { prompts: [[{ name: 'review' }]] } });
    const directory = new FeatureDirectory(router, () => undefined);
    // Named before any list: the server whose prefix starts the name lists its prompts to find it.
    const unlisted = await directory.prompt('notes_plan');
    assert.deepEqual([unlisted.connection.name, unlisted.name], ['notes', 'plan']);
    const { items } = await everyPage<Prompt>(directory, 'prompts');
    assert.deepEqual(items.map((p) => p.name), ['notes_daily_summary', 'notes_plan', 'my_docs_review']);
    const mapped = await directory.prompt('notes_daily_summary');
    assert.deepEqual([mapped.connection.name, mapped.name], ['notes', 'daily summary']);
    assert.equal((await directory.prompt('my_docs_review')).name, 'review');
    await assert.rejects(directory.prompt('notes_nothing'), rejectsWith(ProtocolErrorCode.InvalidParams, /There is no prompt named "notes_nothing"/));
    assert.ok(servers.get('notes')!.requests.every((r) => r.method === 'prompts/list'));
    await router.dispose();
  });

  it('gives a prompt whose name a prompt on an earlier page already took a hash suffix, and maps both back', async () => {
    const { router } = await routerOver({ notes: { prompts: [[{ name: 'a.b' }], [{ name: 'a_b' }]] } });
    const directory = new FeatureDirectory(router, () => undefined);
    const names = (await everyPage<Prompt>(directory, 'prompts')).items.map((p) => p.name);
    assert.equal(names[0], 'notes_a_b');
    assert.match(names[1]!, /^notes_a_b_[0-9a-f]{6}$/);
    assert.deepEqual(await Promise.all(names.map(async (n) => (await directory.prompt(n)).name)), ['a.b', 'a_b']);
    assert.deepEqual((await everyPage<Prompt>(directory, 'prompts')).items.map((p) => p.name), names, 'the same names on every listing');
    await router.dispose();
  });
});

describe('what the gateway\'s sessions share (GatewayHub)', () => {
  /** A session that records what the hub tells it. */
  function session(): GatewaySession & { updates: string[]; changed: string[]; logs: string[] } {
    const updates: string[] = [];
    const changed: string[] = [];
    const logs: string[] = [];
    return {
      updates,
      changed,
      logs,
      resourceUpdated: (uri) => void updates.push(uri),
      listChanged: (list) => void changed.push(list),
      serverLog: (server, params) => void logs.push(`${server}:${String(params.data)}`),
    };
  }

  it('subscribes a server to a URI once for every session, unsubscribes when the last one leaves, and sends updates only to subscribers', async () => {
    const { router, servers } = await routerOver({ docs: { resources: [[resource('d://a'), resource('d://b')]], subscribe: true } });
    const hub = new GatewayHub(router);
    const [one, two, three] = [session(), session(), session()];
    const leave = [one, two, three].map((s) => hub.join(s));
    await hub.subscribe(one, 'd://a');
    await hub.subscribe(two, 'd://a');
    const upstream = () => servers.get('docs')!.requests.filter((r) => /subscribe/.test(r.method)).map((r) => `${r.method} ${String(r.params['uri'])}`);
    assert.deepEqual(upstream(), ['resources/subscribe d://a']);
    servers.get('docs')!.notices.fire({ kind: 'resourceUpdated', uri: 'd://a' });
    assert.deepEqual([one.updates, two.updates, three.updates], [['d://a'], ['d://a'], []]);
    await hub.unsubscribe(one, 'd://a');
    assert.deepEqual(upstream(), ['resources/subscribe d://a'], 'another session still wants it');
    leave[1]!();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(upstream(), ['resources/subscribe d://a', 'resources/unsubscribe d://a']);
    leave[0]!();
    leave[2]!();
    hub.dispose();
    await router.dispose();
  });

  it('refuses a subscription the owning server cannot keep, naming it', async () => {
    const { router } = await routerOver({ plain: { resources: [[resource('p://a')]] } });
    const hub = new GatewayHub(router);
    await assert.rejects(hub.subscribe(session(), 'p://a'), rejectsWith(ProtocolErrorCode.MethodNotFound, /Server "plain" does not offer subscriptions/));
    hub.dispose();
    await router.dispose();
  });

  it('tells logging servers the most verbose level any session wants, again after a restart, and fans out their messages', async () => {
    const { router, servers } = await routerOver({ loud: { logging: true, prompts: [[]] }, quiet: {} });
    const hub = new GatewayHub(router);
    const [one, two] = [session(), session()];
    hub.join(one);
    const leaveTwo = hub.join(two);
    const levels = (): LoggingLevel[] => servers.get('loud')!.requests.filter((r) => r.method === 'logging/setLevel').map((r) => r.params['level'] as LoggingLevel);
    await hub.setLevel(one, 'warning');
    await hub.setLevel(two, 'debug');
    await hub.setLevel(one, 'error');
    assert.deepEqual(levels(), ['warning', 'debug'], 'debug stays while a session wants it');
    assert.deepEqual(servers.get('quiet')!.requests, [], 'a server that does not log is not told');
    leaveTwo();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(levels(), ['warning', 'debug', 'error']);
    servers.get('loud')!.setState('restarting');
    servers.get('loud')!.setState('ready');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(levels(), ['warning', 'debug', 'error', 'error'], 'a restarted server is told again');
    assert.deepEqual(one.changed, ['prompts', 'prompts'], 'its prompts went away and came back');
    servers.get('loud')!.notices.fire({ kind: 'log', params: { level: 'error', data: 'disk full' } });
    assert.deepEqual(one.logs, ['loud:disk full']);
    hub.dispose();
    await router.dispose();
  });
});
