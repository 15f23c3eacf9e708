/**
 * A node:http proxy in front of a real server-everything (streamable HTTP) that injects faults on request:
 * every POST answered with 500, or a `tools/call` whose response stream is cut off mid-event.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyMode = 'pass' | 'status500' | 'dropCallMidStream';

export interface FaultyProxy {
  readonly url: string;
  mode: ProxyMode;
  /** Requests answered with a fault so far. */
  readonly faults: number;
  close(): Promise<void>;
}

export async function startFaultyProxy(upstreamUrl: string): Promise<FaultyProxy> {
  const upstream = new URL(upstreamUrl);
  let faults = 0;
  const state = { mode: 'pass' as ProxyMode };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (state.mode === 'status500' && req.method === 'POST') {
        faults++;
        res.writeHead(500, { 'content-type': 'text/plain' }).end('injected internal server error');
        return;
      }
      if (state.mode === 'dropCallMidStream' && req.method === 'POST' && body.includes('"tools/call"')) {
        faults++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: message\ndata: {"jsonrpc":"2.0","res');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      const forward = request(
        { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      res.on('close', () => forward.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    get mode() {
      return state.mode;
    },
    set mode(m: ProxyMode) {
      state.mode = m;
    },
    get faults() {
      return faults;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
