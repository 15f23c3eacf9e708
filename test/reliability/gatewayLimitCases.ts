/**
 * The HTTP gateway under hostile clients: floods of wrong tokens and made-up sessions, Host and Origin
 * headers that are no address or a foreign one, bodies over the limit and over the byte budget, and one
 * client opening every session. After each, a client holding the token still calls a real server's tool
 * through the gateway. The gateway's clock stands still unless a case moves it, so counts are exact.
 */
import { request } from 'node:http';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  BYTE_BURST,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_RATE_BURST,
  DEFAULT_MAX_SESSIONS_PER_CLIENT,
  FAILURE_BURST,
  HttpGateway,
  MAX_BODY_BYTES,
  newGatewaySecret,
  type HttpGatewayOptions,
} from '../../src/core/gateway/httpGateway';
import { CALL_TOOL_NAME, RouterGateway } from '../../src/core/gateway/routerGateway';
import { LexicalRanker } from '../../src/core/selection/lexicalRanker';
import { rankableFor } from '../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../src/core/selection/toolSelector';
import type { ReliabilityCase } from './faultCases';
import { HEALTHY, check, startRouter } from './reliabilityHarness';

const TOKEN = newGatewaySecret();
const json = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const auth = { ...json, Authorization: `Bearer ${TOKEN}` };
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } } });
const WRONG_TOKENS = 6_000;
const MADE_UP_SESSIONS = 2_000;
/** Requests in flight at once during a flood: enough to interleave in the gateway, few enough to stay polite to the machine. */
const FLOOD_CONCURRENCY = 8;
const MiB = 1024 * 1024;

interface Attacker {
  /** Gateway options that let the attacker be told apart from the healthy client on 127.0.0.1. */
  readonly options: Partial<HttpGatewayOptions>;
  readonly headers: Record<string, string>;
  readonly localAddress?: string;
}

/**
 * The attacker comes from 127.0.0.2 where the machine routes it (Linux); elsewhere from behind a trusted
 * proxy that names it in X-Forwarded-For. Either way it is another client than the healthy one.
 */
async function attacker(): Promise<Attacker> {
  const routed = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(0, '127.0.0.2', () => probe.close(() => resolve(true)));
  });
  return routed ? { options: {}, headers: {}, localAddress: '127.0.0.2' } : { options: { trustProxy: true }, headers: { 'X-Forwarded-For': '203.0.113.66' } };
}

interface Hostile {
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer;
  /** Sends this many bytes chunked (no Content-Length) until the gateway answers. */
  readonly chunked?: number;
  readonly localAddress?: string;
}

/** One POST to the gateway; resolves with the status and the session id it gave, if any. */
function post(url: URL, r: Hostile): Promise<{ status: number; session?: string }> {
  return new Promise((resolve, reject) => {
    const length = r.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(r.body)) };
    const req = request(
      { host: '127.0.0.1', port: url.port, path: url.pathname, method: 'POST', setHost: !('Host' in r.headers), headers: { ...r.headers, ...length }, ...(r.localAddress ? { localAddress: r.localAddress } : {}) },
      (res) => {
        res.resume();
        res.on('end', () => {
          const session = res.headers['mcp-session-id'];
          resolve({ status: res.statusCode!, ...(typeof session === 'string' ? { session } : {}) });
          if (r.chunked !== undefined) req.destroy();
        });
      },
    );
    // Once the gateway has answered, an error writing the rest of a refused body is expected.
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error) => (answered ? undefined : reject(error)));
    if (r.chunked === undefined) {
      req.end(r.body);
      return;
    }
    const piece = Buffer.alloc(64 * 1024, 0x78);
    const pump = (sent: number): void => {
      while (sent < r.chunked! && !answered && !req.destroyed) {
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', () => pump(sent));
      }
      if (!answered && !req.destroyed) req.end();
    };
    pump(0);
  });
}

/** Sends `count` requests, FLOOD_CONCURRENCY at a time; how many got each status. */
async function flood(url: URL, count: number, make: (i: number) => Hostile): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (let sent = 0; sent < count; sent += FLOOD_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(FLOOD_CONCURRENCY, count - sent) }, (_, j) => post(url, make(sent + j)));
    for (const { status } of await Promise.all(batch)) counts.set(status, (counts.get(status) ?? 0) + 1);
  }
  return counts;
}

function only(counts: Map<number, number>, allowed: number[], what: string): void {
  const seen = [...counts.keys()];
  check(seen.every((s) => allowed.includes(s)), `${what}: statuses ${JSON.stringify([...counts])}, expected only ${allowed.join(' and ')}`);
}

/** A client holding the token, from 127.0.0.1: connects and calls a real server's tool through the gateway. */
async function connectHealthy(url: URL): Promise<Client> {
  const client = new Client({ name: 'healthy', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
  return client;
}

async function callsThrough(client: Client, message: string): Promise<void> {
  const result = await client.callTool({ name: CALL_TOOL_NAME, arguments: { name: 'healthy_echo', arguments: { message } } });
  check(JSON.stringify(result).includes(message), `the call through the gateway did not come back: ${JSON.stringify(result).slice(0, 300)}`);
}

interface Served {
  readonly url: URL;
  readonly gateway: HttpGateway;
  /** The gateway's clock, in ms; it stands still unless the case moves it. */
  readonly clock: { now: number };
}

/** A gateway over a router with a real server; after the case, a fresh client from 127.0.0.1 still calls through it. */
async function withGateway(options: Partial<HttpGatewayOptions>, body: (served: Served) => Promise<void>): Promise<void> {
  const router = await startRouter({ healthy: HEALTHY });
  const selector = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS }, { createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)) });
  const clock = { now: Date.now() };
  const gateway = new HttpGateway({ token: TOKEN, now: () => clock.now, createGateway: () => new RouterGateway(router, { selector }), ...options });
  try {
    const url = await gateway.start();
    await body({ url, gateway, clock });
    const client = await connectHealthy(url);
    try {
      await callsThrough(client, 'the gateway is healthy');
    } finally {
      await client.close();
    }
  } finally {
    await gateway.close();
    await router.dispose();
  }
}

const BAD_HOSTS = ['127.999.999.999', '256.0.0.1', '0x7f.0.0.1', '2130706433', '127.1', '[::g]', '[fe80::1%25lo]', 'localhost:99999', 'localhost:', 'a b', '', 'user@localhost', 'localhost/x', `${'a'.repeat(64)}.example`, '-x-.example'];
const FOREIGN_HOSTS = ['evil.example', 'localhost.evil.example', '10.0.0.1', '[2001:db8::1]'];
const BAD_ORIGINS = ['null', 'https://evil.example', 'http://localhost.evil.example', 'file://', 'not a url', 'http://[::g]', 'chrome-extension://abc'];

export const gatewayLimitCases: ReliabilityCase[] = [
  {
    name: `gateway: ${WRONG_TOKENS.toLocaleString('en')} wrong tokens from one address get 429 after ${FAILURE_BURST}; the token still works from another`,
    inputs: WRONG_TOKENS,
    run: async () => {
      const from = await attacker();
      await withGateway(from.options, async ({ url }) => {
        const wrong = { ...json, ...from.headers, Authorization: 'Bearer wrong-token-wrong-token-wrong' };
        const counts = await flood(url, WRONG_TOKENS, () => ({ headers: wrong, body: initialize, ...(from.localAddress ? { localAddress: from.localAddress } : {}) }));
        only(counts, [401, 429], 'wrong tokens');
        check(counts.get(401) === FAILURE_BURST, `${counts.get(401)} wrong tokens were compared, not ${FAILURE_BURST}`);
        const right = await post(url, { headers: { ...auth, ...from.headers }, body: initialize, ...(from.localAddress ? { localAddress: from.localAddress } : {}) });
        check(right.status === 429, `the locked-out address had its token compared (${right.status})`);
      });
    },
  },
  {
    name: `gateway: ${MADE_UP_SESSIONS.toLocaleString('en')} requests naming made-up sessions; a live session of that address goes on`,
    inputs: MADE_UP_SESSIONS,
    run: () =>
      withGateway({}, async ({ url, clock }) => {
        const live = await connectHealthy(url);
        try {
          const counts = await flood(url, MADE_UP_SESSIONS, (i) => ({ headers: { ...auth, 'mcp-session-id': `made-up-${i}`, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }) }));
          only(counts, [404, 429], 'made-up sessions');
          // Unknown sessions are not failed requests; the address's request rate bounds them (the live
          // session's initialize took one of its requests).
          check(counts.get(404) === DEFAULT_RATE_BURST - 1, `${counts.get(404)} made-up sessions were looked up, not ${DEFAULT_RATE_BURST - 1}`);
          await callsThrough(live, 'the live session still answers');
        } finally {
          await live.close();
        }
        // The address's request rate refills; then it may start a session again.
        clock.now += (DEFAULT_RATE_BURST + 1) * 1000;
      }),
  },
  {
    name: 'gateway: Host headers that are no address or a foreign one, and foreign or null Origins, all get 403',
    inputs: 2 * BAD_HOSTS.length + FOREIGN_HOSTS.length + BAD_ORIGINS.length,
    run: async () => {
      await withGateway({}, async ({ url }) => {
        for (const host of [...BAD_HOSTS, ...FOREIGN_HOSTS]) {
          const { status } = await post(url, { headers: { ...auth, Host: host }, body: initialize });
          check(status === 403, `Host "${host.slice(0, 40)}" on a loopback bind got ${status}`);
        }
        for (const origin of BAD_ORIGINS) {
          const { status } = await post(url, { headers: { ...auth, Origin: origin }, body: initialize });
          check(status === 403, `Origin "${origin}" got ${status}`);
        }
      });
      await withGateway({ host: '0.0.0.0' }, async ({ url }) => {
        for (const host of BAD_HOSTS) {
          const { status } = await post(url, { headers: { ...auth, Host: host }, body: initialize });
          check(status === 403, `Host "${host.slice(0, 40)}" on a 0.0.0.0 bind got ${status}`);
        }
      });
    },
  },
  {
    name: 'gateway: one session sends 60 bodies of 4 MiB, 60 of 1 MiB and a chunked 8 MiB; only its byte budget is read',
    inputs: 121,
    run: async () => {
      const from = await attacker();
      await withGateway(from.options, async ({ url, clock }) => {
        const via = from.localAddress ? { localAddress: from.localAddress } : {};
        const opened = await post(url, { headers: { ...auth, ...from.headers }, body: initialize, ...via });
        check(opened.status === 200 && opened.session, `the attacker's initialize got ${opened.status}`);
        const headers = { ...auth, ...from.headers, 'mcp-session-id': opened.session, 'mcp-protocol-version': '2025-06-18' };
        const padded = (bytes: number): string => JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: 'x'.repeat(bytes - 60) } });
        const huge = padded(4 * MiB);
        const hugeAnswers = await Promise.all(Array.from({ length: 60 }, () => post(url, { headers, body: huge, ...via })));
        check(hugeAnswers.every((a) => a.status === 413), `4 MiB bodies got ${[...new Set(hugeAnswers.map((a) => a.status))].join(', ')}, not only 413`);
        clock.now += 3000; // the session's request limit refills; the byte budget was not spent on refused lengths
        const largest = padded(MAX_BODY_BYTES);
        const answers = await Promise.all(Array.from({ length: 60 }, () => post(url, { headers, body: largest, ...via })));
        const read = answers.filter((a) => a.status !== 429).length;
        check(read === BYTE_BURST / MAX_BODY_BYTES, `${read} bodies of 1 MiB were read, not the budget's ${BYTE_BURST / MAX_BODY_BYTES}`);
        const chunked = await post(url, { headers, chunked: 8 * MiB, ...via });
        check(chunked.status === 413 || chunked.status === 429, `a chunked 8 MiB body got ${chunked.status}`);
      });
    },
  },
  {
    name: `gateway: one client opens ${DEFAULT_MAX_SESSIONS + DEFAULT_MAX_SESSIONS_PER_CLIENT} sessions; another client's session survives`,
    inputs: DEFAULT_MAX_SESSIONS + DEFAULT_MAX_SESSIONS_PER_CLIENT,
    run: async () => {
      const from = await attacker();
      await withGateway(from.options, async ({ url, gateway, clock }) => {
        const survivor = await connectHealthy(url);
        try {
          for (let i = 0; i < DEFAULT_MAX_SESSIONS + DEFAULT_MAX_SESSIONS_PER_CLIENT; i++) {
            clock.now += 1000; // past the request limit, so every initialize is judged by the session caps
            const { status } = await post(url, { headers: { ...auth, ...from.headers }, body: initialize, ...(from.localAddress ? { localAddress: from.localAddress } : {}) });
            check(status === 200, `initialize ${i} got ${status}`);
          }
          check(gateway.sessionCount === DEFAULT_MAX_SESSIONS_PER_CLIENT + 1, `${gateway.sessionCount} sessions open, expected the attacker's ${DEFAULT_MAX_SESSIONS_PER_CLIENT} and the survivor`);
          await callsThrough(survivor, 'the other client kept its session');
        } finally {
          await survivor.close();
        }
      });
    },
  },
];
