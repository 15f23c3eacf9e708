import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { isIP, isIPv4, type AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest, isLegacyRequest, type McpHttpHandler, type McpRequestContext, type Server } from '@modelcontextprotocol/server';
import { TokenBuckets, clientKey, hostOfHeader } from './clientLimits';
import type { ListName } from './gatewayCore';
import { sessionIdFor, type ReplicaPlace } from './replicaSessions';
import { RECONNECT_MS, SessionEventStore, answerLostCall, lostRequestId, withStreamRequest } from './sessionStreams';
import type { RouterGateway } from './routerGateway';
import { MIN_TOKEN_LENGTH } from './tokenFile';
import { describeError } from '../errors/describeError';

/**
 * The router gateway over streamable HTTP, for every client at once: VS Code (through the extension's MCP
 * server definition, served from the extension host), other MCP clients on the machine, or a team's shared
 * router. Each MCP session gets its own RouterGateway (its own dynamic subset), over the one router and
 * selection engine that the caller owns, so each configured server runs once whoever connects.
 *
 * Every request passes, in order: the Host check (a valid name or address; on a loopback bind a loopback one,
 * so a web page cannot reach the gateway through DNS rebinding), the Origin check (a browser page from any
 * other origin, or from an opaque `null` one, is refused), the failure limit of its address (429 once it has
 * sent many wrong tokens, checked before the token so guessing stays slow), the bearer secret (401), the
 * request rate limit (429), the session (404 for an unknown one), and the byte budget of its client (413 or
 * 429, decided before the body is read). None of these answers says anything about the routed servers.
 *
 * Then the request is routed by the revision it speaks. A 2025 one (no `_meta` envelope: initialize, a
 * session's requests, GET and DELETE) takes the sessionful path: one RouterGateway per session, with the
 * session caps and idle timeout. A 2026-07-28 one goes to the SDK's stateless handler (`createMcpHandler`,
 * fed the body already read), which builds a Server for that request alone (modernGateway.ts) and serves
 * `subscriptions/listen` for list changes. Without a `modern` gateway, every request takes the 2025 path.
 *
 * A client is its address (the socket's, or with `trustProxy` the one the reverse proxy forwarded), an IPv6
 * one by its /64: the failure limit, the byte budget and the per-client session cap are kept per client.
 */

export const MCP_PATH = '/mcp';
/** Loopback only, unless the caller binds elsewhere on purpose (with a token). */
export const DEFAULT_HOST = '127.0.0.1';
/**
 * Requests one client may make in a burst, and per second after it. An agent step makes a handful of
 * requests (a search, a call, a list after list_changed); 60 a burst and 20 a second leave room for a busy
 * agent while a client stuck in a loop cannot starve the others sharing the router.
 */
export const DEFAULT_RATE_BURST = 60;
export const DEFAULT_RATE_PER_SECOND = 20;
/** Resources one listen stream may watch; a longer list is cut, so one request cannot subscribe without bound. */
const MAX_LISTENED_RESOURCES = 256;
/** Sessions kept at once; a client that opens sessions without closing them cannot grow memory without end. */
export const DEFAULT_MAX_SESSIONS = 64;
/**
 * Sessions one client keeps at once: a quarter of the total, so at least four clients keep theirs however many
 * another opens, and still far more than one MCP client opens (one per window or agent).
 */
export const DEFAULT_MAX_SESSIONS_PER_CLIENT = DEFAULT_MAX_SESSIONS / 4;
/** A session nobody has used for this long is closed; clients reconnect with a new initialize. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
const MiB = 1024 * 1024;
/**
 * The largest JSON-RPC body read. Tool arguments are written by a model, whose whole answer is at most a few
 * hundred KB, so 1 MiB fits any real call while bounding what one request makes the gateway hold.
 */
export const MAX_BODY_BYTES = 1 * MiB;
/**
 * Body bytes one client may send in a burst (four of the largest bodies back to back), and per second after it
 * (one). Agents send a few KB a step; the budget bounds what one client makes the gateway buffer at once,
 * however many requests or sessions it opens.
 */
export const BYTE_BURST = 4 * MAX_BODY_BYTES;
export const BYTES_PER_SECOND = MAX_BODY_BYTES;
/**
 * Failed requests (wrong tokens) one client may make in a burst, and per second after it. A client with a
 * stale token fails a few times before someone notices; past 20 it is guessing, and since the check comes
 * before the token is compared, it guesses once a second at most.
 */
export const FAILURE_BURST = 20;
export const FAILURES_PER_SECOND = 1;
/** A refused body up to this size is drained rather than the connection closed: cheaper than a new connection. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/** What the HTTP gateway needs to answer 2026-07-28 requests; ModernGateway fits. */
export interface ModernServing {
  /** The Server that answers one request. */
  createServer(ctx: McpRequestContext): Server;
  /** Calls `listener` when a list that subscriptions/listen streams watch changed; returns the unsubscribe. */
  onDidChangeList(listener: (list: ListName) => void): () => void;
  /** Calls `listener` when a resource a listen stream watches changed; returns the unsubscribe. */
  onDidUpdateResource(listener: (uri: string) => void): () => void;
  /** Subscribes upstream to the resources a listen stream names; returns what to call when it closes. */
  watchResources(uris: readonly string[]): () => void;
}

export interface HttpGatewayOptions {
  /** Builds the gateway for one new 2025 session; it is connected to that session's transport. */
  readonly createGateway: (sessionId: string) => RouterGateway;
  /** Serves 2026-07-28 requests; without it they are answered as 2025 requests without a session. */
  readonly modern?: ModernServing;
  readonly host?: string;
  /** 0 (default): a free port chosen by the system. */
  readonly port?: number;
  /**
   * The bearer secret every request must carry. Undefined turns auth off, which is accepted on a loopback
   * host only (local tools, the conformance suite).
   */
  readonly token?: string;
  readonly rateBurst?: number;
  readonly ratePerSecond?: number;
  readonly maxSessions?: number;
  /** Sessions one client keeps at once (at most `maxSessions`); past it, its own oldest session is closed. */
  readonly maxSessionsPerClient?: number;
  readonly sessionIdleMs?: number;
  /**
   * The gateway stands behind a reverse proxy: a client is the right-most address of `X-Forwarded-For` (the
   * one the proxy added), not the socket's, which is the proxy's. Off by default, since without a proxy that
   * header is whatever the client wrote, and trusting it would let a client dodge every per-client limit.
   */
  readonly trustProxy?: boolean;
  /** This gateway's place among replicas behind a proxy that hashes Mcp-Session-Id (replicaSessions.ts). */
  readonly replica?: ReplicaPlace;
  readonly log?: (message: string) => void;
  /** Current time in ms (tests drive the rate limiter's clock). */
  readonly now?: () => number;
}

/** A fresh secret for one run of the gateway: 32 random bytes, URL-safe. */
export function newGatewaySecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `host` (as given to `--host`, or read from a Host header) is a loopback address or name. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || (isIPv4(h) && h.startsWith('127.'));
}

interface Session {
  readonly transport: NodeStreamableHTTPServerTransport;
  readonly gateway: RouterGateway;
  readonly client: string;
  lastUsed: number;
}

export class HttpGateway {
  private server: HttpServer | undefined;
  private readonly sessions = new Map<string, Session>();
  /** Requests, by session (or by client before it has one). */
  private readonly requests: TokenBuckets;
  /** Wrong tokens and unknown sessions, by client. */
  private readonly failures: TokenBuckets;
  /** Request body bytes, by client. */
  private readonly bytes: TokenBuckets;
  private readonly log: (message: string) => void;
  private readonly now: () => number;
  private readonly host: string;
  private sweeper: NodeJS.Timeout | undefined;
  private boundPort = 0;
  /** The 2026-07-28 handler, its Node face, and the unsubscribe from list changes; undefined without `modern`. */
  private modern: { readonly handler: McpHttpHandler; readonly node: NodeMcpRequestHandler; readonly off: () => void } | undefined;

  constructor(private readonly options: HttpGatewayOptions) {
    this.host = options.host ?? DEFAULT_HOST;
    this.log = options.log ?? (() => undefined);
    this.now = options.now ?? Date.now;
    if (options.token === undefined && !isLoopbackHost(this.host)) {
      throw new Error(`Refusing to serve on ${this.host} without a token: anyone who can reach that address could run every routed tool. Give a token file (--token-file), or bind to 127.0.0.1.`);
    }
    if (options.token !== undefined && options.token.length < MIN_TOKEN_LENGTH) {
      throw new Error(`The gateway token is shorter than ${MIN_TOKEN_LENGTH} characters; use a long random secret (for example \`openssl rand -hex 32\`).`);
    }
    this.requests = new TokenBuckets(options.rateBurst ?? DEFAULT_RATE_BURST, options.ratePerSecond ?? DEFAULT_RATE_PER_SECOND, this.now);
    this.failures = new TokenBuckets(FAILURE_BURST, FAILURES_PER_SECOND, this.now);
    this.bytes = new TokenBuckets(BYTE_BURST, BYTES_PER_SECOND, this.now);
    const modern = options.modern;
    if (modern) {
      const onerror = (error: Error): void => this.log(`2026-07-28 request failed: ${error.message}`);
      // 'reject': 2025 requests never reach it; they are routed to the sessionful path first.
      const handler = createMcpHandler((ctx) => modern.createServer(ctx), { legacy: 'reject', maxRequestBodySize: MAX_BODY_BYTES, onerror });
      const offLists = modern.onDidChangeList((list) => (list === 'resources' ? handler.notify.resourcesChanged() : handler.notify.promptsChanged()));
      const offUpdates = modern.onDidUpdateResource((uri) => handler.notify.resourceUpdated(uri));
      const off = (): void => {
        offLists();
        offUpdates();
      };
      this.modern = { handler, node: toNodeHandler(handler, { onerror, maxRequestBodySize: MAX_BODY_BYTES }), off };
    }
  }

  /** Starts listening; resolves with the URL clients connect to. */
  async start(): Promise<URL> {
    if (this.server) return this.url;
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        this.log(`gateway request failed: ${describeError(error)}`);
        if (!res.headersSent) reply(res, 500, 'The router gateway failed on this request; see its log.');
        else res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    const idle = this.options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.sweeper = setInterval(() => this.closeIdle(idle), Math.min(idle, 60_000));
    this.sweeper.unref();
    this.log(`gateway listening on ${this.url.href}${this.options.token === undefined ? ' (no auth: loopback only)' : ''}`);
    return this.url;
  }

  get url(): URL {
    const host = this.host.includes(':') && !this.host.startsWith('[') ? `[${this.host}]` : this.host;
    return new URL(`http://${host}:${this.boundPort}${MCP_PATH}`);
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((s) => s.gateway.close().catch(() => undefined)));
    if (this.modern) {
      this.modern.off();
      await this.modern.handler.close().catch(() => undefined);
      this.modern = undefined;
    }
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (url.pathname !== MCP_PATH) return reply(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}.`);
    const forbidden = this.refuseHostOrOrigin(req);
    if (forbidden) return reply(res, 403, forbidden);
    const client = this.clientOf(req);
    const sessionId = header(req, 'mcp-session-id');
    const session = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    // A live session's id is a secret of its own, so a locked-out address's sessions go on working.
    if (!session && this.failures.available(client) < 1) {
      return tooMany(res, this.failures.secondsUntil(client, 1), 'Too many failed requests (wrong tokens) from this address; check the token, then retry later.');
    }
    if (!this.authorized(req)) {
      this.failed(client);
      res.setHeader('WWW-Authenticate', 'Bearer realm="mcp-tool-router"');
      return reply(res, 401, 'Missing or wrong bearer token: send "Authorization: Bearer <token>" with the gateway\'s token.');
    }
    const rateKey = session ? sessionId! : `addr:${client}`;
    if (!this.requests.take(rateKey, 1)) return tooMany(res, this.requests.secondsUntil(rateKey, 1), 'Too many requests from this client; slow down and retry.');
    if (sessionId !== undefined && !session) {
      // A client reconnecting to a call whose gateway stopped is told the call is lost, not left waiting.
      const lost = req.method === 'GET' ? lostRequestId(header(req, 'last-event-id')) : undefined;
      if (lost !== undefined) return answerLostCall(res, lost);
      // Not a failure: every client of a replica that stopped reconnects a few streams here, and past 20 the
      // address would lose its lost-call answers and new sessions. A session id (a random UUID) cannot be
      // guessed; the request rate limit bounds these requests.
      return reply(res, 404, 'Unknown or expired MCP session: start a new one with initialize.');
    }
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJson(req, (bytes) => this.bytes.take(client, bytes));
      if (!read.ok) {
        if (read.status === 429) return tooMany(res, this.bytes.secondsUntil(client, read.wanted), read.message);
        return reply(res, read.status, read.message);
      }
      body = read.value;
    }
    if (sessionId !== undefined) {
      // Looked up again: the session may have been closed while its body was read.
      const live = this.sessions.get(sessionId);
      if (!live) return reply(res, 404, 'Unknown or expired MCP session: start a new one with initialize.');
      live.lastUsed = this.now();
      await withStreamRequest(body, () => live.transport.handleRequest(req, res, body));
      return;
    }
    if (req.method === 'POST' && this.modern && !(await isLegacyRequest(await toWebRequest(req, body), body, { maxRequestBodySize: MAX_BODY_BYTES }))) {
      // A listen stream naming resources holds their upstream subscriptions while it is open.
      const uris = listenedResources(body);
      if (uris.length > 0) res.once('close', this.options.modern!.watchResources(uris));
      await this.modern.node(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitialize(body)) return reply(res, 400, 'No MCP session: the first request must be an initialize POST.');
    const id = sessionIdFor(this.options.replica);
    const gateway = this.options.createGateway(id);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      eventStore: new SessionEventStore(),
      retryInterval: RECONNECT_MS,
      onsessioninitialized: () => {
        this.sessions.set(id, { transport, gateway, client, lastUsed: this.now() });
        // Enforced once the session exists, so initializes racing each other cannot pass the caps together.
        this.enforceSessionCaps(client, id);
      },
      onsessionclosed: () => {
        this.drop(id);
      },
    });
    transport.onclose = () => this.drop(id);
    await gateway.connect(transport);
    await transport.handleRequest(req, res, body);
    // An initialize the transport refused leaves no session behind, and nothing to keep open.
    if (!this.sessions.has(id)) await gateway.close().catch(() => undefined);
  }

  /** Host and Origin checks: the reason for a 403, or undefined. */
  private refuseHostOrOrigin(req: IncomingMessage): string | undefined {
    const hostHeader = header(req, 'host') ?? '';
    const host = hostOfHeader(hostHeader);
    if (host === undefined) return `Host "${hostHeader}" is not a valid host name or address (with an optional port).`;
    if (isLoopbackHost(this.host) && !isLoopbackHost(host)) {
      return `Host "${hostHeader}" is not allowed: this gateway answers on loopback names only; connect to ${this.url.href}.`;
    }
    const origin = header(req, 'origin');
    // "null" (a sandboxed frame, a file: page) is no origin one can check, so it is refused like a foreign one.
    if (origin !== undefined && !allowedOrigin(origin, hostHeader)) {
      return `Origin "${origin}" is not allowed to use this gateway: only pages of this host or of loopback may; other MCP clients send no Origin.`;
    }
    return undefined;
  }

  private authorized(req: IncomingMessage): boolean {
    const token = this.options.token;
    if (token === undefined) return true;
    const match = /^Bearer\s+(.+)$/i.exec(header(req, 'authorization') ?? '');
    return match !== null && sameSecret(match[1]!.trim(), token);
  }

  /** The client a request comes from (see the file's comment), as the key of its limits. */
  private clientOf(req: IncomingMessage): string {
    if (this.options.trustProxy) {
      const hop = header(req, 'x-forwarded-for')?.split(',').pop()?.trim();
      // A missing or garbled header leaves the proxy's own address: every such client shares one limit.
      if (hop && isIP(hop)) return clientKey(hop);
    }
    return clientKey(req.socket.remoteAddress ?? '?');
  }

  private failed(client: string): void {
    if (this.failures.take(client, 1) && this.failures.available(client) < 1) {
      this.log(`refusing new requests from ${client} for a while: ${FAILURE_BURST} wrong tokens`);
    }
  }

  /**
   * Past its own cap a client loses its oldest session rather than being refused a new one: a client that
   * restarted without closing its sessions would otherwise be locked out until they idled out, and this way
   * nobody else's session is touched. Past the total cap the oldest session of all is closed.
   */
  private enforceSessionCaps(client: string, newest: string): void {
    const max = this.options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    const perClient = Math.min(this.options.maxSessionsPerClient ?? DEFAULT_MAX_SESSIONS_PER_CLIENT, max);
    const older = (): Array<[string, Session]> => [...this.sessions].filter(([id]) => id !== newest).sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const own = older().filter(([, s]) => s.client === client);
    for (const [id] of own.slice(0, Math.max(0, own.length + 1 - perClient))) this.closeSession(id, 'too many sessions from one client');
    for (const [id] of older().slice(0, Math.max(0, this.sessions.size - max))) this.closeSession(id, 'too many sessions');
  }

  /** Closes sessions nobody has used for `idleMs` or more. */
  private closeIdle(idleMs: number): void {
    const now = this.now();
    for (const [id, session] of [...this.sessions]) if (now - session.lastUsed >= idleMs) this.closeSession(id, 'idle');
  }

  private closeSession(id: string, why: string): void {
    this.log(`closing MCP session ${id.slice(0, 8)} (${why})`);
    this.drop(id);
  }

  private drop(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    this.requests.delete(id);
    void session.gateway.close().catch(() => undefined);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A loopback page, or a page served from the gateway's own host; anything unparsable (`null` too) is refused. */
function allowedOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return isLoopbackHost(url.hostname) || (host !== '' && url.host === host);
  } catch {
    return false;
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function isInitialize(body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
}

/** A JSON-RPC error body, as MCP clients expect from the endpoint even for HTTP-level refusals. */
function reply(res: ServerResponse, status: number, message: string): void {
  if (leavesLargeBodyUnread(res.req)) res.setHeader('Connection', 'close');
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function tooMany(res: ServerResponse, retryAfterSeconds: number, message: string): void {
  res.setHeader('Retry-After', String(retryAfterSeconds));
  reply(res, 429, message);
}

/**
 * Whether a refused request still has a large or unknown body to come. Node drains what a handler left
 * unread before the connection's next request; past DRAIN_LIMIT_BYTES (or chunked) the gateway closes the
 * connection instead, so a refused body is never received whole.
 */
function leavesLargeBodyUnread(req: IncomingMessage): boolean {
  const large = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > DRAIN_LIMIT_BYTES;
  return large && !req.readableEnded;
}

type BodyRead = { ok: true; value: unknown } | { ok: false; status: 400 | 413; message: string } | { ok: false; status: 429; message: string; wanted: number };

/**
 * Reads a JSON body, spending the client's byte budget through `spend` (false: not enough left). A declared
 * length is checked and spent before a byte is read; a chunked body is spent as it arrives. A refusal stops
 * reading at once, so what one request buffers stays under MAX_BODY_BYTES and under the client's budget.
 */
async function readJson(req: IncomingMessage, spend: (bytes: number) => boolean): Promise<BodyRead> {
  const tooLarge = { ok: false, status: 413, message: `The request body is over ${MAX_BODY_BYTES / MiB} MiB; send smaller tool arguments (a path or a URL instead of the content).` } as const;
  const overBudget = (wanted: number): BodyRead => ({ ok: false, status: 429, wanted, message: `This client has sent more than ${BYTE_BURST / MiB} MiB of request bodies in a short time; slow down and retry.` });
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  if (declared !== undefined) {
    if (declared > MAX_BODY_BYTES) return tooLarge;
    if (!spend(declared)) return overBudget(declared);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const refusal = await new Promise<BodyRead | undefined>((resolve) => {
    const stop = (answer: BodyRead | undefined): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onError);
      req.pause();
      resolve(answer);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return stop(tooLarge);
      if (declared === undefined && !spend(chunk.length)) return stop(overBudget(chunk.length));
      chunks.push(chunk);
    };
    const onEnd = (): void => stop(undefined);
    const onError = (): void => stop({ ok: false, status: 400, message: 'The request body ended before it was complete.' });
    // 'close' before 'end': the client went away mid-body.
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onError);
  });
  if (refusal) return refusal;
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (error) {
    return { ok: false, status: 400, message: `The request body is not JSON: ${describeError(error)}` };
  }
}

/** The resource URIs a 2026-07-28 `subscriptions/listen` request asks to hear about; none for any other body. */
function listenedResources(body: unknown): string[] {
  if (typeof body !== 'object' || body === null || (body as { method?: unknown }).method !== 'subscriptions/listen') return [];
  const uris = (body as { params?: { notifications?: { resourceSubscriptions?: unknown } } }).params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string').slice(0, MAX_LISTENED_RESOURCES) : [];
}
