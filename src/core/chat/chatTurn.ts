import type { CallEnvelope } from '../callEnvelope';
import { estimateTokens, type CostMonitor } from '../guards/costMonitor';
import { HallucinationGuardTurn } from '../guards/hallucinationGuard';
import { loopDetectedEnvelope, resultFactsFor, type LoopDetector } from '../guards/loopDetector';
import type { Selection } from '../selection/selectionTypes';

/**
 * One chat turn: the model sees only the selected tools; each tool call goes through the loop detector
 * and the router; results are fed back, up to `maxSteps`; an answer that claims an action without any
 * tool call is retried once with tools required; every token is charged to the cost window, and a
 * paused window answers without calling the model. The VS Code participant adapts its API to
 * {@link ChatModel}; tests drive the same code with a scripted model.
 */

export interface ChatToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
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
  send(messages: readonly ChatMessage[], tools: readonly ChatToolDefinition[], options: { readonly toolMode: 'auto' | 'required'; readonly signal?: AbortSignal }): Promise<ModelResponse>;
  /** The model's own count where it has one; the caller falls back to chars / 4. */
  countTokens?(text: string): Promise<number>;
}

/** What the router needs to run a call (the ToolRouter satisfies it). */
export interface ToolCaller {
  call(name: string, args: unknown, options?: { signal?: AbortSignal }): Promise<CallEnvelope>;
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
}

export interface TurnCall {
  readonly call: ChatToolCall;
  readonly envelope: CallEnvelope;
}

export interface TurnResult {
  /** The answer to show (already guarded: an unbacked claim is replaced by an honest answer). */
  readonly answer: string;
  readonly calls: readonly TurnCall[];
  readonly warnings: readonly TurnWarning[];
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number };
  readonly paused: boolean;
}

/** The seeds' interactive limit: at most 8 model steps (calls and answers) per turn. */
export const DEFAULT_MAX_STEPS = 8;
/** Old tool results in the history shrink to one line; the last 2 exchanges stay verbatim (seed 000). */
export const HISTORY_VERBATIM_EXCHANGES = 2;
/** How much of a tool result the one-line summary keeps. */
const SUMMARY_CHARS = 160;

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
}

export async function runChatTurn(options: ChatTurnOptions): Promise<TurnResult> {
  const { model, router, loops, cost, tools, events } = options;
  const warnings: TurnWarning[] = [];
  const calls: TurnCall[] = [];
  const usage = { promptTokens: 0, completionTokens: 0 };
  const warn = (w: TurnWarning): void => {
    warnings.push(w);
    events?.onWarning?.(w);
  };
  if (cost.isPaused()) {
    return { answer: cost.pausedReason?.message ?? 'The router is paused.', calls, warnings, usage, paused: true };
  }
  loops.startTurn(options.turn);
  const guard = new HallucinationGuardTurn();
  const messages: ChatMessage[] = [...truncateHistory(options.history), { role: 'user', text: options.prompt }];
  const definitionsText = JSON.stringify(tools);
  const count = async (text: string): Promise<number> => {
    if (model.countTokens) {
      try {
        return await model.countTokens(text);
      } catch {
        // A model that cannot count falls back to the estimate.
      }
    }
    return estimateTokens(text);
  };

  let definitionTokens: number | undefined;
  /** Each step re-sends every definition, so each step charges them again; their sizes are computed once. */
  const definitionBlame = tools.map((t) => ({ name: t.name, tokens: estimateTokens(JSON.stringify(t)), part: 'definition' as const }));
  let toolMode: 'auto' | 'required' = 'auto';
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  for (let step = 1; step <= maxSteps; step++) {
    const response = await model.send(messages, tools, { toolMode, ...(options.signal ? { signal: options.signal } : {}) });
    // The tool definitions are the same at every step: counted once per turn.
    definitionTokens ??= await count(definitionsText);
    const promptTokens = (await count(messages.map(messageText).join('\n'))) + definitionTokens;
    const completionTokens = await count(response.text + JSON.stringify(response.toolCalls.map((c) => c.input)));
    usage.promptTokens += promptTokens;
    usage.completionTokens += completionTokens;
    const blame = [
      ...definitionBlame,
      ...response.toolCalls.map((c) => ({ name: c.name, tokens: estimateTokens(JSON.stringify(c.input ?? {})), part: 'arguments' as const })),
    ];
    const recorded = cost.record({ promptTokens, completionTokens, calls: response.toolCalls.length, tools: blame });
    if (recorded.pausedNow) {
      const message = cost.pausedReason?.message ?? 'The router paused: the token budget was reached.';
      warn({ kind: 'cost', message });
      return { answer: `${response.text ? `${response.text}\n\n` : ''}${message}`, calls, warnings, usage, paused: true };
    }

    if (response.toolCalls.length === 0) {
      const decision = guard.afterAttempt({ toolCallsMade: calls.length, answer: response.text, toolsOffered: tools.length });
      if (decision.action === 'retry-with-required-tools') {
        warn({ kind: 'hallucination', phrase: decision.claim?.phrase ?? '', outcome: 'retried' });
        events?.onProgress?.('The answer claimed an action no tool performed; asking the model again with tools required.');
        toolMode = 'required';
        continue;
      }
      if (decision.action === 'replace-with-honest-answer') {
        warn({ kind: 'hallucination', phrase: decision.claim?.phrase ?? '', outcome: 'replaced' });
        return { answer: decision.honestAnswer ?? "I wasn't able to complete this action.", calls, warnings, usage, paused: false };
      }
      return { answer: response.text, calls, warnings, usage, paused: false };
    }

    toolMode = 'auto';
    messages.push({ role: 'assistant', text: response.text, toolCalls: response.toolCalls });
    for (const call of response.toolCalls) {
      const tool = options.selection.tools.find((t) => t.name === call.name);
      const check = loops.check(call.name, call.input);
      let envelope: CallEnvelope;
      if (!check.allow) {
        envelope = loopDetectedEnvelope(check, { server: '', tool: call.name, exposedName: call.name });
        warn({ kind: 'loop', tool: call.name, args: call.input, rule: check.rule, message: check.message });
      } else {
        events?.onToolStart?.(call);
        envelope = await router.call(call.name, call.input, options.signal ? { signal: options.signal } : {});
        const facts = resultFactsFor(envelope);
        loops.record(call.name, call.input, facts.digest, facts.isEmpty);
        if (!tool) events?.onProgress?.(`The model called "${call.name}", which was not offered this turn.`);
      }
      events?.onToolEnd?.(call, envelope);
      calls.push({ call, envelope });
      const resultText = envelopeText(envelope);
      cost.record({ promptTokens: 0, completionTokens: 0, tools: [{ name: call.name, tokens: estimateTokens(resultText), part: 'result' }] });
      messages.push({ role: 'tool', callId: call.callId, name: call.name, text: resultText });
    }
  }
  const message = `I stopped after ${maxSteps} steps without a final answer (toolRouter.chat.maxSteps). Ask me to continue if there is more to do.`;
  warn({ kind: 'steps', message });
  return { answer: message, calls, warnings, usage, paused: false };
}

/** What the model reads of a result: the content's text, or the error message with its type. */
export function envelopeText(envelope: CallEnvelope): string {
  const text = (envelope.content ?? [])
    .map((b) => (b.type === 'text' ? String(b['text']) : `[${b.type} content]`))
    .join('\n');
  if (envelope.ok) return text || '(the tool returned no content)';
  return `${envelope.error.type}: ${envelope.error.message}${text && envelope.error.type === 'TOOL_ERROR' ? '' : text ? `\n${text}` : ''}`;
}

function messageText(m: ChatMessage): string {
  if (m.role === 'assistant') return `${m.text}${m.toolCalls?.length ? JSON.stringify(m.toolCalls) : ''}`;
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
