import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  Server,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  type McpRequestContext,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { confirmationMarkdown } from '../policy/confirmation';
import type { RoutedTool } from '../router/toolRouter';
import { canonicalJson } from '../util/canonicalJson';
import { progressSender, type Consent, type GatewayCore, type ListName } from './gatewayCore';
import type { GatewaySession } from './gatewayHub';
import { registerFeatureHandlers } from './gatewayFeatures';
import { CALL_TOOL, SEARCH_TOOL, errorResult } from './gatewayTools';
import { SuspendedCalls, type NextAnswer, type ParkedCallState } from './suspendedCalls';
import { describeError } from '../errors/describeError';

/**
 * The gateway for MCP 2026-07-28 clients. That revision has no session: every request carries the client's
 * capabilities in its `_meta` envelope and is answered by a fresh Server (createMcpHandler builds one per
 * HTTP request; serveStdio one per connection), built here over the long-lived {@link GatewayCore}.
 *
 * What differs from a 2025 session (routerGateway.ts):
 * - No dynamic subset: search and call only. The subset is what one client's last search left listed, so it
 *   needs a session to belong to; a stateless request has none, and keying it by the bearer token would let
 *   every client sharing the token (all of them, on the gateway's single secret) change each other's list.
 * - A destructive call under `confirm` is asked by returning `input_required` with an elicitation; the
 *   client retries the same call with the answer and the sealed `requestState`. The state names the tool and
 *   a digest of its arguments, expires with the confirmation timeout, is sealed with a key made for this
 *   run (so only this process accepts it) and is accepted once.
 * - Change notifications go out on `subscriptions/listen` streams (see {@link ModernGateway.onDidChangeList}).
 * - No logging/setLevel or resources/subscribe: the revision removed them, and the SDK answers -32601. A
 *   `subscriptions/listen` naming resources subscribes to them upstream while the stream is open
 *   ({@link ModernGateway.watchResources}); their updates go out on the listen streams.
 * - A routed server's own questions during a call (elicitation, sampling), on either revision, reach the
 *   client the same way: the call is parked ({@link SuspendedCalls}) and its answer is `input_required`.
 */

/** Key length for the requestState HMAC: the codec asks for at least 256 bits. */
const STATE_KEY_BYTES = 32;
/** The inputRequests key under which the confirmation is asked. */
const CONFIRM_KEY = 'confirm';

/** What a sealed confirmation approves: exactly one call of one tool with one set of arguments, once. */
interface ConfirmationState {
  readonly kind: 'confirm';
  readonly tool: string;
  readonly args: string;
  readonly nonce: string;
}

/** A retry's sealed state: the answer to a confirmation, or to a parked call's questions. */
type GatewayState = ConfirmationState | ParkedCallState;

export class ModernGateway {
  private readonly codec: RequestStateCodec<GatewayState>;
  private readonly calls: SuspendedCalls;
  /** Confirmations already used, by nonce, with when they expire; a retry cannot run a call twice. */
  private readonly spent = new Map<string, number>();

  constructor(private readonly core: GatewayCore) {
    this.calls = new SuspendedCalls(core.confirmTimeoutMs);
    this.codec = createRequestStateCodec<GatewayState>({
      key: randomBytes(STATE_KEY_BYTES),
      ttlSeconds: Math.max(1, Math.ceil(core.confirmTimeoutMs / 1000)),
      // A state minted for tools/call is refused on any other method.
      bind: (ctx) => ctx.mcpReq.method,
    });
  }

  /** How many open listen streams want each resource URI. */
  private readonly watched = new Map<string, number>();
  private readonly updateListeners = new Set<(uri: string) => void>();
  /** The one place in the hub for every listen stream: a URI is subscribed upstream once, however many watch it. */
  private readonly watcher: GatewaySession = {
    resourceUpdated: (uri) => this.updateListeners.forEach((listener) => listener(uri)),
    listChanged: () => undefined,
    serverLog: () => undefined,
  };
  private leaveHub?: () => void;

  /** Ends the calls still waiting for their clients' answers, and the resource subscriptions. */
  dispose(): void {
    this.calls.dispose();
    for (const uri of this.watched.keys()) void this.core.hub.unsubscribe(this.watcher, uri).catch(() => undefined);
    this.watched.clear();
    this.leaveHub?.();
  }

  /** Calls `listener` with the URI of each watched resource that changed; returns the unsubscribe. */
  onDidUpdateResource(listener: (uri: string) => void): () => void {
    this.updateListeners.add(listener);
    return () => this.updateListeners.delete(listener);
  }

  /**
   * Subscribes upstream to the resources a `subscriptions/listen` stream names, for as long as it is open;
   * returns what to call when it closes. A server that cannot subscribe is noted in the log, not an error.
   */
  watchResources(uris: readonly string[]): () => void {
    this.leaveHub ??= this.core.hub.join(this.watcher);
    const unique = [...new Set(uris)];
    for (const uri of unique) {
      const count = this.watched.get(uri) ?? 0;
      this.watched.set(uri, count + 1);
      if (count === 0) this.core.hub.subscribe(this.watcher, uri).catch((error: unknown) => this.core.log(`could not subscribe to "${uri}" for a 2026-07-28 listener: ${describeError(error)}`));
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      for (const uri of unique) {
        const count = (this.watched.get(uri) ?? 1) - 1;
        if (count > 0) {
          this.watched.set(uri, count);
          continue;
        }
        this.watched.delete(uri);
        void this.core.hub.unsubscribe(this.watcher, uri).catch(() => undefined);
      }
    };
  }

  /** Calls `listener` when a list that subscriptions/listen streams watch changed; returns the unsubscribe. */
  onDidChangeList(listener: (list: ListName) => void): () => void {
    return this.core.onDidChangeList(listener);
  }

  /** The Server that answers one 2026-07-28 request (HTTP), or one connection (stdio); see the file's comment. */
  createServer(_ctx?: McpRequestContext): Server {
    const core = this.core;
    const server = new Server(core.serverInfo, {
      // The tool list is the two gateway tools and never changes; resources and prompts do, with the servers.
      capabilities: { tools: {}, logging: {}, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, completions: {} },
      instructions: core.currentInstructions(false),
      requestState: { verify: (state, ctx) => this.codec.verify(state, ctx) },
    });
    server.onerror = (error) => core.log(`gateway protocol error (2026-07-28): ${error.message}`);
    server.setRequestHandler('tools/list', () => ({ tools: [SEARCH_TOOL, CALL_TOOL] }));
    registerFeatureHandlers(server, core.hub, undefined, { startupWaitMs: core.startupWaitMs });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args } = request.params;
      try {
        return await this.callTool(name, args, ctx);
      } catch (error) {
        // Defensive: the paths below return results, but a client must never see a handler throw.
        return errorResult(`The router gateway failed while running "${name}": ${describeError(error)}`);
      }
    });
    return server;
  }

  /**
   * The Server for one stdio connection: unlike an HTTP request it lives on, so it also tells the client
   * of list changes (serveStdio delivers them on the connection's subscriptions/listen streams).
   */
  createConnectionServer(ctx?: McpRequestContext): Server {
    const server = this.createServer(ctx);
    const off = this.onDidChangeList((list) => void (list === 'resources' ? server.sendResourceListChanged() : server.sendPromptListChanged()).catch(() => undefined));
    server.onclose = off;
    return server;
  }

  /**
   * Runs a call, or goes on with a parked one when the retry answers its questions. A routed server's
   * question reaches the client as `input_required`, when the client declared it can answer that kind.
   */
  private async callTool(name: string, args: Record<string, unknown> | undefined, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> {
    const key = { tool: name, args: digest(args ?? {}) };
    const state = ctx.mcpReq.requestState<GatewayState>();
    const signal = ctx.mcpReq.signal;
    let answer: NextAnswer;
    if (state?.kind === 'call') {
      answer = await this.calls.resume(state, key, ctx.mcpReq.inputResponses, signal, progressSender(ctx.mcpReq));
    } else {
      const capabilities = clientCapabilities(ctx);
      const can = { elicit: capabilities?.elicitation !== undefined, sample: capabilities?.sampling !== undefined };
      answer = await this.calls.start(
        key,
        can,
        signal,
        (caller, callSignal, onProgress) =>
          this.core.callTool(name, args, {
            audience: { canAsk: can.elicit },
            caller,
            signal: callSignal,
            ...(onProgress ? { onProgress } : {}),
            confirm: (tool, toolArgs) => this.consent(tool, toolArgs, ctx),
          }),
        progressSender(ctx.mcpReq),
      );
    }
    if (answer.kind === 'result') return answer.result;
    return inputRequired({ inputRequests: answer.inputRequests, requestState: await this.codec.mint(answer.state, ctx) });
  }

  /**
   * The user's answer to the confirmation of a destructive call: on the first request, the question
   * (input_required); on the retry, the answer it carries, if its sealed state approves this very call.
   */
  private async consent(tool: RoutedTool, args: unknown, ctx: ServerContext): Promise<Consent> {
    // Verified by the Server (requestState.verify) before the handler ran: a forged or expired state never gets here.
    const sealed = ctx.mcpReq.requestState<GatewayState>();
    const state = sealed?.kind === 'confirm' ? sealed : undefined;
    if (state === undefined) {
      const question = inputRequired.elicit({ message: `Run ${tool.name}? ${confirmationMarkdown(tool, args, true)}`, requestedSchema: { type: 'object', properties: {} } });
      const requestState = await this.codec.mint({ kind: 'confirm', tool: tool.name, args: digest(args), nonce: randomUUID() }, ctx);
      return { answer: 'input-required', result: inputRequired({ inputRequests: { [CONFIRM_KEY]: question }, requestState }) };
    }
    if (state.tool !== tool.name || state.args !== digest(args)) return { answer: 'failed', reason: 'the confirmation sent back was for another call' };
    if (!this.spend(state.nonce)) return { answer: 'failed', reason: 'that confirmation was used already; call again to be asked again' };
    const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_KEY);
    if (answer.kind !== 'elicit') return { answer: 'failed', reason: 'the client sent no answer to the confirmation' };
    return answer.action === 'accept' ? { answer: 'yes' } : { answer: 'no' };
  }

  /** Marks a confirmation used; false if it was already. Expired entries are dropped as new ones come. */
  private spend(nonce: string): boolean {
    const now = Date.now();
    for (const [used, expires] of this.spent) if (expires <= now) this.spent.delete(used);
    if (this.spent.has(nonce)) return false;
    this.spent.set(nonce, now + this.core.confirmTimeoutMs);
    return true;
  }
}

/**
 * The capabilities a 2026-07-28 client declared in this request's envelope. The SDK's 2.4.0 typings give
 * the envelope no keys (`RequestMetaEnvelope` is `{}`), so it is read as a plain record.
 */
function clientCapabilities(ctx: ServerContext): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

/** A digest of a call's arguments, the same for the same JSON whatever the order of its keys. */
function digest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('base64url');
}
