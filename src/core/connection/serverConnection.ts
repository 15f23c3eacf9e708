import { Client, ProtocolError, SdkErrorCode, type PriorDiscovery, type Progress, type ServerCapabilities, type Transport } from '@modelcontextprotocol/client';
import { NeedsSignInError, type RouterOAuthProvider } from '../auth/oauthProvider';
import { redactSecrets, type ServerDefinition } from '../config/serverConfig';
import { describeError } from '../errors/describeError';
import { productInfo } from '../util/productInfo';
import { Emitter } from '../util/emitter';
import type { CallerFeatures, ClientFeatures } from './clientFeatures';
import { ClientFeatureHandlers } from './clientFeatureHandlers';
import { assumeCompleteResults } from './completeByDefault';
import { callError, droppedCallError, forwardError, isPermanentStartError, isSdkError, revisionRefusal, unavailableError } from './connectionErrors';
import { versionNegotiation } from './protocolRevision';
import { RemoteSignIn } from './remoteSignIn';
import { RestartPolicy } from './restartPolicy';
import { ServerLog } from './serverLog';
import type { ForwardOptions, ForwardedMethod, ServerNotice } from './serverNotices';
import { SettledWaiters, waitUntilReady, type ServerState, type ServerStatus, type TransportKind } from './serverStatus';
import type { ServerTool } from './serverTool';
import { StdioProcessTransport } from './stdioProcessTransport';
import { LooseResultSchema, RemoteCalls, toolCallRequest, type ToolCallResult } from './toolCalls';
import { ToolListSync } from './toolList';
import { TransportFactory } from './transportFactory';

/**
 * One MCP server: its connection, its tools, its status and its log.
 *
 * This is the connection seam of the core: the router uses {@link ServerConnection.tools},
 * {@link ServerConnection.callTool}, the status and the change events; the gateway also forwards requests
 * ({@link ServerConnection.request}) and hears notifications ({@link ServerConnection.onDidNotify}) for
 * what a server offers besides tools. Connections start on their own and never block one another; a
 * server that exits or drops is restarted with a growing backoff (see restartPolicy.ts).
 */

export type { ServerState, ServerStatus } from './serverStatus';
export type { ServerTool, ToolAnnotations } from './serverTool';
export type { ToolCallResult } from './toolCalls';
export { ConnectionError, describeState } from './connectionErrors';

export interface ConnectionOptions {
  /** Called for each line of the server's log (stderr and lifecycle events). */
  readonly onLog?: (server: string, line: string) => void;
  /** Overridden in tests to make backoff fast; production uses RESTART_BACKOFF_MS. */
  readonly backoffMs?: readonly number[];
  /** Sign-in, elicitation, sampling and roots, as the host provides them. */
  readonly features?: ClientFeatures;
}

type Listener<T> = (value: T) => void;

/** One call's options: its time limit, cancellation, progress and the caller's own answers. */
export interface CallToolOptions {
  /** What is left of the call's time limit when it reaches the server. */
  readonly timeoutMs: number;
  /** The whole limit as configured (router.callTimeoutMs), which a timeout names; `timeoutMs` when absent. */
  readonly limitMs?: number;
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
  /** Counts starts: whatever an older start or client still does is ignored. */
  private generation = 0;
  private state: ServerState = 'stopped';
  private reason: string | undefined;
  private restarts = 0;
  private transportKind: TransportKind | undefined;
  private protocolVersion: string | undefined;
  private currentTools: ServerTool[] = [];
  private readonly statusChanged = new Emitter<ServerStatus>();
  private readonly toolsChanged = new Emitter<readonly ServerTool[]>();
  private readonly notified = new Emitter<ServerNotice>();
  private readonly settledWaiters = new SettledWaiters();
  private readonly auth: RouterOAuthProvider | undefined;
  private needsSignIn = false;
  private readonly restartPolicy: RestartPolicy;
  private readonly signIns: RemoteSignIn;
  private readonly transports: TransportFactory;
  private readonly features: ClientFeatureHandlers;
  private readonly toolList: ToolListSync;
  private readonly remoteCalls = new RemoteCalls();

  constructor(readonly definition: ServerDefinition, private readonly options: ConnectionOptions = {}) {
    this.log = new ServerLog();
    this.restartPolicy = new RestartPolicy(options.backoffMs);
    if (definition.launch.type !== 'stdio') this.auth = options.features?.auth?.(definition);
    const log = (line: string): void => this.logLine(line);
    this.signIns = new RemoteSignIn(definition.name, this.auth, log);
    this.transports = new TransportFactory(definition, this.auth, this.signIns, log);
    this.features = new ClientFeatureHandlers(definition, options.features);
    this.toolList = new ToolListSync(
      { client: () => this.client, generation: () => this.generation, setTools: (tools) => this.setTools(tools), log, notify: (notice) => this.notified.fire(notice) },
      definition.options.startupTimeoutMs,
    );
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
    const nextAttemptAt = this.restartPolicy.nextAttemptAt;
    return {
      name: this.name,
      state: this.state,
      ...(this.reason !== undefined ? { reason: this.reason } : {}),
      restarts: this.restarts,
      toolCount: this.currentTools.length,
      ...(this.transportKind ? { transport: this.transportKind } : {}),
      ...(this.protocolVersion ? { protocol: this.protocolVersion } : {}),
      ...(pid !== undefined && this.state === 'ready' ? { pid } : {}),
      ...(nextAttemptAt !== undefined && this.state === 'restarting' ? { nextAttemptAt } : {}),
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
    if (!client || this.state !== 'ready') throw unavailableError(this.name, this.state, this.reason);
    const generation = this.generation;
    const ask = async (): Promise<Record<string, unknown>> =>
      client.request({ method, params }, LooseResultSchema, { timeout: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) });
    try {
      return await this.signIns.withStepUp(ask, () => this.transport, opts.signal);
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
    this.restartPolicy.reset();
    this.connect('starting');
  }

  /** A manual restart: resets the backoff and reconnects now. */
  async restart(): Promise<void> {
    this.clearTimers();
    await this.teardown();
    this.restartPolicy.reset();
    this.transports.forgetProbeExit();
    this.restarts++;
    this.connect('restarting');
  }

  async stop(): Promise<void> {
    this.clearTimers();
    this.features.dispose();
    this.generation++;
    await this.teardown();
    this.setState('stopped', undefined);
  }

  /** True once the server has left `starting`: it is ready, failed, or waiting to restart. */
  isSettled(): boolean {
    return this.state !== 'starting' && !(this.state === 'restarting' && !this.restartPolicy.retrying);
  }

  /** Resolves when the server is settled (see {@link isSettled}) or after `timeoutMs`. */
  whenSettled(timeoutMs: number): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return this.settledWaiters.wait(timeoutMs);
  }

  /** Resolves true when ready, false when the server settles in another state or the time runs out. */
  whenReady(timeoutMs: number): Promise<boolean> {
    return waitUntilReady(this, timeoutMs);
  }

  /**
   * Calls a tool by its original name. Throws {@link ConnectionError} for connection-level failures;
   * returns the raw result object otherwise (its shape is checked by the router).
   */
  async callTool(tool: string, args: Record<string, unknown>, opts: CallToolOptions): Promise<ToolCallResult> {
    if (!opts.caller) return this.callToolAs(tool, args, opts);
    return this.features.during(opts.caller, () => this.callToolAs(tool, args, opts));
  }

  private async callToolAs(tool: string, args: Record<string, unknown>, opts: CallToolOptions): Promise<ToolCallResult> {
    const client = this.client;
    if (!client || this.state !== 'ready') throw unavailableError(this.name, this.state, this.reason);
    const generation = this.generation;
    const remote = this.definition.launch.type !== 'stdio';
    // Remote calls get their own abort, so a dropped response stream can end them (see RemoteCalls).
    const inFlight = remote ? this.remoteCalls.begin() : undefined;
    const signal = inFlight ? (opts.signal ? AbortSignal.any([opts.signal, inFlight.controller.signal]) : inFlight.controller.signal) : opts.signal;
    const request = toolCallRequest(
      client,
      {
        tool,
        args,
        timeoutMs: opts.timeoutMs,
        signal,
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
        definition: this.currentTools.find((t) => t.name === tool),
        viaSdk: client.getProtocolEra() === 'modern' && this.transportKind === 'streamable-http',
      },
      (line) => this.logLine(line),
    );
    try {
      return await this.signIns.withStepUp(request, () => this.transport, signal);
    } catch (error) {
      if (inFlight?.dropped !== undefined && !opts.signal?.aborted) throw droppedCallError(this.name, tool, redactSecrets(inFlight.dropped, this.definition.secrets));
      const at = { server: this.name, tool, timeoutMs: opts.limitMs ?? opts.timeoutMs, superseded: generation !== this.generation, ready: this.state === 'ready', reason: this.reason, remote, secrets: this.definition.secrets };
      throw callError(error, at, (why) => void this.teardown().then(() => this.onFailure(why, false)));
    } finally {
      if (inFlight) this.remoteCalls.end(inFlight);
    }
  }

  /** Re-reads the tool list now (also done automatically on `notifications/tools/list_changed`). */
  refreshTools(): Promise<void> {
    return this.toolList.refresh();
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

  private connect(initialState: 'starting' | 'restarting'): void {
    const generation = ++this.generation;
    this.restartPolicy.attemptStarted();
    this.setState(initialState, initialState === 'restarting' ? this.reason : undefined);
    void this.attempt(generation);
  }

  private async attempt(generation: number): Promise<void> {
    let stdio: StdioProcessTransport | undefined;
    try {
      const { client, kind } = await this.transports.open({
        handshake: (transport, prior) => this.connectWith(transport, generation, this.definition.options.startupTimeoutMs, prior),
        teardown: () => this.teardown(),
        isCurrent: () => generation === this.generation,
        spawned: (child) => (stdio = child),
      });
      this.transportKind = kind;
      if (generation !== this.generation) return;
      const tools = await this.signIns.withStepUp(() => this.toolList.list(client), () => this.transport);
      if (generation !== this.generation) return;
      this.setTools(tools);
      this.restartPolicy.markReady();
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

  private async connectWith(transport: Transport, generation: number, timeoutMs: number, prior?: PriorDiscovery): Promise<Client> {
    const client = new Client(productInfo(), {
      capabilities: this.features.capabilities(),
      versionNegotiation: versionNegotiation(this.definition.options.protocol, this.definition.launch, timeoutMs),
      listChanged: this.toolList.handlers(generation),
    });
    this.protocolVersion = undefined;
    this.features.install(client, {
      isCurrent: () => generation === this.generation,
      isCurrentClient: () => generation === this.generation && this.client === client,
      log: (line) => this.logLine(line),
      notify: (notice) => this.notified.fire(notice),
    });
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
      if (/SSE stream disconnected|terminated|other side closed|ECONNRESET/i.test(message)) this.remoteCalls.streamDropped(message);
    };
    // Servers that do not declare listChanged may still send it; the SDK's handler (set on connect for those that do) does the same.
    client.setNotificationHandler('notifications/tools/list_changed', () => this.toolList.changed(generation));
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

  private onFailure(reason: string, permanent: boolean): void {
    this.logLine(`[router] ${reason}`);
    const next = this.restartPolicy.decide(reason, permanent);
    if (next.kind === 'give-up') {
      this.setState('failed', next.reason);
      return;
    }
    this.setState('restarting', next.reason);
    const generation = this.generation;
    this.restartPolicy.schedule(next.delayMs, () => {
      if (generation !== this.generation) return;
      this.restarts++;
      this.connect('restarting');
    });
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
    if (this.isSettled()) this.settledWaiters.release();
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
    this.restartPolicy.cancel();
    this.toolList.cancel();
  }
}
