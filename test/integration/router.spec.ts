import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseMcpConfig } from '../../src/core/config/mcpConfigParser';
import { ServerConnection } from '../../src/core/connection/serverConnection';
import { TOOL_NAME_PATTERN } from '../../src/core/router/naming';
import { ToolRouter, type RoutedTool, type ToolRouterOptions } from '../../src/core/router/toolRouter';
import { MAX_ARGUMENT_BYTES } from '../../src/core/schema/argumentNormalizer';
import {
  EVERYTHING,
  FILESYSTEM,
  MEMORY,
  TEST_BACKOFF_MS,
  definitions,
  isAlive,
  readLines,
  scripted,
  startEverythingHttp,
  tempDir,
  waitFor,
  type HttpServer,
} from './serverHarness';

const SETTLE_MS = 30_000;

function textOf(envelope: { content?: Array<{ type: string } & Record<string, unknown>> }): string {
  return (envelope.content ?? []).filter((b) => b.type === 'text').map((b) => String(b['text'])).join('\n');
}

async function startRouter(config: unknown, workspace?: string, createConnection?: ToolRouterOptions['createConnection']): Promise<ToolRouter> {
  const router = new ToolRouter({ backoffMs: TEST_BACKOFF_MS, ...(createConnection ? { createConnection } : {}) });
  await router.applyConfig(await definitions(config, workspace));
  await router.whenSettled(SETTLE_MS);
  return router;
}

/** server-everything over stdio behind a router that counts the calls reaching the server. */
async function startCountingEverything(): Promise<{ router: ToolRouter; calls: () => number }> {
  let calls = 0;
  const router = await startRouter({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }, undefined, (def, options) => {
    const c = new ServerConnection(def, options);
    const original = c.callTool.bind(c);
    c.callTool = (...args) => {
      calls++;
      return original(...args);
    };
    return c;
  });
  return { router, calls: () => calls };
}

describe('router against real MCP servers', function () {
  this.timeout(60_000);
  let router: ToolRouter | undefined;
  afterEach(async () => {
    await router?.dispose();
    router = undefined;
  });

  describe('server-everything over stdio', () => {
    it('exposes prefixed, provider-safe names with server-tagged descriptions and annotations', async () => {
      router = await startRouter({ servers: { everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] } } });
      const tools = router.listTools();
      assert.ok(tools.length >= 10, `expected server-everything's tools, got ${tools.length}`);
      for (const t of tools) {
        assert.match(t.name, TOOL_NAME_PATTERN);
        assert.ok(t.name.startsWith('everything_'));
        assert.ok(t.description.startsWith('[everything]'));
      }
      const echo = router.getTool('everything_echo') as RoutedTool;
      assert.equal(echo.originalName, 'echo');
      assert.equal(echo.annotations.readOnlyHint, true);
      assert.equal(echo.annotations.destructiveHint, false);
      assert.equal(router.serverStatuses[0]?.transport, 'stdio');
    });

    it('calls echo and returns a success envelope with timing and size', async () => {
      router = await startRouter({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } });
      const result = await router.call('everything_echo', '{"message":"hello router"}');
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.equal(textOf(result), 'Echo: hello router');
      assert.equal(result.meta.server, 'everything');
      assert.equal(result.meta.tool, 'echo');
      assert.ok(result.meta.bytes > 0);
      assert.ok(result.meta.latencyMs >= 0);
      const stats = router.stats.get('everything_echo');
      assert.equal(stats?.calls, 1);
    });

    it('normalises string numbers and rejects invalid arguments without calling the server', async () => {
      const counted = await startCountingEverything();
      router = counted.router;

      const sum = await router.call('everything_get-sum', { a: '2', b: 3 });
      assert.equal(sum.ok, true, JSON.stringify(sum));
      assert.match(textOf(sum), /5/);
      assert.deepEqual(sum.meta.normalized, ['/a: "2" → 2']);
      assert.equal(counted.calls(), 1);

      const bad = await router.call('everything_get-sum', { a: 'two' });
      assert.equal(bad.ok, false);
      assert.equal(bad.ok === false && bad.error.type, 'INVALID_ARGUMENTS');
      assert.deepEqual(bad.ok === false && bad.error.issues?.map((i) => i.path).sort(), ['/a', '/b']);
      assert.equal(counted.calls(), 1, 'the server must not be called with invalid arguments');

      const unknown = await router.call('everything_nope', {});
      assert.equal(unknown.ok === false && unknown.error.type, 'UNKNOWN_TOOL');
    });

    it("gives each stdio server its own configured secrets and the ordinary environment, never the router's variables or another server's inputs", async () => {
      // The CLI's way of taking ${input:ID} values: MCP_TOOL_ROUTER_INPUT_<ID> in the router's own environment.
      const planted = { MCP_TOOL_ROUTER_INPUT_alpha_token: 'alpha-secret-7f3a', MCP_TOOL_ROUTER_INPUT_beta_token: 'beta-secret-91c2', MCP_TOOL_ROUTER_INPUT_X: 'x-secret-55d0' };
      const saved = Object.fromEntries(Object.keys(planted).map((k) => [k, process.env[k]]));
      Object.assign(process.env, planted);
      try {
        const config = {
          inputs: [
            { type: 'promptString', id: 'alpha_token', description: 'alpha token', password: true },
            { type: 'promptString', id: 'beta_token', description: 'beta token', password: true },
          ],
          servers: {
            alpha: { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { ALPHA_TOKEN: '${input:alpha_token}' } },
            beta: { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { BETA_TOKEN: '${input:beta_token}' } },
          },
        };
        const parsed = await parseMcpConfig(JSON.stringify(config), { file: 'test-config.json', resolveInput: async (input) => process.env[`MCP_TOOL_ROUTER_INPUT_${input.id}`] });
        assert.deepEqual(parsed.issues.filter((i) => i.severity === 'error'), []);
        router = new ToolRouter({ backoffMs: TEST_BACKOFF_MS });
        await router.applyConfig(parsed.servers);
        await router.whenSettled(SETTLE_MS);

        const envOf = async (tool: string): Promise<Record<string, string>> => {
          const result = await router!.call(tool, {});
          assert.equal(result.ok, true, JSON.stringify(result));
          return JSON.parse(textOf(result)) as Record<string, string>;
        };
        const alpha = await envOf('alpha_get-env');
        const beta = await envOf('beta_get-env');
        assert.equal(alpha['ALPHA_TOKEN'], planted.MCP_TOOL_ROUTER_INPUT_alpha_token);
        assert.equal(beta['BETA_TOKEN'], planted.MCP_TOOL_ROUTER_INPUT_beta_token);
        assert.equal(alpha['PATH'], process.env['PATH'], 'the ordinary environment is inherited');
        for (const [server, env, foreign] of [['alpha', alpha, 'beta-secret-91c2'], ['beta', beta, 'alpha-secret-7f3a']] as const) {
          const text = JSON.stringify(env);
          assert.ok(!text.includes(foreign), `${server} sees the other server's secret`);
          assert.ok(!text.includes(planted.MCP_TOOL_ROUTER_INPUT_X), `${server} sees MCP_TOOL_ROUTER_INPUT_X`);
          assert.deepEqual(Object.keys(env).filter((k) => k.toUpperCase().startsWith('MCP_TOOL_ROUTER_')), [], `${server} inherits the router's variables`);
        }
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    });

    it('refuses arguments nested 100,000 deep, as an object or a JSON string, without calling the server', async () => {
      const counted = await startCountingEverything();
      router = counted.router;
      const levels = 100_000;
      let deep: unknown = 'bottom';
      for (let i = 0; i < levels; i++) deep = { a: deep };
      const asText = `{"message":"hi","extra":${'{"a":'.repeat(levels)}"bottom"${'}'.repeat(levels)}}`;
      const hugeText = JSON.stringify({ message: 'x'.repeat(MAX_ARGUMENT_BYTES) });

      for (const [form, args, limit] of [['object', { message: 'hi', extra: deep }, 'MAX_ARGUMENT_DEPTH'], ['JSON string', asText, 'MAX_ARGUMENT_DEPTH'], ['oversized string', hugeText, 'MAX_ARGUMENT_BYTES']] as const) {
        const result = await router.call('everything_echo', args);
        assert.equal(result.ok, false, form);
        assert.equal(result.ok === false && result.error.type, 'INVALID_ARGUMENTS', `${form}: ${JSON.stringify(result).slice(0, 300)}`);
        assert.equal(result.ok === false && result.error.retryable, false, form);
        assert.match(result.ok === false ? result.error.message : '', new RegExp(limit), form);
      }
      assert.equal(counted.calls(), 0, 'the server must not be called with absurd arguments');
      const echo = await router.call('everything_echo', { message: 'still fine' });
      assert.equal(textOf(echo), 'Echo: still fine');
      assert.equal(counted.calls(), 1);
    });
  });

  describe('server-everything over HTTP', () => {
    let http: HttpServer | undefined;
    afterEach(async () => {
      await http?.stop();
      http = undefined;
    });

    it('connects over streamable HTTP and calls a tool', async () => {
      http = await startEverythingHttp('streamableHttp');
      router = await startRouter({ servers: { remote: { type: 'http', url: http.url } } });
      assert.equal(router.serverStatuses[0]?.state, 'ready', JSON.stringify(router.serverStatuses));
      assert.equal(router.serverStatuses[0]?.transport, 'streamable-http');
      const result = await router.call('remote_echo', { message: 'over http' });
      assert.equal(textOf(result), 'Echo: over http');
    });

    it('connects over SSE when the config says sse', async () => {
      http = await startEverythingHttp('sse');
      router = await startRouter({ servers: { legacy: { type: 'sse', url: http.url } } });
      assert.equal(router.serverStatuses[0]?.transport, 'sse', JSON.stringify(router.serverStatuses));
      const result = await router.call('legacy_echo', { message: 'over sse' });
      assert.equal(textOf(result), 'Echo: over sse');
    });

    it('falls back from streamable HTTP to SSE for an SSE-only server', async () => {
      http = await startEverythingHttp('sse');
      router = await startRouter({ servers: { legacy: { type: 'http', url: http.url } } });
      assert.equal(router.serverStatuses[0]?.state, 'ready', JSON.stringify(router.serverStatuses));
      assert.equal(router.serverStatuses[0]?.transport, 'sse');
      assert.equal(textOf(await router.call('legacy_echo', { message: 'fallback' })), 'Echo: fallback');
    });
  });

  it('runs server-memory and server-filesystem together from one config', async () => {
    const dir = tempDir('fs');
    router = await startRouter({
      servers: {
        memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } },
        files: { command: process.execPath, args: [FILESYSTEM, '${workspaceFolder}'] },
      },
    }, dir);
    assert.deepEqual(router.serverStatuses.map((s) => s.state), ['ready', 'ready']);
    const created = await router.call('memory_create_entities', { entities: [{ name: 'Router', entityType: 'project', observations: ['routes MCP tools'] }] });
    assert.equal(created.ok, true, JSON.stringify(created));
    const graph = await router.call('memory_read_graph', {});
    assert.match(textOf(graph), /routes MCP tools/);

    const written = await router.call('files_write_file', { path: path.join(dir, 'note.txt'), content: 'written through the router' });
    assert.equal(written.ok, true, JSON.stringify(written));
    const read = await router.call('files_read_text_file', { path: path.join(dir, 'note.txt') });
    assert.match(textOf(read), /written through the router/);
    const outside = await router.call('files_read_text_file', { path: '/etc/hostname' });
    assert.equal(outside.ok, false, 'a path outside the allowed folder is refused by the server');
    assert.equal(outside.ok === false && outside.error.type, 'TOOL_ERROR');
  });

  it('pages tools/list to the end', async () => {
    router = await startRouter({ servers: { paged: scripted(['--page-size', '3', '--extra-tools', '10']) } });
    const names = router.listTools().map((t) => t.originalName);
    assert.equal(names.length, 18); // 8 scripted tools + 10 extra
    assert.ok(names.includes('extra_9'));
  });

  it('restarts a server killed mid-call and gives the lost call a clear error', async () => {
    const dir = tempDir('crash');
    const marker = path.join(dir, 'marker.txt');
    router = await startRouter({ servers: { flaky: scripted(['--marker', marker]) } });
    const result = await router.call('flaky_crash', {});
    assert.equal(result.ok, false);
    assert.equal(result.ok === false && result.error.type, 'SERVER_RESTARTED', JSON.stringify(result));
    assert.match(result.ok === false ? result.error.message : '', /flaky.*stopped while "crash" was running/);
    await waitFor(() => router!.serverStatuses[0]?.state === 'ready' && readLines(marker).filter((l) => l.startsWith('started')).length === 2, 'the restart');
    assert.equal(router.serverStatuses[0]?.restarts, 1);
    assert.equal(textOf(await router.call('flaky_echo', { message: 'back' })), 'Echo: back');
  });

  it('ends a call in flight when the server process is killed from outside', async () => {
    const dir = tempDir('kill');
    const marker = path.join(dir, 'marker.txt');
    router = await startRouter({ servers: { victim: scripted(['--marker', marker]) } });
    const pid = Number(readLines(marker)[0]?.split(' ')[1]);
    const pending = router.call('victim_hang', {});
    await waitFor(() => readLines(marker).includes('call hang'), 'the call to reach the server');
    process.kill(pid, 'SIGKILL');
    const result = await pending;
    assert.equal(result.ok === false && result.error.type, 'SERVER_RESTARTED', JSON.stringify(result));
    await waitFor(() => router!.serverStatuses[0]?.state === 'ready', 'the restart');
  });

  it('picks up notifications/tools/list_changed', async () => {
    router = await startRouter({ servers: { dyn: scripted() } });
    assert.equal(router.getTool('dyn_fresh_tool'), undefined);
    let changes = 0;
    router.onDidChangeTools(() => changes++);
    const added = await router.call('dyn_add_tool', { name: 'fresh_tool' });
    assert.equal(added.ok, true);
    await waitFor(() => router!.getTool('dyn_fresh_tool') !== undefined, 'the new tool');
    assert.ok(changes >= 1);
    assert.equal(textOf(await router.call('dyn_fresh_tool', {})), 'fresh_tool ran');
  });

  it('times out a hanging call and keeps the server usable', async () => {
    router = await startRouter({ servers: { slow: scripted([], { callTimeoutMs: 400 }) } });
    const result = await router.call('slow_hang', {});
    assert.equal(result.ok === false && result.error.type, 'TIMEOUT', JSON.stringify(result));
    assert.match(result.ok === false ? result.error.message : '', /400 ms/);
    assert.equal(textOf(await router.call('slow_echo', { message: 'still here' })), 'Echo: still here');
  });

  it('cuts an oversized result to the cap and says so', async () => {
    router = await startRouter({ servers: { huge: scripted([], { maxResponseBytes: 10_000 }) } });
    const result = await router.call('huge_big', { bytes: 2_000_000 });
    assert.equal(result.ok, true);
    assert.ok(result.meta.bytes <= 10_000, `got ${result.meta.bytes} bytes`);
    assert.deepEqual(result.meta.truncated, { originalBytes: result.meta.truncated?.originalBytes, limitBytes: 10_000 });
    assert.ok((result.meta.truncated?.originalBytes ?? 0) > 2_000_000);
    assert.match(textOf(result), /cut this result/);
  });

  it('keeps other servers working when one exits at once, and restarts it with backoff', async () => {
    const dir = tempDir('exit');
    const marker = path.join(dir, 'marker.txt');
    router = await startRouter({
      servers: {
        broken: scripted(['--exit-at-once', '--marker', marker]),
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      },
    });
    assert.equal(textOf(await router.call('everything_echo', { message: 'unaffected' })), 'Echo: unaffected');
    await waitFor(() => readLines(marker).length >= 3, 'restart attempts');
    const broken = router.getConnection('broken')!;
    assert.ok(['restarting', 'failed'].includes(broken.status.state));
    assert.match(broken.status.reason ?? '', /exit code 3|exited/);
    assert.match(broken.log.text(), /exiting at once as asked/);
    const call = await router.call('broken_echo', { message: 'x' });
    assert.equal(call.ok === false && call.error.type, 'UNKNOWN_TOOL');
    // The message names the server that owns the prefix and why it has no tools.
    assert.match(call.ok === false ? call.error.message : '', /Server "broken" (is restarting|has failed).*exit code 3/);
  });

  it('reports a failed start for a missing command and leaves the rest alone', async () => {
    router = await startRouter({ servers: { ghost: { command: 'no-such-command-for-router-tests' }, ok: scripted() } });
    const ghost = router.getConnection('ghost')!.status;
    assert.equal(ghost.state, 'failed');
    assert.match(ghost.reason ?? '', /was not found/);
    assert.equal(router.getConnection('ok')!.status.state, 'ready');
  });

  it('ignores garbage on stdout and logs it', async () => {
    router = await startRouter({ servers: { noisy: scripted(['--garbage']) } });
    assert.equal(textOf(await router.call('noisy_echo', { message: 'through noise' })), 'Echo: through noise');
    assert.match(router.getConnection('noisy')!.log.text(), /ignored non-JSON-RPC output/);
  });

  it('reports tool errors and invalid results in the envelope', async () => {
    router = await startRouter({ servers: { s: scripted(['--bad-result']) } });
    const failed = await router.call('s_fail', {});
    assert.equal(failed.ok === false && failed.error.type, 'TOOL_ERROR');
    assert.match(failed.ok === false ? failed.error.message : '', /failed on purpose/);
    const invalid = await router.call('s_bad_result', {});
    assert.equal(invalid.ok, false);
    assert.ok(invalid.ok === false && ['INVALID_RESULT', 'PROTOCOL_ERROR'].includes(invalid.error.type), JSON.stringify(invalid));
  });

  it('fails a tool without a schema closed unless the config allows it', async () => {
    router = await startRouter({ servers: { strict: scripted(['--no-schema']), lax: scripted(['--no-schema'], { allowUnvalidatedTools: true }) } });
    const tool = router.getTool('strict_unchecked');
    assert.match(tool?.schemaProblem ?? '', /no input schema/);
    const refused = await router.call('strict_unchecked', {});
    assert.equal(refused.ok === false && refused.error.type, 'SCHEMA_UNAVAILABLE');
    const allowed = await router.call('lax_unchecked', {});
    assert.equal(allowed.ok, true, JSON.stringify(allowed));
  });

  it('applies allow and deny globs per server', async () => {
    router = await startRouter({ servers: { s: scripted(['--extra-tools', '3'], { toolsAllowed: ['extra_*', 'echo'], toolsDenied: ['extra_1'] }) } });
    assert.deepEqual(router.listTools().map((t) => t.name).sort(), ['s_echo', 's_extra_0', 's_extra_2']);
    assert.equal((await router.call('s_hang', {})).ok === false, true);
  });

  it('follows config changes: adds, removes and restarts only what changed', async () => {
    router = new ToolRouter({ backoffMs: TEST_BACKOFF_MS });
    await router.applyConfig(await definitions({ servers: { a: scripted(), b: scripted() } }));
    await router.whenSettled(SETTLE_MS);
    const aBefore = router.getConnection('a');
    await router.applyConfig(await definitions({ servers: { a: scripted(), c: scripted(['--extra-tools', '1']) } }));
    await router.whenSettled(SETTLE_MS);
    assert.equal(router.getConnection('a'), aBefore, 'an unchanged server keeps running');
    assert.equal(router.getConnection('b'), undefined);
    assert.ok(router.getTool('c_extra_0'));
    assert.equal(router.getTool('b_echo'), undefined);
  });

  it('ends the whole process tree of a stdio server on stop', async () => {
    const dir = tempDir('tree');
    const marker = path.join(dir, 'marker.txt');
    const wrapper = path.join(dir, 'wrapper.cjs');
    // A launcher that keeps running while its child serves MCP, as npx and shell wrappers do.
    writeFileSync(wrapper, `const { spawn } = require('node:child_process');\nconst c = spawn(process.execPath, process.argv.slice(2), { stdio: 'inherit' });\nc.on('exit', (code) => process.exit(code ?? 1));\n`);
    const def = scripted(['--marker', marker]);
    router = await startRouter({ servers: { wrapped: { ...def, args: [wrapper, ...(def['args'] as string[])] } } });
    assert.equal(router.serverStatuses[0]?.state, 'ready');
    const grandchild = Number(readLines(marker)[0]?.split(' ')[1]);
    assert.ok(isAlive(grandchild));
    await router.dispose();
    await waitFor(() => !isAlive(grandchild), 'the grandchild to end', 5000);
  });
});
