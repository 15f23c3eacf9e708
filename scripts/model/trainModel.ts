/**
 * `npm run train:model`: trains the default embedding model and writes it to media/model as a standard
 * ONNX sentence-embedding folder (model.onnx, tokenizer.json, tokenizer_config.json,
 * tool_router_model.json) with its model card. Deterministic: the same data gives the same files.
 *
 *   npx tsx scripts/model/trainModel.ts [--dev] [--out DIR] [--no-export] [--set name=value ...]
 *
 * --dev measures the in-memory model (float and int8) on the measurement sets before exporting;
 * --set overrides a training setting for an experiment (for example --set dimension=128).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { splitIdentifiers } from '../../src/core/embedding/textPreprocess';
import { writeModelCard } from './modelCard';
import { exportOnnxModel, quantiseRows, verifyOnnxModel } from './onnxExport';
import { REPO_ROOT } from './dataSets';
import { evaluateRealCatalogues, evaluateSets, formatProbe, type SetScores } from './retrievalEvaluation';
import { ContrastiveTrainer, scheduledRateShare, TableAverage, SeededRandom, StaticEmbeddingModel, type TrainingExample } from './staticEmbeddingModel';
import { trainingPairs, type PairSource, type TrainingPair } from './trainingPairs';
import { buildVocabulary, isPunctuationToken, PAD_TOKEN, tokenizerConfig, tokenizerJson, UNK_TOKEN } from './wordPieceVocabulary';

/** Every setting of a training run, with the reason for its value. */
export const TRAINING_SETTINGS = {
  seed: 20260901,
  /** Width of a token's row: in the prototype, recall on unfamiliar sets grew up to this width, little beyond. */
  dimension: 256,
  /**
   * Softmax temperature of the contrastive loss: the best tried on MetaTool and BFCL; in the prototype a much
   * softer one hurt unfamiliar sets and a much sharper one made training collapse.
   */
  temperature: 0.07,
  /** Adagrad's base step, below the prototype's: it keeps more of the initial word matching, better on unfamiliar sets. */
  learningRate: 0.03,
  batchSize: 256,
  /** One epoch gives nearly all the quality; more memorises the pairs (prototype). */
  epochs: 1,
  /**
   * Average the table over this last share of the batches (0: keep the last state). Averaging measured the
   * same as the last state over seeds, so the last state is kept.
   */
  tailAverage: 0,
  /**
   * The learning rate falls linearly to this share of itself over the second half of the batches (1: constant).
   * A falling rate measured the same as constant; row-wise Adagrad already shrinks frequent rows' steps.
   */
  finalRateShare: 1,
  /** Row scale at initialisation: untrained rows then act as a random projection, i.e. exact word matching. */
  initScale: 1,
  /** Same as tool_router_model.json's maxLength: training sees exactly the tokens the runtime will. */
  maxLength: 128,
  /** Words seen in this many training texts get their own row; a higher bar lost recall on BFCL live_multiple. */
  minWordCount: 2,
  /**
   * At most this many whole words get a row (the rest are word pieces): uncapped, the team pairs grew the
   * vocabulary and cost MetaTool multi; this cap keeps the file small and every shared dev set at its figures.
   */
  maxWords: 12000,
  /**
   * Word pieces are cut before whole words: the names across languages add characters, and this keeps the
   * vocabulary (so the model file, and the VSIX) at its size without them. docs/model.md has the figures.
   */
  maxPrefixPieces: 7645,
  maxContinuationPieces: 7645,
  maxPieceLength: 8,
  /** Token weight = IDF^idfPower (0: plain mean, the rows' learned norms alone decide); lower powers were within noise. */
  idfPower: 1,
  /** Numbers in a request are argument values ("12 plus 30", "ID 4312"), not what the tool does: weight 0 (0/1). */
  zeroDigitTokens: 1,
  /** Seal-Tools dev has few pairs (1.8k) beside MetaTool's 20k; repeating them keeps its multi-step requests in view. */
  sealRepeats: 2,
  /** At most this many of MetaTool's requests per tool (0: all); a cap lost recall on every set, so all are kept. */
  metatoolPerToolCap: 0,
  /** The OpenAPI operation pairs (0/1): without them the model alone lost much recall on BFCL live_multiple. */
  openApi: 1,
  /** A second pair per operation (description → operationId) measured as noise: off. */
  openApiDescriptionPairs: 0,
  authored: 1,
  /** The authored requests are few (hundreds) and the only ones phrased like people's requests to MCP servers. */
  authoredRepeats: 4,
  team: 1,
  /**
   * The team set's train split (about 4,400 pairs) beside MetaTool's 20k: among the best on the team dev
   * catalogues, and with `maxWords` the one count tried that kept every shared dev set at its recall.
   */
  teamRepeats: 3,
  /**
   * The team batches are placed among the first this share of the run (1: anywhere), so that the run can end
   * on the other sources. Earlier placements measured within noise of anywhere, so it stays at 1.
   */
  teamWithin: 1,
  /**
   * The team train requests that need only tools described in another language than English (0/1). Off with
   * `teamUnnamedNeed`, so the model trains on requests naming their needs in English; bilingual pairs teach Chinese.
   */
  teamNonEnglishOnly: 0,
  /**
   * The team train requests that need a general-purpose tool they do not name (0/1). Off: that is the needs models'
   * job, and pairing "summarise my notes" with a file-writing tool pulls words toward a tool they do not mean.
   */
  teamUnnamedNeed: 0,
  /**
   * Each step of a team task of several steps beside the needed tool it shares the most words with (0/1).
   * Off: within noise of without over three seeds (docs/model.md).
   */
  teamStepPairs: 0,
  /**
   * The team's bilingual pairs (data/bilingual): without them the team splits' tools described in Chinese or
   * Japanese were found less often. `bilingualRepeats` is the count tried that kept BFCL live_multiple highest.
   */
  bilingual: 1,
  bilingualRepeats: 3,
  /**
   * The third and fourth bilingual files (data/bilingual/more-*.jsonl). Off: they helped the team dev split but
   * cost MetaTool multi and BFCL, and the router's cross-script fusion already finds most such tools without them.
   */
  bilingualMore: 0,
  /** The team's names across languages (data/bilingual/names.jsonl, train lines): a name pair and a phrase pair each. */
  bilingualNames: 1,
  /**
   * The team's paraphrase pairs (data/paraphrase): people's words beside terse API-style descriptions. Off: they
   * helped only the dev catalogues they were written after, and cost MetaTool and BFCL. Kept for further work.
   */
  paraphrase: 0,
  paraphraseRepeats: 2,
};

type Settings = typeof TRAINING_SETTINGS;

export const MODEL_DIR = path.join(REPO_ROOT, 'media', 'model');
/** What tool_router_model.json tells the engine (see src/core/embedding/onnxEmbedder.ts). */
export const RUNTIME_CONFIG = { pooling: 'mean', preprocess: 'split-identifiers', maxLength: TRAINING_SETTINGS.maxLength } as const;

interface Args {
  dev: boolean;
  export: boolean;
  out: string;
  settings: Settings;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { dev: false, export: true, out: MODEL_DIR, settings: { ...TRAINING_SETTINGS } };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--dev') args.dev = true;
    else if (a === '--no-export') args.export = false;
    else if (a === '--out') args.out = path.resolve(argv[++i] ?? '');
    else if (a === '--set') {
      const [key, value] = (argv[++i] ?? '').split('=');
      if (!key || !(key in args.settings) || value === undefined || Number.isNaN(Number(value))) throw new Error(`--set needs name=number with a name from TRAINING_SETTINGS, got "${argv[i]}"`);
      (args.settings as Record<string, number>)[key] = Number(value);
    } else throw new Error(`Unknown argument "${a}". Use --dev, --no-export, --out DIR or --set name=value.`);
  }
  return args;
}

function log(message: string): void {
  process.stdout.write(`${message}\n`);
}

export interface TrainedModel {
  readonly model: StaticEmbeddingModel;
  readonly vocabulary: readonly string[];
  readonly tokenizer: Tokenizer;
  readonly stats: TrainingStats;
}

export interface TrainingStats {
  readonly pairsBySource: Record<PairSource, number>;
  readonly openApiRows: number;
  readonly openApiLicensedRows: number;
  readonly vocabularySize: number;
  readonly batches: number;
  readonly trainingSeconds: number;
  readonly finalLoss: number;
}

/** Encodes exactly as the engine will: identifiers split, tokenised, cut to maxLength. */
function encoder(tokenizer: Tokenizer, maxLength: number): (text: string) => Int32Array {
  return (text) => Int32Array.from(tokenizer.encode(splitIdentifiers(text)).ids.slice(0, maxLength));
}

export function train(settings: Settings): TrainedModel {
  const started = performance.now();
  const random = new SeededRandom(settings.seed);
  const { pairs, openApi } = trainingPairs(settings);
  const pairsBySource: Record<PairSource, number> = { metatool: 0, seal: 0, openapi: 0, authored: 0, team: 0, bilingual: 0, paraphrase: 0 };
  for (const p of pairs) pairsBySource[p.source]++;
  log(`pairs: ${JSON.stringify(pairsBySource)} (OpenAPI: ${openApi.licensed} of ${openApi.rows} rows under permissive licenses)`);

  const texts = [...new Set(pairs.flatMap((p) => [p.query, p.tool]))].sort();
  const vocabulary = buildVocabulary(texts, settings);
  const tokenizer = new Tokenizer(tokenizerJson(vocabulary) as never, tokenizerConfig(settings.maxLength) as never);
  const encode = encoder(tokenizer, settings.maxLength);
  const encoded = new Map<string, Int32Array>();
  for (const text of texts) encoded.set(text, encode(text));
  log(`vocabulary: ${vocabulary.length} tokens; ${texts.length} distinct texts tokenised (${((performance.now() - started) / 1000).toFixed(1)} s)`);

  const weights = tokenWeights(vocabulary, texts.map((t) => encoded.get(t)!), settings.idfPower, settings.zeroDigitTokens > 0);
  const model = new StaticEmbeddingModel(vocabulary.length, settings.dimension, weights);
  model.initialise(random, settings.initScale);

  const batches = makeBatches(pairs, encoded, settings, random);
  const trainer = new ContrastiveTrainer(model, { temperature: settings.temperature, learningRate: settings.learningRate });
  const trainStart = performance.now();
  let recentLoss = 0;
  const tailStart = settings.tailAverage > 0 ? Math.floor(batches.length * (1 - settings.tailAverage)) : batches.length;
  const average = tailStart < batches.length ? new TableAverage(model.table.length) : undefined;
  batches.forEach((batch, i) => {
    trainer.rateScale = scheduledRateShare(i / batches.length, settings.finalRateShare);
    const loss = trainer.step(batch);
    if (average && i >= tailStart) average.add(model.table);
    recentLoss = i === 0 ? loss : 0.98 * recentLoss + 0.02 * loss;
    if ((i + 1) % 100 === 0 || i === batches.length - 1) log(`  batch ${i + 1}/${batches.length}  loss ${recentLoss.toFixed(3)}  ${((performance.now() - trainStart) / 1000).toFixed(1)} s`);
  });
  average?.writeInto(model.table);
  const stats: TrainingStats = {
    pairsBySource,
    openApiRows: openApi.rows,
    openApiLicensedRows: openApi.licensed,
    vocabularySize: vocabulary.length,
    batches: batches.length,
    trainingSeconds: (performance.now() - started) / 1000,
    finalLoss: recentLoss,
  };
  return { model, vocabulary, tokenizer, stats };
}

/**
 * IDF over the distinct training texts, log((N + 1)/(df + 1)) + 1, folded into the model as a fixed
 * per-token weight. [PAD], [UNK] and punctuation weigh 0: they never move a vector.
 */
function tokenWeights(vocabulary: readonly string[], texts: readonly Int32Array[], power: number, zeroDigits: boolean): Float32Array {
  const df = new Float64Array(vocabulary.length);
  const seen = new Int32Array(vocabulary.length).fill(-1);
  texts.forEach((ids, n) => {
    for (const t of ids) {
      if (seen[t] !== n) {
        seen[t] = n;
        df[t]!++;
      }
    }
  });
  const weights = new Float32Array(vocabulary.length);
  vocabulary.forEach((token, t) => {
    if (token === PAD_TOKEN || token === UNK_TOKEN || isPunctuationToken(token)) return;
    if (zeroDigits && /^(?:##)?\d+$/.test(token)) return;
    weights[t] = (Math.log((texts.length + 1) / (df[t]! + 1)) + 1) ** power;
  });
  return weights;
}

/**
 * Batches of one source each (in-batch negatives then come from the same kind of catalogue), in shuffled
 * order; with `teamWithin` under 1, the team batches all fall among the run's first that share.
 */
export function makeBatches(pairs: readonly TrainingPair[], encoded: Map<string, Int32Array>, settings: Settings, random: SeededRandom): TrainingExample[][] {
  const keyOf = new Map<string, number>();
  const key = (text: string): number => {
    let k = keyOf.get(text);
    if (k === undefined) keyOf.set(text, (k = keyOf.size));
    return k;
  };
  const bySource = new Map<PairSource, TrainingExample[]>();
  for (const p of pairs) {
    const list = bySource.get(p.source) ?? [];
    bySource.set(p.source, list);
    list.push({ query: encoded.get(p.query)!, tool: encoded.get(p.tool)!, queryKey: key(p.query), toolKey: key(p.tool) });
  }
  const batches: TrainingExample[][] = [];
  const teamBatches = new Set<TrainingExample[]>();
  for (let epoch = 0; epoch < settings.epochs; epoch++) {
    for (const [source, examples] of bySource) {
      const repeats = source === 'seal' ? settings.sealRepeats : source === 'authored' ? settings.authoredRepeats : source === 'team' ? settings.teamRepeats : source === 'bilingual' ? settings.bilingualRepeats : source === 'paraphrase' ? settings.paraphraseRepeats : 1;
      for (let r = 0; r < repeats; r++) {
        const order = random.shuffle([...examples]);
        for (let i = 0; i < order.length; i += settings.batchSize) {
          const batch = order.slice(i, i + settings.batchSize);
          if (batch.length < settings.batchSize / 4) continue;
          batches.push(batch);
          if (source === 'team') teamBatches.add(batch);
        }
      }
    }
  }
  const shuffled = random.shuffle(batches);
  if (settings.teamWithin >= 1 || teamBatches.size === 0) return shuffled;
  // The team batches go among the first `teamWithin` of the run; the rest of the run is the other sources.
  const early = Math.min(shuffled.length, Math.max(teamBatches.size, Math.round(settings.teamWithin * shuffled.length)));
  const others = shuffled.filter((b) => !teamBatches.has(b));
  const head = random.shuffle([...shuffled.filter((b) => teamBatches.has(b)), ...others.slice(0, early - teamBatches.size)]);
  return [...head, ...others.slice(early - teamBatches.size)];
}

function formatDev(label: string, scores: readonly SetScores[], weights: readonly number[]): string {
  const lines = [label];
  for (const s of scores) {
    const cell = (m: Record<string, number>): string => `${m['recall@5']!.toFixed(1)}/${m['recall@10']!.toFixed(1)}/${m['recall@25']!.toFixed(1)}/${m['all@25']!.toFixed(1)}`;
    const hybrids = weights.map((w) => `hyb${w}=${cell(s.hybrid.get(w)!)}`).join(' ');
    const hybridClauses = weights.map((w) => `hybC${w}=${cell(s.hybridClauses.get(w)!)}`).join(' ');
    lines.push(`  ${s.key.padEnd(22)} model=${cell(s.model)} modelC=${cell(s.modelClauses)} bm25=${cell(s.bm25)}`);
    lines.push(`  ${''.padEnd(22)} ${hybrids}`);
    lines.push(`  ${''.padEnd(22)} ${hybridClauses}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  log(`settings: ${JSON.stringify(args.settings)}`);
  const trained = train(args.settings);
  log(`trained in ${trained.stats.trainingSeconds.toFixed(1)} s`);
  const encode = encoder(trained.tokenizer, args.settings.maxLength);

  const weighted = trained.model.weightedTable();
  const quantised = quantiseRows(weighted, trained.model.vocabSize, trained.model.dimension);
  if (args.dev) {
    const weights = [0.3, 0.4, 0.5];
    const embedFloat = async (texts: readonly string[]): Promise<Float32Array[]> => texts.map((t) => trained.model.embed(encode(t)));
    log(formatProbe(await evaluateRealCatalogues(embedFloat)));
    const floatScores = await evaluateSets(embedFloat, weights);
    log(formatDev('dev figures, float32 (recall@5/recall@10/recall@25/all@25):', floatScores, weights));
    const dequantised = new StaticEmbeddingModel(trained.model.vocabSize, trained.model.dimension, new Float32Array(trained.model.vocabSize).fill(1), quantised.dequantise());
    const int8Scores = await evaluateSets(async (texts) => texts.map((t) => dequantised.embed(encode(t))), weights);
    log(formatDev('dev figures, int8 rows (recall@5/recall@10/recall@25/all@25):', int8Scores, weights));
  }
  if (!args.export) return;

  fs.mkdirSync(args.out, { recursive: true });
  const onnxPath = path.join(args.out, 'model.onnx');
  exportOnnxModel(onnxPath, quantised, trained.model.dimension);
  fs.writeFileSync(path.join(args.out, 'tokenizer.json'), `${JSON.stringify(tokenizerJson(trained.vocabulary))}\n`);
  fs.writeFileSync(path.join(args.out, 'tokenizer_config.json'), `${JSON.stringify(tokenizerConfig(args.settings.maxLength), null, 2)}\n`);
  fs.writeFileSync(path.join(args.out, 'tool_router_model.json'), `${JSON.stringify({ ...RUNTIME_CONFIG, maxLength: args.settings.maxLength }, null, 2)}\n`);

  // The exported graph must give the vectors of the in-memory model (int8 rounding aside).
  const probe = ['echo this message back', 'list_directory: List the files in this folder', 'remember that Alice works at Acme', 'get-weread-rank what is trending on WeRead', 'Ünïcödé — and 日本語 text!'];
  const expected = probe.map((t) => trained.model.embed(encode(t)));
  const worst = await verifyOnnxModel(onnxPath, probe.map(encode), expected);
  log(`ONNX check: lowest cosine between the exported and in-memory vectors over ${probe.length} texts = ${worst.toFixed(5)}`);
  if (worst < 0.999) throw new Error(`The exported model disagrees with the trained one (cosine ${worst}); do not ship it.`);

  writeModelCard(args.out, args.settings, trained.stats);
  const bytes = fs.readdirSync(args.out).reduce((s, f) => s + fs.statSync(path.join(args.out, f)).size, 0);
  log(`wrote ${args.out}: ${(bytes / 1e6).toFixed(2)} MB`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
