import assert from 'node:assert/strict';
import { Client, type ElicitResult } from '@modelcontextprotocol/client';
import { InMemoryTransport, Server } from '@modelcontextprotocol/server';
import { parseMcpConfig } from '../../../src/core/config/mcpConfigParser';
import type { ServerDefinition } from '../../../src/core/config/serverConfig';
import { ClientFeatureHandlers } from '../../../src/core/connection/clientFeatureHandlers';
import type { ClientFeatures } from '../../../src/core/connection/clientFeatures';
import type { ServerNotice } from '../../../src/core/connection/serverNotices';

async function definition(router: Record<string, unknown> = {}): Promise<ServerDefinition> {
  const parsed = await parseMcpConfig(JSON.stringify({ servers: { notes: { command: 'notes-server', router } } }), { file: 'test.json' });
  return parsed.servers[0]!;
}

const form = { mode: 'form' as const, message: 'Which title?', requestedSchema: { type: 'object' as const, properties: { title: { type: 'string' as const } } } };
const accept = (title: string): ElicitResult => ({ action: 'accept', content: { title } });

describe('client features for one server', () => {
  it('declares only what the host provides, and roots only to a server configured to get them', async () => {
    const all: ClientFeatures = { elicit: async () => accept('x'), sample: async () => ({ role: 'assistant', content: { type: 'text', text: '' }, model: 'm' }), roots: () => [], onRootsChanged: () => () => undefined };
    assert.deepEqual(new ClientFeatureHandlers(await definition(), undefined).capabilities(), {});
    assert.deepEqual(new ClientFeatureHandlers(await definition(), all).capabilities(), { elicitation: { form: { applyDefaults: true } }, sampling: {}, roots: { listChanged: true } });
    assert.deepEqual(new ClientFeatureHandlers(await definition({ roots: false }), all).capabilities(), { elicitation: { form: { applyDefaults: true } }, sampling: {} });
    assert.deepEqual(new ClientFeatureHandlers(await definition(), { roots: () => [] }).capabilities(), { roots: { listChanged: false } });
  });

  it("answers a real server's requests: the newest call's own client first, else the host; and passes its notices on", async () => {
    const hostAsked: string[] = [];
    const features: ClientFeatures = {
      elicit: async (server) => {
        hostAsked.push(server);
        return accept('from the host');
      },
      roots: () => [{ uri: 'file:///work/project', name: 'project' }],
    };
    const handlers = new ClientFeatureHandlers(await definition(), features);
    const client = new Client({ name: 'test', version: '1' }, { capabilities: handlers.capabilities() });
    const notices: ServerNotice[] = [];
    const logs: string[] = [];
    handlers.install(client, { isCurrent: () => true, isCurrentClient: () => true, log: (line) => void logs.push(line), notify: (n) => void notices.push(n) });
    const server = new Server({ name: 'asker', version: '1' }, { capabilities: { logging: {} } });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    try {
      assert.deepEqual(await server.elicitInput(form), accept('from the host'));
      assert.deepEqual(hostAsked, ['notes']);
      const gatewaySession = { elicit: async () => accept('from the caller') };
      const answer = await handlers.during(gatewaySession, () => server.elicitInput(form));
      assert.deepEqual(answer, accept('from the caller'));
      assert.deepEqual(hostAsked, ['notes'], 'the host was not asked while the caller could answer');
      // A caller that cannot answer elicitation leaves it to the host.
      await handlers.during({ sample: async () => ({ role: 'assistant', content: { type: 'text', text: '' }, model: 'm' }) }, () => server.elicitInput(form));
      assert.deepEqual(hostAsked, ['notes', 'notes']);
      assert.deepEqual(await server.listRoots(), { roots: [{ uri: 'file:///work/project', name: 'project' }] });
      await server.sendLoggingMessage({ level: 'info', logger: 'db', data: 'opened' });
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(logs, ['[info] db: opened']);
      assert.deepEqual(notices, [{ kind: 'log', params: { level: 'info', logger: 'db', data: 'opened' } }]);
    } finally {
      handlers.dispose();
      await client.close();
    }
  });
});
