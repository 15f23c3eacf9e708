/**
 * `npm run bench:catalogue`: how long selection takes to take in a catalogue of 1,000 tools (the team request
 * set's, as bench:activation serves them), the work on the extension host's thread between a tool list
 * arriving and the first selection. Each run is a fresh Node process, so the code is as cold as at
 * activation. Per run it times loading the needs models and the spelling lists, the first `setCatalogue`,
 * the same list again (a server that lists its tools again), and the list with one tool changed; beside them,
 * in the same process, the floor: a plain BM25 index of the same tools (one field, no stemming). A second
 * process per run starts as a warm start does: it loads the tool readings the first one saved
 * (toolReadings.ts), then takes in the same catalogue (`saved_readings_load`, `first_catalogue_saved`).
 *
 * `-- --baseline REV` also measures the code of git revision REV (exported to a temporary folder, with this
 * file bundled against its sources), alternating with this checkout run by run, and prints the ratios.
 * `BENCH_RUNS` sets the runs (default 7). The last line is JSON: medians in ms, `ratio_to_floor`, and with
 * a baseline, `before` and `ratio_to_before` (now ÷ before, per measure).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LexicalRanker } from '../src/core/selection/lexicalRanker';
import { loadGeneralNeeds, loadSpellingWords } from '../src/core/selection/selectionEngine';
import type { SelectableTool } from '../src/core/selection/selectionTypes';
import { rankableFor } from '../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../src/core/selection/toolSelector';
import type * as ReadingsTypes from '../src/core/selection/toolReadings';

type ReadingsModule = typeof ReadingsTypes;
/** Tool readings, where the measured code has them (a baseline from before them leaves this file out of its bundle). */
const readingsModule: ReadingsModule | undefined = (() => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('../src/core/selection/toolReadings') as ReadingsModule;
  } catch {
    return undefined;
  }
})();

/** The repository whose data and media the measurement reads (a baseline's bundle runs with this one). */
const DATA_ROOT = process.env.BENCH_CATALOGUE_ROOT ?? path.resolve(__dirname, '..', '..');
const TOOLS = 1000;
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const MEASURES = ['needs_load', 'spelling_load', 'first_catalogue', 'same_list_again', 'one_tool_changed', 'floor_plain_bm25', 'saved_readings_load', 'first_catalogue_saved'] as const;
type Measure = (typeof MEASURES)[number];

/** The first 1,000 tools of the team request set, named as bench:activation's catalogue server names them. */
function catalogue(): SelectableTool[] {
  const tools: SelectableTool[] = [];
  const seen = new Set<string>();
  for (const line of fs.readFileSync(path.join(DATA_ROOT, 'data', 'requests', 'tools.jsonl'), 'utf8').split('\n')) {
    if (!line.trim() || tools.length >= TOOLS) continue;
    const t = JSON.parse(line) as { id?: string; name?: string; description?: string; inputSchema?: unknown; parameters?: unknown };
    const name = String(t.id ?? t.name).replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
    if (seen.has(name)) continue;
    seen.add(name);
    tools.push({ name: `catalogue_${name}`, server: 'catalogue', originalName: name, description: String(t.description ?? ''), inputSchema: t.inputSchema ?? t.parameters });
  }
  return tools;
}

/** One measurement in this process: milliseconds per measure. With `savedFile`, a warm start from its readings. */
function measureOnce(savedFile: string | undefined): Partial<Record<Measure, number>> {
  const tools = catalogue();
  const time = <T>(fn: () => T): [T, number] => {
    const t0 = performance.now();
    const out = fn();
    return [out, performance.now() - t0];
  };
  const [needs, needsLoad] = time(() => loadGeneralNeeds(DATA_ROOT));
  const [spelling, spellingLoad] = time(() => loadSpellingWords(DATA_ROOT));
  if (!needs || !spelling) throw new Error(`the needs models or the spelling lists under ${DATA_ROOT}/media could not be read`);
  // The digest only has to match between the two processes of a run.
  const readings = readingsModule ? new readingsModule.ToolReadings({ model: needs, digest: 'bench' }) : undefined;
  const selector = new ToolSelector(DEFAULT_SELECTION_OPTIONS, {
    needs,
    spelling: { dictionary: spelling.dictionary, known: spelling.names },
    createLexical: (list, read) => new LexicalRanker(list.map(rankableFor), read ? { fieldTerms: read.map((r) => r.fieldTerms) } : {}),
    ...(readings ? { readings } : {}),
  });
  if (savedFile) {
    if (!readings) throw new Error('this code has no tool readings to load');
    const [loaded, load] = time(() => readings.load(JSON.parse(fs.readFileSync(savedFile, 'utf8'))));
    if (!('taken' in loaded) || loaded.taken !== tools.length) throw new Error(`the saved readings did not load: ${JSON.stringify(loaded)}`);
    const [, first] = time(() => selector.setCatalogue(tools));
    return { saved_readings_load: load, first_catalogue_saved: first };
  }
  const [, first] = time(() => selector.setCatalogue(tools));
  if (readings && process.env.BENCH_SAVE_READINGS) fs.writeFileSync(process.env.BENCH_SAVE_READINGS, JSON.stringify(readings.save()));
  const [, again] = time(() => selector.setCatalogue(tools.map((t) => ({ ...t }))));
  const changed = tools.map((t, i) => (i === 500 ? { ...t, description: `${t.description} (changed)` } : { ...t }));
  const [, one] = time(() => selector.setCatalogue(changed));
  const [, floor] = time(() => new LexicalRanker(tools.map(rankableFor), { plainBm25: true }));
  return { needs_load: needsLoad, spelling_load: spellingLoad, first_catalogue: first, same_list_again: again, one_tool_changed: one, floor_plain_bm25: floor };
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round1 = (x: number): number => Math.round(x * 10) / 10;

/** This file bundled against REV's sources, in a temporary folder; returns the bundle's path. */
function buildBaseline(rev: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-baseline-'));
  const tar = path.join(dir, 'source.tar');
  execFileSync('git', ['-C', DATA_ROOT, 'archive', '--format=tar', '-o', tar, rev]);
  execFileSync('tar', ['-xf', tar, '-C', dir]);
  fs.rmSync(tar);
  fs.symlinkSync(path.join(DATA_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  fs.mkdirSync(path.join(dir, 'bench'), { recursive: true });
  fs.copyFileSync(path.join(DATA_ROOT, 'bench', 'catalogueBench.ts'), path.join(dir, 'bench', 'catalogueBench.ts'));
  const out = path.join(dir, 'out', 'bench', 'catalogueBench.js');
  const esbuild = path.join(DATA_ROOT, 'node_modules', '.bin', 'esbuild');
  const before = fs.existsSync(path.join(dir, 'src', 'core', 'selection', 'toolReadings.ts')) ? [] : ['--external:../src/core/selection/toolReadings'];
  execFileSync(esbuild, [path.join(dir, 'bench', 'catalogueBench.ts'), '--bundle', '--platform=node', '--target=node20', `--outfile=${out}`, '--log-level=warning', '--external:onnxruntime-node', ...before], { cwd: dir, stdio: 'inherit' });
  return out;
}

function runChild(script: string, env: Record<string, string> = {}): Partial<Record<Measure, number>> {
  const out = execFileSync(process.execPath, [script, '--child'], { encoding: 'utf8', env: { ...process.env, BENCH_CATALOGUE_ROOT: DATA_ROOT, ...env } });
  return JSON.parse(out.trim().split('\n').pop()!) as Partial<Record<Measure, number>>;
}

/** A run of one build: a fresh process, then (where the code keeps readings) a warm start from what it saved. */
function runOnce(script: string, withReadings: boolean): Partial<Record<Measure, number>> {
  if (!withReadings) return runChild(script);
  const saved = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-readings-')), 'tool-readings.json');
  try {
    return { ...runChild(script, { BENCH_SAVE_READINGS: saved }), ...runChild(script, { BENCH_READINGS: saved }) };
  } finally {
    fs.rmSync(path.dirname(saved), { recursive: true, force: true });
  }
}

function main(): void {
  if (process.argv.includes('--child')) {
    console.log(JSON.stringify(measureOnce(process.env.BENCH_READINGS)));
    return;
  }
  const at = process.argv.indexOf('--baseline');
  const rev = at >= 0 ? process.argv[at + 1] : undefined;
  const baseline = rev ? buildBaseline(rev) : undefined;
  const baselineHasReadings = baseline !== undefined && fs.existsSync(path.join(path.dirname(baseline), '..', '..', 'src', 'core', 'selection', 'toolReadings.ts'));
  const runs: { now: Array<Partial<Record<Measure, number>>>; before: Array<Partial<Record<Measure, number>>> } = { now: [], before: [] };
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so neither always meets a warmer machine.
    const order = baseline && i % 2 === 1 ? (['before', 'now'] as const) : (['now', 'before'] as const);
    for (const which of order) {
      if (which === 'before' && !baseline) continue;
      const m = which === 'now' ? runOnce(__filename, readingsModule !== undefined) : runOnce(baseline!, baselineHasReadings);
      runs[which].push(m);
      console.log(`  run ${i + 1} ${which.padEnd(6)} ${MEASURES.filter((k) => m[k] !== undefined).map((k) => `${k} ${m[k]!.toFixed(1)}`).join(', ')}`);
    }
  }
  const medians = (list: Array<Partial<Record<Measure, number>>>): Partial<Record<Measure, number>> =>
    Object.fromEntries(MEASURES.filter((k) => list.every((m) => m[k] !== undefined)).map((k) => [k, round1(median(list.map((m) => m[k]!)))]));
  const now = medians(runs.now);
  const result: Record<string, unknown> = { tools: TOOLS, runs: RUNS, median_ms: now, ratio_to_floor: Math.round((now.first_catalogue! / now.floor_plain_bm25!) * 100) / 100 };
  if (baseline) {
    const before = medians(runs.before);
    result['before'] = { rev, median_ms: before };
    // The warm start against the baseline's only start, when the baseline keeps no readings.
    const ratio = (k: Measure, against: Measure = k): number | undefined => (now[k] !== undefined && before[against] !== undefined ? Math.round((now[k]! / before[against]!) * 100) / 100 : undefined);
    result['ratio_to_before'] = Object.fromEntries(
      [...MEASURES.filter((k) => k !== 'floor_plain_bm25' && k !== 'saved_readings_load').map((k) => [k, ratio(k, k === 'first_catalogue_saved' && before[k] === undefined ? 'first_catalogue' : k)] as const)].filter(([, v]) => v !== undefined),
    );
  }
  console.log(`medians over ${RUNS} runs (ms): ${JSON.stringify(now)}`);
  console.log(JSON.stringify(result));
}

main();
