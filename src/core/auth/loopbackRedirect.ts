import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The OAuth redirect on a loopback address (RFC 8252): a small HTTP listener on 127.0.0.1 that receives
 * the authorization server's redirect with `code`, `state` and `iss`, answers the browser with a short page, and
 * hands the code to whoever waits for it. It listens only while a sign-in is under way.
 */

export const CALLBACK_PATH = '/callback';

export interface AuthorizationResponse {
  readonly code: string;
  readonly state?: string;
  /** Every parameter of the redirect, `iss` included: the SDK checks the issuer before it redeems the code. */
  readonly params: URLSearchParams;
}

export class LoopbackRedirect {
  private server: Server | undefined;
  private port = 0;
  private waiting: { resolve: (r: AuthorizationResponse) => void; reject: (e: Error) => void } | undefined;
  private early: AuthorizationResponse | Error | undefined;

  /** Starts listening (on `port` when it is free, else on any free port); resolves with the redirect URL. */
  async start(port = 0): Promise<string> {
    if (this.server) return this.url;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== CALLBACK_PATH) {
        res.writeHead(404).end();
        return;
      }
      const error = url.searchParams.get('error');
      const code = url.searchParams.get('code');
      const state = url.searchParams.get('state') ?? undefined;
      const ok = !error && code;
      res.writeHead(ok ? 200 : 400, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>MCP Tool Router</title><p>${ok ? 'Signed in. You can close this tab and go back.' : 'Sign-in did not complete. You can close this tab; the router says why.'}</p>`);
      const outcome: AuthorizationResponse | Error = ok
        ? { code, ...(state ? { state } : {}), params: url.searchParams }
        : new Error(`the authorization server answered "${error ?? 'no code'}"${url.searchParams.get('error_description') ? `: ${url.searchParams.get('error_description')}` : ''}`);
      if (!this.waiting) this.early = outcome;
      else if (outcome instanceof Error) this.waiting.reject(outcome);
      else this.waiting.resolve(outcome);
      this.waiting = undefined;
    });
    const listen = (p: number): Promise<void> =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(p, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    try {
      await listen(port);
    } catch (error) {
      if (port === 0 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      await listen(0);
    }
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}${CALLBACK_PATH}`;
  }

  /** Someone is waiting for a redirect. */
  get busy(): boolean {
    return this.waiting !== undefined;
  }

  get listeningPort(): number {
    return this.port;
  }

  /** The next redirect's code; rejects after `timeoutMs`, or when the server answered with an error. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<AuthorizationResponse> {
    const early = this.early;
    this.early = undefined;
    if (early instanceof Error) return Promise.reject(early);
    if (early) return Promise.resolve(early);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`no sign-in arrived within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      timer.unref?.();
      const onAbort = (): void => {
        clearTimeout(timer);
        this.waiting = undefined;
        reject(new Error('sign-in cancelled'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting = {
        resolve: (r) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
