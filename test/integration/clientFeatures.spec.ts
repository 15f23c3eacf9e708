import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ClientFeatures } from '../../src/core/connection/clientFeatures';
import { ToolRouter } from '../../src/core/router/toolRouter';
import { definitions, EVERYTHING, REPO_ROOT, tempDir, waitFor } from './serverHarness';

/**
 * The client features beyond calling tools, against the reference server-everything: elicitation,
 * sampling, roots, progress and log messages, in the router and forwarded by the gateway. The person
 * answering a form is a FAKE (a scripted answer): no real one can sit in a test.
 */

function text(result: unknown): string {
  return JSON.stringify((result as CallToolResult).content ?? result);
}

describe('client features (server-everything)', function () {
  this.timeout(60_000);

  it('answers a server\'s elicitation, lists the roots, shows progress and keeps the server\'s log messages', async () => {
    const asked: string[] = [];
    const features: ClientFeatures = {
      // FAKE user: accepts with a name and leaves the rest to the schema's defaults.
      elicit: async (_server, params) => {
        asked.push(params.message);
        return { action: 'accept', content: { name: 'Ada Lovelace' } };
      },
      roots: () => [{ uri: 'file:///work/project', name: 'project' }],
    };
    const lines: string[] = [];
    const router = new ToolRouter({ features, onLog: (_s, line) => lines.push(line) });
    try {
      await router.applyConfig(await definitions({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
      await router.whenSettled(30_000);
      assert.ok(router.getTool('everything_trigger-elicitation-request'), 'the server offers its elicitation tool to a client that can elicit');

      const elicited = await router.call('everything_trigger-elicitation-request', {});
      assert.ok(elicited.ok, JSON.stringify(elicited));
      assert.match(text(elicited), /Ada Lovelace/);
      // SEP-1034: a field the user left out comes back with the schema's default.
      assert.match(text(elicited), /It was a dark and stormy night/);
      assert.equal(asked.length, 1);

      const roots = await router.call('everything_get-roots-list', {});
      assert.match(text(roots), /file:\/\/\/work\/project/);

      const progress: number[] = [];
      const long = await router.call('everything_trigger-long-running-operation', { duration: 1, steps: 4 }, { onProgress: (p) => progress.push(p.progress) });
      assert.ok(long.ok, JSON.stringify(long));
      assert.ok(progress.length >= 3, `progress notifications: ${JSON.stringify(progress)}`);

      await router.call('everything_toggle-simulated-logging', {});
      await waitFor(() => lines.some((l) => /^\[(debug|info|notice|warning|error|critical|alert|emergency)\]/.test(l)), 'a log message from the server', 20_000);
    } finally {
      await router.dispose();
    }
  });

  it('declines sampling without a model, with a message that says so', async () => {
    const router = new ToolRouter({ features: { sample: (server) => Promise.reject(new Error(`no language model, so the sampling request of "${server}" was declined`)) } });
    try {
      await router.applyConfig(await definitions({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
      await router.whenSettled(30_000);
      const sampled = await router.call('everything_trigger-sampling-request', { prompt: 'say hi' });
      assert.equal(sampled.ok, false);
      assert.match(JSON.stringify(sampled), /sampling request of \\?"everything\\?" was declined/);
    } finally {
      await router.dispose();
    }
  });

  describe('through the gateway', () => {
    let child: ChildProcess;
    let url: URL;

    before(async () => {
      const dir = tempDir('gateway-features');
      const config = path.join(dir, 'mcp.json');
      writeFileSync(config, JSON.stringify({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
      child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/cli.js'), 'serve', '--config', config, '--http', '--dynamic', '--no-auth', '--embeddings', 'none', '--cache-dir', path.join(dir, 'cache')], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      await waitFor(() => /serving 1 server\(s\) at (\S+)/.test(stderr), 'serve --http to listen', 30_000);
      url = new URL(/serving 1 server\(s\) at (\S+)/.exec(stderr)![1]!);
    });

    after(() => {
      child.kill('SIGTERM');
    });

    it('passes a routed server\'s elicitation and sampling on to its own client', async () => {
      const client = new Client({ name: 'gateway-client', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
      // FAKE user and FAKE model on the gateway's client side.
      client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Grace Hopper' } }));
      client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', content: { type: 'text', text: 'hello from the client model' }, model: 'fake', stopReason: 'endTurn' }));
      await client.connect(new StreamableHTTPClientTransport(url));
      try {
        const elicited = await client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_trigger-elicitation-request', arguments: {} } });
        assert.match(text(elicited), /Grace Hopper/);
        const sampled = await client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_trigger-sampling-request', arguments: { prompt: 'greet' } } });
        assert.match(text(sampled), /hello from the client model/);
      } finally {
        await client.close();
      }
    });

    it('passes a routed server\'s progress on to the client that asked for it, through the call tool and by name', async () => {
      const client = new Client({ name: 'gateway-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url));
      try {
        const viaCall: Array<{ progress: number; total?: number }> = [];
        const long = { duration: 1, steps: 4 };
        const called = await client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_trigger-long-running-operation', arguments: long } }, undefined, { onprogress: (p) => viaCall.push(p) });
        assert.match(text(called), /Long running operation completed/);
        // The last notice comes with the answer, and the SDK's client may settle the call first and drop it.
        const steps = (seen: readonly number[]) => assert.deepEqual(seen.slice(0, 3), [1, 2, 3], `progress: ${JSON.stringify(seen)}`);
        steps(viaCall.map((p) => p.progress));
        assert.ok(viaCall.every((p) => p.total === 4), JSON.stringify(viaCall));
        // A search lists the tool by its own name; its call reports progress the same way.
        await client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'trigger a long running operation' } });
        const byName: number[] = [];
        const direct = await client.callTool({ name: 'everything_trigger-long-running-operation', arguments: long }, undefined, { onprogress: (p) => byName.push(p.progress) });
        assert.match(text(direct), /Long running operation completed/);
        steps(byName);
        // A call without a progress token runs as before.
        const quiet = await client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_trigger-long-running-operation', arguments: long } });
        assert.match(text(quiet), /Long running operation completed/);
      } finally {
        await client.close();
      }
    });

    it('passes progress on to a 2026-07-28 client too, as a stream of the call\'s own request', async () => {
      const client = new ModernClient({ name: 'gateway-client-2026', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new ModernTransport(url));
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        const seen: number[] = [];
        const called = await client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_trigger-long-running-operation', arguments: { duration: 1, steps: 4 } } }, { onprogress: (p) => seen.push(p.progress) });
        assert.match(text(called), /Long running operation completed/);
        assert.deepEqual(seen.slice(0, 3), [1, 2, 3], `progress: ${JSON.stringify(seen)}`);
      } finally {
        await client.close();
      }
    });
  });
});
