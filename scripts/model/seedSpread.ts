/**
 * `npm run eval:seeds`: how far the selection figures move when only the training seed of the embedding
 * model changes. For each seed it trains the model (train:model), the unnamed-needs models for that model
 * (train:needs, whose prompt model reads the model's vectors), and measures the router with
 * `eval:select --quick` on the chosen sets; then it prints each figure's values, mean, spread and range.
 *
 *   npx tsx scripts/model/seedSpread.ts [--seeds 1,2,3] [--only set,set] [--set name=value ...] [--keep DIR]
 *
 * Why it exists: one training run is one draw. Over seeds of the same data, a set's recall@25 moves by up
 * to a point, so a training setting should be compared by its mean over seeds, never by one run. --set
 * passes a training setting to every seed (a variant to compare).
 * The last line is JSON: {"seeds": [...], "settings": ["name=value", ...], "sets": {SET: {METRIC: {mean, sd, min, max}}}}.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SELECTION_DEV_SETS } from '../../src/core/evaluation/retrievalData';
import { describeError } from '../../src/core/errors/describeError';

const ROOT = path.resolve(__dirname, '..', '..');
/** The router's figures that eval:select prints per set (team sets add all from general_recall@25 on). */
const METRICS = ['recall@25', 'all@25', 'sent_all', 'mean_sent', 'general_recall@25', 'non_english_recall@25', 'browser_recall@25', 'names_recall@25', 'steps_group_sent_all', 'steps_group_mean_sent'] as const;
/** Three seeds: the fewest that give a spread; each is a full training run of both models. */
const DEFAULT_SEEDS = [1, 2, 3];
/** The shared sets eval:select measures, and the team set's dev split (never its test split: nothing is tuned on it). */
const DEFAULT_SETS: string[] = [...SELECTION_DEV_SETS.map((s) => s.key), 'team_dev'];

export interface Args {
  readonly seeds: number[];
  readonly sets: string[];
  readonly settings: string[];
  readonly keep?: string;
}

export function parseArgs(argv: readonly string[]): Args {
  let seeds = DEFAULT_SEEDS;
  let sets = DEFAULT_SETS;
  const settings: string[] = [];
  let keep: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = argv[i + 1];
    if (['--seeds', '--only', '--set', '--keep'].includes(a) && (value === undefined || value.startsWith('--'))) throw new Error(`${a} needs a value after it.`);
    if (a === '--seeds' && value) {
      seeds = value.split(',').map(Number);
      if (seeds.some((s) => !Number.isInteger(s))) throw new Error(`--seeds needs whole numbers separated by commas, got "${value}"`);
      i++;
    } else if (a === '--only' && value) {
      sets = value.split(',');
      i++;
    } else if (a === '--set' && value) {
      if (!/^\w+=-?[\d.]+$/.test(value)) throw new Error(`--set needs name=number (a train:model setting), got "${value}"`);
      settings.push(value);
      i++;
    } else if (a === '--keep' && value) {
      keep = path.resolve(value);
      i++;
    } else throw new Error(`Unknown argument "${a}". Use --seeds 1,2,3, --only set,set, --set name=value or --keep DIR.`);
  }
  return { seeds, sets, settings, ...(keep ? { keep } : {}) };
}

function run(script: string, args: readonly string[]): string {
  return execFileSync(process.execPath, [require.resolve('tsx/cli'), path.join(ROOT, script), ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] });
}

type Figures = Record<string, Record<string, number>>;

/** One seed: train both models into `dir`, then the router's figures per set from eval:select's last line. */
function measureSeed(seed: number, args: Args, dir: string): Figures {
  run('scripts/model/trainModel.ts', ['--out', dir, '--set', `seed=${seed}`, ...args.settings.flatMap((s) => ['--set', s])]);
  const needs = path.join(dir, 'needs.json');
  run('scripts/model/trainNeeds.ts', ['--model', dir, '--out', needs]);
  const output = run('scripts/evalSelect.ts', ['--quick', '--only', args.sets.join(','), '--model', dir, '--needs', needs]);
  const last = output.trim().split('\n').pop() ?? '';
  const summary = JSON.parse(last) as Record<string, { router: Record<string, number> }>;
  const missing = args.sets.filter((set) => !summary[set]);
  if (missing.length) throw new Error(`eval:select measured no set named ${missing.join(', ')}; the sets are the keys of its last line (metatool_multi, team_dev, …).`);
  return Object.fromEntries(Object.entries(summary).map(([set, v]) => [set, v.router]));
}

/** Mean, sample standard deviation (0 for one value), least and greatest of a figure over seeds. */
export function spread(values: readonly number[]): { mean: number; sd: number; min: number; max: number } {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const sd = values.length > 1 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1)) : 0;
  const round = (x: number): number => Math.round(x * 100) / 100;
  return { mean: round(mean), sd: round(sd), min: Math.min(...values), max: Math.max(...values) };
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const base = args.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tool-router-seeds-'));
  const bySeed: Figures[] = [];
  try {
    for (const seed of args.seeds) {
      const dir = path.join(base, `seed-${seed}`);
      process.stdout.write(`seed ${seed}: training and measuring into ${dir}…\n`);
      bySeed.push(measureSeed(seed, args, dir));
    }
  } finally {
    if (!args.keep) fs.rmSync(base, { recursive: true, force: true });
  }
  const sets: Record<string, Record<string, ReturnType<typeof spread>>> = {};
  process.stdout.write(`\nseeds ${args.seeds.join(', ')}${args.settings.length ? `, settings ${args.settings.join(' ')}` : ''}\n`);
  process.stdout.write(`${'set'.padEnd(24)}${'figure'.padEnd(24)}${'by seed'.padEnd(28)}${'mean'.padStart(7)}${'sd'.padStart(6)}${'range'.padStart(14)}\n`);
  for (const set of args.sets) {
    for (const metric of METRICS) {
      const values = bySeed.map((f) => f[set]?.[metric]).filter((v): v is number => typeof v === 'number');
      if (values.length !== bySeed.length) continue;
      const s = spread(values);
      (sets[set] ??= {})[metric] = s;
      process.stdout.write(`${set.padEnd(24)}${metric.padEnd(24)}${values.join(' ').padEnd(28)}${s.mean.toFixed(2).padStart(7)}${s.sd.toFixed(2).padStart(6)}${`${s.min}–${s.max}`.padStart(14)}\n`);
    }
  }
  process.stdout.write(`${JSON.stringify({ seeds: args.seeds, settings: args.settings, sets })}\n`);
}

if (require.main === module) {
  try {
    main();
  } catch (error) {
    process.stderr.write(`${describeError(error)}\n`);
    process.exit(1);
  }
}
