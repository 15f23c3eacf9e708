import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import {
  BYTE_BURST,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_CLIENT,
  FAILURE_BURST,
  FAILURES_PER_SECOND,
  MAX_BODY_BYTES,
  isLoopbackHost,
  newGatewaySecret,
} from '../../../src/core/gateway/httpGateway';
import { clientKey, hostOfHeader } from '../../../src/core/gateway/clientLimits';
import { useHttpGateway } from './httpGatewayHarness';

/**
 * The gateway's limits against hostile clients, on a real loopback socket with a router that has no
 * servers and a clock the test moves: Host and Origin refusals, failed requests limited per address before
 * the token is compared, a byte budget spent before a body is read, sessions capped per client, and which
 * address is the client's when a reverse proxy stands in front. Requests are raw `node:http` ones so a test
 * can set Host, send headers without their body, and pick its source address.
 */

const TOKEN = newGatewaySecret();
const json = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const auth = { ...json, Authorization: `Bearer ${TOKEN}` };
const wrong = { ...json, Authorization: 'Bearer wrong-token-wrong-token-wrong' };
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '1' } } });
const listTools = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
const MiB = 1024 * 1024;

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** The message of a refusal's JSON-RPC error body. */
function message(answer: Answer): string {
  return (JSON.parse(answer.body) as { error: { message: string } }).error.message;
}

interface RawRequest {
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Declares a body of this many bytes but sends none: only a server that answers before reading can reply. */
  readonly declaredOnly?: number;
  /** Sends the body chunked (no Content-Length), in pieces of 64 KiB. */
  readonly chunked?: number;
  readonly localAddress?: string;
}

function raw(url: URL, r: RawRequest = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const length = r.declaredOnly ?? (r.body !== undefined ? Buffer.byteLength(r.body) : undefined);
    const headers: Record<string, string> = { ...(r.headers ?? auth), ...(length !== undefined ? { 'Content-Length': String(length) } : {}) };
    const req = request(
      { host: '127.0.0.1', port: url.port, path: url.pathname, method: 'POST', setHost: !Object.keys(headers).some((h) => h.toLowerCase() === 'host'), headers, ...(r.localAddress ? { localAddress: r.localAddress } : {}) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => {
          resolve({ status: res.statusCode!, headers: res.headers, body });
          // A refusal before the body was all sent: stop sending it.
          if (r.declaredOnly !== undefined || r.chunked !== undefined) req.destroy();
        });
      },
    );
    // Writing into a socket the server closed after refusing is expected; the answer already came.
    req.on('error', (error) => (req.destroyed && (r.declaredOnly !== undefined || r.chunked !== undefined) ? undefined : reject(error)));
    if (r.declaredOnly !== undefined) {
      req.flushHeaders();
      return;
    }
    if (r.chunked !== undefined) {
      void writeChunked(req, r.chunked);
      return;
    }
    req.end(r.body);
  });
}

async function writeChunked(req: ReturnType<typeof request>, total: number): Promise<void> {
  const piece = Buffer.alloc(64 * 1024, 0x78);
  for (let sent = 0; sent < total && !req.destroyed; sent += piece.length) {
    if (req.write(piece)) continue;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        req.off('drain', done).off('close', done);
        resolve();
      };
      req.on('drain', done).on('close', done);
    });
  }
  if (!req.destroyed) req.end();
}

/** Whether this machine routes a second loopback address (Linux does, macOS not by default). */
async function secondLoopback(): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(0, '127.0.0.2', () => probe.close(() => resolve(true)));
  });
}

describe('HttpGateway limits', function () {
  // Real sockets, up to 65 sessions or 120 MiB of bodies in one test; a loaded machine is several times slower.
  this.timeout(20_000);
  const harness = useHttpGateway(TOKEN);

  /** An initialize as a raw POST; the new session's id. */
  const openSession = async (url: URL, r: RawRequest = {}): Promise<string> => {
    const answer = await raw(url, { ...r, body: initialize });
    assert.equal(answer.status, 200, answer.body);
    return answer.headers['mcp-session-id'] as string;
  };
  const inSession = (id: string, extra: Record<string, string> = {}): Record<string, string> => ({ ...auth, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18', ...extra });

  describe('Host and Origin', () => {
    it('refuses Origin: null, which sandboxed frames and file: pages send', async () => {
      const url = await harness.start();
      const refused = await raw(url, { headers: { ...auth, Origin: 'null' }, body: initialize });
      assert.equal(refused.status, 403);
      assert.match(message(refused), /Origin "null" is not allowed/);
      // Clients that send no Origin (every MCP client outside a browser) are unaffected.
      assert.equal((await raw(url, { body: initialize })).status, 200);
    });

    it('answers 403, not a parse error, to a Host that is no valid name or address, on a loopback bind', async () => {
      const url = await harness.start();
      for (const host of ['127.999.999.999', `127.999.999.999:${url.port}`, 'localhost:99999', '0x7f.0.0.1', '127.1', '[::g]', 'a b', 'localhost:', '']) {
        const answer = await raw(url, { headers: { ...auth, Host: host }, body: initialize });
        assert.equal(answer.status, 403, `Host "${host}": ${answer.body}`);
        assert.match(message(answer), /Host/);
      }
      assert.equal((await raw(url, { headers: { ...auth, Host: `localhost:${url.port}` }, body: initialize })).status, 200);
      assert.equal((await raw(url, { headers: { ...auth, Host: `[::1]:${url.port}` }, body: initialize })).status, 200);
    });

    it('on a non-loopback bind, lets any valid name through (the token guards it) and refuses invalid ones', async () => {
      const url = await harness.start({ host: '0.0.0.0' });
      for (const host of ['127.999.999.999', '256.1.1.1', '[::g]', 'a b', 'evil.example:99999', '-bad-.example', '']) {
        const answer = await raw(url, { headers: { ...auth, Host: host }, body: initialize });
        assert.equal(answer.status, 403, `Host "${host}": ${answer.body}`);
      }
      for (const host of ['router.example', 'router.example:8931', '10.0.0.5:8931', '[2001:db8::1]:8931', 'my_service:8931']) {
        assert.equal((await raw(url, { headers: { ...auth, Host: host }, body: initialize })).status, 200, host);
      }
    });

    it('reads a Host header into its name, and tells loopback addresses from lookalikes', () => {
      assert.equal(hostOfHeader('LocalHost:8931'), 'localhost');
      assert.equal(hostOfHeader('[::1]:80'), '::1');
      assert.equal(hostOfHeader('10.1.2.3'), '10.1.2.3');
      for (const bad of ['127.999.999.999', '1.2.3', 'x:65536', '[fe80::1%25eth0]', 'a..b', `${'a'.repeat(64)}.example`, 'host/path', 'user@host']) assert.equal(hostOfHeader(bad), undefined, bad);
      assert.ok(!isLoopbackHost('127.999.999.999'));
      assert.ok(!isLoopbackHost('127.0.0.256'));
      assert.ok(isLoopbackHost('127.255.255.254'));
    });
  });

  describe('failed requests, limited per address before the token is compared', () => {
    it('turns a run of wrong tokens into 429, even for the right token from that address, until time passes', async () => {
      const url = await harness.start();
      const statuses: number[] = [];
      for (let i = 0; i < FAILURE_BURST + 30; i++) statuses.push((await raw(url, { headers: wrong, body: initialize })).status);
      assert.deepEqual(statuses.slice(0, FAILURE_BURST), Array(FAILURE_BURST).fill(401));
      assert.deepEqual(new Set(statuses.slice(FAILURE_BURST)), new Set([429]));
      const locked = await raw(url, { body: initialize });
      assert.equal(locked.status, 429, 'a guess that is right must not be told apart while the address is locked out');
      assert.ok(Number(locked.headers['retry-after']) >= 1);
      assert.match(message(locked), /failed requests/);
      harness.clock += 1000 / FAILURES_PER_SECOND;
      assert.equal((await raw(url, { body: initialize })).status, 200);
    });

    it('does not count unknown sessions: the clients of a replica that stopped send many, and still get a new one', async () => {
      const url = await harness.start();
      const statuses: number[] = [];
      for (let i = 0; i < FAILURE_BURST + 5; i++) statuses.push((await raw(url, { headers: inSession(`gone-${i}`), body: listTools })).status);
      assert.deepEqual(statuses, Array(FAILURE_BURST + 5).fill(404));
      assert.equal((await raw(url, { body: initialize })).status, 200);
    });

    it('keeps a live session of a locked-out address working (its id is a secret a guesser does not have)', async () => {
      const url = await harness.start();
      const id = await openSession(url);
      for (let i = 0; i < FAILURE_BURST + 5; i++) await raw(url, { headers: wrong, body: initialize });
      assert.equal((await raw(url, { body: initialize })).status, 429);
      assert.equal((await raw(url, { headers: inSession(id), body: listTools })).status, 200);
      // The session id alone is not a pass: a wrong token with it is still refused.
      assert.equal((await raw(url, { headers: inSession(id, { Authorization: 'Bearer wrong-token-wrong-token-wrong' }), body: listTools })).status, 401);
    });

    it('does not lock out another address', async function () {
      if (!(await secondLoopback())) this.skip();
      const url = await harness.start();
      for (let i = 0; i < FAILURE_BURST + 5; i++) await raw(url, { headers: wrong, body: initialize, localAddress: '127.0.0.2' });
      assert.equal((await raw(url, { body: initialize, localAddress: '127.0.0.2' })).status, 429);
      assert.equal((await raw(url, { body: initialize, localAddress: '127.0.0.1' })).status, 200);
    });
  });

  describe('byte budget', () => {
    it('refuses a body over the limit from its Content-Length, before reading it', async () => {
      const url = await harness.start();
      const answer = await raw(url, { declaredOnly: 2 * MAX_BODY_BYTES });
      assert.equal(answer.status, 413);
      assert.match(message(answer), /over 1 MiB/);
    });

    it('refuses a chunked body once it passes the limit, which is 1 MiB', async () => {
      assert.equal(MAX_BODY_BYTES, MiB);
      const url = await harness.start();
      assert.equal((await raw(url, { chunked: 2 * MiB })).status, 413);
    });

    it('lets one session read only its byte budget of a burst of large bodies; the rest are refused unread', async () => {
      const url = await harness.start();
      const id = await openSession(url);
      const padded = (bytes: number): string => JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: 'x'.repeat(bytes - 60) } });
      const huge = await Promise.all(Array.from({ length: 60 }, () => raw(url, { headers: inSession(id), body: padded(4 * MiB) })));
      assert.deepEqual(new Set(huge.map((a) => a.status)), new Set([413]), 'bodies over the limit are refused from their length');
      harness.clock += 3000; // the session's request limit refills; the byte budget was not touched
      const largest = padded(MAX_BODY_BYTES);
      assert.equal(Buffer.byteLength(largest), MAX_BODY_BYTES);
      const burst = await Promise.all(Array.from({ length: 60 }, () => raw(url, { headers: inSession(id), body: largest })));
      const read = burst.filter((a) => a.status !== 429).length;
      assert.equal(read, BYTE_BURST / MAX_BODY_BYTES, `statuses: ${burst.map((a) => a.status).join(' ')}`);
      // Spent: the next body is refused from its headers alone, so nothing of it is buffered.
      const probe = await raw(url, { headers: inSession(id), declaredOnly: MAX_BODY_BYTES });
      assert.equal(probe.status, 429);
      assert.ok(Number(probe.headers['retry-after']) >= 1);
      // More sessions buy no more bytes: the budget is the client's, not the session's.
      assert.equal((await raw(url, { declaredOnly: MAX_BODY_BYTES })).status, 429);
      harness.clock += 60_000;
      assert.equal((await raw(url, { headers: inSession(id), body: largest })).status, 200);
    });

    it('gives each address its own budget', async function () {
      if (!(await secondLoopback())) this.skip();
      const url = await harness.start();
      const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: 'x'.repeat(MAX_BODY_BYTES - 100) } });
      for (let i = 0; i < BYTE_BURST / MAX_BODY_BYTES; i++) await raw(url, { body, localAddress: '127.0.0.2' });
      assert.equal((await raw(url, { declaredOnly: MAX_BODY_BYTES, localAddress: '127.0.0.2' })).status, 429);
      assert.equal((await raw(url, { body: initialize, localAddress: '127.0.0.1' })).status, 200);
    });
  });

  describe('sessions per client', () => {
    it('lets one client opening every session evict only its own, oldest first', async function () {
      if (!(await secondLoopback())) this.skip();
      const url = await harness.start();
      const other = await openSession(url, { localAddress: '127.0.0.2' });
      const mine: string[] = [];
      for (let i = 0; i < DEFAULT_MAX_SESSIONS; i++) {
        // Time moves so the request limit does not stop the opening, and each session has its own age.
        harness.clock += 1000;
        mine.push(await openSession(url));
      }
      assert.equal(harness.gateway!.sessionCount, DEFAULT_MAX_SESSIONS_PER_CLIENT + 1);
      assert.equal((await raw(url, { headers: inSession(other), body: listTools, localAddress: '127.0.0.2' })).status, 200);
      assert.equal((await raw(url, { headers: inSession(mine[0]!), body: listTools })).status, 404);
      assert.equal((await raw(url, { headers: inSession(mine.at(-1)!), body: listTools })).status, 200);
    });

    it('takes the per-client cap as an option, never above the total', async () => {
      const url = await harness.start({ maxSessionsPerClient: 2, maxSessions: 10 });
      const ids = [];
      for (let i = 0; i < 4; i++) {
        harness.clock += 10;
        ids.push(await openSession(url));
      }
      assert.equal(harness.gateway!.sessionCount, 2);
      assert.deepEqual(await Promise.all(ids.map(async (id) => (await raw(url, { headers: inSession(id), body: listTools })).status)), [404, 404, 200, 200]);
    });
  });

  describe('behind a reverse proxy', () => {
    const flood = async (url: URL, forwardedFor: string): Promise<void> => {
      for (let i = 0; i < FAILURE_BURST + 5; i++) await raw(url, { headers: { ...wrong, 'X-Forwarded-For': forwardedFor }, body: initialize });
    };

    it('ignores X-Forwarded-For by default, so a client cannot dodge its limits by writing one', async () => {
      const url = await harness.start();
      await flood(url, '203.0.113.9');
      assert.equal((await raw(url, { headers: { ...auth, 'X-Forwarded-For': '198.51.100.1' }, body: initialize })).status, 429);
    });

    it('with trustProxy, takes the right-most hop (the one the proxy added) as the client', async () => {
      const url = await harness.start({ trustProxy: true });
      // The left-most entry is whatever the client wrote; the proxy appended the real address.
      await flood(url, '198.51.100.1, 203.0.113.9');
      assert.equal((await raw(url, { headers: { ...auth, 'X-Forwarded-For': '198.51.100.1, 203.0.113.9' }, body: initialize })).status, 429);
      assert.equal((await raw(url, { headers: { ...auth, 'X-Forwarded-For': '203.0.113.9, 198.51.100.2' }, body: initialize })).status, 200);
      // Without the header (or with garbage in it) the proxy itself, the socket's address, is the client.
      assert.equal((await raw(url, { headers: { ...auth, 'X-Forwarded-For': 'not-an-address' }, body: initialize })).status, 200);
    });

    it('keys IPv6 clients by their /64, which one host usually holds whole', () => {
      assert.equal(clientKey('2001:db8:1:2:aaaa::1'), clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
      assert.notEqual(clientKey('2001:db8:1:2::1'), clientKey('2001:db8:1:3::1'));
      assert.equal(clientKey('::ffff:192.0.2.7'), '192.0.2.7');
      assert.equal(clientKey('192.0.2.7'), '192.0.2.7');
    });
  });
});
