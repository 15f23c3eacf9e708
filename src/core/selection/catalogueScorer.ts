import { splitClauses } from './clauses';
import { refersBack, splitSteps, type StepRanking } from './steps';
import { stepOperation, toolOperation, type Operation } from './operations';
import { CompanionIndex, type Companion } from './companions';
import { fileTypeWords } from './fileTypes';
import { kindToolsOf, liftGeneralTools, opensPage, type GeneralLift, type KindTool } from './generalLift';
import { pageRole, PAGE_ROLES, type PageRole } from './pageRoles';
import type { GeneralKind, GeneralNeeds } from './generalNeeds';
import { isUnspaced } from './lexicalTerms';
import type { ToolReading } from './toolReadings';
import { PackedVectors } from './cosineScan';
import { topIndices, zScores } from './rankMath';
import type { SelectableTool } from './selectionTypes';
import type { SelectionOptions } from './selectionOptions';
import { boostByServerIds, serverIdsOf } from './serverAware';
import { ServerNames } from './serverNames';
import type { ToolIndex } from './toolIndex';
import { describeError } from '../errors/describeError';

/**
 * The scoring stage: for a prompt, one fused relevance score per tool of one catalogue. Lexical (BM25F)
 * and embedding cosine are fused by z-score, then, in order: clause matching, step rankings, usage hints,
 * the server boost, unnamed needs and companion listers. Built once per catalogue with everything it derives from it.
 */

/** Scores every tool of a catalogue for a query, aligned with the catalogue's order. */
export interface LexicalScorer {
  score(query: string): ArrayLike<number>;
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

/**
 * A server named by a word that is also an ordinary one ("memory", "notion") is lifted only when its best
 * tool scores at least this share of the text's best.
 */
export const NAMED_SERVER_SHARE = 0.5;

/** A step's verb lifts its operation's tools among the servers of the step's best this many tools. */
export const OPERATION_SERVERS = 5;

/** A companion lister is lifted to this far (z-score units) below the tool it serves, so it ranks beside it. */
export const COMPANION_BELOW = 0.1;
/**
 * …but no higher than just below the best this many tools, so it never pushes a prompt's own second
 * tool out of the top few.
 */
export const COMPANION_RANK = 5;

export interface Scores {
  readonly fused: Float64Array;
  readonly cosine?: Float64Array;
  readonly hasCosine?: Uint8Array;
  readonly lexical?: Float64Array;
  /** Usage hints added to `fused` (0 where none). */
  readonly usage?: Float64Array;
}

export interface ScoreResult {
  readonly scores?: Scores;
  readonly usedEmbedding: boolean;
  readonly note?: string;
  /** Tools lifted as general-purpose tools the prompt needs, by catalogue position. */
  readonly general?: ReadonlyMap<number, GeneralLift>;
  /** The best tools of each clause of a multi-request prompt. */
  readonly clauseHeads?: ReadonlyArray<{ readonly index: number; readonly clause: string }>;
  /** Each step of a task of several steps, with its own ranking (steps.ts). */
  readonly steps?: readonly StepRanking[];
  /** Listers that find what the best tools act on (companions.ts), already lifted in `fused`. */
  readonly companions?: readonly Companion[];
  /** The servers a one-step prompt names, whose tools were lifted (by server name). */
  readonly namedServers?: ReadonlySet<string>;
}

interface TextScores {
  readonly fused?: Float64Array;
  readonly lexical?: Float64Array;
  readonly cosine?: Float64Array;
  readonly hasCosine?: Uint8Array;
  readonly vector?: Float32Array;
}

export interface ScorerDeps {
  readonly index?: ToolIndex;
  readonly usage?: UsageHints;
  readonly needs?: GeneralNeeds;
  /** The spelling dictionary: a server name found there is also an ordinary word (serverNames.ts). */
  readonly spelling?: { readonly dictionary: ReadonlyMap<string, number> };
}

export class CatalogueScorer {
  private readonly n: number;
  private readonly byName: ReadonlyMap<string, number>;
  private readonly serverIds: Int32Array;
  private readonly serverCount: number;
  /** Which servers a text names, by server number. */
  private readonly serverNames: ServerNames;
  /** Each server's id, by its number. */
  private readonly serverList: readonly string[];
  /** Whether each tool is described mostly in Chinese, Japanese or Korean, in catalogue order. */
  private readonly unspaced: readonly boolean[];
  /** Each general-purpose kind's tools in the catalogue (tool probability ≥ generalToolMin). */
  private readonly kindTools: ReadonlyMap<GeneralKind, readonly KindTool[]>;
  readonly companions: CompanionIndex;
  /** The tools whose names say each operation (operations.ts), by catalogue position. */
  private readonly byOperation: ReadonlyMap<Operation, readonly number[]>;
  /** Browser tools that act on an open page (click, fill, screenshot), and each server's page openers. */
  private readonly pageActions: ReadonlySet<number>;
  private readonly openersByServer: ReadonlyMap<number, readonly number[]>;
  /** Each such server's tools by the page role their names say (pageRoles.ts). */
  private readonly rolesByServer: ReadonlyMap<number, ReadonlyMap<PageRole, readonly number[]>>;
  /** The vectors as of the index's `version`; `present` is shared, read-only, by the scores made from them. */
  private aligned: { vectors: PackedVectors; present: Uint8Array; version: number } | undefined;

  /** Each tool's embedding text, in catalogue order (the index's keys). */
  private readonly texts: readonly string[];

  /** @param readings each tool's readings (toolReadings.ts), in catalogue order */
  constructor(
    tools: readonly SelectableTool[],
    readings: readonly ToolReading[],
    private readonly lexical: LexicalScorer | undefined,
    private readonly options: SelectionOptions,
    private readonly deps: ScorerDeps,
  ) {
    this.n = tools.length;
    this.texts = readings.map((r) => r.embeddingText);
    this.byName = new Map(tools.map((t, i) => [t.name, i]));
    const servers = serverIdsOf(tools.map((t) => t.server));
    ({ ids: this.serverIds, count: this.serverCount } = servers);
    const dictionary = deps.spelling?.dictionary;
    this.serverNames = new ServerNames(servers.names, dictionary ? (word) => dictionary.has(word) : undefined);
    this.serverList = servers.names;
    this.unspaced = readings.map((r) => r.unspaced);
    this.kindTools = kindToolsOf(tools, readings, deps.needs, options.generalToolMin);
    this.companions = new CompanionIndex(tools);
    const byOperation = new Map<Operation, number[]>();
    tools.forEach((t, i) => {
      const op = toolOperation(t.originalName ?? t.name);
      if (!op) return;
      const list = byOperation.get(op) ?? [];
      byOperation.set(op, list);
      list.push(i);
    });
    this.byOperation = byOperation;
    const browser = this.kindTools.get('browser') ?? [];
    // An opener need not read as a browser tool itself: a research server's `visit_page(url)` opens the page
    // its `take_screenshot` shoots.
    const openersByServer = new Map<number, number[]>();
    const browserServers = new Set(browser.map((t) => this.serverIds[t.index]!));
    tools.forEach((tool, i) => {
      const server = this.serverIds[i]!;
      if (!browserServers.has(server) || !opensPage(tool)) return;
      const list = openersByServer.get(server) ?? [];
      openersByServer.set(server, list);
      list.push(i);
    });
    this.openersByServer = openersByServer;
    // Only tools the needs model reads as browser tools act on a page or work it: a converter's `pdf_to_text`
    // reads no page.
    const pageActions = new Set<number>();
    const rolesByServer = new Map<number, Map<PageRole, number[]>>();
    browser.forEach(({ index: i, opensPage: opens }) => {
      const server = this.serverIds[i]!;
      if (!openersByServer.has(server) || opens) return;
      pageActions.add(i);
      const role = pageRole(tools[i]!.originalName ?? tools[i]!.name);
      if (!role) return;
      const roles = rolesByServer.get(server) ?? new Map<PageRole, number[]>();
      rolesByServer.set(server, roles);
      const list = roles.get(role) ?? [];
      roles.set(role, list);
      list.push(i);
    });
    this.pageActions = pageActions;
    this.rolesByServer = rolesByServer;
  }

  /**
   * Lexical and embedding scores, fused by z-score. Falls back to lexical alone when the embedder cannot
   * help. Then, in order: clause matching (a multi-request prompt's clauses scored on their own), each
   * step's own ranking (steps.ts), usage hints, the server boost, unnamed needs and companion listers.
   */
  async score(prompt: string, signal: AbortSignal | undefined, timings: Record<string, number>, issues: string[]): Promise<ScoreResult> {
    const n = this.n;
    if (n === 0) return { usedEmbedding: false, note: 'the catalogue is empty' };
    const index = this.deps.index;
    let { embed, note } = this.embeddingState();
    let full: TextScores;
    try {
      full = await this.scoreText(prompt, embed, signal, timings);
    } catch (error) {
      note = `embedding the prompt failed (${describeError(error)}); using keywords only`;
      issues.push(note);
      embed = false;
      full = await this.scoreText(prompt, false, signal, timings);
    }
    const { lexical, cosine, hasCosine, vector } = full;
    if (!full.fused) return { usedEmbedding: false, ...(note ? { note } : {}) };
    const fused = full.fused;
    // Clauses and steps are often the same texts: each is scored once.
    const parts = new Map<string, Promise<TextScores>>();
    const scorePart = (text: string): Promise<TextScores> => {
      let part = parts.get(text);
      if (!part) parts.set(text, (part = this.scoreText(text, embed, signal, undefined).catch((): TextScores => ({}))));
      return part;
    };
    const clauseHeads = await this.blendClauses(prompt, scorePart, fused, timings);
    const steps = await this.rankSteps(prompt, scorePart, timings);
    const usage = this.addUsage(prompt, vector, fused, timings);
    let t0: number;
    if (this.options.serverBoost > 0) {
      t0 = performance.now();
      boostByServerIds(fused, this.serverIds, this.serverCount, this.options.serverBoost);
      timings['serverBoost'] = performance.now() - t0;
    }
    // A one-step prompt that names an app ranks that app's tools first, as a step that names it does.
    const named = this.options.promptServerLift > 0 && steps.length === 0 ? this.liftNamed(fused, this.serverNames.named(prompt), this.options.promptServerLift) : undefined;
    let general: Map<number, GeneralLift> | undefined;
    if (this.deps.needs && this.options.generalBoost > 0 && this.kindTools.size > 0) {
      t0 = performance.now();
      const ofModel = (values: Float32Array | undefined) => (values && index ? { modelId: index.modelId, values } : undefined);
      // Each step is read for needs too, with the vector it was scored with (scorePart keeps it).
      const stepTexts = this.options.stepNeedMin > 0 ? await Promise.all(steps.map(async ({ step }) => ({ text: step, vector: ofModel((await scorePart(step)).vector) }))) : [];
      general = liftGeneralTools(this.deps.needs, prompt, ofModel(vector), fused, this.kindTools, this.options, stepTexts);
      timings['general'] = performance.now() - t0;
    }
    const companions = this.liftCompanions(prompt, fused, timings);
    return {
      scores: { fused, ...(cosine && hasCosine ? { cosine, hasCosine } : {}), ...(lexical ? { lexical } : {}), ...(usage ? { usage } : {}) },
      usedEmbedding: cosine !== undefined,
      ...(note ? { note } : {}),
      ...(general && general.size > 0 ? { general } : {}),
      ...(clauseHeads.length ? { clauseHeads } : {}),
      ...(steps.length ? { steps } : {}),
      ...(companions?.length ? { companions } : {}),
      ...(named?.size ? { namedServers: new Set([...named].map((server) => this.serverList[server]!)) } : {}),
    };
  }

  /** Whether the prompt can be embedded now, and if not (or only partly), why. */
  private embeddingState(): { embed: boolean; note?: string } {
    const index = this.deps.index;
    if (!index) return { embed: false, note: 'no embedder is configured' };
    if (index.error) return { embed: false, note: `the embedder failed (${index.error}); using keywords only` };
    const { ready, total } = index.readiness();
    if (ready === 0) return { embed: false, note: 'the embedding index is still being built; using keywords only' };
    return ready < total ? { embed: true, note: `${ready} of ${total} tools embedded so far; the rest are ranked on keywords` } : { embed: true };
  }

  /** A multi-request prompt: each clause scored alone, its best blended into `fused`; returns each clause's best tools. */
  private async blendClauses(prompt: string, scorePart: (text: string) => Promise<TextScores>, fused: Float64Array, timings: Record<string, number>): Promise<Array<{ index: number; clause: string }>> {
    const clauseHeads: Array<{ index: number; clause: string }> = [];
    if (this.options.clauseWeight <= 0 && this.options.clauseHead <= 0) return clauseHeads;
    const t0 = performance.now();
    const clauses = splitClauses(prompt);
    if (clauses.length > 1) {
      const n = this.n;
      const best = new Float64Array(n).fill(-Infinity);
      for (const clause of clauses) {
        const part = await scorePart(clause);
        if (!part.fused) continue;
        for (let i = 0; i < n; i++) if (part.fused[i]! > best[i]!) best[i] = part.fused[i]!;
        if (this.options.clauseHead > 0) for (const index of topIndices(part.fused, this.options.clauseHead)) clauseHeads.push({ index, clause });
      }
      const lambda = this.options.clauseWeight;
      if (lambda > 0) for (let i = 0; i < n; i++) if (Number.isFinite(best[i]!)) fused[i] = (1 - lambda) * fused[i]! + lambda * best[i]!;
    }
    timings['clauses'] = performance.now() - t0;
    return clauseHeads;
  }

  /**
   * A task of several steps: each step's own ranking, its best `cap` tools, and the listers its best tools
   * need (none for a one-step prompt). A step is scored as the prompt is, server boost included.
   */
  private async rankSteps(prompt: string, scorePart: (text: string) => Promise<TextScores>, timings: Record<string, number>): Promise<StepRanking[]> {
    const { stepHead, cap, serverBoost, companionHead, stepServerLift, stepContext, stepOperationLift } = this.options;
    if (stepHead <= 0) return [];
    const t0 = performance.now();
    const out: StepRanking[] = [];
    const steps = splitSteps(prompt);
    let previous: Float64Array | undefined;
    for (const step of steps.length > 1 ? steps : []) {
      const part = await scorePart(step);
      if (!part.fused) continue;
      const scores = part.fused.slice();
      // A step that refers back is read with the step before it, so it stays on the same thing.
      if (previous && stepContext > 0 && refersBack(step)) for (let i = 0; i < scores.length; i++) scores[i] = (1 - stepContext) * scores[i]! + stepContext * previous[i]!;
      previous = part.fused;
      if (serverBoost > 0) boostByServerIds(scores, this.serverIds, this.serverCount, serverBoost);
      if (stepServerLift > 0) this.liftNamed(scores, this.serverNames.named(step), stepServerLift);
      if (stepOperationLift > 0) this.liftOperation(scores, step, stepOperationLift);
      const ranked = topIndices(scores, cap);
      const companions = companionHead > 0 ? this.companions.companionsFor(ranked.slice(0, stepHead), scores, step) : [];
      out.push({ step, ranked, companions: companions.map((c) => c.index) });
    }
    timings['steps'] = performance.now() - t0;
    return out;
  }

  /**
   * Lifts by `lift` the tools that do what the step's leading verb asks (operations.ts), among the servers
   * of the step's best OPERATION_SERVERS tools only: the step's own words found the server, the verb picks
   * the tool within it.
   */
  private liftOperation(scores: Float64Array, step: string, lift: number): void {
    const wanted = stepOperation(step);
    const tools = wanted ? this.byOperation.get(wanted) : undefined;
    if (!tools) return;
    const servers = new Set(topIndices(scores, OPERATION_SERVERS).map((i) => this.serverIds[i]!));
    for (const i of tools) if (servers.has(this.serverIds[i]!)) scores[i] = scores[i]! + lift;
  }

  /**
   * Lifts the tools of the servers a text (a step, or a one-step prompt) names by `lift`, so it stays on
   * the app it asks for; returns the servers lifted. A server named by an ordinary word whose best tool
   * scores under NAMED_SERVER_SHARE of the text's best is left alone: its name is then more likely a plain
   * word of the text ("list everything it imports") than the app it asks for.
   */
  private liftNamed(scores: Float64Array, named: ReadonlySet<number>, lift: number): ReadonlySet<number> {
    if (named.size === 0) return named;
    let top = -Infinity;
    const best = new Map<number, number>();
    for (let i = 0; i < scores.length; i++) {
      const v = scores[i]!;
      if (v > top) top = v;
      const server = this.serverIds[i]!;
      if (named.has(server) && v > (best.get(server) ?? -Infinity)) best.set(server, v);
    }
    const lifted = new Set([...best].filter(([server, v]) => !this.serverNames.isPlainWord(server) || top <= 0 || v >= NAMED_SERVER_SHARE * top).map(([server]) => server));
    for (let i = 0; i < scores.length; i++) if (lifted.has(this.serverIds[i]!)) scores[i] = scores[i]! + lift;
    return lifted;
  }

  /** Adds what similar past prompts needed to `fused`; returns the hints by position, if any. */
  private addUsage(prompt: string, vector: Float32Array | undefined, fused: Float64Array, timings: Record<string, number>): Float64Array | undefined {
    if (!this.deps.usage) return undefined;
    const t0 = performance.now();
    let usage: Float64Array | undefined;
    const hints = this.deps.usage.hintsFor(prompt, vector);
    if (hints.size > 0) {
      usage = new Float64Array(this.n);
      for (const [name, h] of hints) {
        const i = this.byName.get(name);
        if (i === undefined || !(h > 0)) continue;
        usage[i] = Math.min(1, h);
        fused[i] = fused[i]! + USAGE_HINT_WEIGHT * usage[i]!;
      }
    }
    timings['usage'] = performance.now() - t0;
    return usage;
  }

  /**
   * For a browser tool that acts on an open page, its server's best page opener by `fused`, unless `sent`
   * already holds one: a click or a screenshot is no use to an agent that cannot open the site first.
   */
  pageOpenerFor(index: number, fused: ArrayLike<number>, sent: (index: number) => boolean): number | undefined {
    if (!this.pageActions.has(index)) return undefined;
    const openers = this.openersByServer.get(this.serverIds[index]!)!;
    if (openers.some(sent)) return undefined;
    return openers.reduce((best, i) => (fused[i]! > fused[best]! ? i : best));
  }

  /**
   * For the tool a browser need sent, the best tool by `fused` of each page role its server has (start,
   * read, click, type), where `sent` holds none of that role yet: an agent that can only open a site
   * cannot search it, log in or read the answer.
   */
  pageHandsFor(index: number, fused: ArrayLike<number>, sent: (index: number) => boolean): Array<{ index: number; role: PageRole }> {
    const roles = this.rolesByServer.get(this.serverIds[index]!);
    if (!roles) return [];
    const out: Array<{ index: number; role: PageRole }> = [];
    for (const role of PAGE_ROLES) {
      const list = roles.get(role);
      if (!list || list.some(sent)) continue;
      out.push({ index: list.reduce((best, i) => (fused[i]! > fused[best]! ? i : best)), role });
    }
    return out;
  }

  /** The best tools bring the lister that finds what they act on (companions.ts), lifted beside them in `fused`. */
  private liftCompanions(prompt: string, fused: Float64Array, timings: Record<string, number>): Companion[] | undefined {
    if (this.options.companionHead <= 0) return undefined;
    const t0 = performance.now();
    // One ranking of the head serves both the tools that bring companions and the ceiling they stay under.
    const top = topIndices(fused, Math.max(this.options.companionHead, COMPANION_RANK));
    const companions = this.companions.companionsFor(top.slice(0, this.options.companionHead), fused, prompt);
    // Beside the tool it serves, but never above the best COMPANION_RANK: the tools the prompt names keep their places.
    const ceiling = top.length >= COMPANION_RANK ? fused[top[COMPANION_RANK - 1]!]! - COMPANION_BELOW : Infinity;
    for (const c of companions) fused[c.index] = Math.max(fused[c.index]!, Math.min(ceiling, fused[c.forIndex]! - COMPANION_BELOW));
    timings['companions'] = performance.now() - t0;
    return companions;
  }

  /** One text's lexical and cosine scores over the catalogue, and their z-score fusion. */
  private async scoreText(text: string, embed: boolean, signal: AbortSignal | undefined, timings: Record<string, number> | undefined): Promise<TextScores> {
    const n = this.n;
    let t0 = performance.now();
    // The lexical ranker also reads what the files the prompt names are (fileTypes.ts); the model reads the
    // prompt as written, as the unnamed-needs model that takes its vector was trained.
    const types = this.options.fileTypes > 0 ? fileTypeWords(text) : '';
    const lexical = this.lexical ? ownScores(this.lexical.score(types ? `${text} ${types}` : text), n) : undefined;
    if (timings) timings['lexical'] = performance.now() - t0;
    let cosine: Float64Array | undefined;
    let hasCosine: Uint8Array | undefined;
    let vector: Float32Array | undefined;
    if (embed && this.deps.index) {
      t0 = performance.now();
      vector = await this.deps.index.embedQuery(text, signal);
      if (timings) timings['embedPrompt'] = performance.now() - t0;
      t0 = performance.now();
      ({ cosine, hasCosine } = this.cosines(this.deps.index, vector));
      if (timings) timings['cosine'] = performance.now() - t0;
    }
    if (!cosine && !lexical) return {};
    t0 = performance.now();
    const fused = new Float64Array(n);
    const zc = cosine && hasCosine ? zScores(cosine, hasCosine) : undefined;
    // Beside the model, a lone weak match must not outweigh it (lexicalSdFloor); alone, only order matters.
    const zl = lexical ? zScores(lexical, undefined, zc ? this.options.lexicalSdFloor : 0) : undefined;
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

  /** The cosine of every embedded tool with the prompt's (unit) vector; 0 and not present where a tool has none yet. */
  private cosines(index: ToolIndex, vector: Float32Array): { cosine: Float64Array; hasCosine: Uint8Array } {
    const { vectors, present } = this.alignedVectors(index);
    return { cosine: vectors.scan(vector, present), hasCosine: present };
  }

  /**
   * The catalogue's vectors packed in one matrix, in catalogue order, rebuilt only when the index changed:
   * looking vectors up by text on every prompt cost more than the dot products.
   */
  private alignedVectors(index: ToolIndex): { vectors: PackedVectors; present: Uint8Array } {
    if (this.aligned && this.aligned.version === index.version) return this.aligned;
    const n = this.texts.length;
    let dimension = 0;
    for (let i = 0; i < n && dimension === 0; i++) dimension = index.get(this.texts[i]!)?.length ?? 0;
    const vectors = new PackedVectors(n, dimension);
    const present = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const v = index.get(this.texts[i]!);
      if (!v || v.length !== dimension) continue;
      vectors.matrix.set(v, i * dimension);
      present[i] = 1;
    }
    this.aligned = { vectors, present, version: index.version };
    return this.aligned;
  }
}

/** The lexical scores as a Float64Array of the catalogue's length the caller may keep (0 where absent). */
function ownScores(raw: ArrayLike<number>, n: number): Float64Array {
  // The production ranker returns a fresh array of the right length each time: it is taken as it is.
  if (raw instanceof Float64Array && raw.length === n) return raw;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = raw[i] ?? 0;
  return out;
}
