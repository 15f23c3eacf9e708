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
 * bundled model's vector (used with the bundled model).
 *
 * The tool model is measured on the probe catalogues (test/fixtures/catalogues/probe, labelled in
 * data/needs/probe-tools.json): real servers it never learnt from. Per kind, at the selector's tool threshold
 * (DEFAULT_GENERAL_TOOL_MIN): recall over the tools labelled with the kind, false alarms over the others,
 * and, per server offering the kind, whether the tool the model rates highest for it is one of that kind
 * (that tool is the one a need always sends).
 *
 * It also measures the tool model on held-out team-written tools described in Chinese or Japanese
 * (data/needs/probe-tools-zh.jsonl), which no real server here offers.
 *
 * The last line is JSON: {"needs_dev": {"prompts": n, "recall": r, "false_alarms": f, "auc": a,
 * "words_only": {...}, "kinds": {...}}, "tool_probe": {"servers": n, "tools": n, "recall": r,
 * "false_alarms": f, "best_is_right": b, "kinds": {...}}, "tool_written_zh": {"tools": n, "recall": r,
 * "false_alarms": f}}.
 */
import fs from 'node:fs';
import path from 'node:path';
import { GeneralNeeds, GENERAL_KINDS, readNeedsFile, type GeneralKind } from '../../src/core/selection/generalNeeds';
import { DEFAULT_GENERAL_NEED_MIN, DEFAULT_GENERAL_TOOL_MIN } from '../../src/core/selection/toolSelector';
import { OnnxEmbedder } from '../../src/core/embedding/onnxEmbedder';
import { readNeedsPrompts, type NeedsPrompt } from '../data/needsPrompts';
import { NEEDS_FILE, schemaOfParameters } from './trainNeeds';
import { readJsonl } from '../../src/core/evaluation/retrievalData';
import { REPO_ROOT } from './dataSets';

const MODEL_DIR = path.join(REPO_ROOT, 'media', 'model');
const PROBE_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'catalogues', 'probe');
const PROBE_LABELS = path.join(REPO_ROOT, 'data', 'needs', 'probe-tools.json');
const PROBE_WRITTEN = path.join(REPO_ROOT, 'data', 'needs', 'probe-tools-zh.jsonl');

interface ProbeKind {
  readonly tools: number;
  readonly recall: number;
  readonly falseAlarms: number;
  /** Servers offering the kind, and how many of them have a tool of the kind as their highest-rated one. */
  readonly servers: number;
  readonly bestIsRight: number;
}

interface ProbeRow {
  /** The catalogue the tool came from; one per tool for written tools, which belong to no server. */
  readonly server: string;
  readonly id: string;
  readonly kind: string;
  readonly p: Map<GeneralKind, number>;
}

/** Each kind's probability for a tool, by kind. */
function rated(needs: GeneralNeeds, tool: Parameters<GeneralNeeds['toolProbabilities']>[0]): Map<GeneralKind, number> {
  const p = needs.toolProbabilities(tool);
  return new Map(needs.kinds.map((k, i) => [k, p[i]!]));
}

/** The probe catalogues' tools with their labels; empty when they are absent. */
function probeCatalogueRows(needs: GeneralNeeds): ProbeRow[] {
  if (!fs.existsSync(PROBE_DIR) || !fs.existsSync(PROBE_LABELS)) return [];
  const labels = JSON.parse(fs.readFileSync(PROBE_LABELS, 'utf8')) as Record<string, string>;
  const rows: ProbeRow[] = [];
  for (const file of fs.readdirSync(PROBE_DIR).filter((f) => f.endsWith('.json')).sort()) {
    const catalogue = JSON.parse(fs.readFileSync(path.join(PROBE_DIR, file), 'utf8')) as { server: string; tools: Array<{ name: string; description?: string; inputSchema?: unknown }> };
    for (const t of catalogue.tools) {
      const id = `${catalogue.server}_${t.name}`;
      const kind = labels[id];
      if (kind === undefined) throw new Error(`data/needs/probe-tools.json has no label for ${id}; label it with a kind or "none".`);
      rows.push({ server: catalogue.server, id, kind, p: rated(needs, { name: id, originalName: t.name, description: t.description ?? '', inputSchema: t.inputSchema ?? {} }) });
    }
  }
  return rows;
}

/** The held-out team-written tools described in Chinese or Japanese (data/needs/probe-tools-zh.jsonl); empty when absent. */
function writtenProbeRows(needs: GeneralNeeds): ProbeRow[] {
  if (!fs.existsSync(PROBE_WRITTEN)) return [];
  return readJsonl<{ id: string; name: string; description: string; parameters?: string[]; kind: string }>(PROBE_WRITTEN).map((t) => ({
    server: t.id,
    id: t.id,
    kind: t.kind,
    p: rated(needs, { name: t.name, description: t.description, inputSchema: schemaOfParameters(t.parameters) }),
  }));
}

/**
 * The tool model's figures over labelled tools: per kind, recall and false alarms at the tool threshold and,
 * per server offering the kind, whether its highest-rated tool for the kind is one of that kind.
 */
function toolModelFigures(rows: readonly ProbeRow[], show: string | undefined): { servers: number; tools: number; recall: number; falseAlarms: number; bestIsRight: number; kinds: Record<string, ProbeKind> } | undefined {
  if (rows.length === 0) return undefined;
  const kinds: Record<string, ProbeKind> = {};
  for (const kind of GENERAL_KINDS) {
    const pos = rows.filter((r) => r.kind === kind);
    if (pos.length === 0) continue;
    const neg = rows.filter((r) => r.kind !== kind);
    const servers = [...new Set(pos.map((r) => r.server))];
    const right = servers.filter((server) => {
      const own = rows.filter((r) => r.server === server).sort((a, b) => b.p.get(kind)! - a.p.get(kind)!);
      return own[0]!.kind === kind && own[0]!.p.get(kind)! >= DEFAULT_GENERAL_TOOL_MIN;
    });
    kinds[kind] = {
      tools: pos.length,
      recall: round(pos.filter((r) => r.p.get(kind)! >= DEFAULT_GENERAL_TOOL_MIN).length / pos.length),
      falseAlarms: round(neg.filter((r) => r.p.get(kind)! >= DEFAULT_GENERAL_TOOL_MIN).length / Math.max(1, neg.length)),
      servers: servers.length,
      bestIsRight: right.length,
    };
  }
  if (show !== undefined) {
    for (const r of rows) {
      const said = [...r.p].filter(([, x]) => x >= DEFAULT_GENERAL_TOOL_MIN).map(([k]) => k);
      const labelled = r.kind === 'none' ? [] : [r.kind];
      if (said.join() !== labelled.join()) console.log(`  ${show} ${r.id}: labelled [${labelled.join(', ')}] model [${said.map((k) => `${k} ${r.p.get(k)!.toFixed(2)}`).join(', ')}]`);
    }
  }
  const list = Object.values(kinds);
  const mean = (f: (k: ProbeKind) => number): number => meanOf(list, f);
  const serverKinds = list.reduce((s, k) => s + k.servers, 0);
  return {
    servers: new Set(rows.map((r) => r.server)).size,
    tools: rows.length,
    recall: mean((k) => k.recall),
    falseAlarms: mean((k) => k.falseAlarms),
    bestIsRight: round(list.reduce((s, k) => s + k.bestIsRight, 0) / Math.max(1, serverKinds)),
    kinds,
  };
}

interface KindFigures {
  readonly positives: number;
  readonly recall: number;
  readonly falseAlarms: number;
  readonly auc: number;
}

/** The mean of a figure over the kinds, to one decimal. */
function meanOf<T>(kinds: readonly T[], figure: (k: T) => number): number {
  return Math.round((kinds.reduce((s, k) => s + figure(k), 0) / kinds.length) * 10) / 10;
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
  const mean = (f: (k: KindFigures) => number): number => meanOf(rows, f);
  return { kinds, recall: mean((k) => k.recall), falseAlarms: mean((k) => k.falseAlarms), auc: mean((k) => k.auc) };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--needs');
  const file = at >= 0 ? path.resolve(argv[at + 1] ?? '') : NEEDS_FILE;
  const needs = new GeneralNeeds(readNeedsFile(JSON.parse(fs.readFileSync(file, 'utf8'))));
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
  const show = argv.includes('--show-misses');
  const probe = toolModelFigures(probeCatalogueRows(needs), show ? 'probe' : undefined);
  if (probe) {
    console.log(`\ntool model on ${probe.servers} probe catalogues (${probe.tools} tools, never trained on); a tool counts as of a kind at p ≥ ${DEFAULT_GENERAL_TOOL_MIN}`);
    console.log('kind               tools  recall  false alarms  servers  best is of the kind');
    for (const [kind, k] of Object.entries(probe.kinds)) console.log(`${kind.padEnd(18)} ${String(k.tools).padStart(5)}  ${k.recall.toFixed(1).padStart(6)}  ${k.falseAlarms.toFixed(1).padStart(12)}  ${String(k.servers).padStart(7)}  ${String(k.bestIsRight).padStart(19)}`);
    console.log(`${'mean'.padEnd(18)} ${''.padStart(5)}  ${probe.recall.toFixed(1).padStart(6)}  ${probe.falseAlarms.toFixed(1).padStart(12)}  best is of the kind for ${probe.bestIsRight}% of server kinds`);
  }
  const written = toolModelFigures(writtenProbeRows(needs), show ? 'written' : undefined);
  if (written) {
    console.log(`\ntool model on ${written.tools} held-out team-written tools described in Chinese or Japanese (data/needs/probe-tools-zh.jsonl)`);
    console.log('kind               tools  recall  false alarms');
    for (const [kind, k] of Object.entries(written.kinds)) console.log(`${kind.padEnd(18)} ${String(k.tools).padStart(5)}  ${k.recall.toFixed(1).padStart(6)}  ${k.falseAlarms.toFixed(1).padStart(12)}`);
    console.log(`${'mean'.padEnd(18)} ${''.padStart(5)}  ${written.recall.toFixed(1).padStart(6)}  ${written.falseAlarms.toFixed(1).padStart(12)}`);
  }
  const toolProbe = probe ? { tool_probe: { servers: probe.servers, tools: probe.tools, recall: probe.recall, false_alarms: probe.falseAlarms, best_is_right: probe.bestIsRight, kinds: probe.kinds } } : {};
  const writtenProbe = written ? { tool_written_zh: { tools: written.tools, recall: written.recall, false_alarms: written.falseAlarms } } : {};
  console.log(JSON.stringify({ needs_dev: { prompts: prompts.length, recall: full.recall, false_alarms: full.falseAlarms, auc: full.auc, words_only: { recall: words.recall, false_alarms: words.falseAlarms, auc: words.auc }, kinds: full.kinds }, ...toolProbe, ...writtenProbe }));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
