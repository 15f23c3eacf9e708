import picomatch from 'picomatch';
import { KeywordStage, EMPTY_KEYWORD_CONFIG, type KeywordConfig } from './keywordStage';
import { estimateToolTokens, type ChosenTool, type DroppedTool, type SelectableTool, type Selection, type SelectionMethod } from './selectionTypes';
import { StickyWindow, DEFAULT_STICKY_LOOKBACK_TURNS, DEFAULT_STICKY_MAX } from './stickyTools';
import { embeddingTextFor, type ToolIndex } from './toolIndex';
import { splitClauses } from './clauses';
import { boostByServer, headThenServer, type ServerPolicy } from './serverAware';
import { CompanionIndex, type Companion } from './companions';
import { fileTypeWords } from './fileTypes';
import { isUnspaced } from './lexicalTerms';
import { catalogueWords, SpellingCorrector, type SpellingFix } from './spelling';
import { KIND_LABELS, type GeneralKind, type GeneralNeeds } from './generalNeeds';
import { DEFAULT_CALL_POLICY, offerTool, type CallPolicy, type Offer } from '../policy/callPolicy';

/**
 * selectTools: from a prompt and the catalogue, the few tools to send, each with its provenance.
 *
 * Stages: keyword routes → scoring (embedding cosine fused with lexical BM25F) → merge with core, sticky
 * and pinned tools → filters (whitelist, destructive, quarantine) → cap in tiers. Each stage is its own
 * small unit; this file only orders them and writes down why.
 */

/**
 * How many tools are sent follows the scores. Between the best score and the score at rank `cap`, a ranked
 * tool is sent while it lies within `depth` of that drop from the top: with depth 0.81, while its score is
 * above the 19% mark. A steady slope (many similar tools) sends many; one or two tools far ahead of the rest
 * send few; never fewer than minTools, never more than the cap. The rule is scale-free, so it behaves alike
 * whatever the scores' spread in a catalogue. The defaults come from the curve of coverage against tools
 * sent that `npm run eval:select` prints (README, "How many tools are sent"): the budget is 15 tools on
 * average, and the depth spends it, being the deepest (in steps of 0.01) whose mean on the team dev split
 * stays within it. Depths 0.80, 0.81 and 0.82 sent 14.5, 14.8 and 15.04 tools there, and every needed tool
 * for 68.7, 69.1 and 69.8% of requests. (It was 0.82 until the unnamed-needs model learnt from the kind-only
 * prompts, which find more needs and so send their tools more often.)
 */
export const DEFAULT_MIN_TOOLS = 3;
export const DEFAULT_DEPTH = 0.81;
/** The cap most clients live with comfortably; 128 is the hard client limit, 40 for some. */
export const DEFAULT_CAP = 25;
/** Each clause of a multi-request prompt also sends its own best tools, this many, so every step has its tool. */
export const DEFAULT_CLAUSE_HEAD = 2;
/**
 * Companion listers (companions.ts) are looked for behind this many of the best tools: the tools the
 * prompt most likely acts on. Set on the team dev split, where 3, 5, 6 and 8 sent every needed tool for
 * 66.3, 67.0, 67.5 and 67.5% of requests, with 14.1, 14.2, 14.4 and 14.6 tools.
 */
export const DEFAULT_COMPANION_HEAD = 6;
/**
 * Weight of the lexical z-score in the fusion `w·z(lexical) + (1−w)·z(cosine)`. An early prototype's best was
 * 0.4; with our model, 0.5 was the best balance on the four dev sets (recall@25: MetaTool 90.4,
 * Seal-Tools OOD 97.7, BFCL live 92.9, parallel 97.0), while 0.4 won only on MetaTool, whose tools the
 * model saw in training (91.4, but 95.7 on parallel_multiple), so 0.5 is the safer bet on unseen servers.
 */
export const DEFAULT_LEXICAL_WEIGHT = 0.5;
/**
 * Without an embedder, a tool beyond the first `minTools` joins when its lexical z-score is at least
 * this: about the top 5% of a normal spread, so only clearly matching tools are added.
 */
export const DEFAULT_LEXICAL_Z_THRESHOLD = 1.65;

/**
 * Each tool gains this × its server's strength (mean of the server's two best fused scores), so a server
 * that clearly matches lifts its weaker tools together. On the team set's dev catalogues (1,060 tools, 53 servers) 0.5 gave recall@25
 * 78.3 against 77.1 without and 77.8 at 1.0; sets without servers are unchanged (serverAware.ts). With
 * companion listers, 0.2–0.4 moved the dev split's recall@25 by at most +0.4 and its sent_all not at all:
 * within noise, so 0.5 stays.
 */
export const DEFAULT_SERVER_BOOST = 0.5;
/**
 * A multi-request prompt's score per tool is blended as (1 − w)·full + w·(best clause), clauses.ts
 * splitting it. Taking the clause's score whenever it was higher (a max) cost BFCL live_multiple 1–2
 * points; the blend at 0.3 gained Seal-Tools OOD +0.5 and BFCL parallel_multiple +0.4 recall@25 and kept
 * MetaTool and the team dev set within ±0.1; 0.5 was no better.
 */
export const DEFAULT_CLAUSE_WEIGHT = 0.3;

/**
 * Unnamed needs (generalNeeds.ts): a needed general-purpose tool gains up to this many z-score units,
 * enough to move a tool from the bulk of the catalogue into the top few (never above the best four, see
 * GENERAL_RANK). Set on the team dev split: 16 until the prompt model learnt from the audited train
 * split; with it, 16, 20, 24 and 32 gave general-purpose recall@25 74.3, 76.2, 79.1 and 80.1 and
 * sent_all 65.6, 65.9, 66.3 and 66.4, with MetaTool, Seal-Tools and BFCL unchanged. 24 is where the
 * gains level off.
 */
export const DEFAULT_GENERAL_BOOST = 24;
/**
 * The prompt model's probability above which a kind counts as needed. Low on purpose: the lift is
 * scaled by the probability, so a weak need lifts little, and on the team dev split 0.15 found more needs
 * than 0.3 while recall@25 of every other tool held.
 */
export const DEFAULT_GENERAL_NEED_MIN = 0.15;
/** The tool model's probability above which a tool counts as of a kind (the lift is scaled by it too). */
export const DEFAULT_GENERAL_TOOL_MIN = 0.2;

export interface SelectionOptions {
  /** Always send this many top-ranked tools. */
  readonly minTools: number;
  /** Beyond `minTools`, a ranked tool is sent while its score is within this share (0–1) of the drop from the best to the cap-th score. */
  readonly depth: number;
  /** Each clause of a multi-request prompt also sends its best this many tools (0: off). */
  readonly clauseHead: number;
  /** The best this many tools sent each bring their server's lister of the same resource (0: off); see companions.ts. */
  readonly companionHead: number;
  /** Hard cap on the tools sent, after core, pinned and sticky tools. */
  readonly cap: number;
  /**
   * For a tool described in another script than the prompt (Chinese beside English), the lexical ranker
   * sees only its name: its lexical evidence is then taken as at least its embedding evidence (0: off).
   */
  readonly crossScript: number;
  /** The lexical ranker also reads the media type of each file the prompt names, in words (0: off); see fileTypes.ts. */
  readonly fileTypes: number;
  /** Typos in the prompt are read as the word one edit away (0: off); see spelling.ts. Needs SelectorDeps.spelling. */
  readonly spelling: number;
  /** Globs of tools that are always sent. */
  readonly coreTools: readonly string[];
  /** When non-empty, only tools matching these globs can be sent (the whitelist). */
  readonly allowedTools: readonly string[];
  /** Which tools may be offered, and which ask before they run (callPolicy.ts); selection offers to a person who can be asked. */
  readonly callPolicy: CallPolicy;
  readonly lexicalWeight: number;
  readonly lexicalZThreshold: number;
  readonly stickyLookback: number;
  readonly stickyMax: number;
  readonly keyword: KeywordConfig;
  /** Weight of the server boost (0: off); see serverAware.ts. */
  readonly serverBoost: number;
  /** Each clause of a multi-request prompt also scores tools, times this weight (0: off); see clauses.ts. */
  readonly clauseWeight: number;
  /** How far a general-purpose tool the prompt needs is lifted, in z-score units (0: off); see generalNeeds.ts. */
  readonly generalBoost: number;
  /** A kind is needed when the prompt model's probability is at least this. */
  readonly generalNeedMin: number;
  /** A tool is of a kind when the tool model's probability is at least this. */
  readonly generalToolMin: number;
  /**
   * The head-then-strongest-server ranking policy; its window is the cap. Off by default: on the team dev
   * catalogues, head 10, fill 5, cap 12 per server moved recall@25 by +0.4 over the server boost alone
   * (within the ±0.7 spread between model variants), and it reorders every prompt's budget.
   */
  readonly serverPolicy?: Omit<ServerPolicy, 'window'>;
}

export const DEFAULT_SELECTION_OPTIONS: SelectionOptions = {
  minTools: DEFAULT_MIN_TOOLS,
  depth: DEFAULT_DEPTH,
  clauseHead: DEFAULT_CLAUSE_HEAD,
  companionHead: DEFAULT_COMPANION_HEAD,
  crossScript: 1,
  fileTypes: 1,
  spelling: 1,
  cap: DEFAULT_CAP,
  coreTools: [],
  allowedTools: [],
  callPolicy: DEFAULT_CALL_POLICY,
  lexicalWeight: DEFAULT_LEXICAL_WEIGHT,
  lexicalZThreshold: DEFAULT_LEXICAL_Z_THRESHOLD,
  stickyLookback: DEFAULT_STICKY_LOOKBACK_TURNS,
  stickyMax: DEFAULT_STICKY_MAX,
  keyword: EMPTY_KEYWORD_CONFIG,
  serverBoost: DEFAULT_SERVER_BOOST,
  clauseWeight: DEFAULT_CLAUSE_WEIGHT,
  generalBoost: DEFAULT_GENERAL_BOOST,
  generalNeedMin: DEFAULT_GENERAL_NEED_MIN,
  generalToolMin: DEFAULT_GENERAL_TOOL_MIN,
};

/** Scores every tool of a catalogue for a query, aligned with the catalogue's order. */
export interface LexicalScorer {
  score(query: string): ArrayLike<number>;
}

export interface SelectorDeps {
  /** The embedding index; without it (or while it fails) selection is keyword-only. */
  readonly index?: ToolIndex;
  /** Builds the lexical scorer for a catalogue (BM25F in production). */
  readonly createLexical?: (tools: readonly SelectableTool[]) => LexicalScorer;
  /** Tools flagged as poisoned and quarantined (by the reliability checks), with the reason. */
  readonly quarantine?: () => ReadonlyMap<string, string>;
  /** What past prompts on this machine needed (learning from use); absent or off, nothing is raised. */
  readonly usage?: UsageHints;
  /** The unnamed-needs models (generalNeeds.ts); without them no general-purpose tool is raised. */
  readonly needs?: GeneralNeeds;
  /** Words for spelling tolerance (spelling.ts); without them the prompt is read as typed. */
  readonly spelling?: SpellingWords;
}

export interface SpellingWords {
  /** An English dictionary, word → rank (0 the most common): known, and suggested after the catalogue's words. */
  readonly dictionary: ReadonlyMap<string, number>;
  /** Words left as written but never suggested: the embedding model's own vocabulary. */
  readonly known: ReadonlySet<string>;
}

/**
 * The seam for learning from use: for a prompt, how strongly each tool was needed by similar past prompts.
 * Implemented by the usage memory (src/core/learning); the selector only adds the hints to its scores.
 */
export interface UsageHints {
  /**
   * Tool name → strength in [0, 1] (1: a near-identical recent prompt needed it). `vector` is the prompt's
   * embedding (unit length) when the embedder ran, else undefined. Tools not in the map get nothing.
   */
  hintsFor(prompt: string, vector: Float32Array | undefined): ReadonlyMap<string, number>;
}

/**
 * How far a usage hint of 1 lifts a tool, in z-score units of the fused ranking: enough to carry a tool a
 * near-identical past prompt needed from the middle of the ranking into the top 5, while a weak hint
 * (a loosely similar prompt, or an old one after decay) only breaks near-ties.
 */
export const USAGE_HINT_WEIGHT = 2;

export interface SelectionRequest {
  readonly prompt: string;
  /** The chat turn number, for the sticky window. */
  readonly turn?: number;
  /** Tools named by the prompt file or `#` references: they bypass the selectors. */
  readonly pinned?: readonly string[];
  /** The chat's own sticky tools (each chat keeps its own); the selector's window when absent. */
  readonly sticky?: StickyWindow;
  readonly signal?: AbortSignal;
}

interface Scores {
  readonly fused: Float64Array;
  readonly cosine?: Float64Array;
  readonly hasCosine?: Uint8Array;
  readonly lexical?: Float64Array;
  /** Usage hints added to `fused` (0 where none). */
  readonly usage?: Float64Array;
}

export class ToolSelector {
  readonly sticky: StickyWindow;
  private tools: SelectableTool[] = [];
  private texts: string[] = [];
  private servers: string[] = [];
  /** Each tool's position in the catalogue, by exposed name; rebuilt with the catalogue, not per prompt. */
  private byName = new Map<string, number>();
  /** Each general-purpose kind's tools in the catalogue (tool probability ≥ generalToolMin), rebuilt with it. */
  private kindTools = new Map<GeneralKind, Array<{ index: number; probability: number }>>();
  private companions = new CompanionIndex([]);
  private speller: SpellingCorrector | undefined;
  /** Whether each tool is described mostly in Chinese, Japanese or Korean, in catalogue order. */
  private unspaced: boolean[] = [];
  private keyword: KeywordStage;
  private lexical: LexicalScorer | undefined;
  private catalogueTokens = 0;
  private aligned: { matrix: Float32Array; present: Uint8Array; dimension: number; version: number; texts: readonly string[] } | undefined;
  private readonly isCore: (name: string) => boolean;
  private readonly isAllowed: (name: string) => boolean;

  constructor(readonly options: SelectionOptions = DEFAULT_SELECTION_OPTIONS, private readonly deps: SelectorDeps = {}) {
    this.sticky = new StickyWindow(options.stickyLookback, options.stickyMax);
    this.keyword = new KeywordStage(options.keyword, []);
    this.isCore = options.coreTools.length ? picomatch([...options.coreTools]) : () => false;
    this.isAllowed = options.allowedTools.length ? picomatch([...options.allowedTools]) : () => true;
  }

  get catalogue(): readonly SelectableTool[] {
    return this.tools;
  }

  /** Problems in the keyword configuration (bad regexes, unknown groups). */
  get issues(): readonly string[] {
    return this.keyword.issues;
  }

  /** Replaces the catalogue. Cheap for the lexical side; embeddings of new texts run in the background. */
  setCatalogue(tools: readonly SelectableTool[]): void {
    this.tools = [...tools];
    this.texts = this.tools.map(embeddingTextFor);
    this.servers = this.tools.map((t) => t.server);
    this.byName = new Map(this.tools.map((t, i) => [t.name, i]));
    this.kindTools = this.findKindTools();
    this.companions = new CompanionIndex(this.tools);
    this.unspaced = this.tools.map((t) => isUnspaced(t.description ?? ''));
    const words = this.deps.spelling;
    this.speller = words && this.options.spelling > 0 ? new SpellingCorrector(words.dictionary, catalogueWords([...this.texts, ...this.servers]), words.known) : undefined;
    this.keyword = new KeywordStage(this.options.keyword, [...new Set(this.tools.map((t) => t.server))]);
    this.lexical = this.deps.createLexical?.(this.tools);
    this.catalogueTokens = this.tools.reduce((sum, t) => sum + estimateToolTokens(t), 0);
    this.deps.index?.update(this.texts);
  }

  async select(request: SelectionRequest): Promise<Selection> {
    const timings: Record<string, number> = {};
    const time = <T>(stage: string, fn: () => T): T => {
      const t0 = performance.now();
      const out = fn();
      timings[stage] = (timings[stage] ?? 0) + performance.now() - t0;
      return out;
    };
    const started = performance.now();
    const issues = [...this.keyword.issues];
    const byName = this.byName;
    const chosen = new Map<string, { stages: string[]; tier: 1 | 2 | 3; reason: string; score?: number; cosine?: number; lexical?: number }>();
    const offer = (name: string): Offer => offerTool(this.options.callPolicy, this.tools[byName.get(name)!]!, { canAsk: true });
    const asks = (name: string): boolean => {
      const o = offer(name);
      return o.offered && o.asks;
    };
    const add = (name: string, stage: string, tier: 1 | 2 | 3, reason: string): void => {
      const existing = chosen.get(name);
      if (existing) {
        if (!existing.stages.includes(stage)) existing.stages.push(stage);
        if (tier < existing.tier) existing.tier = tier;
        return;
      }
      chosen.set(name, { stages: [stage], tier, reason });
    };

    // Pinned tools bypass the selectors entirely (method required_tools): the user named them.
    const pinned = (request.pinned ?? []).filter((name) => {
      if (byName.has(name)) return true;
      issues.push(`Pinned tool "${name}" is not in the catalogue; check its server is running.`);
      return false;
    });
    let method: SelectionMethod;
    let methodNote: string | undefined;
    let scores: Scores | undefined;
    let ranked: number[] = [];
    let cutoff: number | undefined;
    let readAs: readonly SpellingFix[] | undefined;
    const dropped: DroppedTool[] = [];
    const quarantine = this.deps.quarantine?.() ?? new Map<string, string>();
    /** Why a tool may not be sent (whitelist, quarantine, destructive without opt-in), if it may not. */
    const exclude = (name: string, stages: readonly string[]): DroppedTool | undefined => {
      if (!this.isAllowed(name)) return { name, stages, by: 'whitelist', reason: 'not in the allowed tools (toolRouter.selection.allowedTools)' };
      if (quarantine.has(name)) return { name, stages, by: 'quarantine', reason: `quarantined: ${quarantine.get(name)}` };
      const offered = offer(name);
      if (!offered.offered) return { name, stages, by: 'destructive', reason: offered.reason };
      return undefined;
    };

    for (const t of this.tools) if (this.isCore(t.name)) add(t.name, 'core', 1, 'core tool: always sent');

    if (pinned.length > 0) {
      method = 'required_tools';
      methodNote = `${pinned.length} tool(s) pinned by the prompt file or # references; the selectors did not run`;
      for (const name of pinned) add(name, 'required', 1, 'pinned by the prompt file or a # reference');
    } else {
      for (const s of (request.sticky ?? this.sticky).get(request.turn ?? 0, this.isCore)) {
        if (byName.has(s.name)) add(s.name, `sticky:${s.turn}`, 1, `called ${(request.turn ?? 0) - s.turn} turn(s) ago`);
      }
      const keywordPicks = time('keyword', () => this.keyword.match(request.prompt, this.tools.map((t) => t.name)));

      // Typos are read as the word meant (spelling.ts) for scoring; keyword routes see the prompt as typed.
      const spelled = time('spelling', () => this.speller?.correct(request.prompt));
      if (spelled?.fixes.length) readAs = spelled.fixes;
      const scored = await this.score(spelled?.fixes.length ? { ...request, prompt: spelled.text } : request, timings, issues);
      scores = scored.scores;
      method = scored.usedEmbedding ? 'embedding+keyword' : 'keyword-only';
      methodNote = scored.note;
      if (scores) {
        ranked = time('rank', () => topIndices(scores!.fused, RANKING_LIMIT));
        if (this.options.serverPolicy) {
          const policy = this.options.serverPolicy;
          ranked = time('serverPolicy', () => headThenServer(ranked, scores!.fused, this.servers, { ...policy, window: this.options.cap }));
        }
        // The count rule: the best minTools always; then every tool within `depth` of the drop from the best
        // score to the cap-th (so a slope sends more and one clear answer sends few); the cap bounds it all.
        const head = ranked.length ? scores.fused[ranked[0]!]! : 0;
        const last = ranked.length ? scores.fused[ranked[Math.min(this.options.cap, ranked.length) - 1]!]! : 0;
        cutoff = head - this.options.depth * (head - last);
        const floor = scored.usedEmbedding ? cutoff : Math.max(cutoff, this.options.lexicalZThreshold);
        const stage = scored.usedEmbedding ? 'embedding' : 'keyword:lexical';
        const companionOf = new Map((scored.companions ?? []).map((c) => [c.index, this.companionReason(c)]));
        let picked = 0;
        for (const i of ranked) {
          if (picked >= this.options.cap) break;
          const tool = this.tools[i]!;
          const z = scores.fused[i]!;
          let reason: string;
          if (picked < this.options.minTools) reason = `top ${this.options.minTools} by relevance (rank ${picked + 1})`;
          else if (z >= floor) reason = `score ${z.toFixed(2)} ≥ cutoff ${cutoff.toFixed(2)} (best ${head.toFixed(2)})`;
          else break;
          // Filtered tools are left out here, so they do not take the places minTools guarantees.
          const drop = exclude(tool.name, [stage]);
          if (drop) {
            dropped.push({ ...drop, score: z });
            continue;
          }
          picked++;
          const hint = scores.usage?.[i] ?? 0;
          const general = scored.general?.get(i);
          const companion = companionOf.get(i);
          const why = [
            reason,
            ...(hint > 0 ? [`similar past prompts needed it (memory ${hint.toFixed(2)})`] : []),
            ...(general ? [`${general.cue} → ${tool.name} (${KIND_LABELS[general.kind]})`] : []),
            ...(companion ? [companion] : []),
          ].join('; ');
          add(tool.name, stage, 2, why);
          if (hint > 0) add(tool.name, 'memory', 2, '');
          if (general) add(tool.name, `general:${general.kind}`, 2, '');
          if (companion) add(tool.name, 'companion', 2, '');
        }
        // Tools sent below the cutoff for a reason of their own. One already chosen keeps its entry (`mark`
        // also records this stage on it); one the filters exclude is listed as dropped.
        const fused = scores.fused;
        const sendBelowCutoff = (index: number, stage: string, why: string, mark: boolean): void => {
          const name = this.tools[index]!.name;
          if (chosen.has(name)) {
            if (mark) add(name, stage, 2, why);
            return;
          }
          const drop = exclude(name, [stage]);
          if (drop) dropped.push({ ...drop, score: fused[index]! });
          else add(name, stage, 2, why);
        };
        // Each need the prompt calls for sends its best tool.
        for (const [i, general] of scored.general ?? []) {
          if (general.best) sendBelowCutoff(i, `general:${general.kind}`, `${general.cue} → ${this.tools[i]!.name} (${KIND_LABELS[general.kind]}, need ${general.probability.toFixed(2)})`, true);
        }
        // The best tools bring the lister that finds the item they act on, when the prompt gives no id.
        for (const [index, why] of companionOf) sendBelowCutoff(index, 'companion', why, false);
        // Each clause of a multi-request prompt sends its own best tools, so no step is left without one.
        for (const { index, clause } of scored.clauseHeads ?? []) {
          sendBelowCutoff(index, 'clause', `best for the clause "${clause.length > 60 ? `${clause.slice(0, 59)}…` : clause}"`, false);
        }
      }
      for (const [name, stages] of keywordPicks) {
        for (const stage of stages) add(name, stage, 3, `keyword route ${stage.slice('keyword:'.length)} matched the prompt`);
      }
    }

    // Scores for display, and for ordering tier 2.
    if (scores) {
      for (const [name, entry] of chosen) {
        const i = byName.get(name)!;
        entry.score = scores.fused[i];
        if (scores.hasCosine?.[i]) entry.cosine = scores.cosine![i];
        if (scores.lexical) entry.lexical = scores.lexical[i];
      }
    }

    // Filters for what other stages brought in (core, sticky, keyword): whitelist, destructive, quarantine.
    for (const [name, entry] of [...chosen]) {
      const drop = exclude(name, entry.stages);
      if (drop) {
        dropped.push(entry.score !== undefined ? { ...drop, score: entry.score } : drop);
        chosen.delete(name);
      }
    }

    // Cap in tiers: 1 core, pinned and sticky (in that order); 2 scored, by score; 3 keyword-only, by name.
    const ordered = time('cap', () =>
      [...chosen.entries()].sort(([an, a], [bn, b]) => {
        if (a.tier !== b.tier) return a.tier - b.tier;
        if (a.tier === 2) return (b.score ?? 0) - (a.score ?? 0);
        if (a.tier === 3) return an < bn ? -1 : an > bn ? 1 : 0;
        return 0;
      }),
    );
    const kept = ordered.slice(0, this.options.cap);
    for (const [name, entry] of ordered.slice(this.options.cap)) {
      dropped.push({ name, stages: entry.stages, by: 'cap', reason: `over the cap of ${this.options.cap} (tier ${entry.tier})`, ...(entry.score !== undefined ? { score: entry.score } : {}) });
    }
    const tools: ChosenTool[] = kept.map(([name, e]) => ({
      name,
      stages: e.stages,
      tier: e.tier,
      reason: asks(name) ? `${e.reason}; asks before it runs` : e.reason,
      ...(asks(name) ? { confirm: true } : {}),
      ...(e.score !== undefined ? { score: e.score } : {}),
      ...(e.cosine !== undefined ? { cosine: e.cosine } : {}),
      ...(e.lexical !== undefined ? { lexical: e.lexical } : {}),
    }));

    const ranking = scores
      ? ranked.map((i) => ({
          name: this.tools[i]!.name,
          score: scores!.fused[i]!,
          ...(scores!.hasCosine?.[i] ? { cosine: scores!.cosine![i]! } : {}),
          ...(scores!.lexical ? { lexical: scores!.lexical[i]! } : {}),
        }))
      : [];
    const selectedTokens = tools.reduce((sum, t) => sum + estimateToolTokens(this.tools[byName.get(t.name)!]!), 0);
    timings['total'] = performance.now() - started;
    return {
      prompt: request.prompt,
      method,
      ...(methodNote ? { methodNote } : {}),
      tools,
      dropped,
      ranking,
      threshold: cutoff ?? 0,
      timingsMs: timings,
      tokens: { selected: selectedTokens, catalogue: this.catalogueTokens },
      ...(readAs ? { readAs } : {}),
      issues,
    };
  }

  private companionReason({ forIndex, resource }: Companion): string {
    return `finds the ${resource} that ${this.tools[forIndex]!.name} acts on (the prompt gives no ${resource} id)`;
  }

  /** The catalogue's general-purpose tools by kind, as the tool model sees them. */
  private findKindTools(): Map<GeneralKind, Array<{ index: number; probability: number }>> {
    const out = new Map<GeneralKind, Array<{ index: number; probability: number }>>();
    const needs = this.deps.needs;
    if (!needs) return out;
    this.tools.forEach((tool, index) => {
      const p = needs.toolProbabilities(tool);
      needs.kinds.forEach((kind, k) => {
        if (p[k]! < this.options.generalToolMin) return;
        const list = out.get(kind) ?? [];
        out.set(kind, list);
        list.push({ index, probability: p[k]! });
      });
    });
    return out;
  }

  /**
   * The catalogue's vectors packed in one matrix, in catalogue order, rebuilt only when the index or the
   * catalogue changed: looking vectors up by text on every prompt cost more than the dot products.
   */
  private alignedVectors(index: ToolIndex): { matrix: Float32Array; present: Uint8Array; dimension: number } {
    if (this.aligned && this.aligned.version === index.version && this.aligned.texts === this.texts) return this.aligned;
    const n = this.texts.length;
    let dimension = 0;
    for (let i = 0; i < n && dimension === 0; i++) dimension = index.get(this.texts[i]!)?.length ?? 0;
    const matrix = new Float32Array(n * dimension);
    const present = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const v = index.get(this.texts[i]!);
      if (!v || v.length !== dimension) continue;
      matrix.set(v, i * dimension);
      present[i] = 1;
    }
    this.aligned = { matrix, present, dimension, version: index.version, texts: this.texts };
    return this.aligned;
  }

  /**
   * Lexical and embedding scores, fused by z-score. Falls back to lexical alone when the embedder cannot
   * help. Then, in order: clause matching (a multi-request prompt's clauses scored on their own), usage
   * hints, and the server boost.
   */
  private async score(request: SelectionRequest, timings: Record<string, number>, issues: string[]): Promise<ScoreResult> {
    const n = this.tools.length;
    if (n === 0) return { usedEmbedding: false, note: 'the catalogue is empty' };
    // Taken before any await: a catalogue replaced meanwhile must not mix with these scores' positions.
    const byName = this.byName;
    const servers = this.servers;
    const kindTools = this.kindTools;
    const index = this.deps.index;
    let note: string | undefined;
    let embed = false;
    if (!index) note = 'no embedder is configured';
    else if (index.error) note = `the embedder failed (${index.error}); using keywords only`;
    else {
      const { ready, total } = index.readiness();
      if (ready === 0) note = 'the embedding index is still being built; using keywords only';
      else {
        embed = true;
        if (ready < total) note = `${ready} of ${total} tools embedded so far; the rest are ranked on keywords`;
      }
    }
    let full: TextScores;
    try {
      full = await this.scoreText(request.prompt, embed, request.signal, timings);
    } catch (error) {
      note = `embedding the prompt failed (${(error as Error).message}); using keywords only`;
      issues.push(note);
      embed = false;
      full = await this.scoreText(request.prompt, false, request.signal, timings);
    }
    const { lexical, cosine, hasCosine, vector } = full;
    if (!full.fused) return { usedEmbedding: false, ...(note ? { note } : {}) };
    const fused = full.fused;

    let t0 = performance.now();
    const clauseHeads: Array<{ index: number; clause: string }> = [];
    if (this.options.clauseWeight > 0 || this.options.clauseHead > 0) {
      const clauses = splitClauses(request.prompt);
      if (clauses.length > 1) {
        const best = new Float64Array(n).fill(-Infinity);
        for (const clause of clauses) {
          const part = await this.scoreText(clause, embed, request.signal, undefined).catch((): TextScores => ({}));
          if (!part.fused) continue;
          for (let i = 0; i < n; i++) if (part.fused[i]! > best[i]!) best[i] = part.fused[i]!;
          if (this.options.clauseHead > 0) for (const index of topIndices(part.fused, this.options.clauseHead)) clauseHeads.push({ index, clause });
        }
        const lambda = this.options.clauseWeight;
        if (lambda > 0) for (let i = 0; i < n; i++) if (Number.isFinite(best[i]!)) fused[i] = (1 - lambda) * fused[i]! + lambda * best[i]!;
      }
      timings['clauses'] = performance.now() - t0;
    }

    let usage: Float64Array | undefined;
    if (this.deps.usage) {
      t0 = performance.now();
      const hints = this.deps.usage.hintsFor(request.prompt, vector);
      if (hints.size > 0) {
        usage = new Float64Array(n);
        for (const [name, h] of hints) {
          const i = byName.get(name);
          if (i === undefined || !(h > 0)) continue;
          usage[i] = Math.min(1, h);
          fused[i] = fused[i]! + USAGE_HINT_WEIGHT * usage[i]!;
        }
      }
      timings['usage'] = performance.now() - t0;
    }
    if (this.options.serverBoost > 0) {
      t0 = performance.now();
      boostByServer(fused, servers, this.options.serverBoost);
      timings['serverBoost'] = performance.now() - t0;
    }
    let general: Map<number, GeneralLift> | undefined;
    if (this.deps.needs && this.options.generalBoost > 0 && kindTools.size > 0) {
      t0 = performance.now();
      const promptVector = vector && index ? { modelId: index.modelId, values: vector } : undefined;
      general = liftGeneralTools(this.deps.needs, request.prompt, promptVector, fused, kindTools, this.options);
      timings['general'] = performance.now() - t0;
    }
    let companions: Companion[] | undefined;
    if (this.options.companionHead > 0) {
      t0 = performance.now();
      // One ranking of the head serves both the tools that bring companions and the ceiling they stay under.
      const top = topIndices(fused, Math.max(this.options.companionHead, COMPANION_RANK));
      companions = this.companions.companionsFor(top.slice(0, this.options.companionHead), fused, request.prompt);
      // Beside the tool it serves, but never above the best COMPANION_RANK: the tools the prompt names keep their places.
      const ceiling = top.length >= COMPANION_RANK ? fused[top[COMPANION_RANK - 1]!]! - COMPANION_BELOW : Infinity;
      for (const c of companions) fused[c.index] = Math.max(fused[c.index]!, Math.min(ceiling, fused[c.forIndex]! - COMPANION_BELOW));
      timings['companions'] = performance.now() - t0;
    }
    return {
      scores: { fused, ...(cosine && hasCosine ? { cosine, hasCosine } : {}), ...(lexical ? { lexical } : {}), ...(usage ? { usage } : {}) },
      usedEmbedding: cosine !== undefined,
      ...(note ? { note } : {}),
      ...(general && general.size > 0 ? { general } : {}),
      ...(clauseHeads.length ? { clauseHeads } : {}),
      ...(companions?.length ? { companions } : {}),
    };
  }

  /** One text's lexical and cosine scores over the catalogue, and their z-score fusion. */
  private async scoreText(text: string, embed: boolean, signal: AbortSignal | undefined, timings: Record<string, number> | undefined): Promise<TextScores> {
    const n = this.tools.length;
    let t0 = performance.now();
    // The lexical ranker also reads what the files the prompt names are (fileTypes.ts); the model reads the
    // prompt as written, as the unnamed-needs model that takes its vector was trained.
    const types = this.options.fileTypes > 0 ? fileTypeWords(text) : '';
    const lexicalText = types ? `${text} ${types}` : text;
    let lexical: Float64Array | undefined;
    if (this.lexical) {
      const raw = this.lexical.score(lexicalText);
      lexical = Float64Array.from({ length: n }, (_, i) => raw[i] ?? 0);
    }
    if (timings) timings['lexical'] = performance.now() - t0;
    let cosine: Float64Array | undefined;
    let hasCosine: Uint8Array | undefined;
    let vector: Float32Array | undefined;
    if (embed && this.deps.index) {
      t0 = performance.now();
      const q = await this.deps.index.embedQuery(text, signal);
      vector = q;
      if (timings) timings['embedPrompt'] = performance.now() - t0;
      t0 = performance.now();
      cosine = new Float64Array(n);
      hasCosine = new Uint8Array(n);
      const { matrix, present, dimension } = this.alignedVectors(this.deps.index);
      for (let i = 0; i < n; i++) {
        if (!present[i]) continue;
        cosine[i] = dot(matrix, i * dimension, q, dimension);
        hasCosine[i] = 1;
      }
      if (timings) timings['cosine'] = performance.now() - t0;
    }
    if (!cosine && !lexical) return {};
    t0 = performance.now();
    const fused = new Float64Array(n);
    const zl = lexical ? zScores(lexical) : undefined;
    const zc = cosine && hasCosine ? zScores(cosine, hasCosine) : undefined;
    const w = zc && zl ? this.options.lexicalWeight : zl ? 1 : 0;
    for (let i = 0; i < n; i++) fused[i] = w * (zl?.[i] ?? 0) + (1 - w) * (zc?.[i] ?? 0);
    if (this.options.crossScript > 0 && zl && zc) {
      // Words cannot meet across scripts: only the tool's (usually English) name can match lexically, so a
      // missing lexical match says nothing against it. Its lexical half counts at least what the model says.
      const promptUnspaced = isUnspaced(text);
      for (let i = 0; i < n; i++) {
        if (this.unspaced[i] !== promptUnspaced && hasCosine![i]) fused[i] = w * Math.max(zl[i]!, zc[i]!) + (1 - w) * zc[i]!;
      }
    }
    if (timings) timings['fuse'] = performance.now() - t0;
    return { fused, ...(lexical ? { lexical } : {}), ...(cosine && hasCosine ? { cosine, hasCosine } : {}), ...(vector ? { vector } : {}) };
  }
}

interface ScoreResult {
  readonly scores?: Scores;
  readonly usedEmbedding: boolean;
  readonly note?: string;
  /** Tools lifted as general-purpose tools the prompt needs, by catalogue position. */
  readonly general?: ReadonlyMap<number, GeneralLift>;
  /** The best tools of each clause of a multi-request prompt. */
  readonly clauseHeads?: ReadonlyArray<{ readonly index: number; readonly clause: string }>;
  /** Listers that find what the best tools act on (companions.ts), already lifted in `fused`. */
  readonly companions?: readonly Companion[];
}

/** A companion lister is lifted to this far (z-score units) below the tool it serves, so it ranks beside it. */
export const COMPANION_BELOW = 0.1;
/**
 * …but no higher than just below the best this many tools. Right beside the tool it served, a companion
 * pushed Seal-Tools' second needed tools out of the top five (recall@5 90.7 → 87.3); below the best five
 * it costs none there, and the team splits send the same tools (dev recall@5 52.2 → 51.4, test 48.8 → 49.1).
 */
export const COMPANION_RANK = 5;

/** Why a general-purpose tool was lifted: the kind, the cue, the need's probability; `best` for its kind's top tool. */
interface GeneralLift {
  readonly kind: GeneralKind;
  readonly cue: string;
  readonly probability: number;
  readonly lift: number;
  best: boolean;
}

/**
 * Lifts the general-purpose tools of every kind the prompt needs (probability ≥ generalNeedMin) by
 * generalBoost × need × the tool's own probability of being that kind, and marks each kind's best tool
 * after the lift. Runs after the server boost: a write tool's server rarely matches the task's words.
 */
function liftGeneralTools(needs: GeneralNeeds, prompt: string, vector: { modelId: string; values: Float32Array } | undefined, fused: Float64Array, kindTools: ReadonlyMap<GeneralKind, ReadonlyArray<{ index: number; probability: number }>>, options: SelectionOptions): Map<number, GeneralLift> {
  const out = new Map<number, GeneralLift>();
  // A lifted tool joins the ranking just below its best few: the tools the prompt names keep their places.
  const top = topIndices(fused, GENERAL_RANK);
  const ceiling = fused[top[top.length - 1]!]! - GENERAL_BELOW_BEST;
  for (const need of needs.promptNeeds(prompt, vector)) {
    if (need.probability < options.generalNeedMin) break;
    const tools = kindTools.get(need.kind);
    if (!tools) continue;
    // Only the kind's best few (by relevance once lifted): five fetch tools of one server need not all rise.
    const lifted = tools
      .map(({ index, probability }) => ({ index, lift: options.generalBoost * need.probability * probability }))
      .sort((a, b) => fused[b.index]! + b.lift - (fused[a.index]! + a.lift))
      .slice(0, GENERAL_TOOLS_PER_KIND);
    lifted.forEach(({ index, lift }, rank) => {
      fused[index] = Math.max(fused[index]!, Math.min(fused[index]! + lift, ceiling - rank * GENERAL_BELOW_BEST));
      const previous = out.get(index);
      if (!previous || previous.lift < lift) out.set(index, { kind: need.kind, cue: need.cue, probability: need.probability, lift, best: rank === 0 || (previous?.best ?? false) });
    });
  }
  return out;
}

/**
 * A lifted tool stops this far (z-score units) below the GENERAL_RANK-th best score, and each runner-up
 * this far below that. Lifting to the very top cost MetaTool multi 2 points of recall@5 (its second tool
 * pushed down); below the best four it cost none, and recall@25 is the same.
 */
export const GENERAL_BELOW_BEST = 0.1;
export const GENERAL_RANK = 4;

/** How many tools of one general-purpose kind are lifted for a need: the best and a runner-up. */
export const GENERAL_TOOLS_PER_KIND = 2;

interface TextScores {
  readonly fused?: Float64Array;
  readonly lexical?: Float64Array;
  readonly cosine?: Float64Array;
  readonly hasCosine?: Uint8Array;
  readonly vector?: Float32Array;
}

/** Dot product of `q` with the row at `base` of a packed matrix; unrolled by four, which V8 runs about twice as fast. */
function dot(matrix: Float32Array, base: number, q: Float32Array, dimension: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 3 < dimension; d += 4) {
    s0 += matrix[base + d]! * q[d]!;
    s1 += matrix[base + d + 1]! * q[d + 1]!;
    s2 += matrix[base + d + 2]! * q[d + 2]!;
    s3 += matrix[base + d + 3]! * q[d + 3]!;
  }
  for (; d < dimension; d++) s0 += matrix[base + d]! * q[d]!;
  return s0 + s1 + s2 + s3;
}

/** (x − mean) / sd over the entries present (all when `present` is absent); absent entries get 0. */
export function zScores(values: Float64Array, present?: Uint8Array): Float64Array {
  let n = 0;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    if (present && !present[i]) continue;
    sum += values[i]!;
    n++;
  }
  const mean = n ? sum / n : 0;
  let sq = 0;
  for (let i = 0; i < values.length; i++) if (!present || present[i]) sq += (values[i]! - mean) ** 2;
  const sd = n > 1 ? Math.sqrt(sq / n) : 0;
  const out = new Float64Array(values.length);
  if (sd === 0) return out;
  for (let i = 0; i < values.length; i++) if (!present || present[i]) out[i] = (values[i]! - mean) / sd;
  return out;
}

/**
 * The ranking kept in a Selection: the best this many tools, best first. The panel cannot show more, and
 * `eval` needs 50; sorting all of a 10,000-tool catalogue on every prompt cost 2 ms for nothing.
 */
export const RANKING_LIMIT = 1000;

/** The indices of the k best scores, best first (ties by index), without sorting everything. */
export function topIndices(scores: ArrayLike<number>, k: number): number[] {
  const n = scores.length;
  if (k >= n) return rankIndices(scores);
  // The k-th best value, by quickselect on a copy; then only the candidates at or above it are sorted.
  const values = Float64Array.from({ length: n }, (_, i) => scores[i]!);
  const kth = quickselectDescending(values, k - 1);
  const candidates: number[] = [];
  for (let i = 0; i < n; i++) if (scores[i]! >= kth) candidates.push(i);
  candidates.sort((a, b) => scores[b]! - scores[a]! || a - b);
  return candidates.slice(0, k);
}

/** The value that would be at `position` if `values` were sorted best first (values is reordered). */
function quickselectDescending(values: Float64Array, position: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (position <= j) hi = j;
    else if (position >= i) lo = i;
    else return values[position]!;
  }
  return values[position]!;
}

/** Indices sorted by score, best first (ties by index, so the order is deterministic). */
export function rankIndices(scores: ArrayLike<number>): number[] {
  const idx = Array.from({ length: scores.length }, (_, i) => i);
  return idx.sort((a, b) => scores[b]! - scores[a]! || a - b);
}
