import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EVERYTHING, FILESYSTEM, REPO_ROOT, SCRIPTED, readLines, tempDir } from './serverHarness';

/** The built CLI, exactly as `bin` in package.json points to it (`npm run build` makes it). */
const CLI = path.join(REPO_ROOT, 'dist/cli.js');

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('mcp-tool-router CLI', function () {
  this.timeout(90_000);
  let config: string;
  let marker: string;

  before(function () {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
    const dir = tempDir('cli');
    marker = path.join(dir, 'calls.txt');
    config = path.join(dir, 'mcp.json');
    writeFileSync(
      config,
      `{
  // VS Code's mcp.json format, comments and all
  "servers": {
    "everything": { "type": "stdio", "command": "${process.execPath}", "args": ["${EVERYTHING}", "stdio"] },
    "scripted": { "command": "${process.execPath}", "args": ["${SCRIPTED}", "--marker", "${marker}"] },
    "down": { "command": "${process.execPath}", "args": ["${SCRIPTED}", "--exit-at-once"], "router": { "startupTimeoutMs": 5000 } },
  },
}`,
    );
  });

  it('select sends the reference filesystem server\'s write_file for a task that never names it, marked "asks before it runs"', () => {
    const dir = tempDir('cli-files');
    const files = path.join(dir, 'mcp.json');
    writeFileSync(files, JSON.stringify({ servers: { files: { command: process.execPath, args: [FILESYSTEM, dir] } } }));
    const r = run(['select', 'write a short summary and save it as notes.md in the project folder', '--config', files]);
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.split('\n').find((l) => l.trim().startsWith('files_write_file'));
    assert.ok(line, r.stdout);
    assert.match(line, /general:file_write/);
    // The reason names the cue the prompt model weighed most: the file name or the word "save".
    assert.match(line, /the prompt (?:names a file \(notes\.md\)|says "save") → files_write_file \(writes files\)/);
    assert.match(line, /asks before it runs/);
  });

  it('reads the router\'s own file beside an mcp.json, where servers taken over from VS Code live', () => {
    const dir = tempDir('cli-taken-over');
    const vscodeFile = path.join(dir, 'mcp.json');
    writeFileSync(vscodeFile, '{ "servers": {} }');
    writeFileSync(path.join(dir, 'mcp-tool-router.json'), JSON.stringify({ servers: { moved: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
    const r = run(['tools', '--config', vscodeFile, '--json', '--wait', '10000']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok((JSON.parse(r.stdout) as Array<{ name: string }>).some((t) => t.name === 'moved_echo'), r.stdout.slice(0, 300));
  });

  it('lists tools as JSON with server, original name, schema and annotations', () => {
    const r = run(['tools', '--config', config, '--json', '--wait', '3000']);
    assert.equal(r.code, 0, r.stderr);
    const tools = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    const echo = tools.find((t) => t['name'] === 'everything_echo');
    assert.ok(echo, 'everything_echo is listed');
    assert.equal(echo['server'], 'everything');
    assert.equal(echo['originalName'], 'echo');
    assert.equal((echo['inputSchema'] as Record<string, unknown>)['type'], 'object');
    assert.deepEqual(Object.keys(echo).sort(), ['annotations', 'description', 'inputSchema', 'name', 'originalName', 'server']);
    assert.ok(tools.some((t) => t['name'] === 'scripted_echo'));
    assert.match(r.stderr, /down/, 'the broken server is reported on stderr');
  });

  it('exits 0 and prints the envelope for a good call', () => {
    const r = run(['call', 'everything_echo', '--args', '{"message":"from the cli"}', '--config', config]);
    assert.equal(r.code, 0, r.stderr);
    const envelope = JSON.parse(r.stdout) as { ok: boolean; content: Array<{ text: string }> };
    assert.equal(envelope.ok, true);
    assert.equal(envelope.content[0]?.text, 'Echo: from the cli');
  });

  it('exits 2 for invalid arguments and never calls the server', () => {
    const before = readLines(marker).filter((l) => l.startsWith('call')).length;
    const r = run(['call', 'scripted_echo', '--args', '{"message": 42}', '--config', config]);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /\/message: must be string/);
    const after = readLines(marker).filter((l) => l.startsWith('call')).length;
    assert.equal(after, before, 'the server was not called');
    const notJson = run(['call', 'scripted_echo', '--args', '{message', '--config', config]);
    assert.equal(notJson.code, 2);
  });

  it('exits 3 when the tool reports an error', () => {
    const r = run(['call', 'scripted_fail', '--config', config]);
    assert.equal(r.code, 3, r.stdout);
    assert.match(r.stderr, /TOOL_ERROR/);
  });

  it('exits 4 for an unknown tool', () => {
    const r = run(['call', 'everything_no_such_tool', '--config', config, '--wait', '3000']);
    assert.equal(r.code, 4, r.stdout);
  });

  it('exits 5 when the owning server is unavailable', () => {
    const r = run(['call', 'down_echo', '--args', '{"message":"x"}', '--config', config, '--wait', '3000']);
    assert.equal(r.code, 5, r.stdout + r.stderr);
  });

  it('exits 5 when the call times out', () => {
    const r = run(['call', 'scripted_hang', '--config', config, '--timeout', '300']);
    assert.equal(r.code, 5, r.stdout);
    assert.match(r.stdout, /"TIMEOUT"/);
  });

  it('shows each server status', () => {
    const r = run(['servers', '--config', config, '--json', '--wait', '3000']);
    assert.equal(r.code, 0, r.stderr);
    const statuses = JSON.parse(r.stdout) as Array<{ name: string; state: string; toolCount: number }>;
    assert.equal(statuses.find((s) => s.name === 'everything')?.state, 'ready');
    assert.ok(['restarting', 'failed'].includes(statuses.find((s) => s.name === 'down')?.state ?? ''));
  });

  it('names the file, server and field of a config error and still serves the other servers', () => {
    const dir = tempDir('cli-bad');
    const bad = path.join(dir, 'mcp.json');
    writeFileSync(bad, JSON.stringify({ servers: { broken: { type: 'stdio', command: 'x', args: 'not-an-array' }, everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
    const r = run(['call', 'everything_echo', '--args', '{"message":"ok"}', '--config', bad]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`${bad.replace(/[/.]/g, '\\$&')}.*server "broken".*field "args"`));
  });

  it('exits 1 with usage for a bad command line', () => {
    assert.equal(run(['call']).code, 1);
    assert.equal(run(['tools']).code, 1);
    assert.equal(run(['frobnicate', '--config', config]).code, 1);
  });
});
