/**
 * `npm run eval:needs`: how well the unnamed-needs prompt model reads which general-purpose kinds a prompt
 * needs, on the dev part of the team's kind-only prompts (data/needs/written; scripts/data/needsPrompts.ts).
 * That part is never trained on.
 *
 *   npx tsx scripts/model/evalNeeds.ts [--needs FILE] [--show-misses]
 *
 * For each kind, at the selector's threshold (a kind counts as needed at DEFAULT_GENERAL_NEED_MIN):
 *   - recall: the share of prompts needing the kind that the model says need it;
 *   - false alarms: the share of prompts not needing it that the model says need it;
 *   - AUC: the chance that a prompt needing the kind scores above one that does not.
 * Both prompt models are measured side by side: words and shapes alone (used with any embedder) and with the
 * bundled model's vector (used with the bundled model). The last line is JSON:
 * {"needs_dev": {"prompts": n, "recall": r, "false_alarms": f, "auc": a, "words_only": {...}, "kinds": {...}}}.
 */
import fs from 'node:fs';
import path from 'node:path';
import { GeneralNeeds, GENERAL_KINDS, type GeneralKind, type GeneralNeedsFile } from '../../src/core/selection/generalNeeds';
import { DEFAULT_GENERAL_NEED_MIN } from '../../src/core/selection/toolSelector';
import { OnnxEmbedder } from '../../src/core/embedding/onnxEmbedder';
import { readNeedsPrompts, type NeedsPrompt } from '../data/needsPrompts';
import { NEEDS_FILE } from './trainNeeds';
import { REPO_ROOT } from './dataSets';

const MODEL_DIR = path.join(REPO_ROOT, 'media', 'model');

interface KindFigures {
  readonly positives: number;
  readonly recall: number;
  readonly falseAlarms: number;
  readonly auc: number;
}

const round = (x: number): number => Math.round(x * 1000) / 10;

/** Probability that a random positive outscores a random negative (ties count half). */
function auc(positives: readonly number[], negatives: readonly number[]): number {
  if (positives.length === 0 || negatives.length === 0) return NaN;
  let wins = 0;
  for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (positives.length * negatives.length);
}

function measure(prompts: readonly NeedsPrompt[], probabilities: ReadonlyArray<ReadonlyMap<GeneralKind, number>>): { kinds: Record<string, KindFigures>; recall: number; falseAlarms: number; auc: number } {
  const kinds: Record<string, KindFigures> = {};
  for (const kind of GENERAL_KINDS) {
    const pos: number[] = [];
    const neg: number[] = [];
    prompts.forEach((p, i) => (p.kinds.includes(kind) ? pos : neg).push(probabilities[i]!.get(kind) ?? 0));
    if (pos.length === 0) continue;
    kinds[kind] = {
      positives: pos.length,
      recall: round(pos.filter((x) => x >= DEFAULT_GENERAL_NEED_MIN).length / pos.length),
      falseAlarms: round(neg.filter((x) => x >= DEFAULT_GENERAL_NEED_MIN).length / Math.max(1, neg.length)),
      auc: round(auc(pos, neg)),
    };
  }
  const rows = Object.values(kinds);
  const mean = (f: (k: KindFigures) => number): number => Math.round((rows.reduce((s, k) => s + f(k), 0) / rows.length) * 10) / 10;
  return { kinds, recall: mean((k) => k.recall), falseAlarms: mean((k) => k.falseAlarms), auc: mean((k) => k.auc) };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--needs');
  const file = at >= 0 ? path.resolve(argv[at + 1] ?? '') : NEEDS_FILE;
  const needs = new GeneralNeeds(JSON.parse(fs.readFileSync(file, 'utf8')) as GeneralNeedsFile);
  const prompts = readNeedsPrompts().filter((p) => p.part === 'dev');
  if (prompts.length === 0) throw new Error('data/needs/written has no dev-part prompts to measure on.');
  const embedder = await OnnxEmbedder.load(MODEL_DIR);
  const vectors = await embedder.embed(prompts.map((p) => p.query));
  await embedder.dispose();
  const modelId = needs.file.promptWithVector?.modelId ?? embedder.modelId;
  const read = (vector?: Float32Array) => (p: NeedsPrompt, i: number): Map<GeneralKind, number> =>
    new Map(needs.promptNeeds(p.query, vector ? { modelId, values: vectors[i]! } : undefined).map((n) => [n.kind, n.probability]));
  const withVector = prompts.map((p, i) => read(vectors[i])(p, i));
  const wordsOnly = prompts.map((p, i) => read()(p, i));
  const full = measure(prompts, withVector);
  const words = measure(prompts, wordsOnly);

  console.log(`needs model ${path.relative(REPO_ROOT, file)}; ${prompts.length} dev-part prompts of data/needs/written; a kind counts as needed at p ≥ ${DEFAULT_GENERAL_NEED_MIN}`);
  console.log('kind               prompts  recall  false alarms  AUC    | words only: recall  false alarms  AUC');
  for (const [kind, k] of Object.entries(full.kinds)) {
    const w = words.kinds[kind]!;
    console.log(`${kind.padEnd(18)} ${String(k.positives).padStart(7)}  ${k.recall.toFixed(1).padStart(6)}  ${k.falseAlarms.toFixed(1).padStart(12)}  ${k.auc.toFixed(1).padStart(5)}  | ${w.recall.toFixed(1).padStart(18)}  ${w.falseAlarms.toFixed(1).padStart(12)}  ${w.auc.toFixed(1).padStart(5)}`);
  }
  console.log(`${'mean'.padEnd(18)} ${''.padStart(7)}  ${full.recall.toFixed(1).padStart(6)}  ${full.falseAlarms.toFixed(1).padStart(12)}  ${full.auc.toFixed(1).padStart(5)}  | ${words.recall.toFixed(1).padStart(18)}  ${words.falseAlarms.toFixed(1).padStart(12)}  ${words.auc.toFixed(1).padStart(5)}`);
  if (argv.includes('--show-misses')) {
    prompts.forEach((p, i) => {
      const said = [...withVector[i]!].filter(([, x]) => x >= DEFAULT_GENERAL_NEED_MIN).map(([k]) => k);
      const missed = p.kinds.filter((k) => !said.includes(k));
      const extra = said.filter((k) => !p.kinds.includes(k));
      if (missed.length || extra.length) console.log(`  ${p.where}: missed [${missed.join(', ')}] extra [${extra.join(', ')}] ${p.query}`);
    });
  }
  console.log(JSON.stringify({ needs_dev: { prompts: prompts.length, recall: full.recall, false_alarms: full.falseAlarms, auc: full.auc, words_only: { recall: words.recall, false_alarms: words.falseAlarms, auc: words.auc }, kinds: full.kinds } }));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
