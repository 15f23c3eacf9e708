import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type ClientCapabilities,
  type ListChangedHandlers,
  type PriorDiscovery,
  type Progress,
  type ServerCapabilities,
  type Tool,
  type Transport,
} from '@modelcontextprotocol/client';
import { NeedsSignInError, type RouterOAuthProvider } from '../auth/oauthProvider';
import type { CallerFeatures, ClientFeatures } from './clientFeatures';
import * as z from 'zod/v4';
import { redactUrl } from '../config/mcpConfigParser';
import { redactSecrets, type ServerDefinition } from '../config/serverConfig';
import { ConnectionError, describeError, describeState, forwardError, isAbortError, isPermanentStartError, isSdkError, revisionRefusal, shouldFallBackToSse } from './connectionErrors';
import { assumeCompleteResults } from './completeByDefault';
import { ServerLog } from './serverLog';
import { mayHaveExitedOnProbe, MODERN_PROTOCOL_VERSION, versionNegotiation } from './protocolRevision';
import { installNoticeHandlers, type ForwardOptions, type ForwardedMethod, type ServerNotice } from './serverNotices';
import { toServerTool, type ServerTool } from './serverTool';
import { StdioProcessTransport } from './stdioProcessTransport';
import { Emitter } from '../util/emitter';

/**
 * One MCP server: its connection, its tools, its status and its log.
 *
 * This is the connection seam of the core: the router uses {@link ServerConnection.tools},
 * {@link ServerConnection.callTool}, the status and the change events; the gateway also forwards requests
 * ({@link ServerConnection.request}) and hears notifications ({@link ServerConnection.onDidNotify}) for
 * what a server offers besides tools. Connections start on their own and never block one another; a
 * server that exits or drops is restarted with a growing backoff.
 */

export type ServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped' | 'disabled';

export interface ServerStatus {
  readonly name: string;
  readonly state: ServerState;
  /** Why the server is not ready, in words a user can act on. */
  readonly reason?: string;
  readonly restarts: number;
  readonly toolCount: number;
  /** The transport in use once connected. */
  readonly transport?: 'stdio' | 'streamable-http' | 'sse';
  /** The MCP revision spoken once connected: 2026-07-28, or the 2025 revision `initialize` agreed on. */
  readonly protocol?: string;
  readonly pid?: number;
  /** When the next restart attempt happens (epoch ms), while restarting. */
  readonly nextAttemptAt?: number;
  /** The server asked for OAuth sign-in and none was possible without the user (state `failed`). */
  readonly needsSignIn?: boolean;
}

export type { ServerTool, ToolAnnotations } from './serverTool';
export { ConnectionError, describeError, describeState } from './connectionErrors';

/** Restart backoff: 0, 1, 2, 5, 10, 30, 60 s, then 60 s for every later attempt: a flaky server comes back at once, a broken one costs a start a minute. */
export const RESTART_BACKOFF_MS: readonly number[] = [0, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000];
/** A server that was ready this long counts as healthy again: its next crash restarts at the start of the backoff. */
export const STABLE_UPTIME_MS = 60_000;
/** After this many failures in a row the server is marked failed and waits for a manual restart (about 3 minutes of tries). */
export const MAX_CONSECUTIVE_FAILURES = 8;
/** A server that keeps handing out cursors is cut off here; no real server has this many pages of tools. */
export const MAX_TOOL_PAGES = 100;
/** list_changed notifications within this window collapse into one refresh, so a flood cannot stall us. */
export const TOOL_REFRESH_DEBOUNCE_MS = 100;
/**
 * After a remote response stream breaks, the SDK may resume it (servers with an event store); calls still
 * unanswered after this long are ended with a "connection dropped" error instead of waiting for their timeout.
 */
export const STREAM_RESUME_GRACE_MS = 2_000;

const CLIENT_INFO = { name: 'mcp-tool-router', version: '0.1.0' };

const LooseToolListSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
const LooseResultSchema = z.looseObject({});

export type ToolCallResult = Record<string, unknown>;

export interface ConnectionOptions {
  /** Called for each line of the server's log (stderr and lifecycle events). */
  readonly onLog?: (server: string, line: string) => void;
  /** Overridden in tests to make backoff fast; production uses {@link RESTART_BACKOFF_MS}. */
  readonly backoffMs?: readonly number[];
  /** Sign-in, elicitation, sampling and roots, as the host provides them. */
  readonly features?: ClientFeatures;
}

type Listener<T> = (value: T) => void;

/** One call's options: its time limit, cancellation, progress and the caller's own answers. */
export interface CallToolOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: Progress) => void;
  readonly caller?: CallerFeatures;
}

/**
 * The connection seam: what the router and the hosts need of one MCP server's connection. ServerConnection
 * is its implementation (stdio, streamable HTTP or SSE, with restarts, sign-in and the client features).
 */
export interface Connection {
  readonly name: string;
  readonly definition: ServerDefinition;
  readonly log: ServerLog;
  readonly status: ServerStatus;
  /** The state alone, cheaper than `status` on the call path. */
  readonly currentState: ServerState;
  readonly tools: readonly ServerTool[];
  /** The OAuth sign-in of a remote server that signs in. */
  readonly oauth: RouterOAuthProvider | undefined;
  start(): void;
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** True once the server has left `starting`: ready, failed, or waiting to restart. */
  isSettled(): boolean;
  whenSettled(timeoutMs: number): Promise<void>;
  whenReady(timeoutMs: number): Promise<boolean>;
  callTool(tool: string, args: Record<string, unknown>, opts: CallToolOptions): Promise<ToolCallResult>;
  refreshTools(): Promise<void>;
  signIn(): Promise<void>;
  signOut(): Promise<void>;
  onDidChangeStatus(listener: Listener<ServerStatus>): () => void;
  onDidChangeTools(listener: Listener<readonly ServerTool[]>): () => void;
  /** What the server declared at initialize; undefined unless ready. */
  readonly serverCapabilities: ServerCapabilities | undefined;
  /** The server's `instructions` from initialize; undefined unless ready or when it gave none. */
  readonly instructions: string | undefined;
  /**
   * Sends one of the requests the gateway passes through (resources, prompts, completions, log level) and
   * returns the server's result unchecked. Throws {@link ConnectionError} when the server cannot be asked,
   * and the server's own ProtocolError (code and message kept) when it answers with an error.
   */
  request(method: ForwardedMethod, params: Record<string, unknown>, opts: ForwardOptions): Promise<Record<string, unknown>>;
  /** The server's notifications besides tools/list_changed: its resources and prompts, and its log. */
  onDidNotify(listener: Listener<ServerNotice>): () => void;
}

export class ServerConnection implements Connection {
  readonly log: ServerLog;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private generation = 0;
  private state: ServerState = 'stopped';
  private reason: string | undefined;
  private restarts = 0;
  private consecutiveFailures = 0;
  private readyAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextAttemptAt: number | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshInFlight: Promise<void> | undefined;
  private refreshQueued = false;
  private transportKind: ServerStatus['transport'];
  private protocolVersion: string | undefined;
  /** The stdio server exited on the 2026-07-28 probe once: it is spoken to as 2025-11-25, without a probe, until a manual restart. */
  private exitsOnProbe = false;
  private currentTools: ServerTool[] = [];
  private readonly remoteCalls = new Set<{ controller: AbortController; dropped: string | undefined }>();
  private readonly statusChanged = new Emitter<ServerStatus>();
  private readonly toolsChanged = new Emitter<readonly ServerTool[]>();
  private readonly notified = new Emitter<ServerNotice>();
  private readonly settledWaiters = new Set<() => void>();
  private readonly backoff: readonly number[];
  private auth: RouterOAuthProvider | undefined;
  private needsSignIn = false;
  private offRoots: (() => void) | undefined;
  /** Callers of the calls in flight that can answer requests themselves, newest last. */
  private readonly callers: CallerFeatures[] = [];

  constructor(readonly definition: ServerDefinition, private readonly options: ConnectionOptions = {}) {
    this.log = new ServerLog();
    this.backoff = options.backoffMs ?? RESTART_BACKOFF_MS;
    if (definition.launch.type !== 'stdio') this.auth = options.features?.auth?.(definition);
  }

  /** The server's OAuth sign-in (remote servers, when the host signs in); for Sign In / Sign Out. */
  get oauth(): RouterOAuthProvider | undefined {
    return this.auth;
  }

  get name(): string {
    return this.definition.name;
  }

  /** The state alone, cheaper than {@link status} on the call path. */
  get currentState(): ServerState {
    return this.state;
  }

  get tools(): readonly ServerTool[] {
    return this.currentTools;
  }

  get status(): ServerStatus {
    const pid = this.transport instanceof StdioProcessTransport ? this.transport.pid : undefined;
    return {
      name: this.name,
      state: this.state,
      ...(this.reason !== undefined ? { reason: this.reason } : {}),
      restarts: this.restarts,
      toolCount: this.currentTools.length,
      ...(this.transportKind ? { transport: this.transportKind } : {}),
      ...(this.protocolVersion ? { protocol: this.protocolVersion } : {}),
      ...(pid !== undefined && this.state === 'ready' ? { pid } : {}),
      ...(this.nextAttemptAt !== undefined && this.state === 'restarting' ? { nextAttemptAt: this.nextAttemptAt } : {}),
      ...(this.needsSignIn && this.state === 'failed' ? { needsSignIn: true } : {}),
    };
  }

  onDidChangeStatus(listener: Listener<ServerStatus>): () => void {
    return this.statusChanged.on(listener);
  }

  onDidChangeTools(listener: Listener<readonly ServerTool[]>): () => void {
    return this.toolsChanged.on(listener);
  }

  onDidNotify(listener: Listener<ServerNotice>): () => void {
    return this.notified.on(listener);
  }

  get serverCapabilities(): ServerCapabilities | undefined {
    return this.state === 'ready' ? this.client?.getServerCapabilities() : undefined;
  }

  get instructions(): string | undefined {
    const text = this.state === 'ready' ? this.client?.getInstructions() : undefined;
    return text === undefined ? undefined : redactSecrets(text, this.definition.secrets);
  }

  async request(method: ForwardedMethod, params: Record<string, unknown>, opts: ForwardOptions): Promise<Record<string, unknown>> {
    const client = this.client;
    if (!client || this.state !== 'ready') throw this.unavailableError();
    const generation = this.generation;
    const ask = async (): Promise<Record<string, unknown>> =>
      client.request({ method, params }, LooseResultSchema, { timeout: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) });
    try {
      return await this.withStepUp(ask, opts.signal);
    } catch (error) {
      // The server's own answer (an unknown resource, a bad argument) goes back to the client as it is.
      if (error instanceof ProtocolError) {
        throw new ProtocolError(error.code, redactSecrets(error.message.replace(/^MCP error -?\d+: /, ''), this.definition.secrets), error.data);
      }
      throw forwardError(error, { server: this.name, method, timeoutMs: opts.timeoutMs, stale: generation !== this.generation || this.state !== 'ready', secrets: this.definition.secrets });
    }
  }

  /** Starts connecting in the background; never throws. */
  start(): void {
    if (!this.definition.options.enabled) {
      this.setState('disabled', 'disabled in the configuration (router.enabled is false)');
      return;
    }
    this.consecutiveFailures = 0;
    this.connect('starting');
  }

  /** A manual restart: resets the backoff and reconnects now. */
  async restart(): Promise<void> {
    this.clearTimers();
    await this.teardown();
    this.consecutiveFailures = 0;
    this.exitsOnProbe = false;
    this.restarts++;
    this.connect('restarting');
  }

  async stop(): Promise<void> {
    this.clearTimers();
    this.offRoots?.();
    this.offRoots = undefined;
    this.generation++;
    await this.teardown();
    this.setState('stopped', undefined);
  }

  /** True once the server has left `starting`: it is ready, failed, or waiting to restart. */
  isSettled(): boolean {
    return this.state !== 'starting' && !(this.state === 'restarting' && this.consecutiveFailures === 0);
  }

  /** Resolves when the server is settled (see {@link isSettled}) or after `timeoutMs`. */
  whenSettled(timeoutMs: number): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.settledWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref?.();
      this.settledWaiters.add(done);
    });
  }

  /** Resolves true when ready, false when the server settles in another state or the time runs out. */
  async whenReady(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.state !== 'ready') {
      if (this.state === 'failed' || this.state === 'stopped' || this.state === 'disabled') return false;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const off = this.onDidChangeStatus(() => {
          off();
          clearTimeout(t);
          resolve();
        });
        const t = setTimeout(() => {
          off();
          resolve();
        }, left);
        t.unref?.();
      });
    }
    return true;
  }

  /**
   * Calls a tool by its original name. Throws {@link ConnectionError} for connection-level failures;
   * returns the raw result object otherwise (its shape is checked by the router).
   */
  async callTool(tool: string, args: Record<string, unknown>, opts: CallToolOptions): Promise<ToolCallResult> {
    if (!opts.caller) return this.callToolAs(tool, args, opts);
    this.callers.push(opts.caller);
    try {
      return await this.callToolAs(tool, args, opts);
    } finally {
      this.callers.splice(this.callers.lastIndexOf(opts.caller), 1);
    }
  }

  private async callToolAs(tool: string, args: Record<string, unknown>, opts: CallToolOptions): Promise<ToolCallResult> {
    const client = this.client;
    if (!client || this.state !== 'ready') throw this.unavailableError();
    const generation = this.generation;
    // Remote calls get their own abort, so a dropped response stream can end them (see onStreamDropped).
    const inFlight = this.definition.launch.type === 'stdio' ? undefined : { controller: new AbortController(), dropped: undefined as string | undefined };
    if (inFlight) this.remoteCalls.add(inFlight);
    const signal = inFlight ? (opts.signal ? AbortSignal.any([opts.signal, inFlight.controller.signal]) : inFlight.controller.signal) : opts.signal;
    const requestOptions = {
      timeout: opts.timeoutMs,
      // Progress keeps a long call alive: its timeout restarts with each notification.
      ...(opts.onProgress ? { onprogress: opts.onProgress, resetTimeoutOnProgress: true } : {}),
      ...(signal ? { signal } : {}),
    };
    const params = { name: tool, arguments: args };
    const raw = async (): Promise<ToolCallResult> => (await client.request({ method: 'tools/call', params }, LooseResultSchema, requestOptions)) as ToolCallResult;
    // On a 2026-07-28 HTTP connection only the SDK's callTool copies arguments marked x-mcp-header into
    // Mcp-Param-* headers. It checks the result more strictly than the router does; when it refuses one,
    // the call is made again the loose way, but only for a tool its server says is safe to repeat.
    const definition = this.currentTools.find((t) => t.name === tool);
    const request =
      client.getProtocolEra() === 'modern' && this.transportKind === 'streamable-http'
        ? async (): Promise<ToolCallResult> => {
            try {
              return (await client.callTool(params, { ...requestOptions, ...(definition ? { toolDefinition: sdkTool(definition) } : {}) })) as ToolCallResult;
            } catch (error) {
              if (!isSdkError(error, SdkErrorCode.InvalidResult) || !safeToRepeat(definition)) throw error;
              this.logLine(`[router] "${tool}" returned a result the SDK refused (${describeError(error)}); calling it again without that check`);
              return raw();
            }
          }
        : raw;
    try {
      return await this.withStepUp(request, signal);
    } catch (error) {
      if (inFlight?.dropped !== undefined && !opts.signal?.aborted) {
        throw new ConnectionError(
          'SERVER_RESTARTED',
          `The connection to server "${this.name}" dropped while "${tool}" was running (${redactSecrets(inFlight.dropped, this.definition.secrets)}), and the server did not resume the response. The call's effect is unknown, so check before retrying.`,
          true,
        );
      }
      throw this.classifyCallError(error, generation, opts.timeoutMs, tool);
    } finally {
      if (inFlight) this.remoteCalls.delete(inFlight);
    }
  }

  /**
   * A remote response stream broke mid-call. The SDK resumes it when the server supports resumption;
   * otherwise the request would wait for its timeout. Calls still pending after a short grace period are
   * ended with an error that says what happened.
   */
  private onStreamDropped(reason: string): void {
    const affected = [...this.remoteCalls];
    if (affected.length === 0) return;
    const timer = setTimeout(() => {
      for (const call of affected) {
        if (!this.remoteCalls.has(call)) continue; // answered (resumed) meanwhile
        call.dropped = reason;
        call.controller.abort(new Error(reason));
      }
    }, STREAM_RESUME_GRACE_MS);
    timer.unref?.();
  }

  /** Re-reads the tool list now (also done automatically on `notifications/tools/list_changed`). */
  refreshTools(): Promise<void> {
    if (this.refreshInFlight) {
      this.refreshQueued = true;
      return this.refreshInFlight;
    }
    const generation = this.generation;
    this.refreshInFlight = (async () => {
      try {
        const client = this.client;
        if (!client) return;
        const tools = await this.listAllTools(client);
        if (generation !== this.generation) return;
        this.setTools(tools);
      } catch (error) {
        this.logLine(`[router] refreshing the tool list failed: ${describeError(error)}`);
      } finally {
        this.refreshInFlight = undefined;
        if (this.refreshQueued) {
          this.refreshQueued = false;
          void this.refreshTools();
        }
      }
    })();
    return this.refreshInFlight;
  }

  private connect(initialState: 'starting' | 'restarting'): void {
    const generation = ++this.generation;
    this.nextAttemptAt = undefined;
    this.setState(initialState, initialState === 'restarting' ? this.reason : undefined);
    void this.attempt(generation);
  }

  private async attempt(generation: number): Promise<void> {
    const { launch, options } = this.definition;
    let stdio: StdioProcessTransport | undefined;
    try {
      let client: Client;
      if (launch.type === 'stdio') {
        this.logLine(`[router] starting: ${launch.command} ${launch.args.join(' ')}`);
        const spawn = (): StdioProcessTransport =>
          new StdioProcessTransport({
            ...launch,
            onStderr: (line) => this.logLine(line),
            onStdoutNoise: (line) => this.logLine(`[router] ignored non-JSON-RPC output on stdout: ${line}`),
          });
        const first = (stdio = spawn());
        try {
          client = await this.connectWith(first, generation, options.startupTimeoutMs, this.exitsOnProbe ? { kind: 'legacy' } : undefined);
        } catch (error) {
          if (this.exitsOnProbe || !mayHaveExitedOnProbe(options.protocol, first.exitInfo) || generation !== this.generation) throw error;
          this.logLine(`[router] the server exited (${first.exitInfo}) while asked for its protocol revision; starting it once more, as a 2025-11-25 server`);
          await this.teardown();
          // Remembered even if this start fails too: a server that exits at once is not probed at every restart.
          this.exitsOnProbe = true;
          client = await this.connectWith((stdio = spawn()), generation, options.startupTimeoutMs, { kind: 'legacy' });
        }
        this.transportKind = 'stdio';
      } else {
        const url = new URL(launch.url);
        const requestInit: RequestInit = { headers: { ...launch.headers } };
        const authProvider = this.auth ? { authProvider: this.auth, fetch: this.auth.watchRefusals() } : {};
        const sse = (): SSEClientTransport => new SSEClientTransport(url, { requestInit, eventSourceInit: { fetch: sseFetch(launch.headers) }, ...authProvider });
        // SSE is a 2025 transport: a server pinned to 2026-07-28 is never looked for there.
        const sseAllowed = options.protocol !== MODERN_PROTOCOL_VERSION;
        if (launch.type === 'sse' && !sseAllowed) throw new Error(`${MODERN_PROTOCOL_VERSION} is not spoken over SSE (router.protocol); use "type": "http", or another router.protocol`);
        if (launch.type === 'http') {
          this.logLine(`[router] connecting (streamable HTTP): ${redactUrl(launch.url)}`);
          try {
            client = await this.connectRemote(() => new StreamableHTTPClientTransport(url, { requestInit, ...authProvider }), generation, options.startupTimeoutMs);
            this.transportKind = 'streamable-http';
          } catch (error) {
            if (!sseAllowed || !shouldFallBackToSse(error) || generation !== this.generation) throw error;
            this.logLine(`[router] streamable HTTP refused (${describeError(error)}); trying SSE`);
            client = await this.connectRemote(sse, generation, options.startupTimeoutMs, { kind: 'legacy' });
            this.transportKind = 'sse';
          }
        } else {
          this.logLine(`[router] connecting (SSE): ${redactUrl(launch.url)}`);
          client = await this.connectRemote(sse, generation, options.startupTimeoutMs, { kind: 'legacy' });
          this.transportKind = 'sse';
        }
      }
      if (generation !== this.generation) return;
      const tools = await this.withStepUp(() => this.listAllTools(client));
      if (generation !== this.generation) return;
      this.setTools(tools);
      this.readyAt = Date.now();
      this.logLine(`[router] ready with ${tools.length} tools over ${this.transportKind}, protocol ${this.protocolVersion ?? 'unknown'}`);
      this.setState('ready', undefined);
    } catch (error) {
      if (generation !== this.generation) return;
      const exited = stdio?.exitInfo ? `the server exited (${stdio.exitInfo}) before it was ready` : undefined;
      await this.teardown();
      // Without the user nobody can sign in: retrying would only ask the server again.
      this.needsSignIn = error instanceof NeedsSignInError;
      this.onFailure(this.needsSignIn ? describeError(error) : `could not start: ${revisionRefusal(error) ?? exited ?? describeError(error)}`, isPermanentStartError(error) || this.needsSignIn);
    }
  }

  /**
   * Connects a remote transport, signing in when the server asks for it (401, or 403 for more scopes):
   * the SDK discovers, registers and opens the authorization page through the provider; here the code
   * that comes back to the loopback redirect finishes it, and the connection is made again, signed in.
   */
  private async connectRemote(make: () => StreamableHTTPClientTransport | SSEClientTransport, generation: number, timeoutMs: number, prior?: PriorDiscovery): Promise<Client> {
    const auth = this.auth;
    await auth?.prepare();
    try {
      const transport = make();
      try {
        return await this.connectWith(transport, generation, timeoutMs, prior);
      } catch (error) {
        if (!(error instanceof UnauthorizedError) || !auth) throw error;
        if (!auth.interactive) throw new NeedsSignInError(this.name);
        await this.completeSignIn(transport);
        return await this.connectWith(make(), generation, timeoutMs, prior);
      }
    } finally {
      await auth?.done();
    }
  }

  /**
   * Runs a request; when the server wants more scopes for it (403 insufficient_scope), the SDK has started
   * a new sign-in: it is completed and the request made once more.
   */
  private async withStepUp<T>(request: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await request();
    } catch (error) {
      const transport = this.transport;
      if (!(error instanceof UnauthorizedError) || !this.auth?.interactive || !(transport instanceof StreamableHTTPClientTransport || transport instanceof SSEClientTransport)) throw error;
      await this.completeSignIn(transport, signal);
      return await request();
    } finally {
      // A sign-in started by the SDK opened the loopback listener; it closes once the request is settled.
      await this.auth?.done();
    }
  }

  /** Waits for the browser's redirect, and trades its code for tokens through the transport. */
  private async completeSignIn(transport: StreamableHTTPClientTransport | SSEClientTransport, signal?: AbortSignal): Promise<void> {
    const auth = this.auth!;
    await auth.prepare();
    this.logLine('[router] waiting for the sign-in in the browser');
    const redirect = await auth.waitForRedirect(undefined, signal);
    await transport.finishAuth(redirect);
    this.logLine('[router] signed in');
  }

  /** Signs in now (VS Code's Sign In): a fresh connection that may open the browser. */
  async signIn(): Promise<void> {
    this.needsSignIn = false;
    await this.restart();
  }

  /** Forgets the server's tokens and registration, and reconnects (it will then need sign-in). */
  async signOut(): Promise<void> {
    await this.auth?.signOut();
    await this.restart();
  }

  private clientCapabilities(): ClientCapabilities {
    const features = this.options.features;
    return {
      // Defaults the user left out are filled in from the requested schema (SEP-1034).
      ...(features?.elicit ? { elicitation: { form: { applyDefaults: true } } } : {}),
      ...(features?.sample ? { sampling: {} } : {}),
      ...(features?.roots && this.definition.options.roots ? { roots: { listChanged: features.onRootsChanged !== undefined } } : {}),
    };
  }

  private async connectWith(transport: Transport, generation: number, timeoutMs: number, prior?: PriorDiscovery): Promise<Client> {
    const client = new Client(CLIENT_INFO, {
      capabilities: this.clientCapabilities(),
      versionNegotiation: versionNegotiation(this.definition.options.protocol, this.definition.launch, timeoutMs),
      listChanged: this.listChangedHandlers(generation),
    });
    this.protocolVersion = undefined;
    this.installFeatureHandlers(client, generation);
    this.client = client;
    this.transport = transport;
    client.onclose = () => {
      if (generation !== this.generation || this.client !== client) return;
      const exit = transport instanceof StdioProcessTransport && transport.exitInfo ? ` (${transport.exitInfo})` : '';
      this.client = undefined;
      this.transport = undefined;
      if (this.state === 'ready') this.onFailure(`the server ${transport instanceof StdioProcessTransport ? 'exited' : 'connection closed'}${exit}`, false);
    };
    client.onerror = (error) => {
      if (generation !== this.generation) return;
      const message = describeError(error);
      this.logLine(`[router] transport error: ${message}`);
      if (/SSE stream disconnected|terminated|other side closed|ECONNRESET/i.test(message)) this.onStreamDropped(message);
    };
    // Servers that do not declare listChanged may still send it; the SDK's handler (set on connect for those that do) does the same.
    client.setNotificationHandler('notifications/tools/list_changed', () => this.toolsListChanged(generation));
    assumeCompleteResults(transport);
    try {
      await client.connect(transport, { timeout: timeoutMs, ...(prior ? { prior } : {}) });
      this.protocolVersion = client.getNegotiatedProtocolVersion();
    } catch (error) {
      if (isSdkError(error, SdkErrorCode.RequestTimeout)) {
        const handshake = client.getProtocolEra() === undefined && this.definition.options.protocol !== '2025-11-25' ? '"server/discover" or "initialize"' : '"initialize"';
        throw new Error(`no answer to ${handshake} within ${timeoutMs} ms (router.startupTimeoutMs)`, { cause: error });
      }
      throw error;
    }
    return client;
  }

  /** A list_changed for tools: the list is read again once the burst is over (refetched, not from the SDK's cache). */
  private toolsListChanged(generation: number): void {
    if (generation !== this.generation) return;
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refreshTools();
    }, TOOL_REFRESH_DEBOUNCE_MS);
    this.refreshTimer.unref?.();
  }

  /**
   * The lists whose changes the router hears. A 2026-07-28 server sends changes only on a
   * `subscriptions/listen` stream, which the SDK opens for the lists named here (and the server offers).
   */
  private listChangedHandlers(generation: number): ListChangedHandlers {
    const notice = (kind: 'promptsChanged' | 'resourcesChanged') => (): void => {
      if (generation === this.generation) this.notified.fire({ kind });
    };
    return {
      tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.toolsListChanged(generation) },
      prompts: { autoRefresh: false, debounceMs: 0, onChanged: notice('promptsChanged') },
      resources: { autoRefresh: false, debounceMs: 0, onChanged: notice('resourcesChanged') },
    };
  }

  /** Requests from the server (elicitation, sampling, roots) and its log messages. */
  private installFeatureHandlers(client: Client, generation: number): void {
    const features = this.options.features;
    // A request during a call goes to that call's client when it can answer (a gateway session); the
    // protocol does not say which call a request belongs to, so the newest such call is taken.
    const caller = (has: keyof CallerFeatures): CallerFeatures | undefined => [...this.callers].reverse().find((c) => c[has]);
    if (features?.elicit) {
      const elicit = features.elicit;
      client.setRequestHandler('elicitation/create', (request, ctx) => {
        const forward = caller('elicit');
        const signal = ctx.mcpReq.signal;
        return forward ? forward.elicit!(request.params, signal) : elicit(this.name, request.params, signal);
      });
    }
    if (features?.sample) {
      const sample = features.sample;
      client.setRequestHandler('sampling/createMessage', (request, ctx) => {
        const forward = caller('sample');
        const signal = ctx.mcpReq.signal;
        return forward ? forward.sample!(request.params, signal) : sample(this.name, request.params, signal);
      });
    }
    // A server configured without roots is not told them, so it keeps to the folders its own config gives.
    if (features?.roots && this.definition.options.roots) {
      const roots = features.roots;
      client.setRequestHandler('roots/list', () => ({ roots: roots().map((r) => ({ ...r })) }));
      this.offRoots?.();
      this.offRoots = features.onRootsChanged?.(() => {
        // A 2026-07-28 server asks for the roots with each request that needs them; there is no notice to send.
        if (generation === this.generation && this.client === client && client.getProtocolEra() !== 'modern') client.sendRootsListChanged().catch(() => undefined);
      });
    }
    installNoticeHandlers(
      client,
      (notice) => {
        if (notice.kind === 'log') {
          const { level, logger, data } = notice.params;
          this.logLine(`[${level}]${logger ? ` ${logger}:` : ''} ${typeof data === 'string' ? data : JSON.stringify(data)}`);
        }
        this.notified.fire(notice);
      },
      () => generation === this.generation,
      (text) => redactSecrets(text, this.definition.secrets),
    );
  }

  private async listAllTools(client: Client): Promise<ServerTool[]> {
    if (client.getProtocolEra() === 'modern') return this.listModernTools(client);
    const out: ServerTool[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, LooseToolListSchema, {
        timeout: this.definition.options.startupTimeoutMs,
      });
      out.push(...this.validTools(result.tools));
      cursor = result.nextCursor;
      if (!cursor) return out;
      if (seenCursors.has(cursor)) {
        this.logLine(`[router] tools/list returned cursor "${cursor.slice(0, 40)}" twice; stopped paging`);
        return out;
      }
      seenCursors.add(cursor);
    }
    this.logLine(`[router] tools/list still had more pages after ${MAX_TOOL_PAGES}; stopped paging`);
    return out;
  }

  /**
   * A 2026-07-28 server's tools through the SDK, which keeps the list for callTool's Mcp-Param-* headers
   * and leaves out tools whose x-mcp-header marks are invalid. Always refetched: the router keeps its own
   * list, and reads it again only when it changed (list_changed evicts the SDK's copy too) or on request.
   */
  private async listModernTools(client: Client): Promise<ServerTool[]> {
    const result = await client.listTools(undefined, { cacheMode: 'refresh', timeout: this.definition.options.startupTimeoutMs });
    return this.validTools(result.tools);
  }

  /** The entries of a tools/list page that are tools; each one that is not is logged and skipped. */
  private validTools(listed: readonly unknown[]): ServerTool[] {
    const out: ServerTool[] = [];
    for (const raw of listed) {
      const tool = toServerTool(raw);
      if (typeof tool === 'string') this.logLine(`[router] skipped an invalid tool in tools/list: ${tool}`);
      else out.push(tool);
    }
    return out;
  }

  private onFailure(reason: string, permanent: boolean): void {
    this.logLine(`[router] ${reason}`);
    if (this.readyAt > 0 && Date.now() - this.readyAt >= STABLE_UPTIME_MS) this.consecutiveFailures = 0;
    this.readyAt = 0;
    this.consecutiveFailures++;
    if (permanent || this.consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
      const why = permanent ? reason : `${reason}; gave up after ${this.consecutiveFailures} failed starts in a row`;
      this.setState('failed', `${why.replace(/\.+$/, '')}. Fix the configuration, then run "Restart Server".`);
      return;
    }
    const delay = this.backoff[Math.min(this.consecutiveFailures - 1, this.backoff.length - 1)] ?? 0;
    this.nextAttemptAt = Date.now() + delay;
    this.setState('restarting', `${reason}; restarting in ${Math.round(delay / 1000)} s (attempt ${this.consecutiveFailures})`);
    const generation = this.generation;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (generation !== this.generation) return;
      this.restarts++;
      this.connect('restarting');
    }, delay);
    this.restartTimer.unref?.();
  }

  private unavailableError(): ConnectionError {
    const why = this.reason ? `: ${this.reason}` : '';
    switch (this.state) {
      case 'starting':
        return new ConnectionError('SERVER_UNAVAILABLE', `Server "${this.name}" is still starting; try again in a moment.`, true);
      case 'restarting':
        return new ConnectionError('SERVER_UNAVAILABLE', `Server "${this.name}" is restarting${why}.`, true);
      case 'disabled':
        return new ConnectionError('SERVER_UNAVAILABLE', `Server "${this.name}" is disabled; enable it in the configuration to use its tools.`, false);
      default:
        return new ConnectionError('SERVER_UNAVAILABLE', `Server "${this.name}" ${describeState(this.state)}${why}`, false);
    }
  }

  private classifyCallError(error: unknown, generation: number, timeoutMs: number, tool: string): Error {
    const classified = this.classifyCallErrorUnredacted(error, generation, timeoutMs, tool);
    if (!(classified instanceof ConnectionError)) return classified;
    const message = redactSecrets(classified.message, this.definition.secrets);
    return message === classified.message ? classified : new ConnectionError(classified.type, message, classified.retryable);
  }

  private classifyCallErrorUnredacted(error: unknown, generation: number, timeoutMs: number, tool: string): Error {
    if (isSdkError(error, SdkErrorCode.RequestTimeout)) {
      return new ConnectionError('TIMEOUT', `Server "${this.name}" did not answer "${tool}" within ${timeoutMs} ms (router.callTimeoutMs). The call was cancelled; the tool may still have acted.`, true);
    }
    if (isSdkError(error, SdkErrorCode.ConnectionClosed) || ((error instanceof ProtocolError || error instanceof SdkError) && generation !== this.generation)) {
      return new ConnectionError('SERVER_RESTARTED', `Server "${this.name}" stopped while "${tool}" was running${this.reason ? ` (${this.reason})` : ''}. The server is being restarted; the call's effect is unknown, so check before retrying.`, true);
    }
    if (error instanceof ProtocolError) return new ConnectionError('PROTOCOL_ERROR', `Server "${this.name}" answered "${tool}" with error ${error.code}: ${error.message}`, false);
    // The server answered, with something that is not a tool result: asking again gets the same answer.
    if (isSdkError(error, SdkErrorCode.InvalidResult) || isSdkError(error, SdkErrorCode.UnsupportedResultType)) {
      return new ConnectionError('INVALID_RESULT', `Server "${this.name}" returned an invalid result for "${tool}": ${error.message}`, false);
    }
    // The server kept asking for input past the round limit: it answered, but never with a result.
    if (isSdkError(error, SdkErrorCode.InputRequiredRoundsExceeded)) return new ConnectionError('PROTOCOL_ERROR', `Server "${this.name}" kept asking for input on "${tool}" and never returned a result: ${error.message}`, false);
    if (isAbortError(error)) return new ConnectionError('CANCELLED', `The call to "${tool}" on "${this.name}" was cancelled.`, false);
    if (generation !== this.generation || this.state !== 'ready') {
      return new ConnectionError('SERVER_RESTARTED', `Server "${this.name}" stopped while "${tool}" was running. The server is being restarted; the call's effect is unknown, so check before retrying.`, true);
    }
    const message = describeError(error);
    // A remote server that went away: reconnect so the next call has a chance.
    if (this.definition.launch.type !== 'stdio' && /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|terminated|other side closed/i.test(message)) {
      void this.teardown().then(() => this.onFailure(`the connection failed during a call: ${message}`, false));
      return new ConnectionError('SERVER_RESTARTED', `The connection to server "${this.name}" failed while "${tool}" was running (${message}). Reconnecting; the call's effect is unknown.`, true);
    }
    return new ConnectionError('SERVER_UNAVAILABLE', `Calling "${tool}" on server "${this.name}" failed: ${message}`, true);
  }

  private setTools(tools: ServerTool[]): void {
    this.currentTools = tools;
    this.toolsChanged.fire(tools);
    this.emitStatus();
  }

  private setState(state: ServerState, reason: string | undefined): void {
    this.state = state;
    this.reason = reason === undefined ? undefined : redactSecrets(reason, this.definition.secrets);
    if (state === 'failed' || state === 'stopped' || state === 'disabled') {
      if (this.currentTools.length > 0) this.setTools([]);
    }
    this.emitStatus();
    if (this.isSettled()) for (const w of [...this.settledWaiters]) w();
  }

  private emitStatus(): void {
    const status = this.status;
    this.statusChanged.fire(status);
  }

  private logLine(text: string): void {
    // Secrets from inputs, env and headers can appear in the command line, in stderr and in transport errors.
    const line = redactSecrets(text, this.definition.secrets);
    this.log.append(line);
    this.options.onLog?.(this.name, line);
  }

  private async teardown(): Promise<void> {
    await this.auth?.done();
    const client = this.client;
    const transport = this.transport;
    this.client = undefined;
    this.transport = undefined;
    try {
      if (client) await client.close();
    } catch {
      // Closing a broken connection can fail; the transport is closed below all the same.
    }
    try {
      // Also after the client: while the SDK probes for the protocol revision, the client does not own the transport yet.
      await transport?.close();
    } catch {
      // The process group is still signalled by the transport.
    }
  }

  private clearTimers(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.restartTimer = undefined;
    this.refreshTimer = undefined;
  }
}

/** A tool as the SDK's callTool takes it: without its output schema, so results are checked as loosely on 2026-07-28 as on 2025-11-25. */
function sdkTool(tool: ServerTool): Tool {
  const { outputSchema: _outputSchema, ...rest } = tool;
  return rest as Tool; // the input schema was checked when the tools were listed
}

/** The server says the tool only reads, or that calling it again does no more: a second call is harmless. */
function safeToRepeat(tool: ServerTool | undefined): boolean {
  return tool?.annotations?.readOnlyHint === true || tool?.annotations?.idempotentHint === true;
}

function sseFetch(headers: Readonly<Record<string, string>>): typeof fetch {
  return (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string> | undefined), ...headers } });
}
