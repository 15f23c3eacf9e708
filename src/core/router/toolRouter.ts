import picomatch from 'picomatch';
import { type CallEnvelope, type CallError, type CallMeta } from './callEnvelope';
import { CallStatistics } from './callStatistics';
import { ConcurrencyQueue, QueueWaitTimeout } from './concurrencyQueue';
import type { ServerDefinition } from '../config/serverConfig';
import type { CallerFeatures } from '../connection/clientFeatures';
import { ConnectionError, ServerConnection, describeState, type Connection, type ConnectionOptions, type ServerStatus, type ServerTool } from '../connection/serverConnection';
import type { CallErrorType } from '../errors/callErrors';
import { describeError } from '../errors/describeError';
import type { ServerNotice } from '../connection/serverNotices';
import { assignServerPrefixes, assignToolNames, compareNames, suggestNames } from './naming';
import { normalizeArguments, parseArguments } from '../schema/argumentNormalizer';
import { SchemaCompiler, describeIssues } from '../schema/argumentValidator';
import { checkToolResult, cutToSize } from './toolResult';
import { Emitter } from '../util/emitter';
import { pinnedServer, type HeldBackTool, type PinnedServer, type ToolPins } from '../security/toolPins';
import { HeldBackTools, type AcceptResult, type RoutedServerStatus } from './heldBackTools';
import { routedTool, safeStringify, sameCatalogue, type RoutedTool } from './routedTool';
import { ToolValidators, type ToolSchema } from './toolValidators';

export type { HeldBackTool } from '../security/toolPins';
export type { AcceptResult, RoutedServerStatus } from './heldBackTools';
export type { RoutedTool } from './routedTool';

/**
 * The router: one catalogue of every server's tools under `{server}_{tool}` names, and one call pipeline
 * (parse → normalise → validate → queue → call → check → cut) that always ends in a {@link CallEnvelope}.
 */

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Overrides the server's `router.callTimeoutMs` for this call. */
  readonly timeoutMs?: number;
  /** The calling client's own elicitation and sampling (a gateway session), asked first during this call. */
  readonly caller?: CallerFeatures;
  /** The server's progress notifications for this call (a long call also stays alive while it reports). */
  readonly onProgress?: (progress: { readonly progress: number; readonly total?: number; readonly message?: string }) => void;
}

export interface ToolRouterOptions extends ConnectionOptions {
  /** Creates connections; tests and the extension pass their own to observe them. */
  readonly createConnection?: (def: ServerDefinition, options: ConnectionOptions) => Connection;
  /**
   * Tool pinning (src/core/security/toolPins.ts): a tool whose definition changed since it was first seen
   * is held back from the catalogue and from calls until the change is accepted. Absent: nothing is pinned.
   */
  readonly toolPins?: ToolPins;
  /** Compiles the tools' input schemas; tests pass their own to count compilations. */
  readonly schemaCompiler?: SchemaCompiler;
}

interface ServerEntry {
  readonly connection: Connection;
  /** Who the server is for pinning: its name and launch. */
  readonly pinned: PinnedServer;
  readonly queue: ConcurrencyQueue;
  readonly unsubscribe: Array<() => void>;
}

interface ToolEntry {
  readonly tool: RoutedTool;
  readonly schema: ToolSchema;
}

type Listener<T> = (value: T) => void;

/** Arguments after parse → normalise → validate, or the error that stops the call before the server. */
export type PreparedArguments = { ok: true; value: Record<string, unknown>; changes: readonly string[] } | { ok: false; error: CallError };

export class ToolRouter {
  readonly stats = new CallStatistics();
  private readonly servers = new Map<string, ServerEntry>();
  private tools = new Map<string, ToolEntry>();
  private readonly heldBack: HeldBackTools;
  private readonly validators: ToolValidators;
  private readonly toolsChanged = new Emitter<readonly RoutedTool[]>();
  private readonly statusChanged = new Emitter<RoutedServerStatus>();
  private readonly heldBackChanged = new Emitter<readonly HeldBackTool[]>();
  private readonly notified = new Emitter<{ readonly server: string; readonly notice: ServerNotice }>();
  /** The last applyConfig, until its servers are registered and the pins read. */
  private applying: Promise<void> = Promise.resolve();
  /** A catalogue rebuild waiting for the pins to be read. */
  private pinsRead: Promise<void> | undefined;

  constructor(private readonly options: ToolRouterOptions = {}) {
    this.heldBack = new HeldBackTools(options.toolPins, (server, line) => options.onLog?.(server, line));
    this.validators = new ToolValidators(options.schemaCompiler ?? new SchemaCompiler(), () => this.markSchemaProblems());
  }

  /**
   * Makes the running servers match `definitions`: new ones start, removed ones stop, changed ones
   * (different fingerprint) restart, and unchanged ones are left alone. Returns at once; servers start
   * in the background and in parallel.
   */
  async applyConfig(definitions: readonly ServerDefinition[]): Promise<void> {
    const applying = this.startServers(definitions);
    // Servers start while the pins are read; no tool is listed before they are (rebuildCatalogue). Waits
    // for tools and for settling see the servers and the pins as this call leaves them.
    this.applying = Promise.all([applying, this.options.toolPins?.whenLoaded()]).then(
      () => undefined,
      () => undefined,
    );
    return applying;
  }

  private async startServers(definitions: readonly ServerDefinition[]): Promise<void> {
    const wanted = new Map(definitions.map((d) => [d.name, d]));
    const stopping: Promise<void>[] = [];
    for (const [name, entry] of this.servers) {
      const next = wanted.get(name);
      if (!next || next.fingerprint !== entry.connection.definition.fingerprint) {
        stopping.push(this.removeServer(name));
      }
    }
    await Promise.all(stopping);
    for (const def of definitions) {
      if (this.servers.has(def.name)) continue;
      const connection = this.options.createConnection ? this.options.createConnection(def, this.options) : new ServerConnection(def, this.options);
      const entry: ServerEntry = {
        connection,
        pinned: pinnedServer(def),
        queue: new ConcurrencyQueue(def.options.maxConcurrentCalls),
        unsubscribe: [
          connection.onDidChangeTools(() => this.rebuildCatalogue()),
          connection.onDidChangeStatus((s) => this.statusChanged.fire(this.heldBack.withHeldBack(s))),
          connection.onDidNotify((notice) => this.notified.fire({ server: def.name, notice })),
        ],
      };
      this.servers.set(def.name, entry);
      connection.start();
    }
    this.rebuildCatalogue();
  }

  get serverStatuses(): RoutedServerStatus[] {
    return [...this.servers.values()].map((e) => this.heldBack.withHeldBack(e.connection.status));
  }

  getConnection(server: string): Connection | undefined {
    return this.servers.get(server)?.connection;
  }

  /** Every server's connection, in the order of the configuration (a server added later comes last). */
  listConnections(): Connection[] {
    return [...this.servers.values()].map((e) => e.connection);
  }

  /** The `{server}` part of every exposed name, by server: prompts are named with the same prefixes as tools. */
  serverPrefixes(): Map<string, string> {
    return assignServerPrefixes([...this.servers.keys()].sort(compareNames));
  }

  listTools(): RoutedTool[] {
    return [...this.tools.values()].map((e) => e.tool);
  }

  getTool(name: string): RoutedTool | undefined {
    return this.tools.get(name)?.tool;
  }

  /** Tools held back because their definition changed since it was pinned (of one server, or all). */
  heldBackTools(server?: string): HeldBackTool[] {
    return this.heldBack.list(server);
  }

  /**
   * Accepts the changed definition of a held-back tool: it is recorded as approved and the tool comes
   * back (the catalogue is published again). `fingerprint` is the change the user reviewed: when the
   * server has changed the tool again since, nothing is accepted and the reason says so.
   */
  async acceptToolChange(name: string, fingerprint?: string): Promise<AcceptResult> {
    const accepted = this.heldBack.accept(name, fingerprint, (server) => this.servers.get(server)?.pinned);
    if (!accepted.ok) return accepted;
    this.rebuildCatalogue();
    await accepted.saved;
    return { ok: true };
  }

  /** Accepts every acceptable held-back tool of `server`; returns how many came back. */
  async acceptToolChanges(server: string): Promise<number> {
    let accepted = 0;
    for (const held of this.heldBackTools(server)) if ((await this.acceptToolChange(held.name)).ok) accepted++;
    return accepted;
  }

  /** Validates arguments without calling anything (used by the command palette to show errors at the field). */
  checkArguments(name: string, rawArgs: unknown): PreparedArguments {
    const entry = this.tools.get(name);
    if (!entry) return { ok: false, error: this.missingToolError(name) };
    return this.prepareArguments(entry, rawArgs);
  }

  onDidChangeTools(listener: Listener<readonly RoutedTool[]>): () => void {
    return this.toolsChanged.on(listener);
  }

  onDidChangeServerStatus(listener: Listener<RoutedServerStatus>): () => void {
    return this.statusChanged.on(listener);
  }

  /** Every server's notifications besides tools/list_changed (resources, prompts, log messages). */
  onDidNotify(listener: Listener<{ readonly server: string; readonly notice: ServerNotice }>): () => void {
    return this.notified.on(listener);
  }

  /** Fires with every held-back tool when the set (or a held tool's change) differs from before. */
  onDidChangeHeldBackTools(listener: Listener<readonly HeldBackTool[]>): () => void {
    return this.heldBackChanged.on(listener);
  }

  /**
   * Resolves once every server has settled (ready, failed, or waiting to restart), or after `timeoutMs`,
   * and the schemas of the tools listed by then are compiled (so `schemaProblem` is final).
   */
  async whenSettled(timeoutMs: number): Promise<void> {
    await this.applying;
    await Promise.all([...this.servers.values()].map((e) => e.connection.whenSettled(timeoutMs)));
    await this.validators.whenChecked();
  }

  /**
   * Waits until `name` is in the catalogue, or until every server that could own it has settled.
   * Only servers whose prefix starts `name` are waited for, so one slow server does not delay a call to another.
   */
  async waitForTool(name: string, timeoutMs: number): Promise<RoutedTool | undefined> {
    const existing = this.getTool(name);
    if (existing) return existing;
    await this.applying;
    const prefixes = this.serverPrefixes();
    const owners = [...this.servers.entries()].filter(([server]) => name.startsWith(`${prefixes.get(server)}_`)).map(([, e]) => e.connection);
    const candidates = owners.length > 0 ? owners : [...this.servers.values()].map((e) => e.connection);
    const deadline = Date.now() + timeoutMs;
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (this.getTool(name) || this.heldBack.get(name) || candidates.every((c) => c.isSettled()) || Date.now() >= deadline) {
          offTools();
          offStatus();
          clearTimeout(timer);
          resolve();
        }
      };
      const offTools = this.onDidChangeTools(check);
      const offStatus = this.onDidChangeServerStatus(check);
      const timer = setTimeout(check, Math.max(0, timeoutMs));
      timer.unref?.();
      check();
    });
    return this.getTool(name);
  }

  async call(name: string, rawArgs: unknown, options: CallOptions = {}): Promise<CallEnvelope> {
    const started = performance.now();
    const entry = this.tools.get(name);
    if (!entry) {
      const held = this.heldBack.get(name);
      return { ok: false, error: this.missingToolError(name), meta: { latencyMs: 0, bytes: 0, server: held?.server ?? '', tool: held?.originalName ?? name, exposedName: name } };
    }
    const { tool } = entry;
    const server = this.servers.get(tool.server);
    const baseMeta = { server: tool.server, tool: tool.originalName, exposedName: tool.name };
    const fail = (type: CallErrorType, message: string, retryable: boolean, extra: Partial<CallError> = {}, metaExtra: Partial<CallMeta> = {}): CallEnvelope => {
      const latencyMs = performance.now() - started;
      this.stats.record(name, latencyMs, 0, false);
      return { ok: false, error: { type, message, retryable, ...extra }, meta: { latencyMs, bytes: 0, ...baseMeta, ...metaExtra } };
    };
    if (!server) return fail('SERVER_UNAVAILABLE', `Server "${tool.server}" is no longer configured.`, false);

    const prepared = this.prepareArguments(entry, rawArgs);
    if (!prepared.ok) return fail(prepared.error.type, prepared.error.message, false, prepared.error.issues ? { issues: prepared.error.issues } : {});
    const normalized = prepared.changes;

    const timeoutMs = options.timeoutMs ?? server.connection.definition.options.callTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const connection = server.connection;
    const state = connection.currentState;
    if (state === 'starting' || state === 'restarting') {
      // A server that is coming up gets the call's own time budget to become ready.
      await connection.whenReady(timeoutMs);
    }

    let raw: Record<string, unknown>;
    try {
      raw = await server.queue.run(
        () => connection.callTool(tool.originalName, prepared.value, { timeoutMs: Math.max(1, deadline - Date.now()), limitMs: timeoutMs, ...(options.signal ? { signal: options.signal } : {}), ...(options.onProgress ? { onProgress: options.onProgress } : {}), ...(options.caller ? { caller: options.caller } : {}) }),
        { ...(options.signal ? { signal: options.signal } : {}), waitLimitMs: Math.max(0, deadline - Date.now()) },
      );
    } catch (error) {
      if (error instanceof ConnectionError) return fail(error.type, error.message, error.retryable, {}, normalized.length ? { normalized } : {});
      if (error instanceof QueueWaitTimeout) {
        return fail('TIMEOUT', `"${name}" waited ${timeoutMs} ms for a free slot on server "${tool.server}" (router.maxConcurrentCalls = ${connection.definition.options.maxConcurrentCalls}) and was not started.`, true);
      }
      if (options.signal?.aborted) return fail('CANCELLED', `The call to "${name}" was cancelled.`, false);
      return fail('SERVER_UNAVAILABLE', `Calling "${name}" failed: ${describeError(error)}`, true);
    }

    const checked = checkToolResult(raw);
    if (typeof checked === 'string') {
      return fail('INVALID_RESULT', `Server "${tool.server}" returned an invalid result for "${tool.originalName}": ${checked}.`, false);
    }
    const limit = connection.definition.options.maxResponseBytes;
    const cut = cutToSize(checked, limit);
    const latencyMs = performance.now() - started;
    const meta: CallMeta = {
      latencyMs,
      bytes: cut.bytes,
      ...baseMeta,
      ...(cut.cut ? { truncated: { originalBytes: cut.originalBytes, limitBytes: limit } } : {}),
      ...(normalized.length ? { normalized } : {}),
    };
    this.stats.record(name, latencyMs, cut.bytes, !checked.isError);
    if (checked.isError) {
      const text = cut.content.filter((b) => b.type === 'text').map((b) => String(b['text'])).join('\n').trim();
      return {
        ok: false,
        error: { type: 'TOOL_ERROR', message: `Tool "${tool.originalName}" on server "${tool.server}" reported an error${text ? `: ${text.slice(0, 2000)}` : ' (no message)'}`, retryable: false },
        content: cut.content,
        meta,
      };
    }
    return { ok: true, content: cut.content, ...(cut.structuredContent !== undefined ? { structuredContent: cut.structuredContent } : {}), meta };
  }

  async restartServer(server: string): Promise<void> {
    await this.servers.get(server)?.connection.restart();
  }

  async refreshTools(server?: string): Promise<void> {
    const targets = server ? [this.servers.get(server)].filter((e): e is ServerEntry => !!e) : [...this.servers.values()];
    await Promise.all(targets.map((e) => e.connection.refreshTools()));
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.servers.keys()].map((name) => this.removeServer(name)));
    this.validators.dispose();
    this.rebuildCatalogue();
    // A short-lived host (a CLI run) exits after this: pins first seen in it must reach the file.
    await this.options.toolPins?.flush();
  }

  private prepareArguments(entry: ToolEntry, rawArgs: unknown): PreparedArguments {
    const { tool } = entry;
    const parsed = parseArguments(rawArgs);
    if (!parsed.ok) return { ok: false, error: { type: 'INVALID_ARGUMENTS', message: `Invalid arguments for "${tool.name}": ${parsed.message}.`, retryable: false } };
    // Compiled here on the tool's first use unless the background pass came first.
    const validator = entry.schema.validator();
    if (!validator.ok) {
      const allow = this.servers.get(tool.server)?.connection.definition.options.allowUnvalidatedTools ?? false;
      if (!allow) {
        return {
          ok: false,
          error: {
            type: 'SCHEMA_UNAVAILABLE',
            message: `"${tool.name}" was not called because ${validator.reason}, so its arguments cannot be checked. Ask the server's author to fix the schema, or set router.allowUnvalidatedTools for server "${tool.server}" to call it anyway.`,
            retryable: false,
          },
        };
      }
      return { ok: true, ...normalizeArguments(parsed.value, tool.inputSchema) };
    }
    const { value, changes } = normalizeArguments(parsed.value, tool.inputSchema);
    const issues = validator.validate(value);
    if (issues.length > 0) {
      return {
        ok: false,
        error: { type: 'INVALID_ARGUMENTS', message: `Invalid arguments for "${tool.name}": ${describeIssues(issues)}. Fix these and call again.`, retryable: false, issues },
      };
    }
    return { ok: true, value, changes };
  }

  /** Servers that are not ready and whose prefix starts `name`: the ones that could own a missing tool. */
  unreadyOwnersOf(name: string): ServerStatus[] {
    const prefixes = this.serverPrefixes();
    return [...this.servers.values()].map((e) => e.connection.status).filter((st) => st.state !== 'ready' && name.startsWith(`${prefixes.get(st.name)}_`));
  }

  /** Why a call to `name` could not run now (held back, or unknown, with the names it may have meant); none when it is listed. */
  missingReason(name: string): CallError | undefined {
    return this.tools.has(name) ? undefined : this.missingToolError(name);
  }

  /** Why `name` is not in the catalogue: held back (and how to accept it), or unknown. */
  private missingToolError(name: string): CallError {
    return this.heldBack.callError(name) ?? this.unknownToolError(name);
  }

  private unknownToolError(name: string): CallError {
    const suggestions = suggestNames(name, [...this.tools.keys()]);
    const hint = suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : this.tools.size === 0 ? ' No tools are available: check that the servers are running.' : '';
    // A server that never became ready has listed no tools: name it, so the caller knows why its tool is missing.
    const down = this.unreadyOwnersOf(name).map((st) => ` Server "${st.name}" ${describeState(st.state)}${st.reason ? `: ${st.reason}` : ''}.`.replace(/\.\.$/, '.'));
    return { type: 'UNKNOWN_TOOL', message: `There is no tool named "${name}".${down.join('')}${hint}`, retryable: false };
  }

  private async removeServer(name: string): Promise<void> {
    const entry = this.servers.get(name);
    if (!entry) return;
    this.servers.delete(name);
    entry.unsubscribe.forEach((off) => off());
    this.validators.forgetServer(name);
    await entry.connection.stop();
  }

  /** Marks the tools whose schema turned out not to compile, and publishes the catalogue again. */
  private markSchemaProblems(): void {
    let changed = false;
    const next = new Map<string, ToolEntry>();
    for (const [name, entry] of this.tools) {
      const problem = entry.schema.problem;
      changed ||= problem !== entry.tool.schemaProblem;
      next.set(name, problem === entry.tool.schemaProblem ? entry : { ...entry, tool: { ...entry.tool, schemaProblem: problem } });
    }
    if (!changed) return;
    this.tools = next;
    this.toolsChanged.fire(this.listTools());
  }

  private rebuildCatalogue(): void {
    // Pins are read before any tool is listed, so a changed tool is never taken for a new one.
    const pins = this.options.toolPins;
    if (pins && !pins.isLoaded) {
      this.pinsRead ??= pins.whenLoaded().then(() => {
        this.pinsRead = undefined;
        this.rebuildCatalogue();
      });
      return;
    }
    const listed: Array<{ server: string; tool: ServerTool }> = [];
    for (const [server, entry] of [...this.servers.entries()].sort(([a], [b]) => compareNames(a, b))) {
      const { toolsAllowed, toolsDenied } = entry.connection.definition.options;
      const allowed = toolsAllowed.length > 0 ? picomatch([...toolsAllowed]) : () => true;
      const denied = toolsDenied.length > 0 ? picomatch([...toolsDenied]) : () => false;
      const seen = new Set<string>();
      for (const tool of [...entry.connection.tools].sort((a, b) => compareNames(a.name, b.name))) {
        if (seen.has(tool.name)) continue; // a server listing one name twice: the first wins
        seen.add(tool.name);
        if (allowed(tool.name) && !denied(tool.name)) listed.push({ server, tool });
      }
    }
    const prefixes = this.serverPrefixes();
    const names = assignToolNames(listed.map((l) => ({ server: l.server, tool: l.tool.name })), prefixes);
    const next = new Map<string, ToolEntry>();
    const heldBack = new Map<string, HeldBackTool>();
    listed.forEach(({ server, tool }, i) => {
      const name = names[i]!;
      // Held-back tools keep their place in naming, so holding one back never renames another.
      const pinned = this.servers.get(server)?.pinned;
      const held = pinned && this.heldBack.check(pinned, tool, name);
      if (held) {
        heldBack.set(name, held);
        return;
      }
      const schema = this.validators.forTool(server, tool.inputSchema, safeStringify(tool.inputSchema));
      next.set(name, { schema, tool: routedTool(name, server, tool, schema.problem) });
    });
    const changed = !sameCatalogue(this.tools, next);
    const heldServers = this.heldBack.replace(heldBack);
    this.tools = next;
    this.validators.schedule();
    if (changed) {
      const list = this.listTools();
      this.toolsChanged.fire(list);
    }
    if (heldServers.size > 0) {
      this.heldBackChanged.fire(this.heldBackTools());
      for (const server of heldServers) {
        const entry = this.servers.get(server);
        if (entry) this.statusChanged.fire(this.heldBack.withHeldBack(entry.connection.status));
      }
    }
  }
}
