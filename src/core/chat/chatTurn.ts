import type { CallEnvelope, CallError } from '../router/callEnvelope';
import { estimateTokens, type CostMonitor } from '../guards/costMonitor';
import { HallucinationGuardTurn } from '../guards/hallucinationGuard';
import { loopDetectedEnvelope, resultFactsFor, type LoopDetector } from '../guards/loopDetector';
import type { Selection } from '../selection/selectionTypes';
import { DEFAULT_CAP } from '../selection/toolSelector';
import { DEFAULT_CALL_POLICY, decideCall, isDestructive, offerNote, offerTool, type CallAudience, type CallPolicy, type PolicyTool } from '../policy/callPolicy';
import { unconfirmedMessage, type ConfirmAnswer } from '../policy/confirmation';
import { AnswerStream } from './answerStream';
import { OfferedTools } from './offeredTools';
import { envelopeText, inputText, notRunEnvelope, notRunWith, parseJsonObject, shorten } from './turnText';
import type { SearchHit } from '../search/toolSearch';
import { describeError } from '../errors/describeError';

/**
 * One chat turn: the model sees only the selected tools; each tool call goes through the loop detector
 * and the router; results are fed back, up to `maxSteps`; an answer that claims an action without any
 * tool call is retried once with tools required; every token is charged to the cost window, and a
 * paused window answers without calling the model. A call to a tool not marked read-only or
 * non-destructive asks the user first (policy `confirm`, through the {@link ConfirmCall} seam). With a
 * {@link TurnSearch}, the model is also offered {@link FIND_TOOLS_NAME} at every step, and the tools it
 * finds are offered from the next step on.
 * The VS Code participant adapts its API to {@link ChatModel}; tests drive the same code with a scripted model.
 */

export interface ChatToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
  /** The server's hints, which decide whether a call asks first; never sent to the model. */
  readonly annotations?: PolicyTool['annotations'];
}

export interface ChatToolCall {
  readonly callId: string;
  readonly name: string;
  readonly input: unknown;
}

export type ChatMessage =
  | { readonly role: 'user'; readonly text: string }
  | { readonly role: 'assistant'; readonly text: string; readonly toolCalls?: readonly ChatToolCall[] }
  | { readonly role: 'tool'; readonly callId: string; readonly name: string; readonly text: string };

export interface ModelResponse {
  readonly text: string;
  readonly toolCalls: readonly ChatToolCall[];
}

/** The language-model seam: VS Code's `request.model` in the extension, a scripted fake in tests. */
export interface ChatModel {
  /** `onText`, when given, receives the answer's text as the model writes it (the response still holds all of it). */
  send(messages: readonly ChatMessage[], tools: readonly ChatToolDefinition[], options: { readonly toolMode: 'auto' | 'required'; readonly signal?: AbortSignal; readonly onText?: (delta: string) => void }): Promise<ModelResponse>;
  /** The model's own count where it has one; the caller falls back to chars / 4. */
  countTokens?(text: string): Promise<number>;
}

/** What the router needs to run a call (the ToolRouter satisfies it). */
export interface ToolCaller {
  call(name: string, args: unknown, options?: { signal?: AbortSignal; onProgress?: (progress: { progress: number; total?: number; message?: string }) => void }): Promise<CallEnvelope>;
  /** Why a tool cannot be called now (unknown or held back), so nobody is asked about it; none when listed. */
  missingReason?(name: string): CallError | undefined;
}

export type TurnWarning =
  | { readonly kind: 'loop'; readonly tool: string; readonly args: unknown; readonly rule: string; readonly message: string }
  | { readonly kind: 'hallucination'; readonly phrase: string; readonly outcome: 'retried' | 'replaced' }
  | { readonly kind: 'cost'; readonly message: string }
  | { readonly kind: 'steps'; readonly message: string };

export interface TurnEvents {
  onProgress?(message: string): void;
  onToolStart?(call: ChatToolCall): void;
  onToolEnd?(call: ChatToolCall, envelope: CallEnvelope): void;
  onWarning?(warning: TurnWarning): void;
  /**
   * The answer as it is written (AnswerStream: a sentence that may claim an unperformed action waits for
   * the guard). With it, everything the user should read arrives here, and `TurnResult.streamed` is true.
   */
  onText?(text: string): void;
}

export interface TurnCall {
  readonly call: ChatToolCall;
  readonly envelope: CallEnvelope;
  /**
   * For a tool that asks first: `confirmed` or `declined` by the user, `unanswered` when the question timed out
   * or failed, or `refused` by the policy (`never`, or nobody could be asked). Absent when no question was needed.
   */
  readonly confirmation?: 'confirmed' | 'declined' | 'unanswered' | 'refused';
}

/** What the user is asked before a call runs: the tool, its arguments, and whether its server marks it destructive. */
export interface CallConfirmation {
  readonly tool: string;
  readonly args: unknown;
  /** False for a tool its server marks neither read-only nor non-destructive. */
  readonly markedDestructive: boolean;
}

/**
 * Asks the user whether a call may run; only `yes` runs it. The participant shows a modal question;
 * tests answer from a script. A rejection counts as a question that failed.
 */
export type ConfirmCall = (request: CallConfirmation, signal?: AbortSignal) => Promise<ConfirmAnswer>;

/** The search behind {@link FIND_TOOLS_NAME}: the same ranking as agent mode's toolRouter_searchTools. */
export interface TurnSearch {
  /** The best tools for a query, best first (quarantined and disallowed tools already left out). */
  search(query: string, signal?: AbortSignal): Promise<readonly SearchHit[]>;
  /** A found tool as the model is sent it; undefined when it cannot be offered (e.g. it just went away). */
  definition(name: string): ChatToolDefinition | undefined;
}

/** A tool the model found with the search tool during the turn. */
export interface FoundTool {
  readonly name: string;
  /** The query that found it. */
  readonly query: string;
  /** The model step of the search; the tool is offered from the next step on. */
  readonly step: number;
  /** False when the cap was full of tools that keep their places: the model was told it cannot call it yet. */
  readonly offered: boolean;
  /** The selected tool whose place it took, when the cap was full. */
  readonly replaced?: string;
}

export interface TurnResult {
  /** The answer to show (already guarded: an unbacked claim is replaced by an honest answer). */
  readonly answer: string;
  readonly calls: readonly TurnCall[];
  readonly warnings: readonly TurnWarning[];
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number };
  readonly paused: boolean;
  /** Tools found with the search tool (empty without a {@link TurnSearch}). */
  readonly found: readonly FoundTool[];
  /** The answer already reached the user through `events.onText`; do not show it again. */
  readonly streamed: boolean;
}

/** At most 8 model steps (calls and answers) per turn: enough for look-up-then-act chains, and a bound on a runaway turn's cost. */
export const DEFAULT_MAX_STEPS = 8;
/** Old tool results in the history shrink to one line; the last 2 exchanges stay verbatim, since a follow-up step usually reads only the latest results. */
export const HISTORY_VERBATIM_EXCHANGES = 2;
/** How much of a tool result the one-line summary keeps. */
const SUMMARY_CHARS = 160;
/**
 * The search tool `@router` offers at every step. Its own name, not agent mode's toolRouter_searchTools:
 * there is no call tool here, the tools it finds are offered directly.
 */
export const FIND_TOOLS_NAME = 'toolRouter_findTools';
/** Tools one search returns and offers: a task needs 2–6 tools (the dev sets), and each one offered costs its definition at every later step. */
export const FIND_TOOLS_RESULTS = 5;

/** A found tool's description in the search result; its whole definition follows at the next step. */
const FOUND_DESCRIPTION_CHARS = 200;

const FIND_TOOLS_DEFINITION: ChatToolDefinition = {
  name: FIND_TOOLS_NAME,
  description: `Find tools you were not given: describe what you need to do, and the best ${FIND_TOOLS_RESULTS} tools of every connected MCP server are returned and offered to you from your next step on. Use it when none of your tools fits the task.`,
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string', description: 'The task in plain words, e.g. "write a file" or "create a calendar event".' } },
    required: ['query'],
    additionalProperties: false,
  },
};

export interface ChatTurnOptions {
  readonly prompt: string;
  readonly history: readonly ChatMessage[];
  readonly selection: Selection;
  readonly tools: readonly ChatToolDefinition[];
  readonly model: ChatModel;
  readonly router: ToolCaller;
  readonly loops: LoopDetector;
  readonly cost: CostMonitor;
  readonly turn: number;
  readonly maxSteps?: number;
  readonly signal?: AbortSignal;
  readonly events?: TurnEvents;
  /** Which calls run, ask or are refused (default: `confirm`, nothing allow-listed). */
  readonly policy?: CallPolicy;
  /**
   * Asks the user before a call the policy says asks: a tool marked destructive, or one marked neither
   * read-only nor non-destructive (the router runs the model here, so nothing else checks), by the hints
   * `hintsOf` gives. Without `confirm`, such calls are not run.
   */
  readonly confirm?: ConfirmCall;
  /**
   * The hints of any tool by name, offered this turn or not (the participant asks the router). Without
   * it, the definitions offered this turn; a tool known to neither asks.
   */
  readonly hintsOf?: (name: string) => PolicyTool['annotations'];
  /** Offers the search tool at every step; found tools join the offered set. */
  readonly search?: TurnSearch;
  /** The selection cap: found tools never make the offered set larger (default DEFAULT_CAP). */
  readonly cap?: number;
}

export async function runChatTurn(options: ChatTurnOptions): Promise<TurnResult> {
  return new ChatTurn(options).run();
}

/** The definitions sent at each step, with their token counts; recounted only when the offered set changes. */
interface SentDefinitions {
  readonly version: number;
  readonly tools: readonly ChatToolDefinition[];
  readonly tokens: number;
  readonly blame: ReadonlyArray<{ name: string; tokens: number; part: 'definition' }>;
}

/** One turn's state, run in phases: ask the model, then either end on its answer or run its calls. */
class ChatTurn {
  private readonly warnings: TurnWarning[] = [];
  private readonly calls: TurnCall[] = [];
  private readonly found: FoundTool[] = [];
  private readonly usage = { promptTokens: 0, completionTokens: 0 };
  private readonly stream: AnswerStream | undefined;
  private readonly guard = new HallucinationGuardTurn();
  private readonly messages: ChatMessage[];
  private readonly offered: OfferedTools<ChatToolDefinition>;
  /** The hints of every tool defined this turn, found ones included (a replaced tool keeps its hints). */
  private readonly hints = new Map<string, PolicyTool['annotations']>();
  private readonly gate: (call: ChatToolCall) => Promise<GateVerdict>;
  private definitions: SentDefinitions | undefined;
  private toolMode: 'auto' | 'required' = 'auto';

  constructor(private readonly options: ChatTurnOptions) {
    const events = options.events;
    this.stream = events?.onText ? new AnswerStream((text) => events.onText!(text)) : undefined;
    this.messages = [...truncateHistory(options.history), { role: 'user', text: options.prompt }];
    this.offered = new OfferedTools(options.tools, options.selection, options.cap ?? DEFAULT_CAP);
    for (const t of options.tools) this.hints.set(t.name, t.annotations);
    this.gate = callGate(options, this.hints);
  }

  async run(): Promise<TurnResult> {
    const { cost, loops } = this.options;
    if (cost.isPaused()) {
      const message = cost.pausedReason?.message ?? 'The router is paused.';
      return this.done(message, true, message);
    }
    loops.startTurn(this.options.turn);
    const maxSteps = this.options.maxSteps ?? DEFAULT_MAX_STEPS;
    for (let step = 1; step <= maxSteps; step++) {
      const asked = await this.ask();
      if ('result' in asked) return asked.result;
      if (asked.response.toolCalls.length === 0) {
        const end = this.answer(asked.response);
        if (end) return end;
        continue;
      }
      await this.runCalls(asked.response, step);
    }
    const message = `I stopped after ${maxSteps} steps without a final answer (toolRouter.chat.maxSteps). Ask me to continue if there is more to do.`;
    this.warn({ kind: 'steps', message });
    return this.done(message, false, message);
  }

  /** One model step, its tokens charged to the cost window; a `result` when that paused the router. */
  private async ask(): Promise<{ readonly response: ModelResponse } | { readonly result: TurnResult }> {
    const { model, cost, signal } = this.options;
    const stream = this.stream;
    const definitions = await this.sentDefinitions();
    stream?.beginStep();
    let deltas = 0;
    const response = await model.send(this.messages, definitions.tools, {
      toolMode: this.toolMode,
      ...(signal ? { signal } : {}),
      ...(stream ? { onText: (delta: string) => (deltas++, stream.write(delta)) } : {}),
    });
    // A model that does not stream still has its text shown, through the same guard.
    if (stream && deltas === 0) stream.write(response.text);
    const promptTokens = (await this.count(this.messages.map(messageText).join('\n'))) + definitions.tokens;
    const completionTokens = await this.count(response.text + inputText(response.toolCalls.map((c) => c.input)));
    this.usage.promptTokens += promptTokens;
    this.usage.completionTokens += completionTokens;
    const blame = [
      ...definitions.blame,
      ...response.toolCalls.map((c) => ({ name: c.name, tokens: estimateTokens(inputText(c.input ?? {})), part: 'arguments' as const })),
    ];
    const recorded = cost.record({ promptTokens, completionTokens, calls: response.toolCalls.length, tools: blame });
    if (!recorded.pausedNow) return { response };
    const message = cost.pausedReason?.message ?? 'The router paused: the token budget was reached.';
    this.warn({ kind: 'cost', message });
    stream?.endStep(true);
    return { result: this.done(`${response.text ? `${response.text}\n\n` : ''}${message}`, true, message) };
  }

  // Each step re-sends every definition, so each step charges them again; they are counted only when the
  // offered set changes (a search added tools).
  private async sentDefinitions(): Promise<SentDefinitions> {
    if (this.definitions?.version !== this.offered.version) {
      const tools = [...this.offered.definitions, ...(this.options.search ? [FIND_TOOLS_DEFINITION] : [])];
      this.definitions = { version: this.offered.version, tools, tokens: await this.count(JSON.stringify(tools)), blame: tools.map((t) => ({ name: t.name, tokens: estimateTokens(JSON.stringify(t)), part: 'definition' as const })) };
    }
    return this.definitions;
  }

  /** An answer without calls ends the turn, unless it claims an action no tool performed (then undefined: retry). */
  private answer(response: ModelResponse): TurnResult | undefined {
    const decision = this.guard.afterAttempt({ toolCallsMade: this.calls.length, answer: response.text, toolsOffered: this.offered.definitions.length });
    if (decision.action === 'retry-with-required-tools') {
      this.warn({ kind: 'hallucination', phrase: decision.claim?.phrase ?? '', outcome: 'retried' });
      this.stream?.endStep(false);
      this.options.events?.onProgress?.('The answer claimed an action no tool performed; asking the model again with tools required.');
      this.toolMode = 'required';
      return undefined;
    }
    if (decision.action === 'replace-with-honest-answer') {
      this.warn({ kind: 'hallucination', phrase: decision.claim?.phrase ?? '', outcome: 'replaced' });
      this.stream?.endStep(false);
      const honest = decision.honestAnswer ?? "I wasn't able to complete this action.";
      return this.done(honest, false, honest);
    }
    this.stream?.endStep(true);
    return this.done(response.text);
  }

  /** Runs a step's calls in order and feeds each result back to the model. */
  private async runCalls(response: ModelResponse, step: number): Promise<void> {
    const { options } = this;
    // A step that calls tools backs what it says; its held text goes out.
    this.stream?.endStep(true);
    this.toolMode = 'auto';
    this.messages.push({ role: 'assistant', text: response.text, toolCalls: response.toolCalls });
    for (const call of response.toolCalls) {
      let resultText: string;
      if (options.search && call.name === FIND_TOOLS_NAME) {
        // A search is no action: it is not a call of the turn, so the claimed-action guard still applies.
        options.events?.onProgress?.('Searching for tools…');
        resultText = await findTools(call.input, { search: options.search, step, offered: this.offered, found: this.found, hints: this.hints, policy: options.policy ?? DEFAULT_CALL_POLICY, audience: turnAudience(options), ...(options.signal ? { signal: options.signal } : {}) });
      } else {
        resultText = await this.runCall(call);
      }
      options.cost.record({ promptTokens: 0, completionTokens: 0, tools: [{ name: call.name, tokens: estimateTokens(resultText), part: 'result' }] });
      this.messages.push({ role: 'tool', callId: call.callId, name: call.name, text: resultText });
    }
  }

  /** One tool call through the loop detector, the call policy and the router; returns what the model reads. */
  private async runCall(call: ChatToolCall): Promise<string> {
    const { router, loops, events, signal } = this.options;
    const wasOffered = this.offered.has(call.name);
    const check = loops.check(call.name, call.input);
    let envelope: CallEnvelope;
    let confirmation: TurnCall['confirmation'];
    if (!check.allow) {
      envelope = loopDetectedEnvelope(check, { server: '', tool: call.name, exposedName: call.name });
      this.warn({ kind: 'loop', tool: call.name, args: call.input, rule: check.rule, message: check.message });
    } else {
      // A name no server lists gets the router's own answer (with the names it may have meant), not a question.
      const missing = router.missingReason?.(call.name);
      const verdict: GateVerdict = missing ? { run: true } : await this.gate(call);
      confirmation = verdict.confirmation;
      if (verdict.run) {
        events?.onToolStart?.(call);
        // A long call's progress reaches the user as the turn's progress line.
        const onProgress = (p: { progress: number; total?: number; message?: string }): void =>
          events?.onProgress?.(`${call.name}: ${p.message ?? (p.total ? `${p.progress} of ${p.total}` : `${p.progress}`)}`);
        envelope = missing ? notRunWith(call.name, missing) : await router.call(call.name, call.input, { ...(signal ? { signal } : {}), onProgress });
        const facts = resultFactsFor(envelope);
        loops.record(call.name, call.input, facts.digest, facts.isEmpty);
        this.offered.markCalled(call.name);
        if (!wasOffered) events?.onProgress?.(`The model called "${call.name}", which was not offered this turn.`);
      } else {
        envelope = notRunEnvelope(call.name, verdict.message);
      }
    }
    events?.onToolEnd?.(call, envelope);
    this.calls.push({ call, envelope, ...(confirmation ? { confirmation } : {}) });
    // The guard accepts any turn with a call in it (decideAfterTurn), so nothing more needs holding.
    this.stream?.stopGuarding();
    return envelopeText(envelope);
  }

  private warn(warning: TurnWarning): void {
    this.warnings.push(warning);
    this.options.events?.onWarning?.(warning);
  }

  /** Ends the turn; `notice` is text the router itself adds to what the user has read (streamed at once). */
  private done(answer: string, paused = false, notice?: string): TurnResult {
    if (notice !== undefined) this.stream?.say(notice);
    return { answer, calls: this.calls, warnings: this.warnings, usage: this.usage, paused, found: this.found, streamed: this.stream?.started ?? false };
  }

  private async count(text: string): Promise<number> {
    const { model } = this.options;
    if (model.countTokens) {
      try {
        return await model.countTokens(text);
      } catch {
        // A model that cannot count falls back to the estimate.
      }
    }
    return estimateTokens(text);
  }
}

type GateVerdict = { readonly run: true; readonly confirmation?: 'confirmed' } | { readonly run: false; readonly confirmation: 'declined' | 'unanswered' | 'refused'; readonly message: string };

/** Who calls in a turn, for the call policy: the router runs the model, so unmarked tools ask too. */
function turnAudience(options: ChatTurnOptions): CallAudience {
  return { canAsk: options.confirm !== undefined, asksForUnmarked: true };
}

/** Carries out the call policy (callPolicy.ts) for one call; under `ask` it asks the user through `confirm`. */
function callGate(options: ChatTurnOptions, hints: ReadonlyMap<string, PolicyTool['annotations']>): (call: ChatToolCall) => Promise<GateVerdict> {
  const policy = options.policy ?? DEFAULT_CALL_POLICY;
  const audience = turnAudience(options);
  return async (call) => {
    const tool = { name: call.name, annotations: options.hintsOf?.(call.name) ?? hints.get(call.name) };
    const decision = decideCall(policy, tool, audience);
    if (decision.verdict === 'run') return { run: true };
    if (decision.verdict === 'refuse') return { run: false, confirmation: 'refused', message: decision.message };
    let answer: ConfirmAnswer;
    try {
      answer = await options.confirm!({ tool: call.name, args: call.input, markedDestructive: isDestructive(tool) }, options.signal);
    } catch (error) {
      // Nothing that asks runs unapproved; the model is told the question failed, not that the user said no.
      answer = { answer: 'failed', reason: describeError(error) };
    }
    // A request cancelled while the question was open does not go on with the call.
    if (options.signal?.aborted && answer.answer === 'yes') answer = { answer: 'failed', reason: 'the request was cancelled' };
    if (answer.answer === 'yes') return { run: true, confirmation: 'confirmed' };
    return { run: false, confirmation: answer.answer === 'no' ? 'declined' : 'unanswered', message: unconfirmedMessage(call.name, answer) };
  };
}

/**
 * Runs the search tool: ranks the catalogue for the query, offers each new hit from the next step on
 * (within the cap) and tells the model which tools it now has. Errors become the tool's result text.
 */
async function findTools(
  input: unknown,
  context: { search: TurnSearch; step: number; offered: OfferedTools<ChatToolDefinition>; found: FoundTool[]; hints: Map<string, PolicyTool['annotations']>; policy: CallPolicy; audience: CallAudience; signal?: AbortSignal },
): Promise<string> {
  const raw = typeof input === 'string' ? parseJsonObject(input) : input;
  const query = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)['query'] : undefined;
  if (typeof query !== 'string' || query.trim() === '') return `${FIND_TOOLS_NAME} needs a non-empty "query": the task in plain words.`;
  let hits: readonly SearchHit[];
  try {
    hits = await context.search.search(query.trim(), context.signal);
  } catch (error) {
    return `${FIND_TOOLS_NAME} failed: ${describeError(error)}. Go on with the tools you have.`;
  }
  const tools: Array<Record<string, unknown>> = [];
  for (const hit of hits) {
    // What selection would not offer, a search must not bring back.
    const offer = offerTool(context.policy, hit, context.audience);
    if (!offer.offered) continue;
    const note = offerNote(offer);
    const already = context.offered.has(hit.name);
    // A selected tool that gave its place to a found one stays out: the model had it and did not call it.
    if (!already && context.offered.wasSelected(hit.name)) continue;
    let status = 'already offered';
    if (!already) {
      const definition = context.search.definition(hit.name);
      if (!definition) continue;
      const added = context.offered.add(definition);
      context.found.push({ name: hit.name, query: query.trim(), step: context.step, offered: added.offered, ...(added.replaced ? { replaced: added.replaced } : {}) });
      context.hints.set(hit.name, definition.annotations);
      status = added.offered ? 'offered from your next step' : 'not offered: the tool limit is reached';
    }
    tools.push({ name: hit.name, server: hit.server, description: shorten(hit.description, FOUND_DESCRIPTION_CHARS), ...(note ? { confirm: note } : {}), status });
  }
  const next = tools.length === 0 ? 'No tools matched; try other words, or answer with what you have.' : 'Call the tool you need directly, by its name, at your next step.';
  return JSON.stringify({ query: query.trim(), tools, next });
}

function messageText(m: ChatMessage): string {
  if (m.role === 'assistant') return `${m.text}${m.toolCalls?.length ? inputText(m.toolCalls) : ''}`;
  return m.text;
}

/**
 * Keeps the last {@link HISTORY_VERBATIM_EXCHANGES} exchanges (a user message and what followed it) as
 * they were, and shrinks older tool results to one line each, so long sessions stop re-sending them.
 */
export function truncateHistory(history: readonly ChatMessage[], keepExchanges = HISTORY_VERBATIM_EXCHANGES): ChatMessage[] {
  const userIndices = history.map((m, i) => (m.role === 'user' ? i : -1)).filter((i) => i >= 0);
  const verbatimFrom = userIndices.length > keepExchanges ? userIndices[userIndices.length - keepExchanges]! : 0;
  return history.map((m, i) => {
    if (i >= verbatimFrom || m.role !== 'tool') return m;
    const oneLine = m.text.replace(/\s+/g, ' ').trim();
    return { ...m, text: `[earlier result of ${m.name}, shortened] ${oneLine.length > SUMMARY_CHARS ? `${oneLine.slice(0, SUMMARY_CHARS)}…` : oneLine}` };
  });
}
