// `npm run bench:activation`: how long the router takes to activate, and how long until its first
// selection over 1,000 tools is ready, in the real VS Code host (code-server 1.139, scripts/vscode-host).
// The workspace holds one server with 1,000 real tools (the team request set's catalogue, served by
// test/fixtures/servers/catalogueServer.mjs) in .vscode/settings.json,
// so that nothing activates the extension before the measurement does. Runs RUNS times (a fresh host
// each time) and prints each run and the medians. Last line: {"activate_ms", "first_selection_ms"}.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TOOLS = 1000;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
for (let i = 0; i < RUNS; i++) {
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'activation-bench-'));
  mkdirSync(path.join(workspace, '.vscode'));
  const server = { command: 'node', args: [path.join(ROOT, 'test/fixtures/servers/catalogueServer.mjs'), '--tools', path.join(ROOT, 'data/requests/tools.jsonl'), '--limit', String(TOOLS)] };
  writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'toolRouter.servers': { bench: server } }));
  const out = path.join(workspace, 'activation.json');
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode-host/run-extension-tests.mjs'), `--extensionDevelopmentPath=${ROOT}`, `--extensionTestsPath=${path.join(ROOT, 'out/bench/activationSuite')}`, `--folder=${workspace}`], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_ACTIVATION_OUT: out },
  });
  if (r.status !== 0) {
    console.error(r.stdout, r.stderr);
    throw new Error(`run ${i + 1} failed (exit ${r.status})`);
  }
  const m = JSON.parse(readFileSync(out, 'utf8'));
  results.push(m);
  console.log(`run ${i + 1}: activate() ${m.activate_ms.toFixed(1)} ms (with loading the bundle ${m.load_and_activate_ms.toFixed(1)} ms); first selection over ${m.tools} tools (${m.method}) ${m.first_selection_ms.toFixed(0)} ms after activate() began`);
}
const activate = median(results.map((r) => r.activate_ms));
const first = median(results.map((r) => r.first_selection_ms));
console.log(`median of ${RUNS}: activate() ${activate.toFixed(1)} ms, first selection ${first.toFixed(0)} ms`);
console.log(JSON.stringify({ activate_ms: Math.round(activate * 10) / 10, first_selection_ms: Math.round(first) }));
