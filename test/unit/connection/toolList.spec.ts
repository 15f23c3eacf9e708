import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, Server } from '@modelcontextprotocol/server';
import { MAX_TOOL_PAGES, ToolListSync, type ToolListHost } from '../../../src/core/connection/toolList';
import type { ServerTool } from '../../../src/core/connection/serverTool';

/** A real SDK server over the in-memory transport, paging its tools as `page` says (cursor → page). */
async function pagingServer(page: (cursor: string | undefined) => { tools: unknown[]; nextCursor?: string }): Promise<{ client: Client; close: () => Promise<void> }> {
  const server = new Server({ name: 'pager', version: '1' }, { capabilities: { tools: { listChanged: true } } });
  // Cast: a page may hold entries that are not tools, on purpose.
  server.setRequestHandler('tools/list', (request) => page(request.params?.cursor) as never);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  return { client, close: () => client.close() };
}

function tool(name: string): ServerTool {
  return { name, inputSchema: { type: 'object', properties: {} } };
}

function host(client: Client | undefined, logs: string[], set: ServerTool[][] = []): ToolListHost & { gen: number } {
  return {
    gen: 1,
    client: () => client,
    generation() {
      return this.gen;
    },
    setTools: (tools) => void set.push(tools),
    log: (line) => void logs.push(line),
    notify: () => undefined,
  };
}

describe('a server\'s tool list', () => {
  it('reads every page, skipping and logging entries that are not tools', async () => {
    const pages: Record<string, { tools: unknown[]; nextCursor?: string }> = {
      '': { tools: [tool('a'), { name: 42 }], nextCursor: 'p2' },
      p2: { tools: [tool('b')] },
    };
    const { client, close } = await pagingServer((cursor) => pages[cursor ?? '']!);
    const logs: string[] = [];
    try {
      const tools = await new ToolListSync(host(client, logs), 5_000).list(client);
      assert.deepEqual(tools.map((t) => t.name), ['a', 'b']);
      assert.equal(logs.length, 1);
      assert.match(logs[0]!, /^\[router\] skipped an invalid tool in tools\/list: /);
    } finally {
      await close();
    }
  });

  it('stops paging at a cursor it saw before, and after MAX_TOOL_PAGES pages', async () => {
    const logs: string[] = [];
    const looping = await pagingServer((cursor) => ({ tools: [tool(`t${cursor ?? 0}`)], nextCursor: 'again' }));
    try {
      const tools = await new ToolListSync(host(looping.client, logs), 5_000).list(looping.client);
      assert.deepEqual(tools.map((t) => t.name), ['t0', 'tagain']);
      assert.deepEqual(logs, ['[router] tools/list returned cursor "again" twice; stopped paging']);
    } finally {
      await looping.close();
    }
    logs.length = 0;
    let served = 0;
    const endless = await pagingServer((cursor) => ({ tools: [tool(`t${served++}`)], nextCursor: `${cursor ?? ''}x` }));
    try {
      const tools = await new ToolListSync(host(endless.client, logs), 5_000).list(endless.client);
      assert.equal(tools.length, MAX_TOOL_PAGES);
      assert.deepEqual(logs, [`[router] tools/list still had more pages after ${MAX_TOOL_PAGES}; stopped paging`]);
    } finally {
      await endless.close();
    }
  });

  it('collapses a burst of list_changed into one refresh, and drops a list read for an older start', async () => {
    let version = 0;
    const { client, close } = await pagingServer(() => ({ tools: [tool(`v${++version}`)] }));
    const set: ServerTool[][] = [];
    const h = host(client, [], set);
    const sync = new ToolListSync(h, 5_000);
    try {
      for (let i = 0; i < 5; i++) sync.changed(1);
      sync.changed(0); // an older start's client: ignored
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(set.map((tools) => tools.map((t) => t.name)), [['v1']]);
      const refreshing = sync.refresh();
      h.gen = 2;
      await refreshing;
      assert.equal(set.length, 1, 'the list read for start 1 is not set once start 2 began');
    } finally {
      sync.cancel();
      await close();
    }
  });
});
