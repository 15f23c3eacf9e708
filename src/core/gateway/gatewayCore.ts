import { isInputRequiredResult, type CallToolResult, type InputRequiredResult, type ProgressNotification, type ProgressToken } from '@modelcontextprotocol/server';
import type { CallerFeatures } from '../connection/clientFeatures';
import { notApproved, type CallEnvelope } from '../router/callEnvelope';
import { decideCall, type CallAudience } from '../policy/callPolicy';
import { unconfirmedMessage, type ConfirmAnswer } from '../policy/confirmation';
import { searchHits, type SearchHit } from '../search/toolSearch';
import type { ToolIndex } from '../selection/toolIndex';
import type { ToolSelector } from '../selection/toolSelector';
import type { CallOptions, RoutedTool, ToolRouter } from '../router/toolRouter';
import { EDITOR_STARTUP_WAIT_MS } from '../router/startupWaits';
import { productInfo } from '../util/productInfo';
import { GatewayHub, type GatewaySession } from './gatewayHub';
import { CALL_TOOL_NAME, SEARCH_TOOL_NAME, checkCallArguments, checkSearchArguments, errorResult, structured } from './gatewayTools';
import { waitAtMost } from '../util/waitAtMost';

/**
 * What the gateway is, whoever connects and whatever revision they speak: search, routing and the call
 * policy over one router, the hub its sessions share, and the selector's catalogue kept in step with the
 * router. It lives as long as the gateway serves. The MCP servers that answer clients are thin and short
 * lived around it: one per 2025 session (routerGateway.ts), one per 2026-07-28 request (modernGateway.ts).
 * Every answer to a tool call is a tool result (or, on 2026-07-28, a request for input); nothing throws.
 */

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

export interface GatewayCoreOptions {
  /** 2025 sessions also list the last search's top tools directly, and announce changes with list_changed. */
  readonly dynamicSubset?: boolean;
  /**
   * Keep the selector's catalogue equal to the router's tools (default true). Turn off when something
   * else already does, such as the extension's SelectionService.
   */
  readonly syncCatalogue?: boolean;
  /** How long a search or call waits for servers still starting (EDITOR_STARTUP_WAIT_MS unless given). */
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
   * host that also shares it with something else passes one; without it the core makes its own.
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

/** How the user answered a confirmation, or, on 2026-07-28, the question to return to the client first. */
export type Consent = ConfirmAnswer | { readonly answer: 'input-required'; readonly result: InputRequiredResult };

/** What one tool call needs of the client that made it; each server builds it from its own request. */
export interface CallContext {
  /** Who the client is to the call policy: whether it can ask its user. */
  readonly audience: CallAudience;
  /** What the client answers itself during the call: a routed server's questions and model requests. */
  readonly caller: CallerFeatures;
  readonly signal?: AbortSignal;
  /** The routed server's progress for this call, for a client that sent a progress token. */
  readonly onProgress?: CallOptions['onProgress'];
  /** Asks the user before a destructive call runs; called only when the audience can ask. */
  readonly confirm: (tool: RoutedTool, args: unknown) => Promise<Consent>;
  /**
   * A 2025 session's dynamic subset: any routed tool may be called by its own name, and each search's top
   * tools become listed; `afterSearch` lists them and returns what to tell the model next.
   */
  readonly subset?: { afterSearch(hits: readonly SearchHit[]): Promise<string | undefined> };
}

export type ListName = 'resources' | 'prompts';

export class GatewayCore {
  readonly hub: GatewayHub;
  readonly log: (message: string) => void;
  readonly serverInfo: { readonly name: string; readonly version: string };
  private readonly ownsHub: boolean;
  private readonly off: Array<() => void> = [];
  private readonly listListeners = new Set<(list: ListName) => void>();

  constructor(
    readonly router: ToolRouter,
    readonly selection: GatewaySelection,
    readonly options: GatewayCoreOptions = {},
  ) {
    this.log = options.log ?? (() => undefined);
    this.serverInfo = options.serverInfo ?? productInfo();
    this.ownsHub = options.hub === undefined;
    this.hub = options.hub ?? new GatewayHub(router, this.log);
    if (options.syncCatalogue ?? true) {
      selection.selector.setCatalogue(router.listTools());
      this.off.push(router.onDidChangeTools((tools) => selection.selector.setCatalogue(tools)));
    }
    // The core's own place in the hub: list changes for clients without a session (subscriptions/listen).
    const lists: GatewaySession = {
      resourceUpdated: () => undefined,
      listChanged: (list) => this.listListeners.forEach((listener) => listener(list)),
      serverLog: () => undefined,
    };
    this.off.push(this.hub.join(lists));
  }

  get startupWaitMs(): number {
    return this.options.startupWaitMs ?? EDITOR_STARTUP_WAIT_MS;
  }

  get confirmTimeoutMs(): number {
    return this.options.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  }

  /** Calls `listener` when the resources or prompts the servers offer change; returns the unsubscribe. */
  onDidChangeList(listener: (list: ListName) => void): () => void {
    this.listListeners.add(listener);
    return () => this.listListeners.delete(listener);
  }

  dispose(): void {
    this.off.splice(0).forEach((off) => off());
    this.listListeners.clear();
    if (this.ownsHub) this.hub.dispose();
  }

  /** The gateway's own instructions, then each routed server's, after waiting (bounded) for servers still starting. */
  async instructions(dynamicSubset: boolean): Promise<string> {
    await this.hub.whenStarted(INSTRUCTIONS_WAIT_MS);
    return this.currentInstructions(dynamicSubset);
  }

  /** The instructions as they stand, without waiting (see {@link GatewayHub.instructions}). */
  currentInstructions(dynamicSubset: boolean): string {
    return this.hub.instructions(this.ownInstructions(dynamicSubset), MAX_SERVER_INSTRUCTIONS_CHARS);
  }

  ownInstructions(dynamicSubset: boolean): string {
    return `Every tool of the routed MCP servers is reachable through two tools: ${SEARCH_TOOL_NAME} finds the right ones for a task, ${CALL_TOOL_NAME} calls one by name.${dynamicSubset ? ' After each search its top tools are also listed directly.' : ''} Their resources and prompts are offered as they are (prompts named {server}_{prompt}).`;
  }

  /** Answers a call of a gateway tool, or, with a subset, of a routed tool by its own name. */
  async callTool(name: string, args: Record<string, unknown> | undefined, call: CallContext): Promise<CallToolResult | InputRequiredResult> {
    if (name === SEARCH_TOOL_NAME) {
      const input = checkSearchArguments(args);
      if (!input.ok) return errorResult(input.message);
      const answer = await this.search(input.value.query, input.value.limit, call);
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
    }
    if (name === CALL_TOOL_NAME) {
      const input = checkCallArguments(args);
      if (!input.ok) return errorResult(input.message);
      const envelope = await this.route(input.value.name, input.value.arguments, call);
      if (isInputRequiredResult(envelope)) return envelope;
      if (!envelope.ok) return errorResult(`${envelope.error.type}: ${envelope.error.message}`);
      // The call tool has no output schema (the spec allows structured content without one): passed on as is.
      return { content: [{ type: 'text', text: JSON.stringify(envelope) }], ...structured(envelope.structuredContent) };
    }
    if (!call.subset) {
      return errorResult(`This server has no tool named "${name}": it lists ${SEARCH_TOOL_NAME}, to find the tools for a task, and ${CALL_TOOL_NAME}, to call one of them by name.`);
    }
    // Any routed tool is accepted, not only the current subset: the client may hold an older list.
    const envelope = await this.route(name, args ?? {}, call);
    if (isInputRequiredResult(envelope)) return envelope;
    if (!envelope.ok) return errorResult(`${envelope.error.type}: ${envelope.error.message}`);
    return { content: envelope.content as CallToolResult['content'], ...structured(envelope.structuredContent) };
  }

  /** Ranks the catalogue for `query`; with a subset, the top results become listed. */
  async search(query: string, limit: number, call: Pick<CallContext, 'audience' | 'signal' | 'subset'>): Promise<SearchAnswer> {
    await this.whenCatalogueReady();
    const selection = await this.selection.selector.select({ prompt: query, ...(call.signal ? { signal: call.signal } : {}) });
    // The ranking covers the whole catalogue: quarantined (poisoned) tools must not reach the model here either.
    const hits = searchHits(selection, (name) => this.router.getTool(name), {
      limit,
      quarantined: this.selection.quarantine?.() ?? new Map<string, string>(),
      policy: this.selection.selector.options.callPolicy,
      audience: call.audience,
    });
    this.options.onSearch?.(query, hits.map((h) => h.name));
    // What a tool returns as structured content helps the model read a toolRouter_callTool result.
    const withOutput = hits.map((h) => {
      const outputSchema = this.router.getTool(h.name)?.outputSchema;
      return outputSchema !== undefined ? { ...h, outputSchema } : h;
    });
    let next = hits.length === 0 ? 'No tools are available yet: the servers may still be starting or may have failed.' : `Call a tool with ${CALL_TOOL_NAME} {"name", "arguments"}.`;
    if (call.subset && hits.length > 0) next = (await call.subset.afterSearch(hits)) ?? next;
    return { query, method: selection.method, tools: withOutput, next };
  }

  /**
   * Runs one routed call under the call policy: refused, asked first, or run. A question the client must
   * answer before the call can run (2026-07-28) comes back instead of an envelope.
   */
  async route(name: string, args: unknown, call: CallContext): Promise<CallEnvelope | InputRequiredResult> {
    // A server that is still starting may own the tool; the router answers UNKNOWN_TOOL once it has settled.
    await this.router.waitForTool(name, this.startupWaitMs);
    const tool = this.router.getTool(name);
    if (tool) {
      const decision = decideCall(this.selection.selector.options.callPolicy, tool, call.audience);
      if (decision.verdict === 'refuse') return notApproved(tool, decision.message);
      if (decision.verdict === 'ask') {
        const consent = await call.confirm(tool, args);
        if (consent.answer === 'input-required') return consent.result;
        if (consent.answer !== 'yes') return notApproved(tool, unconfirmedMessage(name, consent));
      }
    }
    const envelope = await this.router.call(name, args, { ...(call.signal ? { signal: call.signal } : {}), ...(call.onProgress ? { onProgress: call.onProgress } : {}), caller: call.caller });
    if (tool) this.options.onCall?.(name);
    return envelope;
  }

  /** Waits (bounded) for starting servers and for the index of their tools, so a first search sees them. */
  private async whenCatalogueReady(): Promise<void> {
    if (this.router.serverStatuses.some((s) => s.state === 'starting')) await this.router.whenSettled(this.startupWaitMs);
    const index = this.selection.index;
    if (!index) return;
    await waitAtMost(index.whenReady(), this.options.indexWaitMs ?? DEFAULT_INDEX_WAIT_MS);
  }
}

/** Passes a routed server's progress on as the client's own, when its request carried a progress token. */
export function progressSender(req: { readonly _meta?: { readonly progressToken?: ProgressToken }; notify(notification: ProgressNotification): Promise<void> }): CallContext['onProgress'] {
  const progressToken = req._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  return ({ progress, total, message }) => {
    const params = { progressToken, progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) };
    req.notify({ method: 'notifications/progress', params }).catch(() => undefined);
  };
}
