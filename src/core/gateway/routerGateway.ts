import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, SetLevelRequestSchema, type CallToolResult, type CreateMessageRequest, type ElicitRequest, type LoggingLevel, type LoggingMessageNotification, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { CallerFeatures } from '../connection/clientFeatures';
import type { CallEnvelope } from '../router/callEnvelope';
import { decideCall, offerTool, type CallAudience } from '../policy/callPolicy';
import { confirmationMarkdown, unconfirmedMessage, type ConfirmAnswer } from '../policy/confirmation';
import { searchHits, type SearchHit } from '../chat/toolSearch';
import type { ToolIndex } from '../selection/toolIndex';
import type { ToolSelector } from '../selection/toolSelector';
import type { RoutedTool, ToolRouter } from '../router/toolRouter';
import { isRecord } from '../util/isRecord';
import { registerFeatureHandlers } from './gatewayFeatures';
import { GatewayHub, isBelow, type GatewaySession } from './gatewayHub';
import { InstructionsTransport } from './instructionsTransport';

/**
 * The router as one MCP server, for any MCP client (the CLI's `serve`, VS Code's MCP server definition):
 * instead of every routed tool, the client sees a search tool and a call tool, and, with
 * `dynamicSubset`, the last search's top tools under their own names, announced with
 * `notifications/tools/list_changed`. Every answer to a tool call is a tool result; no tool handler throws.
 * Everything else the servers offer passes through as it is: resources (with subscriptions), templates,
 * prompts (named `{server}_{prompt}`), completions, log messages and instructions (gatewayFeatures.ts,
 * gatewayHub.ts).
 */

export const SEARCH_TOOL_NAME = 'toolRouter_searchTools';
export const CALL_TOOL_NAME = 'toolRouter_callTool';
/** Enough to choose from for one task; a client that wants more asks for it. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Past 50 results a search costs as many tokens as listing a mid-sized catalogue, which it exists to avoid. */
export const MAX_SEARCH_LIMIT = 50;
/**
 * Tools of the dynamic subset: a search's top few. The dev sets' tasks need 2–6 tools, so 8 covers a
 * multi-step task while the client's list stays far below the selection cap (25).
 */
export const MAX_DYNAMIC_TOOLS = 8;
/** How long a search or call waits for servers that are still starting (a first `npx` start is slow). */
export const DEFAULT_STARTUP_WAIT_MS = 30_000;
/** How long a person has to answer a confirmation: time to read the call, short enough that a forgotten question ends. */
export const DEFAULT_CONFIRM_TIMEOUT_MS = 120_000;
/** How long a search waits for the embedding index of new tools; after that it ranks on keywords. */
export const DEFAULT_INDEX_WAIT_MS = 10_000;
/**
 * How long the answer to initialize waits for servers still starting, so their instructions are in it (MCP
 * cannot update instructions later). A local server starts in well under a second; a slow first `npx`
 * start is not worth holding the client for, and its tools still arrive with tools/list_changed.
 */
export const INSTRUCTIONS_WAIT_MS = 5_000;
/** One server's instructions are cut here: clients send them with every request, and one server must not crowd out the rest. */
export const MAX_SERVER_INSTRUCTIONS_CHARS = 8_000;

/** What the gateway needs from selection; a SelectionEngine fits. */
export interface GatewaySelection {
  readonly selector: ToolSelector;
  readonly index?: ToolIndex;
  /** Exposed name → why the tool is quarantined (poisoning flags); left out of search results. */
  readonly quarantine?: () => ReadonlyMap<string, string>;
}

export interface RouterGatewayOptions {
  /** Also list the last search's top tools directly, and announce changes with list_changed. */
  readonly dynamicSubset?: boolean;
  /**
   * Keep the selector's catalogue equal to the router's tools (default true). Turn off when something
   * else already does, such as the extension's SelectionService.
   */
  readonly syncCatalogue?: boolean;
  readonly startupWaitMs?: number;
  readonly indexWaitMs?: number;
  readonly confirmTimeoutMs?: number;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  readonly log?: (message: string) => void;
  /** Learning from use: each search's query and the tools it returned. */
  readonly onSearch?: (query: string, tools: readonly string[]) => void;
  /** Learning from use: each routed tool the client called through the gateway. */
  readonly onCall?: (tool: string) => void;
  /**
   * What the sessions over one router share (resource owners, subscriptions, the servers' log level). A
   * host serving many sessions passes one; without it the gateway makes its own and disposes of it on close.
   */
  readonly hub?: GatewayHub;
}

/** One search result, as the client receives it (shared with agent mode and `@router`). */
export type { SearchHit };

export interface SearchAnswer {
  readonly query: string;
  /** `embedding+keyword`, or `keyword-only` while the embedder is unavailable. */
  readonly method: string;
  readonly tools: readonly SearchHit[];
  /** What to do next, in one sentence for the model. */
  readonly next: string;
}

type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const SEARCH_TOOL: Tool = {
  name: SEARCH_TOOL_NAME,
  title: 'Search tools',
  description:
    'Find the tools best suited to a task among every tool of the MCP servers behind this router. Returns the best matches first, each with its name, server, description, relevance score and input schema. Call the one you need with toolRouter_callTool.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The task in plain words, e.g. "read a file" or "add a note to my knowledge graph".' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT, description: 'How many tools to return.' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const CALL_TOOL: Tool = {
  name: CALL_TOOL_NAME,
  title: 'Call a tool',
  description:
    'Call any tool of the MCP servers behind this router by its name (as returned by toolRouter_searchTools). The arguments are checked against the tool\'s input schema first; errors name each wrong argument. Returns the result envelope as JSON.',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The tool\'s name, e.g. "files_read_file".' },
      arguments: { type: 'object', description: 'The tool\'s arguments, matching its input schema.' },
    },
    required: ['name'],
    additionalProperties: false,
  },
};

const META_TOOLS: ReadonlySet<string> = new Set([SEARCH_TOOL_NAME, CALL_TOOL_NAME]);

export class RouterGateway {
  readonly server: Server;
  private subset: string[] = [];
  /** The dynamic tools' definitions as last announced (none at first), to send list_changed only on a real change. */
  private announced = JSON.stringify([]);
  private connected = false;
  /** The client sent `initialized`: from then on the servers' notifications are passed on to it. */
  private initialized = false;
  private readonly offTools: () => void;
  private readonly log: (message: string) => void;
  private readonly hub: GatewayHub;
  private readonly ownsHub: boolean;
  private leaveHub: () => void = () => undefined;
  /** The level this session's client asked for with logging/setLevel; nothing is dropped before it asks. */
  private level: LoggingLevel | undefined;

  constructor(
    private readonly router: ToolRouter,
    private readonly selection: GatewaySelection,
    private readonly options: RouterGatewayOptions = {},
  ) {
    this.log = options.log ?? (() => undefined);
    this.ownsHub = options.hub === undefined;
    this.hub = options.hub ?? new GatewayHub(router, this.log);
    this.server = new Server(options.serverInfo ?? { name: 'mcp-tool-router', version: 'dev' }, {
      // Declared always: a server that starts later may offer resources or prompts; until then the lists are empty.
      capabilities: { tools: { listChanged: true }, logging: {}, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, completions: {} },
      instructions: this.ownInstructions(),
      // Servers restarting together announce their lists once per tick, not once each.
      debouncedNotificationMethods: ['notifications/resources/list_changed', 'notifications/prompts/list_changed'],
    });
    this.server.onerror = (error) => this.log(`gateway protocol error: ${error.message}`);
    this.server.oninitialized = () => (this.initialized = true);
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listTools() }));
    this.server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      this.level = request.params.level;
      await this.hub.setLevel(this.session, request.params.level);
      return {};
    });
    registerFeatureHandlers(this.server, this.hub, this.session, { startupWaitMs: options.startupWaitMs ?? DEFAULT_STARTUP_WAIT_MS });
    this.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args } = request.params;
      try {
        return await this.callTool(name, args, extra.signal);
      } catch (error) {
        // Defensive: the paths below return results, but a client must never see a handler throw.
        return errorResult(`The router gateway failed while running "${name}": ${error instanceof Error ? error.message : String(error)}`);
      }
    });
    const syncCatalogue = options.syncCatalogue ?? true;
    if (syncCatalogue) selection.selector.setCatalogue(router.listTools());
    this.offTools = router.onDidChangeTools((tools) => {
      if (syncCatalogue) selection.selector.setCatalogue(tools);
      void this.announceIfChanged();
    });
  }

  /** The names of the dynamic subset, best first (empty unless `dynamicSubset`). */
  get dynamicTools(): readonly string[] {
    return this.subset;
  }

  async connect(transport: Transport): Promise<void> {
    this.leaveHub = this.hub.join(this.session);
    await this.server.connect(new InstructionsTransport(transport, () => this.instructions()));
    this.connected = true;
  }

  async close(): Promise<void> {
    this.offTools();
    this.leaveHub();
    if (this.ownsHub) this.hub.dispose();
    this.connected = false;
    this.initialized = false;
    await this.server.close();
  }

  /** The gateway's own instructions, then each routed server's (see {@link GatewayHub.instructions}). */
  async instructions(): Promise<string> {
    await this.hub.whenStarted(INSTRUCTIONS_WAIT_MS);
    return this.hub.instructions(this.ownInstructions(), MAX_SERVER_INSTRUCTIONS_CHARS);
  }

  private ownInstructions(): string {
    return `Every tool of the routed MCP servers is reachable through two tools: ${SEARCH_TOOL_NAME} finds the right ones for a task, ${CALL_TOOL_NAME} calls one by name.${this.options.dynamicSubset ? ' After each search its top tools are also listed directly.' : ''} Their resources and prompts are offered as they are (prompts named {server}_{prompt}).`;
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

  async callTool(name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal): Promise<CallToolResult> {
    if (name === SEARCH_TOOL_NAME) {
      const input = checkSearchArguments(args);
      if (!input.ok) return errorResult(input.message);
      const answer = await this.search(input.value.query, input.value.limit, signal);
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
    }
    if (name === CALL_TOOL_NAME) {
      const input = checkCallArguments(args);
      if (!input.ok) return errorResult(input.message);
      const envelope = await this.route(input.value.name, input.value.arguments, signal);
      if (!envelope.ok) return errorResult(`${envelope.error.type}: ${envelope.error.message}`);
      // The call tool has no output schema (the spec allows structured content without one): passed on as is.
      return { content: [{ type: 'text', text: JSON.stringify(envelope) }], ...structured(envelope.structuredContent) };
    }
    if (!this.options.dynamicSubset) {
      return errorResult(`This server has no tool named "${name}": it lists ${SEARCH_TOOL_NAME}, to find the tools for a task, and ${CALL_TOOL_NAME}, to call one of them by name.`);
    }
    // Any routed tool is accepted, not only the current subset: the client may hold an older list.
    const envelope = await this.route(name, args ?? {}, signal);
    if (!envelope.ok) return errorResult(`${envelope.error.type}: ${envelope.error.message}`);
    return { content: envelope.content as CallToolResult['content'], ...structured(envelope.structuredContent) };
  }

  /** Ranks the catalogue for `query`; with `dynamicSubset`, the top results become the listed subset. */
  async search(query: string, limit: number, signal?: AbortSignal): Promise<SearchAnswer> {
    await this.whenCatalogueReady();
    const selection = await this.selection.selector.select({ prompt: query, ...(signal ? { signal } : {}) });
    // The ranking covers the whole catalogue: quarantined (poisoned) tools must not reach the model here either.
    const hits = searchHits(selection, (name) => this.router.getTool(name), {
      limit,
      quarantined: this.selection.quarantine?.() ?? new Map<string, string>(),
      policy: this.selection.selector.options.callPolicy,
      audience: this.audience(),
    });
    this.options.onSearch?.(query, hits.map((h) => h.name));
    // What a tool returns as structured content helps the model read a toolRouter_callTool result.
    const withOutput = hits.map((h) => {
      const outputSchema = this.router.getTool(h.name)?.outputSchema;
      return outputSchema !== undefined ? { ...h, outputSchema } : h;
    });
    let next = hits.length === 0 ? 'No tools are available yet: the servers may still be starting or may have failed.' : `Call a tool with ${CALL_TOOL_NAME} {"name", "arguments"}.`;
    if (this.options.dynamicSubset && hits.length > 0) {
      this.subset = this.subsetFrom(hits);
      await this.announceIfChanged();
      next = `${this.subset.length} of these are now also listed as tools of their own; any of them can be called with ${CALL_TOOL_NAME} {"name", "arguments"}.`;
    }
    return { query, method: selection.method, tools: withOutput, next };
  }

  /**
   * The subset a search leaves listed: its top tools that run without a question (a client lists its
   * tools as ordinary ones; those that ask stay reachable through the call tool), and no routed tool whose
   * name would shadow a gateway tool.
   */
  private subsetFrom(hits: readonly SearchHit[]): string[] {
    const policy = this.selection.selector.options.callPolicy;
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
    if (!this.options.dynamicSubset) return [];
    return this.subset.map((name) => this.router.getTool(name)).filter((t): t is RoutedTool => t !== undefined);
  }

  /**
   * A gateway event for the operator's log and for the client, as a log message (notifications/message);
   * the SDK answers logging/setLevel and drops messages below the level the client chose.
   */
  private note(level: LoggingLevel, message: string): void {
    this.log(message);
    this.sendLog({ level, logger: 'mcp-tool-router', data: message });
  }

  /** Sends list_changed when the listed subset differs from what the client was last told. */
  private async announceIfChanged(): Promise<void> {
    if (!this.options.dynamicSubset) return;
    const listed = JSON.stringify(this.subsetTools().map(toMcpTool));
    if (listed === this.announced) return;
    this.announced = listed;
    if (!this.connected) return;
    try {
      await this.server.sendToolListChanged();
      this.note('info', `tools/list changed: ${this.subset.join(', ') || '(no dynamic tools)'}`);
    } catch (error) {
      this.log(`could not send tools/list_changed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async route(name: string, args: unknown, signal?: AbortSignal): Promise<CallEnvelope> {
    // A server that is still starting may own the tool; the router answers UNKNOWN_TOOL once it has settled.
    await this.router.waitForTool(name, this.options.startupWaitMs ?? DEFAULT_STARTUP_WAIT_MS);
    const tool = this.router.getTool(name);
    if (tool) {
      const decision = decideCall(this.selection.selector.options.callPolicy, tool, this.audience());
      if (decision.verdict === 'refuse') return notApproved(tool, decision.message);
      if (decision.verdict === 'ask') {
        const answer = await this.confirm(tool, args, signal);
        if (answer.answer !== 'yes') return notApproved(tool, unconfirmedMessage(name, answer));
      }
    }
    const envelope = await this.router.call(name, args, { ...(signal ? { signal } : {}), caller: this.callerFeatures() });
    if (tool) this.options.onCall?.(name);
    return envelope;
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
    const timeout = this.options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
    try {
      const answer = await this.server.elicitInput(
        { message: `Run ${tool.name}? ${confirmationMarkdown(tool, args, true)}`, requestedSchema: { type: 'object', properties: {} } },
        { timeout, ...(signal ? { signal } : {}) },
      );
      return answer.action === 'accept' ? { answer: 'yes' } : { answer: 'no' };
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        this.note('warning', `the confirmation for ${tool.name} timed out after ${timeout} ms`);
        return { answer: 'timed-out', waitedMs: timeout };
      }
      const reason = error instanceof Error ? error.message : String(error);
      this.note('warning', `could not ask the client to confirm ${tool.name}: ${reason}`);
      return { answer: 'failed', reason };
    }
  }

  /** Waits (bounded) for starting servers and for the index of their tools, so a first search sees them. */
  private async whenCatalogueReady(): Promise<void> {
    if (this.router.serverStatuses.some((s) => s.state === 'starting')) {
      await this.router.whenSettled(this.options.startupWaitMs ?? DEFAULT_STARTUP_WAIT_MS);
    }
    const index = this.selection.index;
    if (!index) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([index.whenReady(), new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.indexWaitMs ?? DEFAULT_INDEX_WAIT_MS)))]);
    clearTimeout(timer);
  }
}

/** A routed tool as the client lists it: the server's definition under the routed name, UI metadata and all. */
function toMcpTool(tool: RoutedTool): Tool {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description,
    // The server's schemas, verbatim; the router checks arguments against the input schema before any call.
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as Tool['outputSchema'] } : {}),
    ...(Object.keys(tool.annotations).length > 0 ? { annotations: tool.annotations } : {}),
    ...(tool.icons ? { icons: tool.icons as Tool['icons'] } : {}),
    // An MCP App's `ui` (its ui:// resource, readable through the gateway) lives here.
    ...(tool._meta ? { _meta: { ...tool._meta } } : {}),
  };
}

/** A result's structured content, when it is an object (the only kind MCP allows there). */
function structured(value: unknown): { structuredContent?: Record<string, unknown> } {
  return isRecord(value) ? { structuredContent: value } : {};
}

/** A call the router did not make: the policy refused it or the user declined it. */
function notApproved(tool: RoutedTool, message: string): CallEnvelope {
  return { ok: false, error: { type: 'NOT_APPROVED', message, retryable: false }, meta: { latencyMs: 0, bytes: 0, server: tool.server, tool: tool.originalName, exposedName: tool.name } };
}

function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}


function unknownKeys(args: Record<string, unknown>, known: readonly string[], tool: string): string | undefined {
  const extra = Object.keys(args).filter((k) => !known.includes(k));
  if (extra.length === 0) return undefined;
  return `${tool} got unknown argument(s) ${extra.map((k) => `"${k}"`).join(', ')}; it takes ${known.map((k) => `"${k}"`).join(' and ')}.`;
}

export function checkSearchArguments(args: Record<string, unknown> | undefined): Checked<{ query: string; limit: number }> {
  const input = args ?? {};
  const extra = unknownKeys(input, ['query', 'limit'], SEARCH_TOOL_NAME);
  if (extra) return { ok: false, message: extra };
  const query = input['query'];
  if (typeof query !== 'string' || query.trim() === '') {
    return { ok: false, message: `${SEARCH_TOOL_NAME}: "query" must be a non-empty string describing the task, got ${shown(query)}.` };
  }
  let limit = DEFAULT_SEARCH_LIMIT;
  const raw = input['limit'];
  if (raw !== undefined && raw !== null) {
    // Numeric strings are accepted, as the router accepts them for any integer argument.
    const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_SEARCH_LIMIT) {
      return { ok: false, message: `${SEARCH_TOOL_NAME}: "limit" must be a whole number from 1 to ${MAX_SEARCH_LIMIT}, got ${shown(raw)}.` };
    }
    limit = n;
  }
  return { ok: true, value: { query: query.trim(), limit } };
}

export function checkCallArguments(args: Record<string, unknown> | undefined): Checked<{ name: string; arguments: unknown }> {
  const input = args ?? {};
  const extra = unknownKeys(input, ['name', 'arguments'], CALL_TOOL_NAME);
  if (extra) return { ok: false, message: extra };
  const name = input['name'];
  if (typeof name !== 'string' || name.trim() === '') {
    return { ok: false, message: `${CALL_TOOL_NAME}: "name" must be the name of a tool, as ${SEARCH_TOOL_NAME} returns it, got ${shown(name)}.` };
  }
  if (META_TOOLS.has(name)) return { ok: false, message: `${CALL_TOOL_NAME} calls the routed tools; call "${name}" directly instead.` };
  const value = input['arguments'];
  // A JSON string is passed on: the router parses it, as it does for every call.
  if (value !== undefined && value !== null && !isRecord(value) && typeof value !== 'string') {
    return { ok: false, message: `${CALL_TOOL_NAME}: "arguments" must be an object with the tool's arguments, got ${shown(value)}.` };
  }
  return { ok: true, value: { name: name.trim(), arguments: value ?? {} } };
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
