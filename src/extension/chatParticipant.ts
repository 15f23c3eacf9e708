import * as vscode from 'vscode';
import { runChatTurn, type ChatMessage, type ChatModel, type ChatToolDefinition, type TurnResult } from '../core/chat/chatTurn';
import type { CostMonitor } from '../core/guards/costMonitor';
import type { LoopDetector } from '../core/guards/loopDetector';
import type { Selection } from '../core/selection/selectionTypes';
import type { RouterService } from './routerService';
import type { SelectionService } from './selectionService';
import { SETTINGS_SECTION, SETTING_DEFAULTS } from './settings';
import type { UsageLearning } from './usageLearning';

/**
 * `@router`: for each request, select tools for the prompt (sticky and `#`-referenced tools included),
 * call `request.model` with only those tools, run each call through the router, and stream the answer.
 * The turn itself is the core's {@link runChatTurn}; this file only adapts VS Code's chat API to it.
 */

export const PARTICIPANT_ID = 'toolRouter.router';
/** Past this many tools in the catalogue, descriptions sent to the model are cut to one sentence. */
const SHORT_DESCRIPTIONS_ABOVE = 60;
const SHORT_DESCRIPTION_CHARS = 200;

/** One finished turn, as the panel and tests see it. */
export interface TurnRecord {
  readonly turn: number;
  readonly prompt: string;
  readonly selection: Selection;
  readonly result: TurnResult;
  readonly at: number;
}

export class RouterParticipant implements vscode.Disposable {
  private turnCounter = 0;
  private readonly turnFinished = new vscode.EventEmitter<TurnRecord>();
  /** Every turn's selection, calls, tokens and warnings: the panel subscribes to this stream. */
  readonly onDidFinishTurn = this.turnFinished.event;
  readonly history: TurnRecord[] = [];

  constructor(
    private readonly service: RouterService,
    private readonly selection: SelectionService,
    readonly cost: CostMonitor,
    readonly loops: LoopDetector,
    /** Learning from use: each turn's prompt, offered tools and called tools are recorded (when on). */
    private readonly learning?: UsageLearning,
  ) {}

  readonly handler: vscode.ChatRequestHandler = async (request, context, stream, token) => {
    const turn = ++this.turnCounter;
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort());
    if (this.cost.isPaused()) {
      stream.markdown(this.cost.pausedReason?.message ?? vscode.l10n.t('The router is paused. Run "Tool Router: Resume" to continue.'));
      return { metadata: { paused: true } };
    }
    const pinned = request.toolReferences.map((r) => r.name).filter((name) => this.service.router.getTool(name) !== undefined);
    stream.progress(vscode.l10n.t('Selecting tools…'));
    const selection = await this.selection.select(request.prompt, { turn, pinned, signal: controller.signal });
    const tools = this.toolDefinitions(selection);
    const result = await runChatTurn({
      prompt: request.prompt,
      history: historyMessages(context),
      selection,
      tools,
      model: vscodeModel(request.model, token),
      router: this.service.router,
      loops: this.loops,
      cost: this.cost,
      turn,
      maxSteps: vscode.workspace.getConfiguration(SETTINGS_SECTION).get<number>('chat.maxSteps', SETTING_DEFAULTS['chat.maxSteps']),
      signal: controller.signal,
      events: {
        onProgress: (m) => stream.progress(m),
        onToolStart: (call) => stream.progress(vscode.l10n.t('Calling {0}…', call.name)),
        onWarning: (w) => this.service.log.warn(`Turn ${turn}: ${w.kind}: ${'message' in w ? w.message : w.phrase}`),
      },
    });
    const called = [...new Set(result.calls.filter((c) => c.envelope.ok || c.envelope.error.type !== 'LOOP_DETECTED').map((c) => c.call.name))];
    (await this.selection.getEngine()).selector.sticky.record(turn, called);
    this.learning?.recordTurn(request.prompt, selection.tools.map((t) => t.name), result.calls.map((c) => c.call.name));
    stream.markdown(result.answer);
    const record: TurnRecord = { turn, prompt: request.prompt, selection, result, at: Date.now() };
    this.history.push(record);
    this.turnFinished.fire(record);
    return { metadata: { turn, tools: selection.tools.map((t) => t.name), calls: called, paused: result.paused } };
  };

  dispose(): void {
    this.turnFinished.dispose();
  }

  private toolDefinitions(selection: Selection): ChatToolDefinition[] {
    const short = this.service.router.listTools().length > SHORT_DESCRIPTIONS_ABOVE;
    return selection.tools.flatMap((t) => {
      const tool = this.service.router.getTool(t.name);
      if (!tool) return [];
      const description = short ? firstSentence(tool.description, SHORT_DESCRIPTION_CHARS) : tool.description;
      return [{ name: tool.name, description, inputSchema: tool.inputSchema }];
    });
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
        if (part instanceof vscode.LanguageModelTextPart) text += part.value;
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
