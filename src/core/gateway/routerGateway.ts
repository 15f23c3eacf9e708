import { SdkErrorCode, Server, type CallToolResult, type CreateMessageRequest, type ElicitRequest, type InputRequiredResult, type LoggingLevel, type LoggingMessageNotification, type Tool, type Transport } from '@modelcontextprotocol/server';
import type { CallerFeatures } from '../connection/clientFeatures';
import { offerTool, type CallAudience } from '../policy/callPolicy';
import { confirmationMarkdown, type ConfirmAnswer } from '../policy/confirmation';
import type { SearchHit } from '../search/toolSearch';
import type { RoutedTool, ToolRouter } from '../router/toolRouter';
import { isRecord } from '../util/isRecord';
import { GatewayCore, progressSender, type CallContext, type GatewayCoreOptions, type GatewaySelection } from './gatewayCore';
import { registerFeatureHandlers } from './gatewayFeatures';
import { isBelow, type GatewaySession } from './gatewayHub';
import { CALL_TOOL, CALL_TOOL_NAME, META_TOOLS, SEARCH_TOOL, errorResult, toMcpTool } from './gatewayTools';
import { InstructionsTransport } from './instructionsTransport';
import { describeError } from '../errors/describeError';

/**
 * The router as one MCP server, for one 2025 session (the CLI's `serve` over stdio, one HTTP session, VS
 * Code's MCP server definition): instead of every routed tool, the client sees a search tool and a call tool,
 * and, with `dynamicSubset`, the last search's top tools under their own names, announced with
 * `notifications/tools/list_changed`. Search, routing and the call policy are the {@link GatewayCore}'s; this
 * class holds what a session has of its own: the subset, the log level it asked for, its subscriptions, and
 * confirmations asked by pushing an elicitation. Everything else the servers offer passes through as it is:
 * resources (with subscriptions), templates, prompts (named `{server}_{prompt}`), completions, log messages
 * and instructions (gatewayFeatures.ts, gatewayHub.ts).
 */

/** Still imported by name from here by the benchmarks and the reliability cases. */
export { CALL_TOOL_NAME };

/** Tools of the dynamic subset: a search's top few, enough for a multi-step task and far below the selection cap. */
export const MAX_DYNAMIC_TOOLS = 8;

export class RouterGateway {
  readonly server: Server;
  readonly core: GatewayCore;
  private subset: string[] = [];
  /** The dynamic tools' definitions as last announced (none at first), to send list_changed only on a real change. */
  private announced = JSON.stringify([]);
  private connected = false;
  /** The client sent `initialized`: from then on the servers' notifications are passed on to it. */
  private initialized = false;
  private readonly ownsCore: boolean;
  private readonly offTools: () => void;
  private leaveHub: () => void = () => undefined;
  /** The level this session's client asked for with logging/setLevel; nothing is dropped before it asks. */
  private level: LoggingLevel | undefined;

  /** A session over a shared core, or over a core of its own (made from the router and selection, closed with it). */
  constructor(core: GatewayCore);
  constructor(router: ToolRouter, selection: GatewaySelection, options?: GatewayCoreOptions);
  constructor(coreOrRouter: GatewayCore | ToolRouter, selection?: GatewaySelection, options: GatewayCoreOptions = {}) {
    this.ownsCore = !(coreOrRouter instanceof GatewayCore);
    this.core = coreOrRouter instanceof GatewayCore ? coreOrRouter : new GatewayCore(coreOrRouter, selection!, options);
    const core = this.core;
    this.server = new Server(core.serverInfo, {
      // Declared always: a server that starts later may offer resources or prompts; until then the lists are empty.
      capabilities: { tools: { listChanged: true }, logging: {}, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, completions: {} },
      instructions: core.ownInstructions(this.dynamic),
      // Servers restarting together announce their lists once per tick, not once each.
      debouncedNotificationMethods: ['notifications/resources/list_changed', 'notifications/prompts/list_changed'],
    });
    this.server.onerror = (error) => this.log(`gateway protocol error: ${error.message}`);
    this.server.oninitialized = () => (this.initialized = true);
    this.server.setRequestHandler('tools/list', () => ({ tools: this.listTools() }));
    this.server.setRequestHandler('logging/setLevel', async (request) => {
      this.level = request.params.level;
      await core.hub.setLevel(this.session, request.params.level);
      return {};
    });
    registerFeatureHandlers(this.server, core.hub, this.session, { startupWaitMs: core.startupWaitMs });
    this.server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args } = request.params;
      try {
        return await this.callTool(name, args, ctx.mcpReq.signal, progressSender(ctx.mcpReq));
      } catch (error) {
        // Defensive: the paths below return results, but a client must never see a handler throw.
        return errorResult(`The router gateway failed while running "${name}": ${describeError(error)}`);
      }
    });
    this.offTools = core.router.onDidChangeTools(() => void this.announceIfChanged());
  }

  /** The names of the dynamic subset, best first (empty unless `dynamicSubset`). */
  get dynamicTools(): readonly string[] {
    return this.subset;
  }

  async connect(transport: Transport): Promise<void> {
    await this.served().connect(new InstructionsTransport(transport, () => this.instructions()));
  }

  /**
   * Joins the hub and returns the server, for an owner that connects it itself (`serveStdio`, which then
   * wraps its transport in an {@link InstructionsTransport}).
   */
  served(): Server {
    this.leaveHub = this.core.hub.join(this.session);
    this.connected = true;
    return this.server;
  }

  async close(): Promise<void> {
    this.offTools();
    this.leaveHub();
    if (this.ownsCore) this.core.dispose();
    this.connected = false;
    this.initialized = false;
    await this.server.close();
  }

  /** The gateway's own instructions, then each routed server's (see {@link GatewayCore.instructions}). */
  instructions(): Promise<string> {
    return this.core.instructions(this.dynamic);
  }

  private get dynamic(): boolean {
    return this.core.options.dynamicSubset ?? false;
  }

  private log(message: string): void {
    this.core.log(message);
  }

  /** What the hub tells this session: a subscribed resource changed, a list changed, a server logged. */
  private readonly session: GatewaySession = {
    resourceUpdated: (uri) => {
      if (this.connected && this.initialized) this.server.sendResourceUpdated({ uri }).catch(() => undefined);
    },
    listChanged: (list) => {
      if (!this.connected || !this.initialized) return;
      (list === 'resources' ? this.server.sendResourceListChanged() : this.server.sendPromptListChanged()).catch(() => undefined);
    },
    serverLog: (server, params) => {
      if (this.initialized) this.sendLog({ ...params, logger: server });
    },
  };

  /** A log message for the client, unless it asked for a higher level (logging/setLevel). */
  private sendLog(params: LoggingMessageNotification['params']): void {
    if (!this.connected || isBelow(params.level, this.level)) return;
    this.server.sendLoggingMessage(params).catch(() => undefined);
  }

  /** What `tools/list` answers: the two gateway tools, then the dynamic subset as the router defines it now. */
  listTools(): Tool[] {
    return [SEARCH_TOOL, CALL_TOOL, ...this.subsetTools().map(toMcpTool)];
  }

  /** Answers a call of a gateway tool or, with the dynamic subset, of a routed tool by its own name. */
  callTool(name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal, onProgress?: CallContext['onProgress']): Promise<CallToolResult | InputRequiredResult> {
    return this.core.callTool(name, args, this.callContext(signal, onProgress));
  }

  private callContext(signal?: AbortSignal, onProgress?: CallContext['onProgress']): CallContext {
    return {
      audience: this.audience(),
      caller: this.callerFeatures(),
      ...(signal ? { signal } : {}),
      ...(onProgress ? { onProgress } : {}),
      confirm: (tool, args) => this.confirm(tool, args, signal),
      ...(this.dynamic ? { subset: { afterSearch: (hits: readonly SearchHit[]) => this.afterSearch(hits) } } : {}),
    };
  }

  /** A search's top tools become the listed subset; the model is told they are listed. */
  private async afterSearch(hits: readonly SearchHit[]): Promise<string> {
    this.subset = this.subsetFrom(hits);
    await this.announceIfChanged();
    return `${this.subset.length} of these are now also listed as tools of their own; any of them can be called with ${CALL_TOOL_NAME} {"name", "arguments"}.`;
  }

  /**
   * The subset a search leaves listed: its top tools that run without a question (a client lists its
   * tools as ordinary ones; those that ask stay reachable through the call tool), and no routed tool whose
   * name would shadow a gateway tool.
   */
  private subsetFrom(hits: readonly SearchHit[]): string[] {
    const policy = this.core.selection.selector.options.callPolicy;
    const audience = this.audience();
    return hits
      .filter((h) => {
        const offer = offerTool(policy, h, audience);
        return !META_TOOLS.has(h.name) && offer.offered && !offer.asks;
      })
      .slice(0, MAX_DYNAMIC_TOOLS)
      .map((h) => h.name);
  }

  private subsetTools(): RoutedTool[] {
    if (!this.dynamic) return [];
    return this.subset.map((name) => this.core.router.getTool(name)).filter((t): t is RoutedTool => t !== undefined);
  }

  /**
   * A gateway event for the operator's log and for the client, as a log message (notifications/message),
   * unless the client asked for a higher level.
   */
  private note(level: LoggingLevel, message: string): void {
    this.log(message);
    this.sendLog({ level, logger: 'mcp-tool-router', data: message });
  }

  /** Sends list_changed when the listed subset differs from what the client was last told. */
  private async announceIfChanged(): Promise<void> {
    if (!this.dynamic) return;
    const listed = JSON.stringify(this.subsetTools().map(toMcpTool));
    if (listed === this.announced) return;
    this.announced = listed;
    if (!this.connected) return;
    try {
      await this.server.sendToolListChanged();
      this.note('info', `tools/list changed: ${this.subset.join(', ') || '(no dynamic tools)'}`);
    } catch (error) {
      this.log(`could not send tools/list_changed: ${describeError(error)}`);
    }
  }

  /** What this session's client can answer itself: a routed server's questions and model requests go to it. */
  private callerFeatures(): CallerFeatures {
    const capabilities = this.server.getClientCapabilities();
    return {
      ...(capabilities?.elicitation ? { elicit: (params: ElicitRequest['params'], signal: AbortSignal) => this.server.elicitInput(params, { signal }) } : {}),
      ...(capabilities?.sampling ? { sample: (params: CreateMessageRequest['params'], signal: AbortSignal) => this.server.createMessage(params, { signal }) } : {}),
    };
  }

  /** Who this session's client is to the call policy: it can ask its user only if it declared elicitation. */
  private audience(): CallAudience {
    return { canAsk: this.server.getClientCapabilities()?.elicitation !== undefined };
  }

  /**
   * Asks the user, through the client, before a destructive tool runs: an elicitation naming the tool, its
   * server and its arguments, which the user accepts or declines. Only called for a client that elicits.
   */
  private async confirm(tool: RoutedTool, args: unknown, signal?: AbortSignal): Promise<ConfirmAnswer> {
    const timeout = this.core.confirmTimeoutMs;
    try {
      const answer = await this.server.elicitInput(
        { message: `Run ${tool.name}? ${confirmationMarkdown(tool, args, true)}`, requestedSchema: { type: 'object', properties: {} } },
        { timeout, ...(signal ? { signal } : {}) },
      );
      return answer.action === 'accept' ? { answer: 'yes' } : { answer: 'no' };
    } catch (error) {
      // By code, not class: the error may come from another package's copy of SdkError.
      if (isRecord(error) && error['code'] === SdkErrorCode.RequestTimeout) {
        this.note('warning', `the confirmation for ${tool.name} timed out after ${timeout} ms`);
        return { answer: 'timed-out', waitedMs: timeout };
      }
      const reason = describeError(error);
      this.note('warning', `could not ask the client to confirm ${tool.name}: ${reason}`);
      return { answer: 'failed', reason };
    }
  }
}
