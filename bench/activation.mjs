// `npm run bench:activation`: how long the router takes to activate, and how long until its first
// selection over 1,000 tools is ready, in the real VS Code host (code-server 1.139, scripts/vscode-host).
// The workspace holds one server with 1,000 real tools (the team request set's catalogue, served by
// test/fixtures/servers/catalogueServer.mjs) in .vscode/settings.json, so that nothing activates the
// extension before the measurement does. Each run starts three hosts on one new user-data folder: first
// (a fresh install: nothing saved, so the server's list is awaited and every tool embedded), cold (the
// tool lists the first host saved, but no embedding cache) and warm (both).
// It prints each host's timeline and the medians over RUNS runs (BENCH_RUNS, default 3).
// `-- --baseline REV` also measures the extension as it was at git revision REV (exported and built in a
// temporary folder), alternating with this checkout run by run, and prints both side by side.
// `-- --vsix FILE` measures that packaged extension (unpacked to a temporary folder: the minified,
// brotli-compressed bundle users install) instead of this checkout's build; with --baseline, against it.
// BENCH_SERVER_DELAY_MS=MS makes the server wait that long before it answers (default 0).
// BENCH_PROFILE_DIR=DIR writes a CPU profile of each host, from activate() to the first selection.
// Last line: {"activate_ms", "servers_started_ms", "first_install_first_selection_ms",
// "cold_first_selection_ms", "warm_first_selection_ms", "warm_thread_busy_share"}, and with --baseline
// the same under "before" with its "rev"; with --vsix, "vsix" names the file measured.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
// BENCH_SERVER_DELAY_MS: the server waits this long before answering, as an npx-launched one may.
const SERVER_DELAY_MS = Number(process.env.BENCH_SERVER_DELAY_MS ?? 0);
const TOOLS = 1000;
const baselineAt = process.argv.indexOf('--baseline');
const BASELINE_REV = baselineAt >= 0 ? process.argv[baselineAt + 1] : undefined;
const vsixAt = process.argv.indexOf('--vsix');
const VSIX = vsixAt >= 0 ? path.resolve(process.argv[vsixAt + 1] ?? '') : undefined;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The extension as it was at `rev`, exported to a temporary folder and built there; its node_modules are this checkout's. */
function buildBaseline(rev) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'activation-baseline-'));
  const tar = path.join(dir, 'source.tar');
  execFileSync('git', ['-C', ROOT, 'archive', '--format=tar', '-o', tar, rev]);
  execFileSync('tar', ['-xf', tar, '-C', dir]);
  rmSync(tar);
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'inherit' });
  return dir;
}

/** The packaged extension `vsix` unpacked to a temporary folder; returns its extension root. */
function unpackVsix(vsix) {
  if (!existsSync(vsix)) throw new Error(`no VSIX at ${vsix}: build one with npm run package`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'activation-vsix-'));
  execFileSync('unzip', ['-q', vsix, '-d', dir]);
  return { dir, root: path.join(dir, 'extension') };
}

/** One fresh host of the extension in `extensionRoot` on `userData`; returns what the suite measured. */
function host(extensionRoot, workspace, userData, label, flush, profileName) {
  const out = path.join(workspace, `activation-${label}.json`);
  const profile = process.env.BENCH_PROFILE_DIR ? { BENCH_ACTIVATION_PROFILE: path.resolve(process.env.BENCH_PROFILE_DIR, `${profileName}.cpuprofile`) } : {};
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/vscode-host/run-extension-tests.mjs'), `--extensionDevelopmentPath=${extensionRoot}`, `--extensionTestsPath=${path.join(ROOT, 'out/bench/activationSuite')}`, `--folder=${workspace}`, `--user-data-dir=${userData}`], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_ACTIVATION_OUT: out, ...profile, ...(flush ? { BENCH_ACTIVATION_FLUSH: '1' } : {}) },
  });
  if (r.status !== 0) {
    console.error(r.stdout, r.stderr);
    throw new Error(`the ${label} host failed (exit ${r.status})`);
  }
  const m = JSON.parse(readFileSync(out, 'utf8'));
  if (m.method !== 'embedding+keyword') throw new Error(`the ${label} selection ran ${m.method}, not with embeddings`);
  const at = (ms) => (ms === undefined ? '?' : ms.toFixed(0));
  console.log(`  ${label.padEnd(5)} activate() ${m.activate_ms.toFixed(1)} ms (with loading the bundle ${m.load_and_activate_ms.toFixed(0)} ms); after activate() began: server started ${at(m.servers_started_ms)} ms, tools listed ${at(m.tools_listed_ms)} ms, engine loaded ${at(m.engine_loaded_ms)} ms, in selection's catalogue ${at(m.catalogue_ms)} ms, all embedded ${at(m.all_embedded_ms)} ms, first selection over ${m.tools} tools ${at(m.first_selection_ms)} ms (${m.saved_selected ?? 0} of ${m.chosen} chosen from saved lists; from loading the bundle ${at(m.load_to_selection_ms)} ms, of which the host's thread ran ${at(m.load_to_selection_thread_cpu_ms)} ms)`);
  return m;
}

/** Removes the router's embedding cache from a user-data folder, keeping everything else it saved. */
function removeEmbeddingCache(userData) {
  const storage = path.join(userData, 'User', 'globalStorage');
  if (!existsSync(storage)) return;
  for (const entry of readdirSync(storage, { withFileTypes: true })) if (entry.isDirectory()) rmSync(path.join(storage, entry.name, 'embeddings'), { recursive: true, force: true });
}

/** The first, cold and warm hosts of the extension in `extensionRoot`, on a new workspace and user-data folder. */
function run(extensionRoot, name, i, into) {
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'activation-bench-'));
  mkdirSync(path.join(workspace, '.vscode'));
  const server = { command: 'node', args: [path.join(ROOT, 'test/fixtures/servers/catalogueServer.mjs'), '--tools', path.join(ROOT, 'data/requests/tools.jsonl'), '--limit', String(TOOLS), '--start-delay', String(SERVER_DELAY_MS)] };
  writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'toolRouter.servers': { bench: server } }));
  const userData = path.join(workspace, 'user-data');
  mkdirSync(userData);
  console.log(`run ${i + 1}, ${name}:`);
  into.first.push(host(extensionRoot, workspace, userData, 'first', true, `${name}-run${i + 1}-first`));
  removeEmbeddingCache(userData);
  into.cold.push(host(extensionRoot, workspace, userData, 'cold', true, `${name}-run${i + 1}-cold`));
  into.warm.push(host(extensionRoot, workspace, userData, 'warm', false, `${name}-run${i + 1}-warm`));
  rmSync(workspace, { recursive: true, force: true });
}

/** The medians the JSON line carries. */
function summary({ first: fresh, cold, warm }) {
  const all = [...fresh, ...cold, ...warm];
  const first = (runs) => Math.round(median(runs.map((r) => r.first_selection_ms)));
  return {
    activate_ms: Math.round(median(all.map((r) => r.activate_ms)) * 10) / 10,
    servers_started_ms: Math.round(median(all.map((r) => r.servers_started_ms))),
    first_install_first_selection_ms: first(fresh),
    cold_first_selection_ms: first(cold),
    warm_first_selection_ms: first(warm),
    // The share of the warm wait (from loading the bundle) that the host's thread spent running: the rest
    // it waited, for the disk, the server or a CPU the workbench was using.
    warm_thread_busy_share: Math.round(median(warm.map((r) => (r.load_to_selection_thread_cpu_ms ?? NaN) / (r.load_to_selection_ms ?? NaN))) * 100) / 100,
  };
}

const baseline = BASELINE_REV ? buildBaseline(BASELINE_REV) : undefined;
const packaged = VSIX ? unpackVsix(VSIX) : undefined;
const now = { first: [], cold: [], warm: [] };
const before = { first: [], cold: [], warm: [] };
try {
  for (let i = 0; i < RUNS; i++) {
    // Alternating, so that both meet the same load on a shared machine.
    if (baseline) run(baseline, 'before', i, before);
    run(packaged?.root ?? ROOT, 'now', i, now);
  }
} finally {
  if (baseline) rmSync(baseline, { recursive: true, force: true });
  if (packaged) rmSync(packaged.dir, { recursive: true, force: true });
}
const s = summary(now);
const b = baseline ? summary(before) : undefined;
const line = (label, x) =>
  `${label}: activate() ${x.activate_ms} ms, server started ${x.servers_started_ms} ms; first selection ${x.first_install_first_selection_ms} ms on a fresh install, ${x.cold_first_selection_ms} ms cold, ${x.warm_first_selection_ms} ms warm`;
console.log(`median of ${RUNS}, after activate() began:`);
if (b) console.log(`  ${line(`before (${BASELINE_REV})`, b)}`);
console.log(`  ${line(VSIX ? path.basename(VSIX) : b ? 'now' : 'this checkout', s)}`);
console.log(JSON.stringify({ ...s, server_delay_ms: SERVER_DELAY_MS, ...(VSIX ? { vsix: path.basename(VSIX) } : {}), ...(b ? { before: { rev: BASELINE_REV, ...b } } : {}) }));
