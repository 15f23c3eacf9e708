import { SSEClientTransport, StreamableHTTPClientTransport, UnauthorizedError, type Client, type Transport } from '@modelcontextprotocol/client';
import { NeedsSignInError, type RouterOAuthProvider } from '../auth/oauthProvider';

/** A transport to a remote server, the kind that can sign in. */
export type RemoteTransport = StreamableHTTPClientTransport | SSEClientTransport;

/**
 * OAuth for one remote server: signing in when it first refuses (401, or 403 for more scopes), and the
 * step-up when a later request needs more scopes. The SDK discovers, registers and opens the authorization
 * page through the provider; here the code that comes back to the loopback redirect finishes it.
 */
export class RemoteSignIn {
  constructor(
    private readonly server: string,
    private readonly auth: RouterOAuthProvider | undefined,
    private readonly log: (line: string) => void,
  ) {}

  /** Connects a fresh transport from `make`; when the server asks for sign-in, signs in and connects once more. */
  async connect(make: () => RemoteTransport, connect: (transport: RemoteTransport) => Promise<Client>): Promise<Client> {
    const auth = this.auth;
    await auth?.prepare();
    try {
      const transport = make();
      try {
        return await connect(transport);
      } catch (error) {
        if (!(error instanceof UnauthorizedError) || !auth) throw error;
        if (!auth.interactive) throw new NeedsSignInError(this.server);
        await this.complete(transport);
        return await connect(make());
      }
    } finally {
      await auth?.done();
    }
  }

  /**
   * Runs a request; when the server wants more scopes for it (403 insufficient_scope), the SDK has started
   * a new sign-in: it is completed over the connection's transport at that moment, and the request made once more.
   */
  async withStepUp<T>(request: () => Promise<T>, currentTransport: () => Transport | undefined, signal?: AbortSignal): Promise<T> {
    try {
      return await request();
    } catch (error) {
      const transport = currentTransport();
      if (!(error instanceof UnauthorizedError) || !this.auth?.interactive || !(transport instanceof StreamableHTTPClientTransport || transport instanceof SSEClientTransport)) throw error;
      await this.complete(transport, signal);
      return await request();
    } finally {
      // A sign-in started by the SDK opened the loopback listener; it closes once the request is settled.
      await this.auth?.done();
    }
  }

  /** Waits for the browser's redirect, and trades its code for tokens through the transport. */
  private async complete(transport: RemoteTransport, signal?: AbortSignal): Promise<void> {
    const auth = this.auth!;
    await auth.prepare();
    this.log('[router] waiting for the sign-in in the browser');
    const redirect = await auth.waitForRedirect(undefined, signal);
    await transport.finishAuth(redirect);
    this.log('[router] signed in');
  }
}
