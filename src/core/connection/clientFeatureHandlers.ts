import type { Client, ClientCapabilities } from '@modelcontextprotocol/client';
import { redactSecrets, type ServerDefinition } from '../config/serverConfig';
import type { CallerFeatures, ClientFeatures } from './clientFeatures';
import { installNoticeHandlers, type ServerNotice } from './serverNotices';

/** What a connection tells the handlers of one client it made. */
export interface HandlerHooks {
  /** False once the connection started over, so a dying client cannot speak for the server. */
  isCurrent(): boolean;
  /** False also once the connection holds another client. */
  isCurrentClient(): boolean;
  log(line: string): void;
  notify(notice: ServerNotice): void;
}

/**
 * One server's side of the client features (see {@link ClientFeatures}): what is declared to it at
 * initialize, and the handlers for its requests (elicitation, sampling, roots) and notices. A request
 * during a call goes to that call's own client first, when it can answer (a gateway session).
 */
export class ClientFeatureHandlers {
  /** Callers of the calls in flight that can answer requests themselves, newest last. */
  private readonly callers: CallerFeatures[] = [];
  private offRoots: (() => void) | undefined;

  constructor(
    private readonly definition: ServerDefinition,
    private readonly features: ClientFeatures | undefined,
  ) {}

  /** What the client declares: only the features the host provides (and roots only where the server is configured to get them). */
  capabilities(): ClientCapabilities {
    const features = this.features;
    return {
      // Defaults the user left out are filled in from the requested schema (SEP-1034).
      ...(features?.elicit ? { elicitation: { form: { applyDefaults: true } } } : {}),
      ...(features?.sample ? { sampling: {} } : {}),
      ...(features?.roots && this.definition.options.roots ? { roots: { listChanged: features.onRootsChanged !== undefined } } : {}),
    };
  }

  /** Runs one call while its caller may answer the server's requests. */
  async during<T>(caller: CallerFeatures, run: () => Promise<T>): Promise<T> {
    this.callers.push(caller);
    try {
      return await run();
    } finally {
      this.callers.splice(this.callers.lastIndexOf(caller), 1);
    }
  }

  /** Requests from the server (elicitation, sampling, roots) and its notices, on a new client. */
  install(client: Client, hooks: HandlerHooks): void {
    const features = this.features;
    const server = this.definition.name;
    // The protocol does not say which call a request belongs to, so the newest call that can answer is taken.
    const caller = (has: keyof CallerFeatures): CallerFeatures | undefined => [...this.callers].reverse().find((c) => c[has]);
    if (features?.elicit) {
      const elicit = features.elicit;
      client.setRequestHandler('elicitation/create', (request, ctx) => {
        const forward = caller('elicit');
        const signal = ctx.mcpReq.signal;
        return forward ? forward.elicit!(request.params, signal) : elicit(server, request.params, signal);
      });
    }
    if (features?.sample) {
      const sample = features.sample;
      client.setRequestHandler('sampling/createMessage', (request, ctx) => {
        const forward = caller('sample');
        const signal = ctx.mcpReq.signal;
        return forward ? forward.sample!(request.params, signal) : sample(server, request.params, signal);
      });
    }
    // A server configured without roots is not told them, so it keeps to the folders its own config gives.
    if (features?.roots && this.definition.options.roots) {
      const roots = features.roots;
      client.setRequestHandler('roots/list', () => ({ roots: roots().map((r) => ({ ...r })) }));
      this.offRoots?.();
      this.offRoots = features.onRootsChanged?.(() => {
        // A 2026-07-28 server asks for the roots with each request that needs them; there is no notice to send.
        if (hooks.isCurrentClient() && client.getProtocolEra() !== 'modern') client.sendRootsListChanged().catch(() => undefined);
      });
    }
    installNoticeHandlers(
      client,
      (notice) => {
        if (notice.kind === 'log') {
          const { level, logger, data } = notice.params;
          hooks.log(`[${level}]${logger ? ` ${logger}:` : ''} ${typeof data === 'string' ? data : JSON.stringify(data)}`);
        }
        hooks.notify(notice);
      },
      () => hooks.isCurrent(),
      (text) => redactSecrets(text, this.definition.secrets),
    );
  }

  /** The connection stopped: roots changes are no longer passed on. */
  dispose(): void {
    this.offRoots?.();
    this.offRoots = undefined;
  }
}
