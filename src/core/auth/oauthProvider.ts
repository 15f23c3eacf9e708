import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientMetadata, OAuthClientProvider, OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import type { OAuthSettings } from '../config/serverConfig';
import { LoopbackRedirect } from './loopbackRedirect';

/**
 * OAuth 2.1 for one remote MCP server, as the MCP authorization spec asks of a client. The protocol work
 * (protected-resource and authorization-server discovery with their fallbacks, dynamic registration,
 * PKCE, resource indicators, scope choice, step-up on `insufficient_scope`, refresh, token endpoint
 * authentication) is the SDK's `auth()`, driven by its HTTP transport; this class is the part the SDK
 * leaves to the application: where client registrations, tokens and the PKCE verifier are kept (the
 * {@link AuthStore} seam: a private file for the CLI, SecretStorage in VS Code), how the user reaches the
 * authorization page (the {@link AuthorizationUi} seam), and the loopback redirect that brings the code back.
 *
 * Non-interactive (VS Code connecting in the background) it never opens anything: the server is then
 * reported as needing sign-in, and a later interactive connection does the sign-in.
 */

/**
 * What is kept per server: never logged or printed. The registration and tokens are kept as the SDK hands
 * them over, with the `issuer` it stamps on them, so they are never offered to another authorization server.
 */
export interface StoredAuth {
  readonly client?: StoredOAuthClientInformation;
  readonly tokens?: StoredOAuthTokens;
  readonly verifier?: string;
  /** Where the server's authorization server and its endpoints were found: saves discovery on the next sign-in. */
  readonly discovery?: OAuthDiscoveryState;
  /** The loopback port the client registration's redirect URI names. */
  readonly redirectPort?: number;
}

export interface AuthStore {
  load(key: string): Promise<StoredAuth | undefined>;
  save(key: string, value: StoredAuth): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Shows the authorization page to the user: the system browser, or a `--browser` command. */
export interface AuthorizationUi {
  open(url: URL): Promise<void>;
}

/** How long a sign-in may take in the browser before the connection gives up on it. */
export const DEFAULT_SIGN_IN_TIMEOUT_MS = 5 * 60_000;
/** The client name shown on consent pages. */
export const OAUTH_CLIENT_NAME = 'MCP Tool Router';

/** The key a server's sign-in is kept under: its URL, so renaming the server keeps the sign-in. */
export function authKey(serverUrl: string): string {
  return createHash('sha256').update(serverUrl).digest('hex').slice(0, 32);
}

export class NeedsSignInError extends Error {
  constructor(server: string) {
    super(`server "${server}" needs sign-in: run "Sign In" on it (in VS Code), or connect from a terminal (CLI)`);
  }
}

export class RouterOAuthProvider implements OAuthClientProvider {
  private stored: StoredAuth = {};
  private loaded: Promise<void> | undefined;
  private readonly loopback = new LoopbackRedirect();
  private expectedState: string | undefined;
  /** The authorization URL of a sign-in that could not be shown (non-interactive). */
  pendingAuthorization: URL | undefined;

  constructor(
    readonly server: string,
    private readonly serverUrl: string,
    private readonly settings: OAuthSettings | undefined,
    private readonly store: AuthStore,
    /** With a UI, sign-in opens it and waits; without, the server is reported as needing sign-in. */
    private ui: AuthorizationUi | undefined,
  ) {}

  /** Allows (with a UI) or stops (undefined) interactive sign-in from now on: VS Code's Sign In sets it. */
  setUi(ui: AuthorizationUi | undefined): void {
    this.ui = ui;
  }

  /** A client ID metadata document's URL, used as the client ID where the authorization server supports it. */
  get clientMetadataUrl(): string | undefined {
    return this.settings?.clientMetadataUrl;
  }

  get interactive(): boolean {
    return this.ui !== undefined;
  }

  private get key(): string {
    return authKey(this.serverUrl);
  }

  /** Loads what is stored and, when interactive, starts the loopback listener the redirect URL names. */
  async prepare(): Promise<void> {
    this.loaded ??= this.store.load(this.key).then((s) => {
      this.stored = s ?? {};
    });
    await this.loaded;
    if (!this.ui) return;
    const wanted = this.stored.redirectPort ?? 0;
    await this.loopback.start(wanted);
    if (this.loopback.listeningPort !== wanted) {
      // The registration names another port (or none yet): a dynamic registration is made again for this
      // one. Pre-registered clients keep theirs, since loopback redirects may use any port (RFC 8252).
      await this.update({ ...(this.settings?.clientId ? { client: this.stored.client } : {}), tokens: this.stored.tokens, discovery: this.stored.discovery, redirectPort: this.loopback.listeningPort });
    }
  }

  /**
   * Waits for the redirect of the sign-in just started, checks its state, and returns the redirect's
   * parameters: `code`, and `iss` when the authorization server sends it, which the SDK checks (RFC 9207).
   */
  async waitForRedirect(timeoutMs = DEFAULT_SIGN_IN_TIMEOUT_MS, signal?: AbortSignal): Promise<URLSearchParams> {
    const response = await this.loopback.next(timeoutMs, signal);
    if (this.expectedState !== undefined && response.state !== this.expectedState) throw new Error('the sign-in answer did not match the request (state mismatch); try again');
    return response.params;
  }

  /** Stops the loopback listener (until the next sign-in), unless a sign-in is still waiting on it. */
  async done(): Promise<void> {
    if (this.loopback.busy) return;
    await this.loopback.close();
  }

  /** Forgets the tokens and registration (Sign Out). */
  async signOut(): Promise<void> {
    this.stored = {};
    await this.store.delete(this.key);
  }

  get hasTokens(): boolean {
    return this.stored.tokens !== undefined;
  }

  get redirectUrl(): string {
    return `http://127.0.0.1:${this.loopback.listeningPort || this.stored.redirectPort || 0}/callback`;
  }

  get clientMetadata(): OAuthClientMetadata {
    const confidential = this.settings?.clientSecret !== undefined;
    return {
      client_name: OAUTH_CLIENT_NAME,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
      ...(this.settings?.scopes?.length ? { scope: this.settings.scopes.join(' ') } : {}),
    };
  }

  state(): string {
    this.expectedState = randomBytes(16).toString('base64url');
    return this.expectedState;
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    if (this.settings?.clientId) return { client_id: this.settings.clientId, ...(this.settings.clientSecret ? { client_secret: this.settings.clientSecret } : {}) };
    return this.stored.client;
  }

  async saveClientInformation(client: StoredOAuthClientInformation): Promise<void> {
    // A pre-registered secret lives in the config (or an input), never in the store.
    if (this.settings?.clientId) return;
    await this.update({ ...this.stored, client });
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.stored.tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    await this.update({ ...this.stored, tokens });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.stored.discovery;
  }

  async saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    await this.update({ ...this.stored, discovery });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.ui) {
      this.pendingAuthorization = url;
      return;
    }
    // The listener may have been closed after an earlier sign-in (a step-up comes later, mid-session):
    // it must be listening before the browser is sent to a page that redirects to it.
    await this.prepare();
    await this.ui.open(url);
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    await this.update({ ...this.stored, verifier });
  }

  codeVerifier(): string {
    if (!this.stored.verifier) throw new Error('no PKCE verifier was saved for this sign-in; start it again');
    return this.stored.verifier;
  }

  /**
   * The fetch the server's transport uses, watching for the server refusing a token it was sent (401 to a
   * bearer request). Its authorization server may have changed then (SEP-2352), so the discovery kept from
   * the last sign-in is dropped before the SDK's `auth()` runs, which reads the protected resource metadata
   * again; a registration and tokens stamped with another issuer are then not reused but made again. The SDK
   * leaves this to the host; discovery costs two requests, and only after a refusal.
   */
  watchRefusals(base: typeof fetch = fetch): typeof fetch {
    return async (input, init) => {
      const response = await base(input, init);
      if (response.status === 401 && /^Bearer\s/i.test(new Headers(init?.headers).get('authorization') ?? '') && this.stored.discovery) {
        await this.invalidateCredentials('discovery');
      }
      return response;
    };
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    // The SDK names one scope at a time ('client', then 'tokens'); the registered redirect port outlives every scope.
    const forget: ReadonlyArray<keyof StoredAuth> = scope === 'all' ? ['client', 'tokens', 'verifier', 'discovery'] : [scope];
    await this.update(Object.fromEntries(Object.entries(this.stored).filter(([key]) => !forget.includes(key as keyof StoredAuth))) as StoredAuth);
  }

  private async update(next: StoredAuth): Promise<void> {
    const clean = Object.fromEntries(Object.entries(next).filter(([, v]) => v !== undefined)) as StoredAuth;
    this.stored = clean;
    await this.store.save(this.key, clean);
  }
}
