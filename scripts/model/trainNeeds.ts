/**
 * `npm run train:needs`: trains the two small models behind unnamed needs (src/core/selection/generalNeeds.ts)
 * and writes media/needs/general-needs.json. Deterministic: the same data gives the same file.
 *
 *   npx tsx scripts/model/trainNeeds.ts [--out FILE] [--report]
 *
 * The tool model learns, from a tool's name, description and schema, whether it is a general-purpose tool
 * of each kind. Its examples: data/general/tools.jsonl (tools of MetaTool, Seal-Tools and OpenAPI operations,
 * labelled by the team) and the team set's train-split catalogues (labelled in data/requests/kinds).
 *
 * The prompt model learns which words and shapes of a request call for each kind. Its examples: the team
 * set's train-split requests, MetaTool's `single` requests and Seal-Tools' `dev` requests; a request needs a
 * kind when one of its needed tools is labelled with that kind. No dev or test catalogue, no dev or test
 * request, and no BFCL data is read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { GENERAL_KINDS, promptFeatures, toolFeatures, type GeneralKind, type GeneralNeedsFile, type LinearKindModel } from '../../src/core/selection/generalNeeds';
import { loadQueriesFile, loadToolsFile, readJsonl } from '../../src/core/selection/retrievalData';
import { SeededRandom } from './staticEmbeddingModel';
import { REPO_ROOT } from './retrievalData';
import { CATALOGUES } from '../data/catalogueList';
import { readKindLabels, serverOfId } from '../data/generalKinds';

export const NEEDS_FILE = path.join(REPO_ROOT, 'media', 'needs', 'general-needs.json');
const SHARED = path.resolve(REPO_ROOT, '..', 'shared', 'data');
const TEAM = path.join(REPO_ROOT, 'data', 'requests');

/** Every setting of a run, with its reason. */
export const NEEDS_SETTINGS = {
  seed: 20261125,
  /** Passes over the examples; the loss flattens after about 8 on these sizes. */
  epochs: 12,
  /** AdaGrad's base step; 0.1–0.5 all converge here, 0.2 is the middle. */
  learningRate: 0.2,
  /** L2 per update: keeps rare words (one request's "gif") from carrying a kind alone. */
  l2: 1e-4,
  /** A feature must occur in this many examples to get a weight; rarer ones are noise. */
  minCount: 2,
  /**
   * Positives count this much more than negatives. Kinds are rare (a few percent of requests), and an
   * unweighted model stays under 0.5 for most true needs; the selector's threshold is set on the dev split.
   */
  positiveWeight: 3,
  /** Weights smaller than this are dropped from the file; they change no decision. */
  pruneBelow: 0.005,
  /** The team's train-split requests are the only ones phrased like MCP tasks: seen this many times. */
  teamRepeats: 3,
};

interface Example {
  readonly features: readonly string[];
  /** Feature value (tool features are scaled by 1/√n, prompt features are 1). */
  readonly value: number;
  readonly kinds: ReadonlySet<GeneralKind>;
}

interface LabelledTool {
  source: string;
  id: string;
  name: string;
  description: string;
  parameters?: string[];
  kind: string;
}

function isKind(k: string): k is GeneralKind {
  return (GENERAL_KINDS as readonly string[]).includes(k);
}

/** The team's tool → kind labels for tools of train-split catalogues only: dev and test stay unseen. */
function trainSplitLabels(): Map<string, GeneralKind> {
  const split = new Map(CATALOGUES.map((c) => [c.server, c.split]));
  return new Map(readKindLabels().filter((l) => split.get(serverOfId(l.tool)) === 'train').map((l) => [l.tool, l.kind]));
}

/** Every labelled tool in data/general (real tools labelled by the team, and tools the team wrote). */
function labelledTools(): LabelledTool[] {
  const dir = path.join(REPO_ROOT, 'data', 'general');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort().flatMap((f) => readJsonl<LabelledTool>(path.join(dir, f)));
}

function toolExamples(): Example[] {
  const out: Example[] = [];
  const push = (features: string[], kind: string | undefined): void => {
    out.push({ features, value: features.length ? 1 / Math.sqrt(features.length) : 0, kinds: new Set(kind && isKind(kind) ? [kind] : []) });
  };
  for (const t of labelledTools()) {
    const properties = Object.fromEntries((t.parameters ?? []).map((p) => {
      const [name, type] = p.split(':');
      return [name ?? p, type ? { type } : {}];
    }));
    push(toolFeatures({ name: t.name, description: t.description, inputSchema: { type: 'object', properties } }), t.kind);
  }
  const split = new Map(CATALOGUES.map((c) => [c.server, c.split]));
  const labels = trainSplitLabels();
  for (const t of loadToolsFile(path.join(TEAM, 'tools.jsonl'))) {
    if (split.get(t.server ?? '') !== 'train') continue;
    push(toolFeatures({ name: t.id, originalName: t.name, description: t.description, inputSchema: t.inputSchema }), labels.get(t.id));
  }
  return out;
}

function promptExamples(repeatsTeam: number): Example[] {
  const out: Example[] = [];
  const push = (query: string, kinds: Set<GeneralKind>, times = 1): void => {
    const features = promptFeatures(query).map((f) => f.name);
    for (let r = 0; r < times; r++) out.push({ features, value: 1, kinds });
  };
  const labels = trainSplitLabels();
  // A request's kinds: those of its needed tools, and those the writers listed (which may have no tool in the split).
  for (const q of readJsonl<{ split: string; query: string; gold: string[]; kinds?: string[] }>(path.join(TEAM, 'queries.jsonl'))) {
    if (q.split !== 'train') continue;
    const kinds = new Set([...q.gold.map((g) => labels.get(g)), ...(q.kinds ?? [])].filter((k): k is GeneralKind => k !== undefined && isKind(k)));
    push(q.query, kinds, repeatsTeam);
  }
  const shared = new Map<string, GeneralKind>();
  for (const t of labelledTools()) if (isKind(t.kind)) shared.set(`${t.source}:${t.id}`, t.kind);
  for (const [folder, split] of [['metatool', 'single'], ['seal-tools', 'dev']] as const) {
    const file = path.join(SHARED, folder, 'queries.jsonl');
    if (!fs.existsSync(file)) continue;
    for (const q of loadQueriesFile(file, split)) {
      push(q.query, new Set(q.gold.map((g) => shared.get(`${folder}:${g}`)).filter((k): k is GeneralKind => k !== undefined)));
    }
  }
  return out;
}

/** One-vs-rest logistic regression per kind, AdaGrad, over the features seen at least minCount times. */
export function trainLinear(examples: readonly Example[], settings: typeof NEEDS_SETTINGS): LinearKindModel {
  const counts = new Map<string, number>();
  for (const e of examples) for (const f of e.features) counts.set(f, (counts.get(f) ?? 0) + 1);
  const names = [...counts].filter(([, c]) => c >= settings.minCount).map(([f]) => f).sort();
  const index = new Map(names.map((f, i) => [f, i]));
  const K = GENERAL_KINDS.length;
  const w = new Float64Array(names.length * K);
  const g2 = new Float64Array(names.length * K).fill(1e-8);
  const bias = new Float64Array(K);
  const bg2 = new Float64Array(K).fill(1e-8);
  const random = new SeededRandom(settings.seed);
  const order = examples.map((_, i) => i);
  for (let epoch = 0; epoch < settings.epochs; epoch++) {
    random.shuffle(order);
    for (const n of order) {
      const e = examples[n]!;
      const ids = e.features.map((f) => index.get(f)).filter((i): i is number => i !== undefined);
      for (let k = 0; k < K; k++) {
        let z = bias[k]!;
        for (const i of ids) z += w[i * K + k]! * e.value;
        const y = e.kinds.has(GENERAL_KINDS[k]!) ? 1 : 0;
        const p = 1 / (1 + Math.exp(-z));
        const weight = y ? settings.positiveWeight : 1;
        const grad = weight * (p - y);
        bg2[k]! += grad * grad;
        bias[k]! -= (settings.learningRate * grad) / Math.sqrt(bg2[k]!);
        for (const i of ids) {
          const j = i * K + k;
          const g = grad * e.value + settings.l2 * w[j]!;
          g2[j]! += g * g;
          w[j]! -= (settings.learningRate * g) / Math.sqrt(g2[j]!);
        }
      }
    }
  }
  const weights: Record<string, number[]> = {};
  names.forEach((f, i) => {
    const row = Array.from({ length: K }, (_, k) => w[i * K + k]!);
    if (row.some((x) => Math.abs(x) >= settings.pruneBelow)) weights[f] = row.map((x) => Math.round(x * 1e4) / 1e4);
  });
  return { bias: Array.from(bias, (b) => Math.round(b * 1e4) / 1e4), weights };
}

export function trainNeeds(settings = NEEDS_SETTINGS): GeneralNeedsFile {
  const tools = toolExamples();
  const prompts = promptExamples(settings.teamRepeats);
  const count = (examples: readonly Example[]): number => examples.filter((e) => e.kinds.size > 0).length;
  return {
    format: 'tool-router-general-needs',
    version: 1,
    kinds: GENERAL_KINDS,
    tool: trainLinear(tools, settings),
    prompt: trainLinear(prompts, settings),
    trainedOn: { tools: tools.length, generalTools: count(tools), prompts: prompts.length, promptsWithNeeds: count(prompts) },
  };
}

function main(): void {
  const argv = process.argv.slice(2);
  const outAt = argv.indexOf('--out');
  const out = outAt >= 0 ? path.resolve(argv[outAt + 1] ?? '') : NEEDS_FILE;
  const model = trainNeeds();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(model)}\n`);
  process.stdout.write(`trained on ${JSON.stringify(model.trainedOn)}; ${Object.keys(model.tool.weights).length} tool features, ${Object.keys(model.prompt.weights).length} prompt features → ${path.relative(REPO_ROOT, out)} (${(fs.statSync(out).size / 1024).toFixed(0)} KB)\n`);
}

if (require.main === module) main();
