import { LoggingLevelSchema } from '@modelcontextprotocol/core';
import { ProtocolErrorCode, type LoggingLevel, type LoggingMessageNotification } from '@modelcontextprotocol/server';
import type { Connection, ServerStatus } from '../connection/serverConnection';
import type { ServerNotice } from '../connection/serverNotices';
import type { ToolRouter } from '../router/toolRouter';
import { FeatureDirectory, forwardedError, gatewayError } from './featureDirectory';
import { waitAtMost } from '../util/waitAtMost';

/**
 * What every session of the gateway shares over one router: the {@link FeatureDirectory} (where each
 * resource and prompt comes from), the servers' resource subscriptions and log level, and the servers'
 * notifications, fanned out to the sessions they concern. Sessions come and go (one per HTTP client); a
 * server is subscribed to a URI once, while any session wants it, and told the most verbose level any
 * session asked for (each session then drops what is below its own level).
 */

/** What the hub tells one session; RouterGateway implements it for its client. */
export interface GatewaySession {
  resourceUpdated(uri: string): void;
  listChanged(list: 'resources' | 'prompts'): void;
  serverLog(server: string, params: LoggingMessageNotification['params']): void;
}

interface Subscription {
  readonly server: string;
  readonly uri: string;
  readonly sessions: Set<GatewaySession>;
}

/** Severity of each level, least severe first, as the spec orders them. */
const SEVERITY: ReadonlyMap<LoggingLevel, number> = new Map(LoggingLevelSchema.options.map((level, i) => [level, i]));

export function isBelow(level: LoggingLevel, threshold: LoggingLevel | undefined): boolean {
  return threshold !== undefined && (SEVERITY.get(level) ?? 0) < (SEVERITY.get(threshold) ?? 0);
}

export class GatewayHub {
  readonly directory: FeatureDirectory;
  private readonly sessions = new Set<GatewaySession>();
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly levels = new Map<GatewaySession, LoggingLevel>();
  /** The level each server was last told, until it restarts (a new process starts at its own default). */
  private readonly levelTold = new Map<string, LoggingLevel>();
  /** The lists each ready server offers, kept to know which lists change when it stops. */
  private readonly offered = new Map<string, ReadonlyArray<'resources' | 'prompts'>>();
  private readonly off: Array<() => void>;

  constructor(
    readonly router: ToolRouter,
    private readonly log: (message: string) => void = () => undefined,
  ) {
    this.directory = new FeatureDirectory(router, log);
    for (const connection of router.listConnections()) if (connection.currentState === 'ready') this.offered.set(connection.name, offeredLists(connection));
    this.off = [router.onDidNotify(({ server, notice }) => this.onNotice(server, notice)), router.onDidChangeServerStatus((status) => this.onStatus(status))];
  }

  /** Adds a session; the returned function removes it, with its subscriptions and log level. */
  join(session: GatewaySession): () => void {
    this.sessions.add(session);
    return () => this.leave(session);
  }

  dispose(): void {
    this.off.forEach((off) => off());
    for (const session of [...this.sessions]) this.leave(session);
  }

  /**
   * Waits (bounded) while servers are still starting, so a first list or the instructions include them;
   * also while the configuration is still being applied (`serve` applies it once its client is connected).
   */
  async whenStarted(timeoutMs: number): Promise<void> {
    // Bounded as a whole: reading the pins before servers start must not hold a client either.
    await waitAtMost(this.router.whenSettled(timeoutMs), timeoutMs);
  }

  /** The gateway's own instructions, then each ready server's, one paragraph each, prefixed by its name. */
  instructions(own: string, maxPerServer: number): string {
    const paragraphs = this.router.listConnections().flatMap((c) => {
      const text = c.currentState === 'ready' ? c.instructions?.trim() : undefined;
      if (!text) return [];
      return [`[${c.name}] ${text.length > maxPerServer ? `${text.slice(0, maxPerServer)}… (cut at ${maxPerServer} characters)` : text}`];
    });
    return [own, ...paragraphs].join('\n\n');
  }

  async subscribe(session: GatewaySession, uri: string, signal?: AbortSignal): Promise<void> {
    const connection = await this.directory.resourceOwner(uri, signal);
    if (!connection.serverCapabilities?.resources?.subscribe) {
      throw gatewayError(ProtocolErrorCode.MethodNotFound, `Server "${connection.name}" does not offer subscriptions to its resources, so changes to "${uri}" cannot be announced; read it again to see changes.`);
    }
    const key = `${connection.name}\u0000${uri}`;
    if (!this.subscriptions.has(key)) {
      await this.forward(connection, 'resources/subscribe', uri, signal);
      if (!this.subscriptions.has(key)) this.subscriptions.set(key, { server: connection.name, uri, sessions: new Set() });
    }
    this.subscriptions.get(key)!.sessions.add(session);
  }

  async unsubscribe(session: GatewaySession, uri: string): Promise<void> {
    await Promise.all([...this.subscriptions.values()].filter((s) => s.uri === uri).map((s) => this.release(s, session)));
  }

  /** Applies a session's level, and tells the servers that log the most verbose level any session wants. */
  async setLevel(session: GatewaySession, level: LoggingLevel): Promise<void> {
    this.levels.set(session, level);
    await this.applyLevels();
  }

  private leave(session: GatewaySession): void {
    if (!this.sessions.delete(session)) return;
    for (const subscription of [...this.subscriptions.values()]) void this.release(subscription, session);
    if (this.levels.delete(session)) void this.applyLevels();
  }

  private async release(subscription: Subscription, session: GatewaySession): Promise<void> {
    if (!subscription.sessions.delete(session) || subscription.sessions.size > 0) return;
    this.subscriptions.delete(`${subscription.server}\u0000${subscription.uri}`);
    const connection = this.router.getConnection(subscription.server);
    if (connection?.currentState !== 'ready') return; // a stopped server has forgotten it already
    await this.forward(connection, 'resources/unsubscribe', subscription.uri).catch((error: unknown) => this.log(`could not unsubscribe from "${subscription.uri}" on "${subscription.server}": ${String(error)}`));
  }

  private async forward(connection: Connection, method: 'resources/subscribe' | 'resources/unsubscribe', uri: string, signal?: AbortSignal): Promise<void> {
    try {
      await connection.request(method, { uri }, { timeoutMs: connection.definition.options.callTimeoutMs, ...(signal ? { signal } : {}) });
    } catch (error) {
      throw forwardedError(connection.name, error);
    }
  }

  private async applyLevels(): Promise<void> {
    const wanted = [...this.levels.values()].sort((a, b) => (SEVERITY.get(a) ?? 0) - (SEVERITY.get(b) ?? 0))[0];
    if (wanted === undefined) return;
    const told = this.directory.offering('logging').filter((c) => this.levelTold.get(c.name) !== wanted);
    await Promise.all(
      told.map(async (c) => {
        try {
          await c.request('logging/setLevel', { level: wanted }, { timeoutMs: c.definition.options.callTimeoutMs });
          this.levelTold.set(c.name, wanted);
        } catch (error) {
          this.log(`could not set the log level of "${c.name}" to ${wanted}: ${String(error)}`);
        }
      }),
    );
  }

  private onNotice(server: string, notice: ServerNotice): void {
    switch (notice.kind) {
      case 'resourceUpdated':
        for (const s of this.subscriptions.values()) {
          // The spec lets a server announce a sub-resource of the URI the client subscribed to.
          if (s.server === server && notice.uri.startsWith(s.uri)) s.sessions.forEach((session) => session.resourceUpdated(notice.uri));
        }
        return;
      case 'resourcesChanged':
        this.directory.forget(server);
        return this.broadcast('resources');
      case 'promptsChanged':
        return this.broadcast('prompts');
      case 'log':
        this.sessions.forEach((session) => session.serverLog(server, notice.params));
        return;
    }
  }

  /** A server that became ready or stopped being so changes what the lists hold; a new process must be told again. */
  private onStatus(status: ServerStatus): void {
    const ready = status.state === 'ready';
    const was = this.offered.get(status.name);
    if ((was !== undefined) === ready) return;
    const connection = this.router.getConnection(status.name);
    const lists = ready && connection ? offeredLists(connection) : (was ?? []);
    if (ready) this.offered.set(status.name, lists);
    else this.offered.delete(status.name);
    this.directory.forget(status.name);
    this.levelTold.delete(status.name);
    if (ready) this.restore(status.name);
    lists.forEach((list) => this.broadcast(list));
  }

  private restore(server: string): void {
    const connection = this.router.getConnection(server);
    if (!connection) return;
    for (const s of this.subscriptions.values()) {
      if (s.server === server) void this.forward(connection, 'resources/subscribe', s.uri).catch((error: unknown) => this.log(`could not renew the subscription to "${s.uri}" on "${server}": ${String(error)}`));
    }
    void this.applyLevels();
  }

  private broadcast(list: 'resources' | 'prompts'): void {
    this.sessions.forEach((session) => session.listChanged(list));
  }
}

function offeredLists(connection: Connection): Array<'resources' | 'prompts'> {
  const capabilities = connection.serverCapabilities;
  return (['resources', 'prompts'] as const).filter((list) => capabilities?.[list] !== undefined);
}
