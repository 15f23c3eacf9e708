import { SSEClientTransport, StreamableHTTPClientTransport, type Client, type PriorDiscovery, type Transport } from '@modelcontextprotocol/client';
import type { RouterOAuthProvider } from '../auth/oauthProvider';
import { redactUrl } from '../config/mcpConfigParser';
import type { RemoteLaunch, ServerDefinition, StdioLaunch } from '../config/serverConfig';
import { describeError } from '../errors/describeError';
import { shouldFallBackToSse } from './connectionErrors';
import { mayHaveExitedOnProbe, MODERN_PROTOCOL_VERSION } from './protocolRevision';
import type { TransportKind } from './serverStatus';
import type { RemoteSignIn, RemoteTransport } from './remoteSignIn';
import { StdioProcessTransport } from './stdioProcessTransport';

/**
 * Which transport reaches a server, and how it is opened: a stdio process, streamable HTTP, or SSE, with
 * the fallbacks between them (streamable HTTP refused: SSE; a stdio server that exits on the 2026-07-28
 * probe: started once more as a 2025-11-25 server).
 */

/** What one start of a connection lends the factory. */
export interface StartHooks {
  /** Makes a client over the transport and runs the MCP handshake; the transport becomes the connection's. */
  handshake(transport: Transport, prior?: PriorDiscovery): Promise<Client>;
  /** Closes what a failed try left open. */
  teardown(): Promise<void>;
  /** False once a restart or a stop superseded this start. */
  isCurrent(): boolean;
  /** Each stdio process started, the latest last: its exit explains a failed start. */
  spawned(process: StdioProcessTransport): void;
}

export interface OpenedClient {
  readonly client: Client;
  readonly kind: TransportKind;
}

export class TransportFactory {
  /** The stdio server exited on the 2026-07-28 probe once: it is spoken to as 2025-11-25, without a probe, until a manual restart. */
  private exitsOnProbe = false;

  constructor(
    private readonly definition: ServerDefinition,
    private readonly auth: RouterOAuthProvider | undefined,
    private readonly signIn: RemoteSignIn,
    private readonly log: (line: string) => void,
  ) {}

  /** A manual restart probes the server's revision again. */
  forgetProbeExit(): void {
    this.exitsOnProbe = false;
  }

  /** Opens the configured transport and connects a client over it; throws what the last try failed with. */
  open(hooks: StartHooks): Promise<OpenedClient> {
    const { launch } = this.definition;
    return launch.type === 'stdio' ? this.openStdio(launch, hooks) : this.openRemote(launch, hooks);
  }

  private async openStdio(launch: StdioLaunch, hooks: StartHooks): Promise<OpenedClient> {
    const { options } = this.definition;
    this.log(`[router] starting: ${launch.command} ${launch.args.join(' ')}`);
    const spawn = (): StdioProcessTransport => {
      const child = new StdioProcessTransport({
        ...launch,
        onStderr: (line) => this.log(line),
        onStdoutNoise: (line) => this.log(`[router] ignored non-JSON-RPC output on stdout: ${line}`),
      });
      hooks.spawned(child);
      return child;
    };
    const first = spawn();
    try {
      return { client: await hooks.handshake(first, this.exitsOnProbe ? { kind: 'legacy' } : undefined), kind: 'stdio' };
    } catch (error) {
      if (this.exitsOnProbe || !mayHaveExitedOnProbe(options.protocol, first.exitInfo) || !hooks.isCurrent()) throw error;
      this.log(`[router] the server exited (${first.exitInfo}) while asked for its protocol revision; starting it once more, as a 2025-11-25 server`);
      await hooks.teardown();
      // Remembered even if this start fails too: a server that exits at once is not probed at every restart.
      this.exitsOnProbe = true;
      return { client: await hooks.handshake(spawn(), { kind: 'legacy' }), kind: 'stdio' };
    }
  }

  private async openRemote(launch: RemoteLaunch, hooks: StartHooks): Promise<OpenedClient> {
    const { options } = this.definition;
    const url = new URL(launch.url);
    const requestInit: RequestInit = { headers: { ...launch.headers } };
    const authProvider = this.auth ? { authProvider: this.auth, fetch: this.auth.watchRefusals() } : {};
    const sse = (): SSEClientTransport => new SSEClientTransport(url, { requestInit, eventSourceInit: { fetch: sseFetch(launch.headers) }, ...authProvider });
    const legacy = (transport: RemoteTransport): Promise<Client> => hooks.handshake(transport, { kind: 'legacy' });
    // SSE is a 2025 transport: a server pinned to 2026-07-28 is never looked for there.
    const sseAllowed = options.protocol !== MODERN_PROTOCOL_VERSION;
    if (launch.type === 'sse' && !sseAllowed) throw new Error(`${MODERN_PROTOCOL_VERSION} is not spoken over SSE (router.protocol); use "type": "http", or another router.protocol`);
    if (launch.type === 'sse') {
      this.log(`[router] connecting (SSE): ${redactUrl(launch.url)}`);
      return { client: await this.signIn.connect(sse, legacy), kind: 'sse' };
    }
    this.log(`[router] connecting (streamable HTTP): ${redactUrl(launch.url)}`);
    try {
      const client = await this.signIn.connect(() => new StreamableHTTPClientTransport(url, { requestInit, ...authProvider }), (transport) => hooks.handshake(transport));
      return { client, kind: 'streamable-http' };
    } catch (error) {
      if (!sseAllowed || !shouldFallBackToSse(error) || !hooks.isCurrent()) throw error;
      this.log(`[router] streamable HTTP refused (${describeError(error)}); trying SSE`);
      return { client: await this.signIn.connect(sse, legacy), kind: 'sse' };
    }
  }
}

/** The SSE stream's GET does not take requestInit's headers: they are added to each of its fetches. */
function sseFetch(headers: Readonly<Record<string, string>>): typeof fetch {
  return (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string> | undefined), ...headers } });
}
