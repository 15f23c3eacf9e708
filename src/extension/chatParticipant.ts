import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { EDITOR_STARTUP_WAIT_MS } from '../core/router/startupWaits';
import type { ConfigService } from './configService';
import { argumentsForConfirmation, type ConfirmAnswer } from '../core/policy/confirmation';
import type { CallPolicy } from '../core/policy/callPolicy';
import { FIND_TOOLS_RESULTS, runChatTurn, type CallConfirmation, type ChatMessage, type ChatModel, type ChatToolDefinition, type TurnResult, type TurnSearch } from '../core/chat/chatTurn';
import { searchHits } from '../core/search/toolSearch';
import type { CostMonitor } from '../core/guards/costMonitor';
import { ChatSessions, chatIdFromHistory } from '../core/chat/chatSessions';
import type { LoopDetectorOptions, LoopTurnHistory } from '../core/guards/loopDetector';
import type { Selection } from '../core/selection/selectionTypes';
import type { RouterService } from './routerService';
import type { SelectionService } from './selectionService';
import type { UsageLearning } from './usageLearning';
import { waitAtMost } from '../core/util/waitAtMost';

/**
 * `@router`: for each request, select tools for the prompt (sticky and `#`-referenced tools included),
 * call `request.model` with only those tools and a search tool for the rest, run each call through the
 * router (a destructive tool asks first), and stream the answer. The turn itself is the core's
 * {@link runChatTurn}; this file only adapts VS Code's chat API to it.
 */

export const PARTICIPANT_ID = 'toolRouter.router';
/** Past this many tools in the catalogue, descriptions sent to the model are cut to one sentence. */
const SHORT_DESCRIPTIONS_ABOVE = 60;
const SHORT_DESCRIPTION_CHARS = 200;

/**
 * Finished turns kept for the panel, across chats: enough to scroll back through a working session, and a
 * bound, so a long-running window does not grow without end.
 */
export const MAX_HISTORY_TURNS = 200;

/** One finished turn, as the panel and tests see it. */
export interface TurnRecord {
  /** Numbered across all chats, for the panel. */
  readonly turn: number;
  /** The chat conversation it belongs to, and its number within that chat. */
  readonly chatId: string;
  readonly chatTurn: number;
  readonly prompt: string;
  readonly selection: Selection;
  readonly result: TurnResult;
  readonly at: number;
}

export class RouterParticipant implements vscode.Disposable {
  private turnCounter = 0;
  /** Tools the user allowed to run without asking until the window closes ("Run, and allow it this session"). */
  private readonly allowedThisSession = new Set<string>();
  private readonly turnFinished = new vscode.EventEmitter<TurnRecord>();
  /** Every turn's selection, calls, tokens and warnings: the panel subscribes to this stream. */
  readonly onDidFinishTurn = this.turnFinished.event;
  readonly history: TurnRecord[] = [];

  /** Each chat conversation's sticky tools, loop detector and turn count. */
  readonly chats: ChatSessions;

  constructor(
    private readonly service: RouterService,
    private readonly selection: SelectionService,
    private readonly config: ConfigService,
    readonly cost: CostMonitor,
    /** The loop detector's settings, read when a chat starts. */
    loopOptions: () => LoopDetectorOptions,
    /** Learning from use: each turn's prompt, offered tools and called tools are recorded (when on). */
    private readonly learning?: UsageLearning,
  ) {
    this.chats = new ChatSessions({ loopOptions });
  }

  /** The loop history of the chat that ran last (what the panel shows). */
  loopHistory(): LoopTurnHistory[] {
    return this.chats.latest?.loops.history() ?? [];
  }

  readonly handler: vscode.ChatRequestHandler = async (request, context, stream, token) => {
    const chat = this.chats.get(chatIdFromHistory(context.history, PARTICIPANT_ID, () => randomUUID()));
    const chatTurn = ++chat.turns;
    const turn = ++this.turnCounter;
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort());
    if (this.cost.isPaused()) {
      stream.markdown(this.cost.pausedReason?.message ?? vscode.l10n.t('The router is paused. Run "Tool Router: Resume" to continue.'));
      return { metadata: { chatId: chat.id, paused: true } };
    }
    await this.whenRankable(stream);
    const pinned = request.toolReferences.map((r) => r.name).filter((name) => this.service.router.getTool(name) !== undefined);
    stream.progress(vscode.l10n.t('Selecting tools…'));
    const selection = await this.selection.select(request.prompt, { turn: chatTurn, pinned, sticky: chat.sticky, signal: controller.signal });
    await this.whenListed(selection.tools.map((t) => t.name), stream);
    const policy = this.config.callPolicy();
    const router = this.service.router;
    const result = await runChatTurn({
      prompt: request.prompt,
      history: historyMessages(context),
      selection,
      tools: this.toolDefinitions(selection.tools.map((t) => t.name)),
      model: vscodeModel(request.model, token),
      router,
      loops: chat.loops,
      cost: this.cost,
      turn: chatTurn,
      maxSteps: this.config.get('chat.maxSteps'),
      cap: this.config.get('selection.cap'),
      signal: controller.signal,
      policy,
      confirm: (call) => this.askToRun(call),
      hintsOf: (name) => router.getTool(name)?.annotations,
      search: this.turnSearch(policy),
      events: {
        onProgress: (m) => stream.progress(m),
        onToolStart: (call) => stream.progress(vscode.l10n.t('Calling {0}…', call.name)),
        onWarning: (w) => this.service.log.warn(`Turn ${turn}: ${w.kind}: ${'message' in w ? w.message : w.phrase}`),
        onText: (text) => stream.markdown(text),
      },
    });
    for (const f of result.found) this.service.log.info(`Turn ${turn}: found "${f.name}" with "${f.query}"${f.offered ? (f.replaced ? ` (offered in place of ${f.replaced})` : ' (offered)') : ' (not offered: the cap is full)'}.`);
    // Sticky tools are the ones that ran: not refused loops, nor destructive calls that were declined or refused.
    const called = [...new Set(result.calls.filter((c) => (c.envelope.ok || c.envelope.error.type !== 'LOOP_DETECTED') && (c.confirmation === undefined || c.confirmation === 'confirmed')).map((c) => c.call.name))];
    chat.sticky.record(chatTurn, called);
    this.learning?.recordTurn(request.prompt, selection.tools.map((t) => t.name), result.calls.map((c) => c.call.name));
    if (!result.streamed) stream.markdown(result.answer);
    const record: TurnRecord = { turn, chatId: chat.id, chatTurn, prompt: request.prompt, selection, result, at: Date.now() };
    this.history.push(record);
    if (this.history.length > MAX_HISTORY_TURNS) this.history.splice(0, this.history.length - MAX_HISTORY_TURNS);
    this.turnFinished.fire(record);
    return { metadata: { chatId: chat.id, turn, chatTurn, tools: selection.tools.map((t) => t.name), calls: called, paused: result.paused } };
  };

  dispose(): void {
    this.turnFinished.dispose();
  }

  /**
   * A prompt that comes while servers start waits (bounded) for those selection cannot rank yet: the
   * ones without a saved tool list. It is not answered without their tools.
   */
  private async whenRankable(stream: vscode.ChatResponseStream): Promise<void> {
    await waitAtMost(Promise.all([this.service.whenLoaded(), this.selection.savedListsRead]), EDITOR_STARTUP_WAIT_MS);
    const unranked = this.selection.unrankedStartingServers();
    if (unranked.length === 0) return;
    stream.progress(vscode.l10n.t('Waiting for {0} to start…', unranked.join(', ')));
    await Promise.all(unranked.map((s) => this.service.router.getConnection(s)?.whenSettled(EDITOR_STARTUP_WAIT_MS)));
  }

  /** Selected tools ranked from a saved list are offered only once their server lists them (bounded wait). */
  private async whenListed(names: readonly string[], stream: vscode.ChatResponseStream): Promise<void> {
    const saved = names.filter((n) => this.selection.isSavedOnly(n));
    if (saved.length === 0) return;
    const router = this.service.router;
    const servers = [...new Set(saved.map((n) => router.unreadyOwnersOf(n).map((s) => s.name)).flat())];
    stream.progress(vscode.l10n.t('Waiting for {0} to start…', servers.join(', ') || saved.join(', ')));
    const listed = await Promise.all(saved.map((n) => router.waitForTool(n, EDITOR_STARTUP_WAIT_MS)));
    const missing = saved.filter((_, i) => !listed[i]);
    if (missing.length) this.service.log.warn(`Selected tools not offered because their server did not list them: ${missing.join(', ')}.`);
  }

  private toolDefinitions(names: readonly string[]): ChatToolDefinition[] {
    const short = this.service.router.listTools().length > SHORT_DESCRIPTIONS_ABOVE;
    return names.flatMap((name) => {
      const tool = this.service.router.getTool(name);
      if (!tool) return [];
      const description = short ? firstSentence(tool.description, SHORT_DESCRIPTION_CHARS) : tool.description;
      return [{ name: tool.name, description, inputSchema: tool.inputSchema, annotations: tool.annotations }];
    });
  }

  /** The search tool's ranking: agent mode's search (selection on the query), without quarantined tools, and without destructive ones under `never`. */
  private turnSearch(policy: CallPolicy): TurnSearch {
    const router = this.service.router;
    return {
      search: async (query, signal) => {
        const ranked = await this.selection.select(query, signal ? { signal } : {});
        return searchHits(ranked, (name) => router.getTool(name), {
          limit: FIND_TOOLS_RESULTS,
          quarantined: this.selection.quarantinedTools(),
          policy,
        });
      },
      definition: (name) => this.toolDefinitions([name])[0],
    };
  }

  /**
   * Asks before a call that needs a yes, with a modal question naming the tool, its server and its
   * arguments. Modal, because it can be awaited inside the running request: chat buttons run a command
   * only after the response, and a chat confirmation part answers in a new request, so the turn could not
   * go on. As in agent mode, a tool can be allowed for the rest of the window's session.
   */
  private async askToRun(call: CallConfirmation): Promise<ConfirmAnswer> {
    if (this.allowedThisSession.has(call.tool)) return { answer: 'yes' };
    const tool = this.service.router.getTool(call.tool);
    // The turn answers names no server lists itself; one that vanished while the turn ran is not asked about.
    if (!tool) return { answer: 'failed', reason: vscode.l10n.t('no server lists a tool of that name') };
    const run: vscode.MessageItem = { title: vscode.l10n.t('Run') };
    const allow: vscode.MessageItem = { title: vscode.l10n.t('Run, and allow it this session') };
    // The dialog's own close button, so it does not add a "Cancel" beside it.
    const dontRun: vscode.MessageItem = { title: vscode.l10n.t("Don't run"), isCloseAffordance: true };
    const question = call.markedDestructive
      ? vscode.l10n.t('@router wants to run {0}, which its server marks as destructive. Run it?', call.tool)
      : vscode.l10n.t('@router wants to run {0}, which its server does not mark as read-only. Run it?', call.tool);
    const answer = await vscode.window.showWarningMessage(
      question,
      {
        modal: true,
        detail: vscode.l10n.t('Server: {0}\n\nArguments:\n{1}', tool.server, argumentsForConfirmation(call.args)),
      },
      run,
      allow,
      dontRun,
    );
    if (answer === allow) this.allowedThisSession.add(call.tool);
    return answer === run || answer === allow ? { answer: 'yes' } : { answer: 'no' };
  }
}

function firstSentence(text: string, max: number): string {
  const sentence = /^(.+?[.!?])(\s|$)/s.exec(text)?.[1] ?? text;
  return sentence.length > max ? `${sentence.slice(0, max - 1)}…` : sentence;
}

/** Earlier turns of this chat as plain messages: prompts and the participant's answers (tool details are not kept by VS Code). */
function historyMessages(context: vscode.ChatContext): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const turn of context.history) {
    if (turn instanceof vscode.ChatRequestTurn) out.push({ role: 'user', text: turn.prompt });
    else if (turn instanceof vscode.ChatResponseTurn) {
      const text = turn.response.map((part) => (part instanceof vscode.ChatResponseMarkdownPart ? part.value.value : '')).join('');
      if (text) out.push({ role: 'assistant', text });
    }
  }
  return out;
}

/** Adapts `request.model` to the core's ChatModel seam. */
export function vscodeModel(model: vscode.LanguageModelChat, token: vscode.CancellationToken): ChatModel {
  return {
    async send(messages, tools, options) {
      const response = await model.sendRequest(
        messages.map(toVscodeMessage),
        {
          tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as object })),
          ...(tools.length > 0 ? { toolMode: options.toolMode === 'required' ? vscode.LanguageModelChatToolMode.Required : vscode.LanguageModelChatToolMode.Auto } : {}),
        },
        token,
      );
      let text = '';
      const toolCalls: Array<{ callId: string; name: string; input: unknown }> = [];
      for await (const part of response.stream) {
        if (part instanceof vscode.LanguageModelTextPart) {
          text += part.value;
          options.onText?.(part.value);
        }
        else if (part instanceof vscode.LanguageModelToolCallPart) toolCalls.push({ callId: part.callId, name: part.name, input: part.input });
      }
      return { text, toolCalls };
    },
    countTokens: (text) => Promise.resolve(model.countTokens(text, token)),
  };
}

function toVscodeMessage(m: ChatMessage): vscode.LanguageModelChatMessage {
  switch (m.role) {
    case 'user':
      return vscode.LanguageModelChatMessage.User(m.text);
    case 'assistant':
      return vscode.LanguageModelChatMessage.Assistant([
        ...(m.text ? [new vscode.LanguageModelTextPart(m.text)] : []),
        ...(m.toolCalls ?? []).map((c) => new vscode.LanguageModelToolCallPart(c.callId, c.name, (c.input ?? {}) as object)),
      ]);
    case 'tool':
      return vscode.LanguageModelChatMessage.User([new vscode.LanguageModelToolResultPart(m.callId, [new vscode.LanguageModelTextPart(m.text)])]);
  }
}
