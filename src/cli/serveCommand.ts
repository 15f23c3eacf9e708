import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { EXIT_CODES } from '../core/router/callEnvelope';
import type { ServerDefinition } from '../core/config/serverConfig';
import { describeState, type ServerState } from '../core/connection/serverConnection';
import { HttpGateway } from '../core/gateway/httpGateway';
import type { ReplicaPlace } from '../core/gateway/replicaSessions';
import type { ClientFeatures } from '../core/connection/clientFeatures';
import { GatewayCore, type GatewayCoreOptions } from '../core/gateway/gatewayCore';
import { InstructionsTransport } from '../core/gateway/instructionsTransport';
import { ModernGateway } from '../core/gateway/modernGateway';
import { RouterGateway } from '../core/gateway/routerGateway';
import { createSelectionEngine } from '../core/selection/selectionEngine';
import { inspectExposedTools, quarantineOf } from '../core/security/toolPoisoning';
import { ToolRouter } from '../core/router/toolRouter';
import { heldBackMessage, type ToolPins } from '../core/security/toolPins';
import { defaultCacheDir, projectRoot, type SelectCliOptions } from './selectCommands';
import { describeError } from '../core/errors/describeError';
import { loadInProcess } from '../core/embedding/onnxEmbedder';

/**
 * `serve`: the router gateway as a stdio MCP server for any MCP client, or over streamable HTTP with `--http`;
 * both serve clients of MCP 2025-11-25 and of 2026-07-28. stdout carries the protocol and nothing else; every
 * log line goes to stderr. Servers start in the background: the client's `initialize` waits only briefly for
 * them (for their instructions), and the gateway's tools wait when they need them. Their resources, prompts
 * and completions reach the client too, through the same gateway.
 */

export interface ServeOptions extends Omit<SelectCliOptions, 'json'> {
  readonly servers: readonly ServerDefinition[];
  readonly dynamic: boolean;
  readonly verbose: boolean;
  /** How long a search or call waits for servers that are still starting. */
  readonly waitMs: number;
  /** Keep tools with a high-severity poisoning flag out of search (default true; `--no-quarantine`). */
  readonly quarantine?: boolean;
  /** Serve over streamable HTTP instead of stdio. */
  readonly http?: HttpServeOptions;
  /** Sign-in, elicitation and roots for the routed servers. */
  readonly features?: ClientFeatures;
  /** Hold back tools whose definitions changed since they were first seen (toolPins.ts). */
  readonly pins?: ToolPins;
}

export interface HttpServeOptions {
  readonly host: string;
  readonly port?: number;
  /** Undefined: no auth (loopback only, checked before). */
  readonly token?: string;
  /** Take the client's address from X-Forwarded-For (only behind the user's own proxy). */
  readonly trustProxy?: boolean;
  /** This replica's place behind a proxy that hashes Mcp-Session-Id (`--replica I/N`). */
  readonly replica?: ReplicaPlace;
}

/** After shutdown, a handle left open by a library must not keep a gateway nobody talks to alive. */
const SHUTDOWN_GRACE_MS = 5_000;

export async function runServe(opts: ServeOptions, err: (s: string) => void): Promise<number> {
  const log = (message: string): void => err(`mcp-tool-router serve: ${message}\n`);
  guardStdout();
  let quarantined: ReadonlyMap<string, string> = new Map();
  const engine = await createSelectionEngine({ loadModel: loadInProcess,
    embeddings: opts.embeddings,
    root: projectRoot(),
    cacheFolder: opts.cacheDir ?? defaultCacheDir(),
    log,
    ...(opts.quarantine === false ? {} : { quarantine: () => quarantined }),
    ...(opts.callPolicy ? { selection: { callPolicy: opts.callPolicy } } : {}),
  });
  const router = new ToolRouter({ ...(opts.verbose ? { onLog: (server: string, line: string) => err(`[${server}] ${line}\n`) } : {}), ...(opts.features ? { features: opts.features } : {}), ...(opts.pins ? { toolPins: opts.pins } : {}) });
  const cleanups = watchRouter(router, opts, log, (flagged) => (quarantined = flagged));
  const gatewayOptions: GatewayCoreOptions = { dynamicSubset: opts.dynamic, startupWaitMs: opts.waitMs, log };
  // One core whoever connects: the catalogue is kept in step once, and a server is subscribed to a resource once.
  const core = new GatewayCore(router, engine, gatewayOptions);
  const modern = new ModernGateway(core);
  cleanups.push(() => modern.dispose(), () => core.dispose());
  const { stopped, stop } = stopEvents(!opts.http, cleanups);

  /** What both transports' start line adds: the dynamic subset, and a search without embeddings. */
  const servingNote = `${opts.dynamic ? ', with a dynamic tool subset' : ''}${engine.embedderProblem ? `; search uses keywords only (${engine.embedderProblem})` : ''}`;
  let close: () => Promise<void>;
  if (opts.http) {
    const http = await listenHttp(opts.http, core, modern, log);
    if (!http) {
      cleanups.forEach((off) => off());
      await router.dispose();
      await engine.dispose();
      return EXIT_CODES.usage;
    }
    close = () => http.close();
    await router.applyConfig(opts.servers);
    log(`serving ${opts.servers.length} server(s) at ${http.url.href}${opts.http.token === undefined ? ' without auth' : ' (bearer token required)'}${servingNote}`);
  } else {
    close = serveOverStdio(core, modern, opts.dynamic, log, stop);
    await router.applyConfig(opts.servers);
    log(`serving ${opts.servers.length} server(s) over stdio${servingNote}`);
  }

  const reason = await stopped;
  log(`stopping (${reason})`);
  cleanups.forEach((off) => off());
  await close().catch((error: unknown) => log(`closing the connection failed: ${String(error)}`));
  await router.dispose();
  await engine.dispose();
  log('stopped');
  setTimeout(() => {
    log(`still running ${SHUTDOWN_GRACE_MS} ms after shutdown; exiting`);
    process.exit(EXIT_CODES.ok);
  }, SHUTDOWN_GRACE_MS).unref();
  return EXIT_CODES.ok;
}

/**
 * Logs what the router reports while serving (poisoning flags, held-back tools, server states, each once)
 * and hands the flagged tools to `setQuarantine`. Returns the unsubscribes.
 */
function watchRouter(router: ToolRouter, opts: ServeOptions, log: (message: string) => void, setQuarantine: (flagged: ReadonlyMap<string, string>) => void): Array<() => void> {
  const loggedFlags = new Set<string>();
  const offFlags = router.onDidChangeTools((tools) => {
    const flags = inspectExposedTools(tools);
    setQuarantine(quarantineOf(flags));
    for (const [name, list] of flags) {
      for (const f of list) {
        if (loggedFlags.has(`${name}\u0000${f.reason}`)) continue;
        loggedFlags.add(`${name}\u0000${f.reason}`);
        log(`tool "${name}" flagged (${f.severity}, ${f.kind}${f.severity === 'high' && opts.quarantine !== false ? '; quarantined from search' : ''}): ${f.reason}`);
      }
    }
  });
  const pins = opts.pins;
  const offHeld = pins ? router.onDidChangeHeldBackTools((held) => held.forEach((t) => log(heldBackMessage(t, pins)))) : () => undefined;
  const states = new Map<string, ServerState>();
  const offStatus = router.onDidChangeServerStatus((s) => {
    if (states.get(s.name) === s.state) return;
    states.set(s.name, s.state);
    log(`server "${s.name}" ${describeState(s.state)}${s.state === 'ready' ? ` (${s.toolCount} tools)` : ''}${s.reason ? `: ${s.reason}` : ''}`);
  });
  return [offStatus, offFlags, offHeld];
}

/** Resolves `stopped` with the reason on SIGTERM or SIGINT, or when stdin ends (stdio only); `stop` too. */
function stopEvents(watchStdin: boolean, cleanups: Array<() => void>): { stopped: Promise<string>; stop: (reason: string) => void } {
  let stop: (reason: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const on = (emitter: NodeJS.EventEmitter, event: string, reason: string): void => {
    const listener = (): void => stop(reason);
    emitter.once(event, listener);
    cleanups.push(() => emitter.off(event, listener));
  };
  on(process, 'SIGTERM', 'SIGTERM');
  on(process, 'SIGINT', 'SIGINT');
  if (watchStdin) {
    on(process.stdin, 'end', 'stdin closed');
    on(process.stdin, 'close', 'stdin closed');
  }
  return { stopped, stop };
}

/** The streamable HTTP gateway, listening; undefined, logged, when it cannot listen. */
async function listenHttp(options: HttpServeOptions, core: GatewayCore, modern: ModernGateway, log: (message: string) => void): Promise<HttpGateway | undefined> {
  const http = new HttpGateway({
    host: options.host,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.trustProxy ? { trustProxy: true } : {}),
    ...(options.replica ? { replica: options.replica } : {}),
    createGateway: () => new RouterGateway(core),
    modern,
    log,
  });
  try {
    await http.start();
    return http;
  } catch (error) {
    log(`cannot listen on ${options.host}:${options.port ?? 0}: ${describeError(error)}`);
    return undefined;
  }
}

/** Serves one client on stdin/stdout; returns how to close the connection. */
function serveOverStdio(core: GatewayCore, modern: ModernGateway, dynamic: boolean, log: (message: string) => void, stop: (reason: string) => void): () => Promise<void> {
  // The opening message picks the revision: initialize pins a 2025 session, a 2026-07-28 request a modern one.
  let session: RouterGateway | undefined;
  const stdio = serveStdio(
    (ctx) => {
      if (ctx.era === 'modern') return modern.createConnectionServer(ctx);
      session = new RouterGateway(core);
      const server = session.served();
      server.onclose = () => stop('the connection closed');
      return server;
    },
    // The initialize result gets the routed servers' instructions as it is sent (see InstructionsTransport).
    { transport: new InstructionsTransport(new StdioServerTransport(), () => core.instructions(dynamic)), onerror: (error) => log(`stdio: ${error.message}`) },
  );
  return async () => {
    if (session) session.server.onclose = undefined;
    await session?.close();
    await stdio.close();
  };
}

/** A library that logs with console.log would corrupt the protocol; its lines go to stderr instead. */
function guardStdout(): void {
  const toStderr = (...args: unknown[]): void => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}
