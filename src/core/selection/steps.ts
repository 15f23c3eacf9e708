/**
 * Splits a task into its steps, so each step can send its own best tools: "pull last month's failed builds,
 * work out which commit broke the most, open an issue for it and ping the owner in chat" is four steps, and
 * each needs its own tool. Clauses (clauses.ts) split only where people separate requests; a step also
 * starts after a comma, a colon, a dash or an "and" when what follows is a new action, an imperative verb
 * ("…, open an issue", "… and ping the owner"). "The weather in Paris and Rome" stays one step: "Rome" is
 * no action. Pure: no I/O.
 */
import { CLAUSE_SPLIT, LEADING_JOINER } from './clauses';

/** A piece with fewer words than this ("and save", "Find") is glued to the step before it, or read with the one after. */
export const MIN_STEP_WORDS = 2;
/** More steps than this are not a task list but a long paste: it is read as one step. */
export const MAX_STEPS = 8;

/** Verbs that start a new action when they follow a comma or an "and": the imperative of a step. */
const ACTION_VERBS = [
  'add', 'accept', 'answer', 'approve', 'archive', 'ask', 'assign', 'attach', 'book', 'build', 'calculate', 'cancel',
  'change', 'check', 'clean', 'close', 'collect', 'comment', 'compare', 'compute', 'confirm', 'convert', 'copy',
  'count', 'create', 'delete', 'download', 'draft', 'drop', 'email', 'e-mail', 'export', 'fetch', 'file', 'fill',
  'find', 'fix', 'flag', 'forward', 'generate', 'get', 'give', 'go through', 'go over', 'grab', 'import', 'inspect',
  'invite', 'label', 'leave', 'list', 'load', 'log', 'look up', 'look for', 'make', 'mark', 'merge', 'message',
  'move', 'note', 'notify', 'open', 'order', 'ping', 'post', 'print', 'publish', 'pull', 'push', 'put', 'query',
  'read', 'record', 'register', 'reject', 'remind', 'remove', 'rename', 'reply', 'report', 'reschedule', 'reserve',
  'resize', 'restart', 'run', 'save', 'say', 'scan', 'schedule', 'search', 'see', 'send', 'set', 'set up', 'share',
  'show', 'sort', 'start', 'stop', 'submit', 'summarise', 'summarize', 'sync', 'tag', 'tell', 'translate', 'turn',
  'update', 'upload', 'verify', 'work out', 'write',
];
const VERBS = ACTION_VERBS.map((v) => v.replace(/\s+/g, '\\s+')).join('|');

/** Where a new step starts inside a clause: a comma, colon, dash or "and" (or both), then an action verb. */
const STEP_SPLIT = new RegExp(`(?:\\s*[,:]\\s+(?:and\\s+)?|\\s+[-–—]\\s+|\\s+(?:and|&)\\s+)(?:then\\s+|also\\s+|please\\s+)?(?=(?:${VERBS})\\b)`, 'i');

/** What may come before a step's verb: a request's polite opening ("please", "could you", "I need you to"). */
const POLITE = String.raw`(?:(?:please|pls|kindly|also|then|and|now|just|can\s+you|could\s+you|would\s+you|will\s+you|i\s+(?:need|want|would\s+like)\s+you\s+to)\s+)*`;
/** A piece is a step of its own when it starts with an action, or asks a question; otherwise it is context. */
const STEP_START = new RegExp(`^${POLITE}(?:(?:${VERBS})\\b|(?:what|which|who|whose|when|where|how|is|are|was|were|do|does|did|has|have)\\b)`, 'i');

/**
 * The steps of `prompt`; a single element (the prompt itself) when it is one step. Context without an
 * action of its own ("GDPR request: delete everything on Lena") is read with the step after it.
 */
export function splitSteps(prompt: string): string[] {
  const steps: string[] = [];
  let context = '';
  for (const piece of pieces(prompt)) {
    const short = wordCount(piece) < MIN_STEP_WORDS;
    if (short && steps.length > 0) steps[steps.length - 1] = `${steps[steps.length - 1]} ${piece}`;
    else if (!short && STEP_START.test(piece)) {
      steps.push(context ? `${context} ${piece}` : piece);
      context = '';
    } else context = context ? `${context} ${piece}` : piece;
  }
  if (steps.length < 2 || steps.length > MAX_STEPS) return [prompt.trim()];
  if (context) steps[steps.length - 1] = `${steps[steps.length - 1]} ${context}`;
  return steps;
}

/** The prompt cut at every clause end and every new action, joining words taken off. */
function pieces(prompt: string): string[] {
  const out: string[] = [];
  for (const clause of prompt.split(CLAUSE_SPLIT)) {
    for (const piece of clause.split(STEP_SPLIT)) {
      const text = piece.trim().replace(LEADING_JOINER, '').trim();
      if (text) out.push(text);
    }
  }
  return out;
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Words by which a step refers to what an earlier step named: "share it", "say hello there", "move those". */
const REFERS_BACK = /\b(?:it|its|them|their|those|these|there|that|this|both|each|him|her|his|they|ones?)\b/i;

/** Whether a step refers back to what the step before it named, and should be read with it. */
export function refersBack(step: string): boolean {
  return REFERS_BACK.test(step);
}

/** One step of a task and its own ranking of the catalogue (positions, best first). */
export interface StepRanking {
  readonly step: string;
  readonly ranked: readonly number[];
  /** Listers that find what the step's best tools act on (companions.ts), sent with them. */
  readonly companions: readonly number[];
}

/**
 * A tool a step sends: its catalogue position, the step, and its rank in the step's ranking (0 the best), or
 * that it is a lister the step's best tools need.
 */
export interface StepPick {
  readonly index: number;
  readonly step: string;
  readonly rank: number;
  readonly companion: boolean;
}

/**
 * The tools the steps of a task send, in turns so that every step gets its share: each step's best `head`
 * tools (best of every step first, then second best…) and the listers they need; then more turns while
 * fewer than `share` × steps tools are sent in all. Never past `cap`. `sent(index)` tells a tool already
 * sent, which is not taken again; `already` is how many are.
 */
export function stepPicks(steps: readonly StepRanking[], sent: (index: number) => boolean, already: number, head: number, share: number, cap: number): StepPick[] {
  const picks: StepPick[] = [];
  const taken = new Set<number>();
  const take = (index: number | undefined, step: string, rank: number, companion: boolean): void => {
    if (index === undefined || already + picks.length >= cap || taken.has(index) || sent(index)) return;
    taken.add(index);
    picks.push({ index, step, rank, companion });
  };
  for (let rank = 0; rank < head; rank++) for (const { step, ranked } of steps) take(ranked[rank], step, rank, false);
  for (const { step, companions } of steps) for (const index of companions) take(index, step, 0, true);
  const target = Math.min(cap, share * steps.length);
  const deepest = Math.max(0, ...steps.map((s) => s.ranked.length));
  for (let rank = head; rank < deepest; rank++) {
    for (const { step, ranked } of steps) {
      if (already + picks.length >= target) return picks;
      take(ranked[rank], step, rank, false);
    }
  }
  return picks;
}
