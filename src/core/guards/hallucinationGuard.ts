/**
 * The hallucination guard: an answer that claims an action ("I've sent the email", "The event has been
 * created") in a turn where no tool was called is retried once with the tool mode set to required; if
 * the retry calls no tool either, the answer is replaced by an honest one.
 *
 * {@link claimsAction} finds claims of having done something, and leaves alone plans, offers, questions,
 * conditionals, negations, instructions and text that only presents content ("Here is the function I
 * wrote:"). It reads sentence by sentence, with code blocks and quotes removed.
 */

/** The retry caps the temperature at 0.3: less creative, more likely to follow the required tool mode. */
export const RETRY_MAX_TEMPERATURE = 0.3;
/** One retry with the tool mode set to required, then the honest answer: a second retry rarely changes a model's mind and doubles the wait. */
export const MAX_HALLUCINATION_RETRIES = 1;
/** The fallback sentence that opens the honest answer. */
export const HONEST_ANSWER_OPENING = "I wasn't able to complete this action.";
/** The claimed sentence quoted in the honest answer is cut to this many characters. */
const MAX_QUOTED_CLAIM = 160;

export interface ActionClaim {
  readonly claimed: boolean;
  /** The words that make the claim, e.g. `I've sent`. */
  readonly phrase?: string;
  /** The clause they stand in, e.g. `I've sent the email to Bob`, cut to a readable length. */
  readonly sentence?: string;
}

// ---------------------------------------------------------------------------------------------------
// Vocabulary

/** Actions with an effect outside the answer: claiming one without a tool call is always a hallucination. */
const ACTION_PARTICIPLES = [
  'sent', 'emailed', 'messaged', 'texted', 'forwarded', 'replied', 'posted', 'published', 'shared', 'uploaded', 'downloaded',
  'deleted', 'removed', 'archived', 'cancell?ed', 'scheduled', 'rescheduled', 'booked', 'reserved', 'invited', 'assigned',
  'submitted', 'filed', 'opened', 'closed', 'merged', 'committed', 'pushed', 'deployed', 'installed', 'uninstalled', 'moved',
  'renamed', 'copied', 'saved', 'stored', 'backed up', 'restarted', 'started', 'stopped', 'launched', 'triggered', 'executed',
  'enabled', 'disabled', 'configured', 'set up', 'placed', 'subscribed', 'unsubscribed', 'notified', 'paid', 'ordered', 'purchased',
  'transferred', 'approved', 'rejected', 'marked', 'label?led', 'tagged', 'starred', 'synced', 'reminded',
  // after "set up", so the longer phrase is the one reported
  'set',
];
/**
 * Actions that may also describe the answer itself ("I've written a function below"): a claim only when
 * the sentence does not present content (see {@link PRESENTING}).
 */
const CONTENT_PARTICIPLES = [
  'created', 'updated', 'modified', 'changed', 'edited', 'added', 'written', 'drafted', 'generated', 'made', 'prepared', 'fixed',
  'refactored', 'rewritten', 'inserted', 'appended', 'replaced',
];
/** Simple-past forms that differ from the participle. */
const ACTION_PAST_ONLY = ['ran'];
const CONTENT_PAST_ONLY = ['wrote', 'rewrote'];
/** Participles used only after have/has ("I've done it", "I've run the tests"). */
const ACTION_PERFECT_ONLY = ['done', 'run', 'completed', 'finished'];
/** Claims of having looked something up ("I searched for", "I looked up", "I checked your"). */
const LOOKUP_CLAIMS = String.raw`searched\s+(?:for|through|your|the)|looked\s+up|looked\s+(?:through|into|at)\s+your|checked\s+your|fetched|retrieved|queried`;

/** Things tools act on: a passive claim needs one of these (or a pronoun) as its subject. */
const ACTION_OBJECTS = String.raw`(?:e-?mails?|mails?|messages?|repl(?:y|ies)|events?|meetings?|invites?|invitations?|appointments?|reminders?|tasks?|todos?|tickets?|issues?|pull\s+requests?|prs?|comments?|notes?|files?|folders?|director(?:y|ies)|documents?|docs?|pages?|branch(?:es)?|commits?|records?|entr(?:y|ies)|rows?|items?|posts?|tweets?|channels?|repos?|repositor(?:y|ies)|projects?|calendars?|contacts?|orders?|payments?|bookings?|reservations?|drafts?|reports?|alarms?|notifications?|labels?|tags?|cards?|lists?|spreadsheets?|sheets?|tables?|databases?|containers?|deployments?|jobs?|workflows?|changes?|backups?|releases?|accounts?|users?|invoices?|forms?|settings?|configs?)`;

const alt = (words: readonly string[]): string => words.map((w) => w.replace(/ /g, String.raw`\s+`)).join('|');
const ADVERBS = String.raw`(?:\s+(?:just|now|already|successfully|also|finally))*`;

interface ClaimPattern {
  readonly regex: RegExp;
  /** The verb may describe the answer's own content; see {@link PRESENTING}. */
  readonly contentVerbGroup?: number;
  /** Passive claims need a subject that tools act on. */
  readonly needsActionSubject?: boolean;
  /** A verb after the phrase makes it a noun phrase in a longer statement ("Files changed here are listed"). */
  readonly noVerbAfter?: boolean;
}

const PARTICIPLES = alt([...ACTION_PARTICIPLES, ...CONTENT_PARTICIPLES]);
const CONTENT_WORDS = new RegExp(String.raw`^(?:${alt([...CONTENT_PARTICIPLES, ...CONTENT_PAST_ONLY])})$`, 'i');

const CLAIM_PATTERNS: readonly ClaimPattern[] = [
  // "I've sent", "I have just created", "We've scheduled", "I've done", "I have searched for"
  { regex: new RegExp(String.raw`\b(?:i|we)(?:'ve|\s+have)${ADVERBS}\s+(${PARTICIPLES}|${alt(ACTION_PERFECT_ONLY)}|${LOOKUP_CLAIMS})\b`, 'gi'), contentVerbGroup: 1 },
  // "I sent", "I just created", "We booked", "I looked up", "I ran"
  { regex: new RegExp(String.raw`\b(?:i|we)${ADVERBS}\s+(${PARTICIPLES}|${alt([...ACTION_PAST_ONLY, ...CONTENT_PAST_ONLY])}|${LOOKUP_CLAIMS})\b`, 'gi'), contentVerbGroup: 1 },
  // "has been created", "have now been sent", "It's been deleted"
  { regex: new RegExp(String.raw`(?:\bhas|\bhave|'s)(?:\s+(?:now|just|already|successfully|also))*\s+been(?:\s+(?:successfully|now|also))?\s+(${PARTICIPLES})\b`, 'gi'), needsActionSubject: true, contentVerbGroup: 1 },
  // "was successfully created"
  { regex: new RegExp(String.raw`\b(?:was|were|is|are)\s+successfully\s+(${PARTICIPLES})\b`, 'gi'), contentVerbGroup: 1 },
  // "I went ahead and …", "I've gone ahead and …"
  { regex: /\b(?:i|we)(?:\s+went|(?:'ve|\s+have)\s+gone)\s+ahead\s+and\b/gi },
  // "Done!", "Done.", "All done:", "All set!" opening a sentence
  { regex: /^(?:(?:all\s+)?done|all\s+set)(?:\s*[!.,:]|\s*$)/gi },
  // "Successfully created the issue."
  { regex: new RegExp(String.raw`^successfully\s+(${PARTICIPLES}|${alt([...ACTION_PAST_ONLY, ...CONTENT_PAST_ONLY])})\b`, 'gi') },
  // "Email sent to Bob.", "Event created for Monday.": a short subject and a participle, nothing after but where/when
  {
    regex: new RegExp(
      String.raw`^(?:(?:your|the|a|an|my|new|all)\s+)?(?:[\w#@./-]+\s+){0,2}?${ACTION_OBJECTS}(?:\s+(?:#[\w-]+|[\w-]*[\d./][\w./-]*))?\s+(${PARTICIPLES})(?=\s*$|\s*[!.,:;]|\s+(?:successfully|to|for|on|in|at|with|from|and|into)\b)`,
      'gi',
    ),
    contentVerbGroup: 1,
    noVerbAfter: true,
  },
];

// ---------------------------------------------------------------------------------------------------
// What turns a claim-shaped phrase into something else, read from the clause before the phrase

const NEGATION = /n't\b|\b(?:not|never|nothing|none|neither|nor|cannot|unable|without|fail(?:ed)?\s+to|yet\s+to|instead\s+of|pretend)\b/i;
/** Plans, offers and promises: "I will create", "Would you like me to", "I can send", "Let me". */
const MODAL = /\b(?:will|'ll|would|'d|could|should|shall|might|may|must|can|going\s+to|gonna|about\s+to|plan(?:ning)?\s+to|wants?\s+(?:me\s+)?to|like\s+me\s+to|let\s+me|needs?\s+to|ha(?:ve|s)\s+to|try(?:ing)?\s+to|able\s+to|ready\s+to)\b/i;
/** "I can confirm it has been sent" still claims it. */
const ASSERTING_MODAL = /\b(?:can|could)\s+(?:confirm|see|verify)\b/gi;
const CONDITIONAL = /\b(?:if|once|when|whenever|after|before|until|unless|as\s+soon\s+as|whether|in\s+case|provided|suppose|assuming|so\s+that)\b/i;
/** Telling the user what to check: "Make sure the file has been saved." */
const INSTRUCTION = /\b(?:make\s+sure|ensure|verify|check\s+(?:that|whether|if)|confirm\s+whether|please\s+confirm|to\s+see\s+if)\b/i;
/** Someone else's words: "You mentioned the invoice has been sent." */
const REPORTED = /\b(?:you\s+(?:said|mentioned|told|wrote|asked|say)|according\s+to|claims?\s+that|says\s+that|supposedly|reportedly)\b/i;
const QUESTION_OPENING = /^(?:should|shall|would|could|can|do|does|did|is|are|was|were|will|have|has|had|want|may)\s+(?:i|we|you|it|this|that|they|the|he|she)\b/i;
const ACTION_SUBJECT = new RegExp(String.raw`\b(?:your|my|our|it|its|this|that|these|those|they|everything|all|both|each|${ACTION_OBJECTS})\b`, 'i');
/** The sentence hands over content rather than reporting an effect. */
const PRESENTING = /\b(?:below|above|here|following|as\s+follows)\b/i;
const CODE_MARK = '\u27e6code\u27e7';
const FINITE_VERB = /\b(?:is|are|was|were|will|would|can|could|should|must|may|might|do|does|did|has|have|had|gets?|goes|uses?|needs?|contains?|includes?|shows?|lists?|appears?|stays?|remains?)\b/i;

interface Clause {
  readonly text: string;
  /** The clause belongs to a sentence that introduces code or ends in a colon. */
  readonly presenting: boolean;
}

/** Does the answer claim, in its own voice, to have done something? */
export function claimsAction(answer: string): ActionClaim {
  for (const clause of clausesOf(answer)) {
    if (isQuestion(clause.text)) continue;
    for (const pattern of CLAIM_PATTERNS) {
      pattern.regex.lastIndex = 0;
      for (let m = pattern.regex.exec(clause.text); m; m = pattern.regex.exec(clause.text)) {
        if (m[0].length === 0) {
          pattern.regex.lastIndex++;
          continue;
        }
        const before = clause.text.slice(0, m.index);
        if (isQualified(before)) continue;
        if (pattern.needsActionSubject && !ACTION_SUBJECT.test(before)) continue;
        if (pattern.noVerbAfter && FINITE_VERB.test(clause.text.slice(m.index + m[0].length))) continue;
        const verb = pattern.contentVerbGroup !== undefined ? m[pattern.contentVerbGroup] : undefined;
        if (verb !== undefined && CONTENT_WORDS.test(verb.replace(/\s+/g, ' ')) && (clause.presenting || PRESENTING.test(clause.text))) continue;
        return { claimed: true, phrase: m[0].trim(), sentence: cut(clause.text.trim(), MAX_QUOTED_CLAIM) };
      }
    }
  }
  return { claimed: false };
}

function isQualified(before: string): boolean {
  const b = before.replace(ASSERTING_MODAL, ' ');
  return NEGATION.test(b) || MODAL.test(b) || CONDITIONAL.test(b) || INSTRUCTION.test(b) || REPORTED.test(b);
}

function isQuestion(clause: string): boolean {
  return /\?\s*$/.test(clause) || QUESTION_OPENING.test(clause);
}

/** Sentences, split further at `;`, dashes and ", so/and/but/then", with code, quotes and markup removed. */
function clausesOf(answer: string): Clause[] {
  const text = answer
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/(```|~~~)[\s\S]*?(?:\1|$)/g, `\n${CODE_MARK}\n`)
    .replace(/`[^`\n]*`/g, 'code')
    .replace(/\*\*|__/g, '');
  const sentences: string[] = [];
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    if (line.startsWith('>')) continue; // a quote is someone else's words
    const body = line.replace(/^(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)/, '');
    if (body) sentences.push(...body.split(/(?<=[.!?])\s+/).filter((s) => s.length > 0));
  }
  const clauses: Clause[] = [];
  sentences.forEach((sentence, i) => {
    if (sentence === CODE_MARK) return;
    const presenting = /:\s*$/.test(sentence) || sentences[i + 1] === CODE_MARK;
    for (const part of sentence.split(/;\s+|\s+[\u2014\u2013-]\s+|,\s+(?=(?:so|and|but|then)\b)/i)) {
      if (part.trim()) clauses.push({ text: part.trim(), presenting });
    }
  });
  return clauses;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

// ---------------------------------------------------------------------------------------------------
// The policy

export type HallucinationAction = 'accept' | 'retry-with-required-tools' | 'replace-with-honest-answer';

export interface TurnOutcome {
  /** Tool calls the model made in this attempt (calls refused by the loop detector count: the model tried). */
  readonly toolCallsMade: number;
  /** The answer text of this attempt. */
  readonly answer: string;
  /** This attempt was already the retry with the tool mode set to required. */
  readonly retried: boolean;
  /** Tools offered to the model; with none, a required tool mode is impossible and the guard stands aside. */
  readonly toolsOffered?: number;
  /** The retry itself failed (an error from the model): the answer is the honest one then too. */
  readonly retryFailed?: boolean;
}

export interface HallucinationDecision {
  readonly action: HallucinationAction;
  readonly claim: ActionClaim;
  /** For logs and the panel. */
  readonly reason: string;
  /** Set with `replace-with-honest-answer`: the text to show instead. */
  readonly honestAnswer?: string;
}

/**
 * After an attempt: accept it, retry once with the tool mode set to required (and the temperature at
 * most {@link RETRY_MAX_TEMPERATURE}), or, when the retry called no tool either, replace the answer with
 * {@link honestAnswer}. The retry is replaced whatever it says: the user may
 * already have seen the first answer's claim, and only a plain statement undoes it.
 */
export function decideAfterTurn(outcome: TurnOutcome, firstClaim?: ActionClaim): HallucinationDecision {
  const claim = claimsAction(outcome.answer);
  if (outcome.retried && outcome.retryFailed) {
    return { action: 'replace-with-honest-answer', claim, reason: 'the retry with required tools failed', honestAnswer: honestAnswer(firstClaim ?? claim) };
  }
  if (outcome.toolCallsMade > 0) return { action: 'accept', claim, reason: `${outcome.toolCallsMade} tool call(s) made` };
  if (outcome.retried) {
    return { action: 'replace-with-honest-answer', claim, reason: 'the retry with required tools called no tool either', honestAnswer: honestAnswer(firstClaim?.claimed ? firstClaim : claim) };
  }
  if (outcome.toolsOffered === 0) return { action: 'accept', claim, reason: 'no tools were offered, so none could be required' };
  if (!claim.claimed) return { action: 'accept', claim, reason: 'no tool called and no action claimed' };
  return { action: 'retry-with-required-tools', claim, reason: `no tool was called but the answer claims an action ("${claim.phrase ?? ''}")` };
}

/** The answer shown when the action was claimed but never done. */
export function honestAnswer(claim?: ActionClaim): string {
  const quoted = claim?.claimed && claim.sentence ? `, although my first answer said "${claim.sentence}"` : '';
  return (
    `${HONEST_ANSWER_OPENING} No tool was called, so nothing was sent, created, changed or looked up${quoted}. ` +
    'Please try again, perhaps naming the tool to use with #, or run it yourself with "Tool Router: Call Tool…".'
  );
}

/**
 * The guard for one chat request, as a small state machine: `first attempt → (accept | retry)`,
 * `retry → (accept | replace)`. It remembers the first answer's claim so the honest answer can quote it.
 */
export class HallucinationGuardTurn {
  private retried = false;
  private firstClaim: ActionClaim | undefined;
  private done = false;

  /** Whether the next attempt is the retry (so the caller sets the tool mode to required). */
  get isRetry(): boolean {
    return this.retried;
  }

  afterAttempt(attempt: Omit<TurnOutcome, 'retried'>): HallucinationDecision {
    if (this.done) return { action: 'accept', claim: { claimed: false }, reason: 'the guard already decided for this turn' };
    const decision = decideAfterTurn({ ...attempt, retried: this.retried }, this.firstClaim);
    if (decision.action === 'retry-with-required-tools') {
      this.retried = true;
      this.firstClaim = decision.claim;
    } else this.done = true;
    return decision;
  }
}
