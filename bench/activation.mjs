// `npm run bench:activation`: how long the router takes to activate, and how long until its first
// selection over 1,000 tools is ready, in the real VS Code host (code-server 1.139, scripts/vscode-host).
// The workspace holds one server with 1,000 real tools (the team request set's catalogue, served by
// test/fixtures/servers/catalogueServer.mjs) in .vscode/settings.json, so that nothing activates the
// extension before the measurement does. Each run starts two fresh hosts on one new user-data folder:
// cold (no embedding cache: every tool is embedded) and then warm (the cache the cold host wrote).
// It prints each host's timeline and the medians over RUNS runs (BENCH_RUNS, default 3).
// Last line: {"activate_ms", "cold_first_selection_ms", "warm_first_selection_ms", "cold_after_tools_ms",
// "warm_after_tools_ms"}; the last two are selection's own share, from the tools being listed to the selection.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TOOLS = 1000;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One fresh host on `userData`; returns what the suite measured. */
function host(workspace, userData, label, flush) {
  const out = path.join(workspace, `activation-${label}.json`);
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode-host/run-extension-tests.mjs'), `--extensionDevelopmentPath=${ROOT}`, `--extensionTestsPath=${path.join(ROOT, 'out/bench/activationSuite')}`, `--folder=${workspace}`, `--user-data-dir=${userData}`], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_ACTIVATION_OUT: out, ...(flush ? { BENCH_ACTIVATION_FLUSH: '1' } : {}) },
  });
  if (r.status !== 0) {
    console.error(r.stdout, r.stderr);
    throw new Error(`the ${label} host failed (exit ${r.status})`);
  }
  const m = JSON.parse(readFileSync(out, 'utf8'));
  if (m.method !== 'embedding+keyword') throw new Error(`the ${label} selection ran ${m.method}, not with embeddings`);
  const at = (ms) => (ms === undefined ? '?' : ms.toFixed(0));
  console.log(`  ${label.padEnd(4)} activate() ${m.activate_ms.toFixed(1)} ms (with loading the bundle ${m.load_and_activate_ms.toFixed(0)} ms); after activate() began: tools listed ${at(m.tools_listed_ms)} ms, engine loaded ${at(m.engine_loaded_ms)} ms, all embedded ${at(m.all_embedded_ms)} ms, first selection over ${m.tools} tools ${at(m.first_selection_ms)} ms`);
  return m;
}

const cold = [];
const warm = [];
for (let i = 0; i < RUNS; i++) {
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'activation-bench-'));
  mkdirSync(path.join(workspace, '.vscode'));
  const server = { command: 'node', args: [path.join(ROOT, 'test/fixtures/servers/catalogueServer.mjs'), '--tools', path.join(ROOT, 'data/requests/tools.jsonl'), '--limit', String(TOOLS)] };
  writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'toolRouter.servers': { bench: server } }));
  const userData = path.join(workspace, 'user-data');
  mkdirSync(userData);
  console.log(`run ${i + 1}:`);
  cold.push(host(workspace, userData, 'cold', true));
  warm.push(host(workspace, userData, 'warm', false));
  rmSync(workspace, { recursive: true, force: true });
}
const activate = median([...cold, ...warm].map((r) => r.activate_ms));
const first = (runs) => median(runs.map((r) => r.first_selection_ms));
// Selection's own share: from the moment the tools were listed (the catalogue handed over) to the selection.
const afterTools = (runs) => median(runs.map((r) => r.first_selection_ms - r.tools_listed_ms));
console.log(`median of ${RUNS}: activate() ${activate.toFixed(1)} ms; first selection ${first(cold).toFixed(0)} ms cold, ${first(warm).toFixed(0)} ms warm; of which after the tools were listed ${afterTools(cold).toFixed(0)} ms cold, ${afterTools(warm).toFixed(0)} ms warm`);
console.log(
  JSON.stringify({
    activate_ms: Math.round(activate * 10) / 10,
    cold_first_selection_ms: Math.round(first(cold)),
    warm_first_selection_ms: Math.round(first(warm)),
    cold_after_tools_ms: Math.round(afterTools(cold)),
    warm_after_tools_ms: Math.round(afterTools(warm)),
  }),
);
