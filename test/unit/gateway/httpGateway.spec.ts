import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { GatewayCore } from '../../../src/core/gateway/gatewayCore';
import { HttpGateway, isLoopbackHost, newGatewaySecret } from '../../../src/core/gateway/httpGateway';
import { ModernGateway } from '../../../src/core/gateway/modernGateway';
import { RouterGateway } from '../../../src/core/gateway/routerGateway';
import { useHttpGateway } from './httpGatewayHarness';

/**
 * The HTTP gateway's own rules, on a real loopback socket with a router that has no servers: which
 * requests are refused and with what status, the rate limit (on a clock the test moves), and sessions.
 */

const TOKEN = newGatewaySecret();
const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${TOKEN}` };
const initialize = (id = 1): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'unit', version: '1' } } });

describe('HttpGateway', function () {
  // Real HTTP servers and SDK clients, several sessions per test (~0.2 s idle); a loaded machine is several times slower.
  this.timeout(20_000);
  const harness = useHttpGateway(TOKEN);

  it('tells loopback hosts from others', () => {
    for (const h of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3']) assert.ok(isLoopbackHost(h), h);
    for (const h of ['0.0.0.0', '192.168.1.5', 'example.com', '::', 'localhost.example.com']) assert.ok(!isLoopbackHost(h), h);
  });

  it('refuses to exist beyond loopback without a token, or with a short one', () => {
    assert.throws(() => new HttpGateway({ host: '0.0.0.0', createGateway: () => assert.fail() }), /without a token/);
    assert.throws(() => new HttpGateway({ token: 'short', createGateway: () => assert.fail() }), /shorter than 16/);
    assert.doesNotThrow(() => new HttpGateway({ createGateway: () => assert.fail() }));
  });

  it('binds to loopback on a free port and answers only at /mcp', async () => {
    const url = await harness.start();
    assert.equal(url.hostname, '127.0.0.1');
    assert.ok(Number(url.port) > 0);
    const other = await fetch(new URL('/other', url), { method: 'POST', headers, body: initialize() });
    assert.equal(other.status, 404);
  });

  it('gives 400 for a body that is not JSON or not an initialize, 404 for an unknown session, 413 for a huge body', async () => {
    const url = await harness.start();
    const bad = await fetch(url, { method: 'POST', headers, body: '{not json' });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: { message: string } }).error.message, /not JSON/);
    const noInit = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    assert.equal(noInit.status, 400);
    const unknown = await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': 'nope' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    assert.equal(unknown.status, 404);
    const huge = await fetch(url, { method: 'POST', headers, body: `"${'x'.repeat(5 * 1024 * 1024)}"` });
    assert.equal(huge.status, 413);
  });

  it('limits requests per client and lets them through again as time passes', async () => {
    const url = await harness.start({ rateBurst: 3, ratePerSecond: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(url, { method: 'POST', headers, body: '{}' })).status);
    assert.deepEqual(statuses, [400, 400, 400, 429]);
    harness.clock += 1500;
    assert.equal((await fetch(url, { method: 'POST', headers, body: '{}' })).status, 400);
  });

  it('keeps each client in its own session and closes the oldest past the session cap', async () => {
    const url = await harness.start({ maxSessions: 2 });
    const clients: Client[] = [];
    for (let i = 0; i < 3; i++) {
      const client = new Client({ name: `c${i}`, version: '1' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
      clients.push(client);
      harness.clock += 10;
    }
    assert.equal(harness.gateway!.sessionCount, 2);
    // The first session was the oldest: it is gone, the newer two still work.
    await assert.rejects(clients[0]!.listTools(), /404|session/i);
    assert.equal((await clients[2]!.listTools()).tools.length, 2);
    for (const c of clients) await c.close().catch(() => undefined);
  });

  it('closes sessions left idle', async () => {
    const url = await harness.start({ sessionIdleMs: 1000 });
    const client = new Client({ name: 'idle', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    assert.equal(harness.gateway!.sessionCount, 1);
    harness.clock += 5000;
    (harness.gateway as unknown as { closeIdle(ms: number): void }).closeIdle(1000);
    assert.equal(harness.gateway!.sessionCount, 0);
    await client.close().catch(() => undefined);
  });

  it('answers 2026-07-28 requests without a session, after the same guards, and 2025 ones in a session', async () => {
    const core = new GatewayCore(harness.router, { selector: harness.selector() });
    const url = await harness.start({ createGateway: () => new RouterGateway(core), modern: new ModernGateway(core) });
    const connect = async (token: string): Promise<ModernClient> => {
      const client = new ModernClient({ name: 'modern', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new ModernTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      return client;
    };
    await assert.rejects(connect('not-the-token-at-all-xxxx'), /401|bearer token/i);
    const client = await connect(TOKEN);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['toolRouter_searchTools', 'toolRouter_callTool']);
      assert.equal(harness.gateway!.sessionCount, 0, 'a 2026-07-28 client holds no session');
      const legacy = new Client({ name: 'legacy', version: '1' });
      await legacy.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
      assert.equal(harness.gateway!.sessionCount, 1);
      await legacy.close();
    } finally {
      await client.close();
      core.dispose();
    }
  });
});
