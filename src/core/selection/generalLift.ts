import { identifierWords } from '../embedding/textPreprocess';
import { isRecord } from '../util/isRecord';
import { topIndices } from './rankMath';
import { KIND_LABELS, type GeneralKind, type GeneralNeeds, type PromptNeed } from './generalNeeds';
import type { SelectionOptions } from './selectionOptions';
import type { SelectableTool } from './selectionTypes';
import type { ToolReading } from './toolReadings';

/** The unnamed-needs stage of scoring: general-purpose tools the prompt needs rise into the top few. */

/** Why a general-purpose tool was lifted: the kind, the cue, the need's probability, and whether it is always sent. */
export interface GeneralLift {
  readonly kind: GeneralKind;
  readonly cue: string;
  readonly probability: number;
  readonly lift: number;
  /** Sent whatever the count: the kind's best tool, or the best of another server of the kind. */
  best: boolean;
  /** The best of a further server of the kind (generalServers), not the kind's own best. */
  readonly otherServer?: boolean;
}

/** A tool of a general-purpose kind, with its probability of being of that kind. */
export interface KindTool {
  readonly index: number;
  readonly server: string;
  readonly probability: number;
  /** Whether it opens a page at an address (see opensPage). */
  readonly opensPage: boolean;
}

/** The catalogue's general-purpose tools by kind, as the tool model read them (toolReadings.ts). */
export function kindToolsOf(tools: readonly SelectableTool[], readings: readonly ToolReading[], needs: GeneralNeeds | undefined, toolMin: number): Map<GeneralKind, KindTool[]> {
  const out = new Map<GeneralKind, KindTool[]>();
  if (!needs) return out;
  tools.forEach((tool, index) => {
    const p = readings[index]!.kinds;
    let opens: boolean | undefined;
    needs.kinds.forEach((kind, k) => {
      if (p[k]! < toolMin) return;
      const list = out.get(kind) ?? [];
      out.set(kind, list);
      list.push({ index, server: tool.server, probability: p[k]!, opensPage: (opens ??= opensPage(tool)) });
    });
  });
  return out;
}

/** Name words of a tool that opens a page at an address it may take (`navigate_page` with an optional `url`). */
const OPENING_WORDS: ReadonlySet<string> = new Set(['navigate', 'goto', 'visit']);

/**
 * Whether a tool opens a page at an address: it requires a `url` (`navigate(url)`, `new_page(url)`), or it
 * takes one and its name says it navigates (`navigate_page`; not `navigate_back`, which takes none). Read
 * from the catalogue, so it holds for any browser server.
 */
export function opensPage(tool: { readonly name: string; readonly originalName?: string; readonly inputSchema?: unknown }): boolean {
  const schema = isRecord(tool.inputSchema) ? tool.inputSchema : {};
  const isAddress = (p: unknown): boolean => typeof p === 'string' && identifierWords(p).pop() === 'url';
  if (Array.isArray(schema['required']) && schema['required'].some(isAddress)) return true;
  const takesAddress = isRecord(schema['properties']) && Object.keys(schema['properties']).some(isAddress);
  return takesAddress && identifierWords(tool.originalName ?? tool.name).some((w) => OPENING_WORDS.has(w));
}

/**
 * Lifts the general-purpose tools of every kind the prompt, or one of its `steps` read alone, needs
 * (probability ≥ generalNeedMin, stepNeedMin for a step) by generalBoost × need × the tool's own probability
 * of being that kind, and marks each kind's best tool after the lift. Runs after the server boost: a write
 * tool's server rarely matches the task's words.
 */
export function liftGeneralTools(needs: GeneralNeeds, prompt: string, vector: { modelId: string; values: Float32Array } | undefined, fused: Float64Array, kindTools: ReadonlyMap<GeneralKind, readonly KindTool[]>, options: SelectionOptions, steps: readonly StepText[] = []): Map<number, GeneralLift> {
  const out = new Map<number, GeneralLift>();
  // A lifted tool joins the ranking just below its best few: the tools the prompt names keep their places.
  const top = topIndices(fused, GENERAL_RANK);
  const ceiling = fused[top[top.length - 1]!]! - GENERAL_BELOW_BEST;
  for (const need of withStandIns(strongestNeeds(needs, { text: prompt, vector }, steps, options.stepNeedMin), options.generalNeedMin, kindTools)) {
    const tools = kindTools.get(need.kind);
    if (!tools) continue;
    // Only the kind's best few (by relevance once lifted): five fetch tools of one server need not all rise.
    const ranked = tools
      .map(({ index, server, probability, opensPage }) => ({ index, server, opensPage, probability, lift: options.generalBoost * need.probability * probability }))
      .sort((a, b) => fused[b.index]! + b.lift - (fused[a.index]! + a.lift));
    // Browsing starts by opening the page: of a kind where only some tools open one, the best of those leads.
    const opener = ranked.some((t) => !t.opensPage) ? ranked.find((t) => t.opensPage) : undefined;
    // The runner-up must be likelier of the kind than not: "current user" is not a clock because it says current.
    const ordered = (opener ? [opener, ...ranked.filter((t) => t !== opener)] : ranked).filter((t, rank) => rank === 0 || t.probability >= options.generalRunnerUpMin);
    const lifted = ordered.slice(0, GENERAL_TOOLS_PER_KIND);
    // Each further server of the kind sends its best too (its page opener, for browsing): two file servers
    // may reach different folders, and which one the task needs is the user's to say.
    const servers = new Set(lifted.map((t) => t.server));
    const others: typeof lifted = [];
    for (const t of ordered) {
      if (servers.size >= options.generalServers) break;
      if (servers.has(t.server)) continue;
      servers.add(t.server);
      others.push((opener && ordered.find((o) => o.server === t.server && o.opensPage)) || t);
    }
    [...lifted, ...others].forEach(({ index, lift }, rank) => {
      fused[index] = Math.max(fused[index]!, Math.min(fused[index]! + lift, ceiling - rank * GENERAL_BELOW_BEST));
      const previous = out.get(index);
      const other = rank >= lifted.length;
      if (!previous || previous.lift < lift) out.set(index, { kind: need.kind, cue: need.cue, probability: need.probability, lift, best: rank === 0 || other || (previous?.best ?? false), ...(other ? { otherServer: true } : {}) });
    });
  }
  return out;
}

/** A text whose needs are read: the prompt, or one step of a task, with its vector when it has one. */
export interface StepText {
  readonly text: string;
  readonly vector?: { readonly modelId: string; readonly values: Float32Array } | undefined;
}

/**
 * Each kind's need at its strongest, over the prompt and each step read alone (from `stepMin` on), best
 * first. In a task of several steps, "open the page in a real browser" is a few words among many, and the
 * whole task's words drown its cue (browser 0.03 for the task, 0.26 for the step).
 */
function strongestNeeds(needs: GeneralNeeds, prompt: StepText, steps: readonly StepText[], stepMin: number): PromptNeed[] {
  const best = new Map<GeneralKind, PromptNeed>();
  const take = (need: PromptNeed): void => {
    const seen = best.get(need.kind);
    if (!seen || need.probability > seen.probability) best.set(need.kind, need);
  };
  needs.promptNeeds(prompt.text, prompt.vector).forEach(take);
  if (stepMin > 0) for (const step of steps) needs.promptNeeds(step.text, step.vector).filter((n) => n.probability >= stepMin).forEach(take);
  return [...best.values()].sort((a, b) => b.probability - a.probability);
}

/**
 * The kind that serves a need when the catalogue has no tool clearly of the kind needed: a document can be
 * written as a file, and a page can be fetched rather than browsed, or browsed rather than fetched.
 */
export const STAND_INS: Readonly<Partial<Record<GeneralKind, GeneralKind>>> = { convert_document: 'file_write', browser: 'web_fetch', web_fetch: 'browser' };

/** A kind whose best tool the tool model rates below this is served by its stand-in too. */
export const STAND_IN_BELOW = 0.8;

/**
 * The needs over generalNeedMin, best first, each followed by its stand-in (at the same probability, the cue
 * saying what it stands in for) when no tool of the catalogue is clearly of the kind needed.
 */
function withStandIns(needs: readonly PromptNeed[], min: number, kindTools: ReadonlyMap<GeneralKind, ReadonlyArray<{ probability: number }>>): PromptNeed[] {
  const out: PromptNeed[] = [];
  for (const need of needs) {
    if (need.probability < min) break;
    out.push(need);
    const standIn = STAND_INS[need.kind];
    const best = Math.max(0, ...(kindTools.get(need.kind) ?? []).map((t) => t.probability));
    if (standIn && best < STAND_IN_BELOW && kindTools.has(standIn)) out.push({ kind: standIn, cue: `${need.cue}, and no tool here ${KIND_LABELS[need.kind]}`, probability: need.probability });
  }
  return out;
}

/**
 * A lifted tool stops this far (z-score units) below the GENERAL_RANK-th best score, and each runner-up
 * this far below that: lifted to the very top, it would push a prompt's own second tool down.
 */
export const GENERAL_BELOW_BEST = 0.1;
export const GENERAL_RANK = 4;

/** How many tools of one general-purpose kind are lifted for a need: the best and a runner-up. */
export const GENERAL_TOOLS_PER_KIND = 2;
