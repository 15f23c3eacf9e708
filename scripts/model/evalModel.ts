/**
 * `npm run eval:model`: measures the default model (through the same engine the extension uses,
 * OnnxEmbedder over media/model) against lexical BM25F computed in the same run, and their hybrid, on
 * MetaTool `multi`, Seal-Tools `test_out_domain` and BFCL `live_multiple`. Each query ranks its set's
 * whole catalogue. Prints a table per set and ends with one line of JSON:
 *   {SET: {"model": {metrics}, "bm25": {metrics}, "hybrid": {metrics}}}
 *
 *   npx tsx scripts/model/evalModel.ts [--model DIR] [--update-card]
 */
import path from 'node:path';
import { OnnxEmbedder } from '../../src/core/embedding/onnxEmbedder';
import { updateModelCardFigures } from './modelCard';
import { formatTable, METRIC_NAMES, REPO_ROOT, round1, type Metrics } from './dataSets';
import { evaluateRealCatalogues, evaluateSets, formatProbe, HYBRID_LEXICAL_WEIGHT, type SetScores } from './retrievalEvaluation';
import { describeError } from '../../src/core/errors/describeError';

/** Lexical weights shown in the sweep that justifies HYBRID_LEXICAL_WEIGHT. */
const WEIGHT_SWEEP = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7];

function parseArgs(argv: readonly string[]): { model: string; updateCard: boolean } {
  const args = { model: path.join(REPO_ROOT, 'media', 'model'), updateCard: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--model') args.model = path.resolve(argv[++i] ?? '');
    else if (argv[i] === '--update-card') args.updateCard = true;
    else throw new Error(`Unknown argument "${argv[i]}". Use --model DIR or --update-card.`);
  }
  return args;
}

function tableFor(s: SetScores): string {
  return formatTable(
    [
      { method: 'model (cosine)', metrics: s.model },
      { method: 'BM25F (LexicalRanker)', metrics: s.bm25 },
      { method: `hybrid ${HYBRID_LEXICAL_WEIGHT}·z(BM25F) + ${round1(1 - HYBRID_LEXICAL_WEIGHT)}·z(cosine)`, metrics: s.hybrid.get(HYBRID_LEXICAL_WEIGHT)! },
      { method: 'model, best clause blended (this script\'s variant)', metrics: s.modelClauses },
      { method: 'hybrid with it (this script\'s variant)', metrics: s.hybridClauses.get(HYBRID_LEXICAL_WEIGHT)! },
    ],
    METRIC_NAMES,
  );
}

function meanOver(scores: readonly SetScores[], pick: (s: SetScores) => Metrics, metric: (typeof METRIC_NAMES)[number]): number {
  return round1(scores.reduce((sum, s) => sum + pick(s)[metric], 0) / scores.length);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const embedder = await OnnxEmbedder.load(args.model);
  let embedMs = 0;
  let embedded = 0;
  const scores = await evaluateSets(async (texts) => {
    const start = performance.now();
    const vectors = await embedder.embed(texts);
    embedMs += performance.now() - start;
    embedded += texts.length;
    return vectors;
  }, WEIGHT_SWEEP);
  const probe = await evaluateRealCatalogues((texts) => embedder.embed(texts));
  await embedder.dispose();

  const out: string[] = [];
  out.push(`model: ${path.relative(REPO_ROOT, args.model) || '.'} (${embedder.modelId}); ${embedded} texts embedded in ${(embedMs / 1000).toFixed(1)} s`);
  for (const s of scores) {
    out.push('', `${s.label}: ${s.queryCount} queries, each ranking all ${s.toolCount} tools (percent; lexical scoring ${s.lexicalMsPerQuery.toFixed(2)} ms a query)`, tableFor(s));
  }
  out.push('', 'Hybrid lexical weight w: mean over the three sets of recall@25 / all@25 / nDCG@10, and the smallest recall@25 gain over BM25F on any set;');
  out.push('plain cosine (as the router fuses) | cosine blended with the best clause:');
  for (const w of WEIGHT_SWEEP) {
    const cell = (pick: (s: SetScores) => Metrics): string => {
      const worstGain = Math.min(...scores.map((s) => pick(s)['recall@25'] - s.bm25['recall@25']));
      return `${meanOver(scores, pick, 'recall@25').toFixed(1)} / ${meanOver(scores, pick, 'all@25').toFixed(1)} / ${meanOver(scores, pick, 'ndcg@10').toFixed(1)}, worst gain ${worstGain >= 0 ? '+' : ''}${worstGain.toFixed(1)}`;
    };
    out.push(`  w = ${w.toFixed(1)}: ${cell((s) => s.hybrid.get(w)!)} | ${cell((s) => s.hybridClauses.get(w)!)}${w === HYBRID_LEXICAL_WEIGHT ? '  ← used' : ''}`);
  }
  out.push('', formatProbe(probe));
  process.stdout.write(`${out.join('\n')}\n\n`);

  if (args.updateCard) {
    const figures = [
      `Measured by \`npm run eval:model\` through the ONNX engine; each query ranks its set's whole catalogue; percent.`,
      `"hybrid" is ${HYBRID_LEXICAL_WEIGHT}·z(BM25F) + ${round1(1 - HYBRID_LEXICAL_WEIGHT)}·z(cosine), z-scores over the whole catalogue, as the router fuses them;`,
      `its weight was chosen on these same sets (there is no other labelled data), so read it as tuned.`,
      `BM25F is src/core/selection/lexicalRanker.ts (stop words, suffix stripping, field weights, clauses), well above the plain BM25 floor that data/benchmarks/README.md gives.`,
      '',
      ...scores.flatMap((s) => [`**${s.label}** (${s.queryCount} queries, ${s.toolCount} tools)`, '', markdownTable(s), '']),
      `**Real MCP catalogues** (server-everything, server-memory, server-filesystem and Notion's server, ${probe.tools} tools; ${probe.requests} requests written by the team, test/fixtures/catalogues): share of requests whose tool is first / within 3 / within 5`,
      '',
      '| method | first | within 3 | within 5 | MRR |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...probe.methods.map((m) => `| ${m.method} | ${m.top1.toFixed(1)} | ${m.top3.toFixed(1)} | ${m.top5.toFixed(1)} | ${m.mrr.toFixed(3)} |`),
    ].join('\n');
    if (!updateModelCardFigures(args.model, figures)) process.stderr.write(`No model card with figure markers in ${args.model}; run npm run train:model first.\n`);
  }

  const summary: Record<string, Record<'model' | 'bm25' | 'hybrid', Metrics>> = {};
  for (const s of scores) summary[s.key] = { model: s.model, bm25: s.bm25, hybrid: s.hybrid.get(HYBRID_LEXICAL_WEIGHT)! };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

function markdownTable(s: SetScores): string {
  const rows: Array<[string, Metrics]> = [
    ['model alone (cosine)', s.model],
    ['BM25F (lexical)', s.bm25],
    ['hybrid', s.hybrid.get(HYBRID_LEXICAL_WEIGHT)!],
    ['hybrid, cosine blended with the best clause (this script\'s variant; the router blends clauses its own way, see eval:select)', s.hybridClauses.get(HYBRID_LEXICAL_WEIGHT)!],
  ];
  return [`| method | ${METRIC_NAMES.join(' | ')} |`, `| --- |${METRIC_NAMES.map(() => ' ---: |').join('')}`, ...rows.map(([name, m]) => `| ${name} | ${METRIC_NAMES.map((k) => m[k].toFixed(1)).join(' | ')} |`)].join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${describeError(err)}\n`);
  process.exit(1);
});
