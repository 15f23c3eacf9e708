import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RouterGateway } from './routerGateway';

/**
 * The router gateway over streamable HTTP, for every client at once: VS Code (through the extension's MCP
 * server definition, served from the extension host), other MCP clients on the machine, or a team's shared
 * router. Each MCP session gets its own RouterGateway (its own dynamic subset), over the one router and
 * selection engine that the caller owns, so each configured server runs once whoever connects.
 *
 * Every request passes, in order: the Host check (loopback binds answer only to loopback host names, so a
 * web page cannot reach the gateway through DNS rebinding), the Origin check (a browser page from any
 * other origin is refused), the bearer secret (401 without it), the per-client rate limit (429), and then
 * the session (404 for an unknown one). None of these answers says anything about the routed servers.
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
/** Sessions kept at once; a client that opens sessions without closing them cannot grow memory without end. */
export const DEFAULT_MAX_SESSIONS = 64;
/** A session nobody has used for this long is closed; clients reconnect with a new initialize. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
/** JSON-RPC bodies larger than this are refused: tool arguments are small, and the limit bounds memory. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface HttpGatewayOptions {
  /** Builds the gateway for one new session; it is connected to that session's transport. */
  readonly createGateway: (sessionId: string) => RouterGateway;
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
  readonly sessionIdleMs?: number;
  readonly log?: (message: string) => void;
  /** Current time in ms (tests drive the rate limiter's clock). */
  readonly now?: () => number;
}

/** A fresh secret for one run of the gateway: 32 random bytes, URL-safe. */
export function newGatewaySecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `host` (as given to `--host`) is a loopback address or name. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly gateway: RouterGateway;
  lastUsed: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class HttpGateway {
  private server: HttpServer | undefined;
  private readonly sessions = new Map<string, Session>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly log: (message: string) => void;
  private readonly now: () => number;
  private readonly host: string;
  private sweeper: NodeJS.Timeout | undefined;
  private boundPort = 0;

  constructor(private readonly options: HttpGatewayOptions) {
    this.host = options.host ?? DEFAULT_HOST;
    this.log = options.log ?? (() => undefined);
    this.now = options.now ?? Date.now;
    if (options.token === undefined && !isLoopbackHost(this.host)) {
      throw new Error(`Refusing to serve on ${this.host} without a token: anyone who can reach that address could run every routed tool. Give a token file (--token-file), or bind to 127.0.0.1.`);
    }
    if (options.token !== undefined && options.token.length < 16) {
      throw new Error('The gateway token is shorter than 16 characters; use a long random secret (for example `openssl rand -hex 32`).');
    }
  }

  /** Starts listening; resolves with the URL clients connect to. */
  async start(): Promise<URL> {
    if (this.server) return this.url;
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        this.log(`gateway request failed: ${error instanceof Error ? error.message : String(error)}`);
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
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (url.pathname !== MCP_PATH) return reply(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}.`);
    const refusal = this.refuse(req);
    if (refusal) {
      if (refusal.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="mcp-tool-router"');
      return reply(res, refusal.status, refusal.message);
    }
    const sessionId = header(req, 'mcp-session-id');
    if (!this.admit(sessionId ?? `addr:${req.socket.remoteAddress ?? '?'}`)) {
      res.setHeader('Retry-After', '1');
      return reply(res, 429, 'Too many requests from this client; slow down and retry.');
    }
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJson(req);
      if (!read.ok) return reply(res, read.status, read.message);
      body = read.value;
    }
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      if (!session) return reply(res, 404, 'Unknown or expired MCP session: start a new one with initialize.');
      session.lastUsed = this.now();
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitialize(body)) return reply(res, 400, 'No MCP session: the first request must be an initialize POST.');
    if (this.sessions.size >= (this.options.maxSessions ?? DEFAULT_MAX_SESSIONS)) {
      this.closeIdle(0, 1);
    }
    const id = randomUUID();
    const gateway = this.options.createGateway(id);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => {
        this.sessions.set(id, { transport, gateway, lastUsed: this.now() });
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

  /** Host, Origin and bearer checks; the first that fails, as a status and message. */
  private refuse(req: IncomingMessage): { status: number; message: string } | undefined {
    const host = header(req, 'host') ?? '';
    if (isLoopbackHost(this.host) && !isLoopbackHost(host.replace(/:\d+$/, ''))) {
      return { status: 403, message: `Host "${host}" is not allowed: this gateway answers on loopback names only.` };
    }
    const origin = header(req, 'origin');
    if (origin !== undefined && origin !== 'null' && !allowedOrigin(origin, host)) {
      return { status: 403, message: `Origin "${origin}" is not allowed to use this gateway.` };
    }
    const token = this.options.token;
    if (token === undefined) return undefined;
    const auth = header(req, 'authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(auth);
    if (!match || !sameSecret(match[1]!.trim(), token)) {
      return { status: 401, message: 'Missing or wrong bearer token: send "Authorization: Bearer <token>" with the gateway\'s token.' };
    }
    return undefined;
  }

  /** Token bucket per client (its session, or its address before it has one). */
  private admit(client: string): boolean {
    const burst = this.options.rateBurst ?? DEFAULT_RATE_BURST;
    const rate = this.options.ratePerSecond ?? DEFAULT_RATE_PER_SECOND;
    const now = this.now();
    const bucket = this.buckets.get(client) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    this.buckets.set(client, bucket);
    if (this.buckets.size > 4 * (this.options.maxSessions ?? DEFAULT_MAX_SESSIONS)) this.pruneBuckets(burst, rate, now);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Buckets that have refilled are the same as no bucket: dropped, so the map stays small. */
  private pruneBuckets(burst: number, rate: number, now: number): void {
    for (const [key, b] of this.buckets) if (b.tokens + ((now - b.at) / 1000) * rate >= burst) this.buckets.delete(key);
  }

  /** Closes sessions idle for `idleMs` or more (0: none for idleness); with `atLeast`, the oldest until that many closed. */
  private closeIdle(idleMs: number, atLeast = 0): void {
    const now = this.now();
    const byAge = [...this.sessions.entries()].sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    let closed = 0;
    for (const [id, session] of byAge) {
      const expired = idleMs > 0 && now - session.lastUsed >= idleMs;
      if (!expired && closed >= atLeast) break;
      this.log(`closing MCP session ${id.slice(0, 8)} (${closed < atLeast ? 'too many sessions' : 'idle'})`);
      this.drop(id);
      closed++;
    }
  }

  private drop(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    this.buckets.delete(id);
    void session.gateway.close().catch(() => undefined);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A loopback page, or a page served from the gateway's own host; anything unparsable is refused. */
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
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return { ok: false, status: 413, message: `The request body is over ${MAX_BODY_BYTES / (1024 * 1024)} MiB.` };
    chunks.push(chunk as Buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (error) {
    return { ok: false, status: 400, message: `The request body is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}
