import picomatch from 'picomatch';
import { KeywordStage } from './keywordStage';
import { estimateToolTokens, type ChosenTool, type DroppedTool, type NearMiss, type SelectableTool, type Selection, type SelectionMethod } from './selectionTypes';
import { StickyWindow } from './stickyTools';
import type { ToolIndex } from './toolIndex';
import { ToolReadings, type ToolReading } from './toolReadings';
import { headThenServer } from './serverAware';
import { catalogueWords, SpellingCorrector, type SpellingFix, type SpellingWords } from './spelling';
import { KIND_LABELS, type GeneralNeeds } from './generalNeeds';
import { offerTool, type Offer } from '../policy/callPolicy';
import { CatalogueScorer, type LexicalScorer, type ScoreResult, type Scores, type UsageHints } from './catalogueScorer';
import type { Companion } from './companions';
import { nearMissesOf, rankingOf } from './nearMisses';
import { stepPicks } from './steps';
import { PAGE_ROLE_LABELS } from './pageRoles';
import { RANKING_LIMIT, topIndices } from './rankMath';
import { DEFAULT_SELECTION_OPTIONS, type SelectionOptions } from './selectionOptions';

export {
  DEFAULT_CAP,
  DEFAULT_CLAUSE_HEAD,
  DEFAULT_CLAUSE_WEIGHT,
  DEFAULT_COMPANION_HEAD,
  DEFAULT_DEPTH,
  DEFAULT_GENERAL_BOOST,
  DEFAULT_GENERAL_NEED_MIN,
  DEFAULT_GENERAL_TOOL_MIN,
  DEFAULT_LEXICAL_WEIGHT,
  DEFAULT_LEXICAL_Z_THRESHOLD,
  DEFAULT_MIN_TOOLS,
  DEFAULT_SELECTION_OPTIONS,
  DEFAULT_SERVER_BOOST,
  DEFAULT_STEP_HEAD,
  DEFAULT_STEP_SHARE,
  type SelectionOptions,
} from './selectionOptions';
export { COMPANION_BELOW, COMPANION_RANK, USAGE_HINT_WEIGHT, type LexicalScorer, type UsageHints } from './catalogueScorer';
export { GENERAL_BELOW_BEST, GENERAL_RANK, GENERAL_TOOLS_PER_KIND } from './generalLift';
export { RANKING_LIMIT, rankIndices, topIndices, zScores } from './rankMath';

/**
 * selectTools: from a prompt and the catalogue, the few tools to send, each with its provenance.
 *
 * Stages: keyword routes → scoring (catalogueScorer.ts: embedding cosine fused with lexical BM25F, then
 * clauses, steps, usage, servers, needs and companions) → the count → merge with core, sticky and pinned tools →
 * filters (whitelist, destructive, quarantine) → cap in tiers → near misses. Each stage is its own small
 * unit; this file only orders them and writes down why.
 */

export interface SelectorDeps {
  /** The embedding index; without it (or while it fails) selection is keyword-only. */
  readonly index?: ToolIndex;
  /**
   * Builds the lexical scorer for a catalogue (BM25F in production); `readings` hold each tool's terms when
   * they were already read.
   */
  readonly createLexical?: (tools: readonly SelectableTool[], readings?: readonly ToolReading[]) => LexicalScorer;
  /** Each tool's readings, kept by content across catalogues (toolReadings.ts); the selector keeps its own without it. */
  readonly readings?: ToolReadings;
  /** Tools flagged as poisoned and quarantined (by the reliability checks), with the reason. */
  readonly quarantine?: () => ReadonlyMap<string, string>;
  /** What past prompts on this machine needed (learning from use); absent or off, nothing is raised. */
  readonly usage?: UsageHints;
  /** The unnamed-needs models (generalNeeds.ts); without them no general-purpose tool is raised. */
  readonly needs?: GeneralNeeds;
  /** Words for spelling tolerance (spelling.ts); without them the prompt is read as typed. */
  readonly spelling?: SpellingWords;
}

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

/**
 * Everything selection derives from one catalogue, built once by setCatalogue and never changed after: a
 * prompt scored across an await keeps the catalogue it started with.
 */
interface Catalogue {
  readonly tools: readonly SelectableTool[];
  readonly names: readonly string[];
  readonly byName: ReadonlyMap<string, number>;
  readonly servers: readonly string[];
  /** Each tool's definition tokens (estimateToolTokens), and their sum. */
  readonly tokens: readonly number[];
  readonly totalTokens: number;
  readonly keyword: KeywordStage;
  readonly scorer: CatalogueScorer;
  readonly speller?: SpellingCorrector;
}

interface Entry {
  readonly stages: string[];
  tier: 1 | 2 | 3;
  readonly reason: string;
  score?: number;
  cosine?: number;
  lexical?: number;
}

/** One prompt's tools as the stages bring them in, and the tools left out with why. */
class Draft {
  readonly chosen = new Map<string, Entry>();
  readonly dropped: DroppedTool[] = [];

  /** A tool already chosen gains the stage (and the better tier) but keeps its first reason. */
  add(name: string, stage: string, tier: 1 | 2 | 3, reason: string): void {
    const existing = this.chosen.get(name);
    if (existing) {
      if (!existing.stages.includes(stage)) existing.stages.push(stage);
      if (tier < existing.tier) existing.tier = tier;
      return;
    }
    this.chosen.set(name, { stages: [stage], tier, reason });
  }
}

type Exclude = (name: string, stages: readonly string[]) => DroppedTool | undefined;

/** One prompt's selection as it runs: what every stage reads and adds to. */
interface Run {
  readonly cat: Catalogue;
  readonly request: SelectionRequest;
  readonly draft: Draft;
  readonly exclude: Exclude;
  readonly issues: string[];
  readonly timings: Record<string, number>;
  readonly time: <T>(stage: string, fn: () => T) => T;
}

/** What the selectors found, for the Selection. */
interface Outcome {
  readonly method: SelectionMethod;
  readonly methodNote?: string;
  readonly scores?: Scores;
  readonly ranked: number[];
  readonly count?: Count;
  readonly readAs?: readonly SpellingFix[];
}

/** What the count rule worked with: the cutoff it reports, and the score a ranked tool needed (the floor). */
interface Count {
  readonly cutoff: number;
  readonly floor: number;
}

export class ToolSelector {
  readonly sticky: StickyWindow;
  private cat: Catalogue;
  private source: readonly SelectableTool[] | undefined;
  private readonly isCore: (name: string) => boolean;
  private readonly isAllowed: (name: string) => boolean;
  private readonly readings: ToolReadings;

  constructor(readonly options: SelectionOptions = DEFAULT_SELECTION_OPTIONS, private readonly deps: SelectorDeps = {}) {
    this.readings = deps.readings ?? new ToolReadings(deps.needs ? { model: deps.needs, digest: '' } : undefined);
    this.sticky = new StickyWindow(options.stickyLookback, options.stickyMax);
    this.isCore = options.coreTools.length ? picomatch([...options.coreTools]) : () => false;
    this.isAllowed = options.allowedTools.length ? picomatch([...options.allowedTools]) : () => true;
    this.cat = this.catalogueOf([], false);
  }

  get catalogue(): readonly SelectableTool[] {
    return this.cat.tools;
  }

  /** Problems in the keyword configuration (bad regexes, unknown groups). */
  get issues(): readonly string[] {
    return this.cat.keyword.issues;
  }

  /** The array last given to setCatalogue: a caller holding the same one need not build it again. */
  get catalogueSource(): readonly SelectableTool[] | undefined {
    return this.source;
  }

  /** Replaces the catalogue. The lexical side is built now; embeddings of new texts run in the background. */
  setCatalogue(tools: readonly SelectableTool[]): void {
    this.cat = this.catalogueOf([...tools], true);
    this.source = tools;
  }

  private catalogueOf(tools: readonly SelectableTool[], live: boolean): Catalogue {
    // No tools, nothing to read: readings kept (or loaded from disk) wait for the next catalogue.
    const readings = tools.length > 0 ? this.readings.read(tools) : [];
    const texts = readings.map((r) => r.embeddingText);
    const servers = tools.map((t) => t.server);
    const words = this.deps.spelling;
    const tokens = tools.map(estimateToolTokens);
    const lexical = live ? this.deps.createLexical?.(tools, readings) : undefined;
    const speller = live && words && this.options.spelling > 0 ? new SpellingCorrector(words.dictionary, catalogueWords([...texts, ...servers]), words.known) : undefined;
    const cat: Catalogue = {
      tools,
      names: tools.map((t) => t.name),
      byName: new Map(tools.map((t, i) => [t.name, i])),
      servers,
      tokens,
      totalTokens: tokens.reduce((sum, t) => sum + t, 0),
      keyword: new KeywordStage(this.options.keyword, [...new Set(servers)]),
      scorer: new CatalogueScorer(tools, readings, lexical, this.options, this.deps),
      ...(speller ? { speller } : {}),
    };
    if (live) this.deps.index?.update(texts);
    return cat;
  }

  async select(request: SelectionRequest): Promise<Selection> {
    const started = performance.now();
    const timings: Record<string, number> = {};
    const cat = this.cat;
    const run: Run = {
      cat,
      request,
      draft: new Draft(),
      exclude: this.excluder(cat),
      issues: [...cat.keyword.issues],
      timings,
      time: (stage, fn) => {
        const t0 = performance.now();
        const out = fn();
        timings[stage] = (timings[stage] ?? 0) + performance.now() - t0;
        return out;
      },
    };
    const { draft, time } = run;

    // Pinned tools bypass the selectors entirely (method required_tools): the user named them.
    const pinned = (request.pinned ?? []).filter((name) => {
      if (cat.byName.has(name)) return true;
      run.issues.push(`Pinned tool "${name}" is not in the catalogue; check its server is running.`);
      return false;
    });
    for (const t of cat.tools) if (this.isCore(t.name)) draft.add(t.name, 'core', 1, 'core tool: always sent');
    let outcome: Outcome;
    if (pinned.length > 0) {
      outcome = { method: 'required_tools', methodNote: `${pinned.length} tool(s) pinned by the prompt file or # references; the selectors did not run`, ranked: [] };
      for (const name of pinned) draft.add(name, 'required', 1, 'pinned by the prompt file or a # reference');
    } else {
      outcome = await this.runSelectors(run);
    }
    const { scores, ranked, count } = outcome;
    this.filter(run, scores);

    const tools = time('cap', () => this.capInTiers(cat, draft));
    const ranking = scores ? rankingOf(cat.names, ranked, scores) : [];
    const nearMisses = scores && count ? time('nearMisses', () => this.nearMisses(cat, ranked, scores, count, tools, draft, run.exclude)) : [];
    let selectedTokens = 0;
    for (const t of tools) selectedTokens += cat.tokens[cat.byName.get(t.name)!]!;
    timings['total'] = performance.now() - started;
    return {
      prompt: request.prompt,
      method: outcome.method,
      ...(outcome.methodNote ? { methodNote: outcome.methodNote } : {}),
      tools,
      dropped: draft.dropped,
      nearMisses,
      ranking,
      threshold: count?.cutoff ?? 0,
      timingsMs: timings,
      tokens: { selected: selectedTokens, catalogue: cat.totalTokens },
      ...(outcome.readAs ? { readAs: outcome.readAs } : {}),
      issues: run.issues,
    };
  }

  /** The selectors, when nothing is pinned: sticky tools, keyword routes, scoring, ranking and the count. */
  private async runSelectors(run: Run): Promise<Outcome> {
    const { cat, request, draft, time } = run;
    for (const s of (request.sticky ?? this.sticky).get(request.turn ?? 0, this.isCore)) {
      if (cat.byName.has(s.name)) draft.add(s.name, `sticky:${s.turn}`, 1, `called ${(request.turn ?? 0) - s.turn} turn(s) ago`);
    }
    const keywordPicks = time('keyword', () => cat.keyword.match(request.prompt, cat.names));

    // Typos are read as the word meant (spelling.ts) for scoring; keyword routes see the prompt as typed.
    const spelled = time('spelling', () => cat.speller?.correct(request.prompt));
    const readAs = spelled?.fixes.length ? spelled.fixes : undefined;
    const scored = await cat.scorer.score(readAs ? spelled!.text : request.prompt, request.signal, run.timings, run.issues);
    const scores = scored.scores;
    let ranked: number[] = [];
    let count: Count | undefined;
    if (scores) {
      const fused = scores.fused;
      ranked = time('rank', () => topIndices(fused, RANKING_LIMIT));
      if (this.options.serverPolicy) {
        const policy = this.options.serverPolicy;
        ranked = time('serverPolicy', () => headThenServer(ranked, fused, cat.servers, { ...policy, window: this.options.cap }));
      }
      count = this.pickScored(cat, ranked, scored, draft, run.exclude);
    }
    for (const [name, stages] of keywordPicks) {
      for (const stage of stages) draft.add(name, stage, 3, `keyword route ${stage.slice('keyword:'.length)} matched the prompt`);
    }
    return {
      method: scored.usedEmbedding ? 'embedding+keyword' : 'keyword-only',
      ...(scored.note ? { methodNote: scored.note } : {}),
      ...(scores ? { scores } : {}),
      ranked,
      ...(count ? { count } : {}),
      ...(readAs ? { readAs } : {}),
    };
  }

  /** Scores every chosen tool for display and for ordering tier 2; then drops what the filters exclude. */
  private filter({ cat, draft, exclude }: Run, scores: Scores | undefined): void {
    if (scores) {
      for (const [name, entry] of draft.chosen) {
        const i = cat.byName.get(name)!;
        entry.score = scores.fused[i];
        if (scores.hasCosine?.[i]) entry.cosine = scores.cosine![i];
        if (scores.lexical) entry.lexical = scores.lexical[i];
      }
    }
    // Filters for what other stages brought in (core, sticky, keyword): whitelist, destructive, quarantine.
    for (const [name, entry] of [...draft.chosen]) {
      const drop = exclude(name, entry.stages);
      if (drop) {
        draft.dropped.push(entry.score !== undefined ? { ...drop, score: entry.score } : drop);
        draft.chosen.delete(name);
      }
    }
  }

  /** Why a tool may not be sent (whitelist, quarantine, destructive without opt-in), if it may not. */
  private excluder(cat: Catalogue): Exclude {
    const quarantine = this.deps.quarantine?.() ?? new Map<string, string>();
    return (name, stages) => {
      if (!this.isAllowed(name)) return { name, stages, by: 'whitelist', reason: 'not in the allowed tools (toolRouter.selection.allowedTools)' };
      if (quarantine.has(name)) return { name, stages, by: 'quarantine', reason: `quarantined: ${quarantine.get(name)}` };
      const offered = this.offer(cat, name);
      if (!offered.offered) return { name, stages, by: 'destructive', reason: offered.reason };
      return undefined;
    };
  }

  private offer(cat: Catalogue, name: string): Offer {
    return offerTool(this.options.callPolicy, cat.tools[cat.byName.get(name)!]!, { canAsk: true });
  }

  /**
   * The count rule: the best minTools always; then every tool within `depth` of the drop from the best
   * score to the cap-th (so a slope sends more and one clear answer sends few); the cap bounds it all.
   * Then the tools sent below the cutoff for a reason of their own: needs, companions, clause heads, steps.
   */
  private pickScored(cat: Catalogue, ranked: readonly number[], scored: ScoreResult, draft: Draft, exclude: Exclude): Count {
    const { minTools, cap, depth } = this.options;
    const fused = scored.scores!.fused;
    const head = ranked.length ? fused[ranked[0]!]! : 0;
    const last = ranked.length ? fused[ranked[Math.min(cap, ranked.length) - 1]!]! : 0;
    const cutoff = head - depth * (head - last);
    const floor = scored.usedEmbedding ? cutoff : Math.max(cutoff, this.options.lexicalZThreshold);
    const stage = scored.usedEmbedding ? 'embedding' : 'keyword:lexical';
    const companionOf = new Map((scored.companions ?? []).map((c) => [c.index, this.companionReason(cat, c)]));
    let picked = 0;
    for (const i of ranked) {
      if (picked >= cap) break;
      const name = cat.names[i]!;
      const z = fused[i]!;
      let reason: string;
      if (picked < minTools) reason = `top ${minTools} by relevance (rank ${picked + 1})`;
      else if (z >= floor) reason = `score ${z.toFixed(2)} ≥ cutoff ${cutoff.toFixed(2)} (best ${head.toFixed(2)})`;
      else break;
      // Filtered tools are left out here, so they do not take the places minTools guarantees.
      const drop = exclude(name, [stage]);
      if (drop) {
        draft.dropped.push({ ...drop, score: z });
        continue;
      }
      picked++;
      const hint = scored.scores!.usage?.[i] ?? 0;
      const general = scored.general?.get(i);
      const companion = companionOf.get(i);
      const why = [
        reason,
        ...(hint > 0 ? [`similar past prompts needed it (memory ${hint.toFixed(2)})`] : []),
        ...(general ? [`${general.cue} → ${name} (${KIND_LABELS[general.kind]})`] : []),
        ...(companion ? [companion] : []),
        ...(scored.namedServers?.has(cat.servers[i]!) ? [`the prompt names ${cat.servers[i]}`] : []),
      ].join('; ');
      draft.add(name, stage, 2, why);
      if (hint > 0) draft.add(name, 'memory', 2, '');
      if (general) draft.add(name, `general:${general.kind}`, 2, '');
      if (companion) draft.add(name, 'companion', 2, '');
    }
    // One already chosen keeps its entry (`mark` also records this stage on it); one the filters exclude is listed as dropped.
    const sendBelowCutoff = (index: number, stage: string, why: string, mark: boolean): void => {
      const name = cat.names[index]!;
      if (draft.chosen.has(name)) {
        if (mark) draft.add(name, stage, 2, why);
        return;
      }
      const drop = exclude(name, [stage]);
      if (drop) draft.dropped.push({ ...drop, score: fused[index]! });
      else draft.add(name, stage, 2, why);
    };
    // Each need the prompt calls for sends its best tool.
    for (const [i, general] of scored.general ?? []) {
      if (general.best) sendBelowCutoff(i, `general:${general.kind}`, `${general.cue} → ${cat.names[i]!} (${KIND_LABELS[general.kind]}${general.otherServer ? `, the best of ${cat.servers[i]!}` : ''}, need ${general.probability.toFixed(2)})`, true);
    }
    // A browser need also sends what works the page: start the browser, read, click and type (pageRoles.ts).
    if (this.options.pageHands > 0) {
      for (const [i, general] of scored.general ?? []) {
        if (!general.best || general.otherServer || general.kind !== 'browser') continue;
        for (const { index, role } of cat.scorer.pageHandsFor(i, fused, (j) => draft.chosen.has(cat.names[j]!))) {
          sendBelowCutoff(index, 'page', `${PAGE_ROLE_LABELS[role]} for the browser need (${cat.names[i]!})`, false);
        }
      }
    }
    // The best tools bring the lister that finds the item they act on, when the prompt gives no id.
    for (const [index, why] of companionOf) sendBelowCutoff(index, 'companion', why, false);
    // Each clause of a multi-request prompt sends its own best tools, so no step is left without one.
    for (const { index, clause } of scored.clauseHeads ?? []) {
      sendBelowCutoff(index, 'clause', `best for the clause "${shorten(clause)}"`, false);
    }
    // Each step of a task sends its own best tools, and the count grows with the steps (steps.ts).
    const { stepHead, stepShare } = this.options;
    for (const { index, step, rank, companion } of stepPicks(scored.steps ?? [], (i) => draft.chosen.has(cat.names[i]!), draft.chosen.size, stepHead, stepShare, cap)) {
      sendBelowCutoff(index, 'step', companion ? `finds what the best tools of the step "${shorten(step)}" act on` : `rank ${rank + 1} for the step "${shorten(step)}"`, false);
    }
    // A browser tool that acts on a page brings its server's page opener, if none was sent.
    if (this.options.pageOpeners > 0) {
      for (const name of [...draft.chosen.keys()]) {
        const opener = cat.scorer.pageOpenerFor(cat.byName.get(name)!, fused, (i) => draft.chosen.has(cat.names[i]!));
        if (opener !== undefined) sendBelowCutoff(opener, 'companion', `opens the page that ${name} acts on`, false);
      }
    }
    return { cutoff, floor };
  }

  /** Cap in tiers: 1 core, pinned and sticky (in that order); 2 scored, by score; 3 keyword-only, by name. */
  private capInTiers(cat: Catalogue, draft: Draft): ChosenTool[] {
    const ordered = [...draft.chosen.entries()].sort(([an, a], [bn, b]) => {
      if (a.tier !== b.tier) return a.tier - b.tier;
      if (a.tier === 2) return (b.score ?? 0) - (a.score ?? 0);
      if (a.tier === 3) return an < bn ? -1 : an > bn ? 1 : 0;
      return 0;
    });
    const cap = this.options.cap;
    for (const [name, entry] of ordered.slice(cap)) {
      draft.dropped.push({ name, stages: entry.stages, by: 'cap', reason: `over the cap of ${cap} (tier ${entry.tier})`, ...(entry.score !== undefined ? { score: entry.score } : {}) });
    }
    return ordered.slice(0, cap).map(([name, e]) => {
      const offered = this.offer(cat, name);
      const asks = offered.offered && offered.asks;
      return {
        name,
        stages: e.stages,
        tier: e.tier,
        reason: asks ? `${e.reason}; asks before it runs` : e.reason,
        ...(asks ? { confirm: true } : {}),
        ...(e.score !== undefined ? { score: e.score } : {}),
        ...(e.cosine !== undefined ? { cosine: e.cosine } : {}),
        ...(e.lexical !== undefined ? { lexical: e.lexical } : {}),
      };
    });
  }

  private nearMisses(cat: Catalogue, ranked: readonly number[], scores: Scores, count: Count, tools: readonly ChosenTool[], draft: Draft, exclude: Exclude): NearMiss[] {
    return nearMissesOf({
      ranked,
      fused: scores.fused,
      ...(scores.cosine && scores.hasCosine ? { cosine: scores.cosine, hasCosine: scores.hasCosine } : {}),
      ...(scores.lexical ? { lexical: scores.lexical } : {}),
      names: cat.names,
      sent: new Set(tools.map((t) => t.name)),
      dropped: draft.dropped,
      policy: (name) => exclude(name, []),
      cutoff: count.floor,
      minTools: this.options.minTools,
      cap: this.options.cap,
    });
  }

  private companionReason(cat: Catalogue, { forIndex, resource }: Companion): string {
    return `finds the ${resource} that ${cat.names[forIndex]!} acts on (the prompt gives no ${resource} id)`;
  }
}

/** A step or clause short enough for a reason line. */
function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
