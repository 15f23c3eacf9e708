/**
 * A real node:http server on 127.0.0.1 for the HTTP provider and download tests: each test scripts the
 * answers, and every request is recorded with its headers and body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export type ScriptedHandler = (request: RecordedRequest, response: http.ServerResponse, index: number) => void;

export interface LocalServer {
  /** `http://127.0.0.1:PORT` */
  readonly base: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startLocalServer(handler: ScriptedHandler): Promise<LocalServer> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      handler(recorded, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = typeof value === 'string' ? value : JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}

/** A port that was just free: a server is started on it and closed, so connecting is refused. */
export async function closedPortBase(): Promise<string> {
  const server = await startLocalServer(() => undefined);
  await server.close();
  return server.base;
}
