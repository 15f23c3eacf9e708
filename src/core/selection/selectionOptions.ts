import { EMPTY_KEYWORD_CONFIG, type KeywordConfig } from './keywordStage';
import { DEFAULT_STICKY_LOOKBACK_TURNS, DEFAULT_STICKY_MAX } from './stickyTools';
import type { ServerPolicy } from './serverAware';
import { DEFAULT_CALL_POLICY, type CallPolicy } from '../policy/callPolicy';

/** What selection can be told, and its defaults; docs/decisions.md has the figures each was chosen from. */

/**
 * How many tools are sent follows the scores. Between the best score and the score at rank `cap`, a ranked
 * tool is sent while it lies within `depth` of that drop from the top: with depth 0.74, while its score is
 * above the 26% mark. A steady slope (many similar tools) sends many; one or two tools far ahead of the rest
 * send few; never fewer than minTools, never more than the cap. The rule is scale-free, so it behaves alike
 * whatever the scores' spread in a catalogue. The depth is the deepest whose mean stays within a budget of
 * 15 tools, read off the coverage curve `npm run eval:select` prints.
 */
export const DEFAULT_MIN_TOOLS = 3;
export const DEFAULT_DEPTH = 0.74;
/** The cap most clients live with comfortably; 128 is the hard client limit, 40 for some. */
export const DEFAULT_CAP = 25;
/** Each clause of a multi-request prompt also sends its own best tools, this many, so every step has its tool. */
export const DEFAULT_CLAUSE_HEAD = 2;
/** Each step of a task (steps.ts) sends its own best this many tools and their listers, whatever the curve says (0: off). */
export const DEFAULT_STEP_HEAD = 2;
/** A task of several steps sends at least this many tools per step, in turns from the steps' rankings. */
export const DEFAULT_STEP_SHARE = 6;
/**
 * Inside a task's steps, the tools of a server the step names ("… in chatwork", "search console") gain this
 * many z-score units (0: off).
 */
export const DEFAULT_STEP_SERVER_LIFT = 6;
/**
 * A step that refers back ("share it with hr@…", "say hello there") is scored as (1 − w)·its own score +
 * w·the step before it's, so it stays on the thing that step named (0: off).
 */
export const DEFAULT_STEP_CONTEXT = 0.3;
/**
 * Inside a step, the tools that do what its leading verb asks ("move those to…" → an update tool), among
 * the servers the step is about, gain this (z-score units; 0: off); see operations.ts.
 */
export const DEFAULT_STEP_OPERATION_LIFT = 2;
/**
 * Companion listers (companions.ts) are looked for behind this many of the best tools: the tools the
 * prompt most likely acts on. Past six, more found nothing more.
 */
export const DEFAULT_COMPANION_HEAD = 6;
/**
 * Weight of the lexical z-score in the fusion `w·z(lexical) + (1−w)·z(cosine)`: an even balance, the
 * safer bet on servers the model never saw.
 */
export const DEFAULT_LEXICAL_WEIGHT = 0.5;
/**
 * When one tool of a catalogue matches a word and no other does, the lexical spread is nearly zero and
 * that match's z-score explodes: "travel" in an unrelated tool's enum outranked every memory tool for
 * "remember … about travel". The spread counts as at least this, about a third of a one-word BM25 match.
 */
export const DEFAULT_LEXICAL_SD_FLOOR = 0.45;
/**
 * A one-step prompt that names an app ("freeeで今月の取引一覧…") lifts its tools by this much; see serverNames.ts.
 * Not for tasks of several steps, whose steps lift the app they name: across the whole task it crowded the
 * other steps' apps out.
 */
export const DEFAULT_PROMPT_SERVER_LIFT = 1;
/**
 * Without an embedder, a tool beyond the first `minTools` joins when its lexical z-score is at least
 * this: about the top 5% of a normal spread, so only clearly matching tools are added.
 */
export const DEFAULT_LEXICAL_Z_THRESHOLD = 1.65;

/**
 * Each tool gains this × its server's strength (mean of the server's two best fused scores), so a server
 * that clearly matches lifts its weaker tools together; catalogues without servers are unchanged
 * (serverAware.ts).
 */
export const DEFAULT_SERVER_BOOST = 0.5;
/**
 * A multi-request prompt's score per tool is blended as (1 − w)·full + w·(best clause), clauses.ts
 * splitting it. A blend rather than a max, so one clause's strong match cannot drown the whole request.
 */
export const DEFAULT_CLAUSE_WEIGHT = 0.3;

/**
 * Unnamed needs (generalNeeds.ts): a needed general-purpose tool gains up to this many z-score units,
 * enough to move a tool from the bulk of the catalogue into the top few (never above the best four, see
 * GENERAL_RANK). 24 is where the gains level off.
 */
export const DEFAULT_GENERAL_BOOST = 24;
/**
 * The prompt model's probability above which a kind counts as needed. Low on purpose: the lift is
 * scaled by the probability, so a weak need lifts little.
 */
export const DEFAULT_GENERAL_NEED_MIN = 0.15;
/**
 * The same for one step of a task read alone (0: steps are not read for needs). Higher: a step is a few
 * words, so its cues are not diluted, and false needs run higher too.
 */
export const DEFAULT_STEP_NEED_MIN = 0.25;
/** The tool model's probability above which a tool counts as of a kind (the lift is scaled by it too). */
export const DEFAULT_GENERAL_TOOL_MIN = 0.2;

export interface SelectionOptions {
  /** Always send this many top-ranked tools. */
  readonly minTools: number;
  /** Beyond `minTools`, a ranked tool is sent while its score is within this share (0–1) of the drop from the best to the cap-th score. */
  readonly depth: number;
  /** Each clause of a multi-request prompt also sends its best this many tools (0: off). */
  readonly clauseHead: number;
  /** Each step of a task sends its best this many tools (0: the step stage is off); see steps.ts. */
  readonly stepHead: number;
  /** A task of several steps sends at least this many tools per step, within the cap. */
  readonly stepShare: number;
  /** Inside a step, the tools of a server the step names gain this (z-score units; 0: off); see serverNames.ts. */
  readonly stepServerLift: number;
  /** In a prompt of one step, the tools of a server it names gain this (z-score units; 0: off); see serverNames.ts. */
  readonly promptServerLift: number;
  /** A step that refers back is blended with the step before it, this weight on that step (0–1; 0: off); see steps.ts. */
  readonly stepContext: number;
  /** Inside a step, the tools doing the operation its verb asks for gain this (z-score units; 0: off); see operations.ts. */
  readonly stepOperationLift: number;
  /** The best this many tools sent each bring their server's lister of the same resource (0: off); see companions.ts. */
  readonly companionHead: number;
  /** A browser tool sent that acts on an open page brings its server's page opener (0: off); see catalogueScorer.ts. */
  readonly pageOpeners: number;
  /** A browser need also sends its server's best tool to start the browser, read, click and type (0: off); see pageRoles.ts. */
  readonly pageHands: number;
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
  /** The lexical scores' spread is taken as at least this (BM25 units) when they are fused by z-score. */
  readonly lexicalSdFloor: number;
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
  /** A kind is needed when one step of a task, read alone, calls for it with at least this probability (0: off). */
  readonly stepNeedMin: number;
  /** A tool is of a kind when the tool model's probability is at least this. */
  readonly generalToolMin: number;
  /** A kind's runner-up is lifted beside its best only when the tool model's probability is at least this. */
  readonly generalRunnerUpMin: number;
  /**
   * How many servers of a needed kind send their best tool, lifted beside the kind's best two (1: those two
   * only). Two file servers may reach different folders; decisions.md has the figures.
   */
  readonly generalServers: number;
  /**
   * The head-then-strongest-server ranking policy; its window is the cap. Off by default: its gain over the
   * server boost was within noise, and it reorders every prompt's budget.
   */
  readonly serverPolicy?: Omit<ServerPolicy, 'window'>;
}

export const DEFAULT_SELECTION_OPTIONS: SelectionOptions = {
  minTools: DEFAULT_MIN_TOOLS,
  depth: DEFAULT_DEPTH,
  clauseHead: DEFAULT_CLAUSE_HEAD,
  stepHead: DEFAULT_STEP_HEAD,
  stepShare: DEFAULT_STEP_SHARE,
  stepServerLift: DEFAULT_STEP_SERVER_LIFT,
  promptServerLift: DEFAULT_PROMPT_SERVER_LIFT,
  stepContext: DEFAULT_STEP_CONTEXT,
  stepOperationLift: DEFAULT_STEP_OPERATION_LIFT,
  companionHead: DEFAULT_COMPANION_HEAD,
  pageOpeners: 1,
  pageHands: 1,
  crossScript: 1,
  fileTypes: 1,
  spelling: 1,
  cap: DEFAULT_CAP,
  coreTools: [],
  allowedTools: [],
  callPolicy: DEFAULT_CALL_POLICY,
  lexicalWeight: DEFAULT_LEXICAL_WEIGHT,
  lexicalZThreshold: DEFAULT_LEXICAL_Z_THRESHOLD,
  lexicalSdFloor: DEFAULT_LEXICAL_SD_FLOOR,
  stickyLookback: DEFAULT_STICKY_LOOKBACK_TURNS,
  stickyMax: DEFAULT_STICKY_MAX,
  keyword: EMPTY_KEYWORD_CONFIG,
  serverBoost: DEFAULT_SERVER_BOOST,
  clauseWeight: DEFAULT_CLAUSE_WEIGHT,
  generalBoost: DEFAULT_GENERAL_BOOST,
  generalNeedMin: DEFAULT_GENERAL_NEED_MIN,
  stepNeedMin: DEFAULT_STEP_NEED_MIN,
  generalToolMin: DEFAULT_GENERAL_TOOL_MIN,
  generalRunnerUpMin: 0.5,
  generalServers: 4,
};
