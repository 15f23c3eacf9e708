import type { LoopTurnHistory } from '../core/guards/loopDetector';
import { readAsText, type DroppedTool, type Selection, type SelectionStage } from '../core/selection/selectionTypes';
import { argumentsText, clamp01, formatMs, formatTokens } from './format';
import type { CallView, TurnView } from './protocol';

/**
 * What the Tool Router panel draws of a turn (its selection, the tools found during it, its calls and
 * guard warnings), computed from the data the extension sends: no DOM and no vscode here, so every
 * number on screen is unit-tested under plain Node. main.ts only turns these into elements (always as
 * text, never HTML). The cost window and the servers have their own files (costView.ts, serverView.ts).
 */

// ---------------------------------------------------------------------------------------------------
// Selection


/** `embedding`, `keyword:<route>`, `sticky:<turn>`, `required`, `core` as people read them. */
export function stageLabel(stage: SelectionStage): string {
  if (stage === 'embedding') return 'embedding';
  if (stage === 'required') return 'pinned';
  if (stage === 'core') return 'core';
  if (stage === 'keyword:lexical') return 'lexical';
  if (stage.startsWith('keyword:')) return `keyword route ${stage.slice('keyword:'.length)}`;
  if (stage.startsWith('sticky:')) return `sticky from turn ${stage.slice('sticky:'.length)}`;
  if (stage.startsWith('general:')) return `unnamed need: ${stage.slice('general:'.length).replace(/_/g, ' ')}`;
  if (stage === 'companion') return 'finds the item first';
  if (stage === 'page') return 'works the page';
  if (stage === 'clause') return 'best for a clause';
  if (stage === 'step') return 'best for a step';
  return stage;
}

const DROPPED_BY_LABELS: Readonly<Record<DroppedTool['by'], string>> = {
  cap: 'over the cap',
  whitelist: 'not allowed',
  destructive: 'destructive',
  quarantine: 'quarantined',
};

/**
 * What a score bar measures. With embeddings the bar is the cosine, on [min(0, lowest), 1]; without them
 * it is the fused z-score, normalised between the lowest and highest in the ranking, with a line at the
 * cutoff the count rule drew (`Selection.threshold`). Cosines have no line: the count follows the fused
 * scores, not a cosine threshold.
 */
export type ScoreScale = { readonly kind: 'cosine'; readonly min: number; readonly max: number } | { readonly kind: 'score'; readonly min: number; readonly max: number } | { readonly kind: 'none' };

export function scoreScale(selection: Selection): ScoreScale {
  const cosines = [...selection.tools, ...selection.ranking].map((t) => t.cosine).filter((c): c is number => c !== undefined && Number.isFinite(c));
  if (cosines.length > 0) return { kind: 'cosine', min: Math.min(0, ...cosines), max: 1 };
  const scores = [...selection.tools.map((t) => t.score), ...selection.ranking.map((r) => r.score), ...selection.dropped.map((d) => d.score)].filter((s): s is number => s !== undefined && Number.isFinite(s));
  if (scores.length === 0) return { kind: 'none' };
  return { kind: 'score', min: Math.min(...scores), max: Math.max(...scores) };
}

/** A value's place on the scale, 0..1 (a flat scale puts everything at the full bar). */
export function barFraction(scale: ScoreScale, value: number | undefined): number | undefined {
  if (scale.kind === 'none' || value === undefined || !Number.isFinite(value)) return undefined;
  const span = scale.max - scale.min;
  return span <= 0 ? 1 : clamp01((value - scale.min) / span);
}

export interface ToolRowView {
  readonly name: string;
  readonly description?: string;
  /** The number the bar shows, formatted; '' when nothing was scored. */
  readonly scoreText: string;
  /** 0..1, or undefined for no bar (pinned, core or keyword-only tools with no score). */
  readonly bar?: number;
  readonly aboveThreshold?: boolean;
  readonly stages: readonly string[];
  readonly reason: string;
  readonly tier: 1 | 2 | 3;
}

export interface DroppedRowView {
  readonly name: string;
  readonly by: string;
  readonly reason: string;
  readonly scoreText: string;
}

export interface SelectionView {
  readonly prompt: string;
  readonly method: string;
  readonly methodNote?: string;
  /** Typos read as other words (`read "hirng" as "hiring"`), when there were any. */
  readonly readAs?: string;
  readonly scaleLabel: string;
  /** 0..1 position of the threshold line, when the bars are cosines. */
  readonly thresholdLine?: number;
  readonly thresholdText: string;
  readonly tools: readonly ToolRowView[];
  readonly dropped: readonly DroppedRowView[];
  readonly tokens: TokenRatioView;
  readonly timings: readonly TimingRowView[];
  readonly issues: readonly string[];
}

export interface TokenRatioView {
  readonly selected: number;
  readonly catalogue: number;
  /** selected / catalogue, 0..1 (0 for an empty catalogue). */
  readonly ratio: number;
  readonly text: string;
}

export function tokenRatio(tokens: Selection['tokens']): TokenRatioView {
  const ratio = tokens.catalogue > 0 ? clamp01(tokens.selected / tokens.catalogue) : 0;
  return {
    selected: tokens.selected,
    catalogue: tokens.catalogue,
    ratio,
    text: `~${formatTokens(tokens.selected)} of ${formatTokens(tokens.catalogue)} tokens of tool definitions (${(ratio * 100).toFixed(0)}%)`,
  };
}

export interface TimingRowView {
  readonly stage: string;
  readonly ms: number;
  readonly text: string;
  /** 0..1 of the slowest stage, for a small bar. */
  readonly fraction: number;
}

export function timingRows(timingsMs: Readonly<Record<string, number>>): TimingRowView[] {
  const entries = Object.entries(timingsMs).filter(([, ms]) => typeof ms === 'number' && Number.isFinite(ms) && ms >= 0);
  const slowest = Math.max(0, ...entries.map(([, ms]) => ms));
  return entries.map(([stage, ms]) => ({ stage, ms, text: formatMs(ms), fraction: slowest > 0 ? ms / slowest : 0 }));
}

function scoreText(scale: ScoreScale, t: { score?: number; cosine?: number }): string {
  if (scale.kind === 'cosine' && t.cosine !== undefined) return `cosine ${t.cosine.toFixed(2)}`;
  if (t.score !== undefined) return `score ${t.score.toFixed(2)}`;
  return '';
}

export function selectionView(selection: Selection, descriptions: Readonly<Record<string, string>> = {}): SelectionView {
  const scale = scoreScale(selection);
  const value = (t: { score?: number; cosine?: number }): number | undefined => (scale.kind === 'cosine' ? t.cosine : t.score);
  const thresholdLine = scale.kind === 'score' ? barFraction(scale, selection.threshold) : undefined;
  return {
    prompt: selection.prompt,
    method: selection.method,
    ...(selection.methodNote ? { methodNote: selection.methodNote } : {}),
    ...(selection.readAs?.length ? { readAs: readAsText(selection) } : {}),
    scaleLabel: scale.kind === 'cosine' ? 'cosine similarity to the prompt' : scale.kind === 'score' ? 'relevance (lexical z-score, normalised)' : 'no scores (keyword routes only)',
    ...(thresholdLine !== undefined ? { thresholdLine } : {}),
    thresholdText: scale.kind === 'score' ? `cutoff ${selection.threshold.toFixed(2)}` : '',
    tools: selection.tools.map((t) => {
      const bar = barFraction(scale, value(t));
      const description = descriptions[t.name];
      return {
        name: t.name,
        ...(description !== undefined ? { description } : {}),
        scoreText: scoreText(scale, t),
        ...(bar !== undefined ? { bar } : {}),
        ...(scale.kind === 'score' && t.score !== undefined ? { aboveThreshold: t.score >= selection.threshold } : {}),
        stages: t.stages.map(stageLabel),
        reason: t.reason,
        tier: t.tier,
      };
    }),
    dropped: selection.dropped.map((d) => ({ name: d.name, by: DROPPED_BY_LABELS[d.by] ?? d.by, reason: d.reason, scoreText: d.score !== undefined ? `score ${d.score.toFixed(2)}` : '' })),
    tokens: tokenRatio(selection.tokens),
    timings: timingRows(selection.timingsMs),
    issues: selection.issues,
  };
}

// ---------------------------------------------------------------------------------------------------
// Tools found during a turn, and calls that asked first


export interface FoundRowView {
  readonly name: string;
  readonly description?: string;
  /** Whether the model then called it (a miss that learning from use records). */
  readonly called: boolean;
  /** "found with “query” at step 2; offered from step 3 in place of x". */
  readonly text: string;
}

/** The tools the model found with the search tool, in the order found. */
export function foundRows(turn: Pick<TurnView, 'found' | 'calls'>, descriptions: Readonly<Record<string, string>> = {}): FoundRowView[] {
  const called = new Set(turn.calls.filter((c) => c.errorType !== 'LOOP_DETECTED').map((c) => c.name));
  return (turn.found ?? []).map((f) => {
    const description = descriptions[f.name];
    const offered = f.offered ? `offered from step ${f.step + 1}${f.replaced ? ` in place of ${f.replaced}` : ''}` : 'not offered: the tool cap was full';
    return { name: f.name, ...(description !== undefined ? { description } : {}), called: called.has(f.name), text: `found with “${f.query}” at step ${f.step}; ${offered}` };
  });
}

const CONFIRMATION_LABELS: Readonly<Record<NonNullable<CallView['confirmation']>, string>> = {
  confirmed: 'run after you confirmed',
  declined: 'not run: you declined',
  unanswered: 'not run: the question went unanswered',
  refused: 'not run: the destructive-tools policy refused it',
};

/** How a call ended, for the calls list: ok, the error type, or what the destructive-tools question decided. */
export function callOutcomeText(call: CallView): string {
  if (call.confirmation && call.confirmation !== 'confirmed') return CONFIRMATION_LABELS[call.confirmation];
  const outcome = call.ok ? 'ok' : (call.errorType ?? 'error');
  return call.confirmation ? `${outcome} (${CONFIRMATION_LABELS[call.confirmation]})` : outcome;
}

/** The history picker's label of a turn. */
export function turnLabel(turn: Pick<TurnView, 'turn' | 'prompt'>): string {
  const prompt = turn.prompt.replace(/\s+/g, ' ').trim();
  return `Turn ${turn.turn}: ${prompt.length > 60 ? `${prompt.slice(0, 59)}…` : prompt}`;
}

// ---------------------------------------------------------------------------------------------------
// Loop and guard warnings


export interface WarningRowView {
  readonly turn: number;
  readonly kind: 'loop' | 'hallucination' | 'cost' | 'steps';
  readonly tool: string;
  readonly arguments: string;
  readonly rule: string;
  /** What the model (or the user) was told. */
  readonly told: string;
  readonly at: number;
}

/**
 * Every guard warning of the turns, newest first. Loop refusals the detector logged for turns the panel
 * has no record of (e.g. from before it opened) are added from its history.
 */
export function warningRows(turns: readonly TurnView[], loops: readonly LoopTurnHistory[] = []): WarningRowView[] {
  const rows: WarningRowView[] = [];
  const known = new Set(turns.map((t) => t.turn));
  for (const t of turns) {
    for (const w of t.warnings) {
      switch (w.kind) {
        case 'loop':
          rows.push({ turn: t.turn, kind: 'loop', tool: w.tool, arguments: argumentsText(w.args), rule: `LOOP_DETECTED: ${w.rule}`, told: w.message, at: t.at });
          break;
        case 'hallucination':
          rows.push({
            turn: t.turn,
            kind: 'hallucination',
            tool: '',
            arguments: '',
            rule: `claimed action "${w.phrase}" without a tool call`,
            told: w.outcome === 'retried' ? 'Asked again with tools required.' : 'The answer was replaced by an honest one.',
            at: t.at,
          });
          break;
        case 'cost':
          rows.push({ turn: t.turn, kind: 'cost', tool: '', arguments: '', rule: 'cost guard', told: w.message, at: t.at });
          break;
        case 'steps':
          rows.push({ turn: t.turn, kind: 'steps', tool: '', arguments: '', rule: 'step limit', told: w.message, at: t.at });
          break;
      }
    }
  }
  for (const h of loops) {
    if (known.has(h.turn)) continue;
    for (const b of h.blocked) rows.push({ turn: h.turn, kind: 'loop', tool: b.tool, arguments: '', rule: `LOOP_DETECTED: ${b.rule} (after ${b.count})`, told: '', at: b.at });
  }
  return rows.sort((a, b) => b.turn - a.turn || b.at - a.at);
}
