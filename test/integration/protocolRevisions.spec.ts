/**
 * One config reaches servers of both MCP revisions: a 2026-07-28-only server (SDK 2.x, over HTTP and
 * stdio) and 2025-11-25 ones (server-everything and our 1.x fixtures), through the built CLI. The router
 * finds out which revision each speaks on its own; `router.protocol` pins one.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EVERYTHING, REPO_ROOT, SCRIPTED, readLines, tempDir } from './serverHarness';

const CLI = path.join(REPO_ROOT, 'dist/cli.js');
const MODERN = path.join(REPO_ROOT, 'test/fixtures/servers/modernServer.mjs');

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function writeConfig(label: string, servers: Record<string, unknown>): string {
  const file = path.join(tempDir(label), 'mcp.json');
  writeFileSync(file, JSON.stringify({ servers }));
  return file;
}

interface Status {
  readonly name: string;
  readonly state: string;
  readonly transport?: string;
  readonly protocol?: string;
  readonly reason?: string;
}

function statuses(config: string): Status[] {
  const r = run(['servers', '--config', config, '--json', '--wait', '20000']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Status[];
}

function envelopeText(stdout: string): string {
  const envelope = JSON.parse(stdout) as { ok: boolean; content?: Array<{ text?: string }> };
  assert.ok(envelope.ok, stdout);
  return (envelope.content ?? []).map((c) => c.text ?? '').join('\n');
}

describe('MCP revisions: the router as a client speaks 2026-07-28 and 2025-11-25', function () {
  this.timeout(120_000);
  let modernHttp: ChildProcess;
  let modernUrl: string;

  before(async function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    modernHttp = spawn(process.execPath, [MODERN], { stdio: ['ignore', 'pipe', 'inherit'] });
    modernUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      modernHttp.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /LISTENING (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      modernHttp.once('exit', (code) => reject(new Error(`the 2026-07-28 test server exited (${code}) before listening: ${out}`)));
    });
  });

  after(() => {
    modernHttp?.kill();
  });

  describe('the CLI reaches a 2026-07-28-only server and an old one with the same config', () => {
    let config: string;
    before(() => {
      config = writeConfig('revisions', {
        modern: { type: 'http', url: modernUrl },
        old: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      });
    });

    it('lists both servers\' tools', () => {
      const r = run(['tools', '--config', config, '--json', '--wait', '20000']);
      assert.equal(r.code, 0, r.stderr);
      const names = (JSON.parse(r.stdout) as Array<{ name: string }>).map((t) => t.name);
      for (const name of ['modern_forecast', 'modern_ask_colour', 'old_echo']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
      // A tool with an invalid x-mcp-header is left out (SEP-2243); the server's other tools stay.
      assert.ok(!names.includes('modern_bad_header'), names.join(', '));
    });

    it('calls the 2026-07-28 server, sending an x-mcp-header argument as its Mcp-Param header', () => {
      const r = run(['call', 'modern_forecast', '--args', '{"region":"eu-west"}', '--config', config]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(envelopeText(r.stdout), 'Sunny in eu-west');
    });

    it('answers a 2026-07-28 server\'s input_required with the same elicitation as a 2025 server\'s request', () => {
      const r = run(['call', 'modern_ask_colour', '--elicitation', 'accept-defaults', '--config', config]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(envelopeText(r.stdout), 'colour: blue');
    });

    it('takes a 2026-07-28 result without resultType as complete, and runs the tool once', () => {
      const r = run(['call', 'modern_no_result_type', '--config', config]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(envelopeText(r.stdout), 'no resultType, call 1');
    });

    it('reports a result that is not a tool result as INVALID_RESULT, not to be retried', () => {
      const r = run(['call', 'modern_broken_result', '--config', config]);
      assert.notEqual(r.code, 0);
      const envelope = JSON.parse(r.stdout) as { ok: boolean; error?: { type: string; retryable: boolean; message: string } };
      assert.equal(envelope.ok, false);
      assert.deepEqual({ type: envelope.error?.type, retryable: envelope.error?.retryable }, { type: 'INVALID_RESULT', retryable: false }, envelope.error?.message);
      assert.match(envelope.error?.message ?? '', /"broken_result"/);
    });

    it('calls the old server', () => {
      const r = run(['call', 'old_echo', '--args', '{"message":"still here"}', '--config', config]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(envelopeText(r.stdout), /still here/);
    });

    it('shows which revision each server speaks', () => {
      const byName = new Map(statuses(config).map((s) => [s.name, s]));
      assert.deepEqual({ ...byName.get('modern'), reason: undefined }, { name: 'modern', state: 'ready', transport: 'streamable-http', protocol: '2026-07-28', reason: undefined, restarts: 0, toolCount: 5 });
      assert.equal(byName.get('old')?.protocol, '2025-11-25');
      const text = run(['servers', '--config', config, '--wait', '20000']);
      assert.match(text.stdout, /^modern: ready \(streamable-http, 2026-07-28\)/m);
    });
  });

  it('reaches a 2.x stdio server as 2026-07-28 when asking, and as 2025-11-25 when router.protocol says so', () => {
    const config = writeConfig('revisions-stdio', {
      asked: { command: process.execPath, args: [MODERN, '--stdio'] },
      pinned: { command: process.execPath, args: [MODERN, '--stdio'], router: { protocol: '2025-11-25' } },
    });
    const byName = new Map(statuses(config).map((s) => [s.name, s]));
    assert.equal(byName.get('asked')?.protocol, '2026-07-28', JSON.stringify(byName.get('asked')));
    assert.equal(byName.get('pinned')?.protocol, '2025-11-25', JSON.stringify(byName.get('pinned')));
    const asked = run(['call', 'asked_protocol_seen', '--config', config]);
    assert.equal(asked.code, 0, asked.stderr);
    assert.equal(envelopeText(asked.stdout), '2026-07-28');
    const pinned = run(['call', 'pinned_protocol_seen', '--config', config]);
    assert.equal(envelopeText(pinned.stdout), '2025-11-25');
  });

  it('starts a stdio server that exits on the probe once more, as 2025-11-25, and works with it', () => {
    const marker = path.join(tempDir('revisions-strict'), 'starts.txt');
    const config = writeConfig('revisions-strict', { strict: { command: process.execPath, args: [SCRIPTED, '--initialize-first', '--marker', marker] } });
    const r = run(['call', 'strict_echo', '--args', '{"message":"hello"}', '--config', config, '--verbose']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(envelopeText(r.stdout), /hello/);
    assert.match(r.stderr, /exited \(exit code 4\) while asked for its protocol revision; starting it once more, as a 2025-11-25 server/);
    assert.equal(readLines(marker).filter((l) => l.startsWith('started')).length, 2, 'one start for the probe, one for the work');
  });

  it('fails a server that does not speak the pinned revision, saying what to change, and never tries SSE for it', () => {
    const config = writeConfig('revisions-refused', {
      modern: { type: 'http', url: modernUrl, router: { protocol: '2025-11-25' } },
      old: { command: process.execPath, args: [EVERYTHING, 'stdio'], router: { protocol: '2026-07-28' } },
      sse: { type: 'sse', url: modernUrl, router: { protocol: '2026-07-28' } },
    });
    const byName = new Map(statuses(config).map((s) => [s.name, s]));
    for (const s of byName.values()) assert.equal(s.state, 'failed', JSON.stringify(s));
    assert.match(byName.get('modern')?.reason ?? '', /does not speak the protocol revision router.protocol pins \(it speaks 2026-07-28\); set router.protocol to "auto"/);
    assert.doesNotMatch(byName.get('modern')?.reason ?? '', /SSE/);
    assert.match(byName.get('old')?.reason ?? '', /does not speak 2026-07-28, which router.protocol pins/);
    assert.match(byName.get('sse')?.reason ?? '', /2026-07-28 is not spoken over SSE/);
  });
});
