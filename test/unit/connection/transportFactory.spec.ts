import assert from 'node:assert/strict';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client, PriorDiscovery, Transport } from '@modelcontextprotocol/client';
import { parseMcpConfig } from '../../../src/core/config/mcpConfigParser';
import type { ServerDefinition } from '../../../src/core/config/serverConfig';
import { RemoteSignIn } from '../../../src/core/connection/remoteSignIn';
import type { StdioProcessTransport } from '../../../src/core/connection/stdioProcessTransport';
import { TransportFactory, type StartHooks } from '../../../src/core/connection/transportFactory';

/**
 * Which transport the factory opens and when it falls back, with real processes and a real HTTP server.
 * The handshake hook is scripted: it starts the transport and fails once the peer is gone, standing in for
 * the client's handshake, which ServerConnection supplies (the integration tests run that one).
 */

async function definition(server: Record<string, unknown>): Promise<ServerDefinition> {
  const parsed = await parseMcpConfig(JSON.stringify({ servers: { probe: server } }), { file: 'test.json' });
  return parsed.servers[0]!;
}

function factoryFor(def: ServerDefinition, logs: string[]): TransportFactory {
  const log = (line: string): void => void logs.push(line);
  return new TransportFactory(def, undefined, new RemoteSignIn(def.name, undefined, log), log);
}

/** Hooks whose handshake fails as soon as the transport's peer refuses or exits; records what it was given. */
function failingHooks(): StartHooks & { priors: Array<PriorDiscovery['kind'] | undefined>; transports: string[]; processes: StdioProcessTransport[] } {
  const priors: Array<PriorDiscovery['kind'] | undefined> = [];
  const transports: string[] = [];
  const processes: StdioProcessTransport[] = [];
  return {
    priors,
    transports,
    processes,
    async handshake(transport: Transport, prior?: PriorDiscovery): Promise<Client> {
      priors.push(prior?.kind);
      transports.push(transport.constructor.name);
      await transport.start();
      const stdio = processes.at(-1);
      if (stdio && transport === stdio) while (stdio.exitInfo === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      else await transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
      throw new Error('the handshake failed');
    },
    teardown: async () => undefined,
    isCurrent: () => true,
    spawned: (child) => void processes.push(child),
  };
}

describe('the transport factory', () => {
  it('starts a stdio server that exits on the revision probe once more as 2025-11-25, and remembers that until told to forget', async () => {
    const def = await definition({ command: process.execPath, args: ['-e', 'process.exit(3)'] });
    const logs: string[] = [];
    const factory = factoryFor(def, logs);
    const first = failingHooks();
    await assert.rejects(factory.open(first), /the handshake failed/);
    assert.deepEqual(first.priors, [undefined, 'legacy']);
    assert.equal(first.processes.length, 2);
    assert.ok(logs.includes('[router] the server exited (exit code 3) while asked for its protocol revision; starting it once more, as a 2025-11-25 server'), logs.join('\n'));
    const second = failingHooks();
    await assert.rejects(factory.open(second), /the handshake failed/);
    assert.deepEqual(second.priors, ['legacy'], 'not probed again');
    factory.forgetProbeExit();
    const third = failingHooks();
    await assert.rejects(factory.open(third), /the handshake failed/);
    assert.deepEqual(third.priors, [undefined, 'legacy']);
  });

  it('refuses SSE for a server pinned to 2026-07-28 before connecting', async () => {
    const def = await definition({ type: 'sse', url: 'http://127.0.0.1:9/sse', router: { protocol: '2026-07-28' } });
    const logs: string[] = [];
    const hooks = failingHooks();
    await assert.rejects(factoryFor(def, logs).open(hooks), /2026-07-28 is not spoken over SSE/);
    assert.deepEqual(hooks.transports, []);
    assert.deepEqual(logs, []);
  });

  describe('over HTTP', () => {
    let http: HttpServer;
    let url: string;
    before(async () => {
      // An old server: no streamable HTTP endpoint (405 to POST), nor an SSE stream.
      http = createServer((_req, res) => res.writeHead(405).end());
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    });
    after(() => new Promise<void>((resolve) => http.close(() => resolve())));

    it('tries SSE when streamable HTTP is refused with a 4xx, as 2025-11-25', async () => {
      const def = await definition({ type: 'http', url });
      const logs: string[] = [];
      const hooks = failingHooks();
      await assert.rejects(factoryFor(def, logs).open(hooks));
      assert.deepEqual(hooks.transports, ['StreamableHTTPClientTransport', 'SSEClientTransport']);
      assert.deepEqual(hooks.priors, [undefined, 'legacy']);
      assert.match(logs.join('\n'), /streamable HTTP refused \(.+\); trying SSE/);
    });

    it('does not look for SSE for a server pinned to 2026-07-28', async () => {
      const def = await definition({ type: 'http', url, router: { protocol: '2026-07-28' } });
      const hooks = failingHooks();
      await assert.rejects(factoryFor(def, []).open(hooks));
      assert.deepEqual(hooks.transports, ['StreamableHTTPClientTransport']);
    });
  });
});
