import * as path from 'node:path';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { EXIT_CODES, exitCodeFor, type CallEnvelope } from '../core/router/callEnvelope';
import { loadMcpConfigFile, type InputDefinition } from '../core/config/mcpConfigParser';
import { formatConfigIssue, type ConfigIssue, type ServerDefinition } from '../core/config/serverConfig';
import { describeState } from '../core/connection/serverConnection';
import { loadToolsFile } from '../core/evaluation/retrievalData';
import { DEFAULT_EMBEDDING_SETTINGS, type EmbeddingSettings } from '../core/selection/selectionEngine';
import { ToolRouter } from '../core/router/toolRouter';
import { catalogueFromFile, defaultCacheDir, parseProvider, runEval, runSelect, type SelectCliOptions } from './selectCommands';
import { cliClientFeatures, defaultElicitationMode, parseElicitationMode, type ElicitationMode } from './clientFeatures';
import type { ClientFeatures } from '../core/connection/clientFeatures';
import { setOnnxRuntimeFolder } from '../core/embedding/ortRuntime';
import { runReplay, type ReplayCliOptions } from './replayCommand';
import { runServe, type HttpServeOptions } from './serveCommand';
import { heldBackMessage, ToolPins } from '../core/security/toolPins';
import { FileToolPinStore, TOOL_PINS_FILE_NAME } from '../core/security/toolPinStore';
import { readGatewayToken } from '../core/gateway/tokenFile';
import { parseReplicaPlace, type ReplicaPlace } from '../core/gateway/replicaSessions';
import { isLoopbackHost } from '../core/gateway/httpGateway';
import { routerConfigBeside } from '../core/config/takeOver';
import type { RouterBlock } from '../core/config/routerBlock';
import { callPolicy, CLI_ALLOW_HINTS, decideCall, destructivePolicyFrom, type CallPolicy, type DestructivePolicy } from '../core/policy/callPolicy';

/**
 * `mcp-tool-router`: the core, outside VS Code.
 *
 *   tools   --config FILE [--json]
 *   call    NAME --args JSON --config FILE [--timeout MS]   (typing the name is the confirmation `confirm` asks for)
 *   servers --config FILE [--json]
 *
 * Exit codes: 0 ok, 1 usage or config error, 2 invalid arguments (the server was not called),
 * 3 the tool reported an error, 4 unknown tool, 5 server unavailable (or timed out).
 */

const USAGE = `Usage:
  mcp-tool-router tools   --config FILE [--json]
  mcp-tool-router call    NAME --args JSON --config FILE [--timeout MS]
  mcp-tool-router servers --config FILE [--json]
  mcp-tool-router select  "PROMPT" (--config FILE | --tools tools.jsonl) [--json]
  mcp-tool-router eval    --tools tools.jsonl --queries queries.jsonl [--split S] --out ranked.jsonl
  mcp-tool-router serve   --config FILE [--dynamic]   (an MCP server on stdin/stdout; logs on stderr)
  mcp-tool-router serve   --config FILE --http [--port N] [--host H] (--token-file F | --no-auth)
  mcp-tool-router replay  --records tool-usage.jsonl (--config FILE | --tools tools.jsonl) [--no-memory] [--json]

Options:
  --config FILE      mcp.json (VS Code) or Claude Desktop config; may be repeated. Beside an mcp.json,
                     the router's own mcp-tool-router.json (servers taken over from VS Code) is read too
  --workspace DIR    value of \${workspaceFolder} (default: the current directory); not announced as a root
  --root DIR         announce DIR to the servers as a root (repeatable; default: none). A root can widen
                     what a server reaches: the filesystem server serves its roots instead of its folders
  --destructive-tools P  confirm (default), never or always: what happens to tools marked destructive.
                     confirm: call runs them (you named the tool); serve runs them only for a client that
                     can ask its user (elicitation), and refuses them for any other client
  --allow-destructive NAME  run this destructive tool without asking (repeatable)
  --input ID=VALUE   value of \${input:ID}; also read from MCP_TOOL_ROUTER_INPUT_<ID>
  --wait MS          how long to wait for servers to start (default 60000)
  --verbose          print server logs to stderr
  --dynamic          serve: also list the last search's top tools, announced with tools/list_changed
  --no-quarantine    serve: keep tools flagged as poisoned (high severity) in search results (see SECURITY.md)
  --http             serve: streamable HTTP at http://HOST:PORT/mcp instead of stdio
  --port N           serve --http: the port (default: a free one, printed on stderr)
  --host H           serve --http: the address to bind (default 127.0.0.1)
  --token-file F     serve --http: file holding the bearer token every request must send
  --no-auth          serve --http: no token (refused unless the host is loopback)
  --trust-proxy      serve --http: take the client's address from X-Forwarded-For (behind your own proxy only)
  --replica I/N      serve --http: this is replica I (from 0) of N behind a proxy that hashes Mcp-Session-Id
                     (see examples/nginx-replicas.conf): session ids are made to land back on this replica
  --accept-tool-changes SERVER  accept SERVER's changed tool definitions (a tool whose description or
                     schema changed since first seen is held back until accepted; repeatable)
  --browser CMD      command that opens a sign-in page (the URL is added as its last argument);
                     the system's opener by default. Tokens are kept in CACHE/oauth, readable by you only
  --elicitation M    when a server asks for values mid-call: ask (on a terminal), accept-defaults or
                     decline (the default when not on a terminal)
  --embeddings P     local (default), ollama, openai or none (keywords only)
  --model M          "default" (the bundled model), a model folder, or an endpoint's model name
  --endpoint URL     the ollama / openai-compatible endpoint
  --cache-dir DIR    embedding cache (default: $XDG_CACHE_HOME/mcp-tool-router/embeddings)
  --records FILE     replay: the use memory's records (tool-usage.jsonl in the workspace's storage)
  --no-memory        replay: today's selector alone, without the use memory rebuilt from earlier records
`;

/** Long enough for an `npx` server's first start; the CLI waits no longer before answering. */
const DEFAULT_STARTUP_WAIT_MS = 60_000;

interface CliOptions {
  command: string;
  positional: string[];
  configs: string[];
  json: boolean;
  args?: string;
  timeoutMs?: number;
  waitMs: number;
  workspace: string;
  inputs: Map<string, string>;
  verbose: boolean;
  dynamic: boolean;
  /** serve: leave tools with a high-severity poisoning flag out of search (off with --no-quarantine). */
  quarantine: boolean;
  toolsFile?: string;
  queriesFile?: string;
  split?: string;
  outFile?: string;
  embeddings: EmbeddingSettings;
  cacheDir?: string;
  /** replay: the records file, and whether the time-ordered use memory joins the selector. */
  recordsFile?: string;
  memory: boolean;
  /** serve over streamable HTTP, with these settings. */
  http: boolean;
  port?: number;
  host?: string;
  tokenFile?: string;
  noAuth: boolean;
  browser?: string;
  elicitation?: ElicitationMode;
  /** --root: folders announced to servers as roots (none unless given). */
  roots: string[];
  destructiveTools?: DestructivePolicy;
  allowDestructive: string[];
  trustProxy: boolean;
  replica?: ReplicaPlace;
  /** Servers whose changed tool definitions the user accepts now. */
  acceptToolChanges: string[];
}

export class UsageError extends Error {}

function featuresFor(opts: CliOptions, roots: readonly string[], err: (s: string) => void): ClientFeatures {
  return cliClientFeatures({
    cacheDir: opts.cacheDir ?? path.dirname(defaultCacheDir()),
    ...(opts.browser ? { browser: opts.browser } : {}),
    elicitation: opts.elicitation ?? defaultElicitationMode(),
    roots,
    say: (line) => err(`${line}\n`),
  });
}

/** Tool definitions recorded when first seen, in the cache folder; a changed one is held back. */
function toolPinsFor(opts: CliOptions, err: (s: string) => void): ToolPins {
  return new ToolPins(new FileToolPinStore(path.join(opts.cacheDir ?? path.dirname(defaultCacheDir()), TOOL_PINS_FILE_NAME)), {
    acceptChangesFrom: opts.acceptToolChanges,
    howToAccept: (server) => `If you trust the change, run again with --accept-tool-changes ${server}.`,
    onProblem: (message) => err(`warning: ${message}\n`),
  });
}

function reportHeldBack(router: ToolRouter, pins: ToolPins, err: (s: string) => void): void {
  for (const held of router.heldBackTools()) err(`${heldBackMessage(held, pins)}\n`);
}

/**
 * `serve --http`'s settings, checked: a token file that exists and holds a long secret, or `--no-auth` on a
 * loopback host; never neither, and never a non-loopback host without a token.
 */
export function httpServeOptions(opts: Pick<CliOptions, 'http' | 'port' | 'host' | 'tokenFile' | 'noAuth'> & Partial<Pick<CliOptions, 'trustProxy' | 'replica'>>): HttpServeOptions | undefined {
  if (!opts.http) {
    if (opts.port !== undefined || opts.host !== undefined || opts.tokenFile !== undefined || opts.noAuth || opts.trustProxy || opts.replica) throw new UsageError('--port, --host, --token-file, --no-auth, --trust-proxy and --replica go with serve --http.');
    return undefined;
  }
  const host = opts.host ?? '127.0.0.1';
  if (opts.tokenFile !== undefined && opts.noAuth) throw new UsageError('Give either --token-file or --no-auth, not both.');
  if (opts.tokenFile === undefined) {
    if (!opts.noAuth) throw new UsageError('serve --http needs --token-file FILE (the bearer token clients must send), or --no-auth on a loopback host.');
    if (!isLoopbackHost(host)) throw new UsageError(`Refusing to serve on ${host} without a token: anyone who can reach that address could run every routed tool. Give --token-file FILE.`);
    return { host, ...(opts.port !== undefined ? { port: opts.port } : {}), ...proxyOptions(opts) };
  }
  let token: string;
  try {
    token = readGatewayToken(opts.tokenFile);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return { host, token, ...(opts.port !== undefined ? { port: opts.port } : {}), ...proxyOptions(opts) };
}

/** What a gateway behind the user's reverse proxy is told: trust its forwarded address, and its place. */
function proxyOptions(opts: Partial<Pick<CliOptions, 'trustProxy' | 'replica'>>): Pick<HttpServeOptions, 'trustProxy' | 'replica'> {
  return { ...(opts.trustProxy ? { trustProxy: true } : {}), ...(opts.replica ? { replica: opts.replica } : {}) };
}

export function parseCliArgs(argv: readonly string[]): CliOptions {
  const opts: CliOptions = { command: '', positional: [], configs: [], json: false, waitMs: DEFAULT_STARTUP_WAIT_MS, workspace: process.cwd(), inputs: new Map(), verbose: false, dynamic: false, quarantine: true, memory: true, http: false, noAuth: false, embeddings: { ...DEFAULT_EMBEDDING_SETTINGS }, roots: [], allowDestructive: [], trustProxy: false, acceptToolChanges: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined || (v.startsWith('--') && arg !== '--args')) throw new UsageError(`${arg} needs a value.`);
      return v;
    };
    const number = (): number => {
      const raw = value();
      const n = Number(raw);
      if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${arg} needs a positive whole number of milliseconds, got "${raw}".`);
      return n;
    };
    switch (arg) {
      case '--config':
        opts.configs.push(value());
        break;
      case '--json':
        opts.json = true;
        break;
      case '--args':
        opts.args = value();
        break;
      case '--timeout':
        opts.timeoutMs = number();
        break;
      case '--wait':
        opts.waitMs = number();
        break;
      case '--workspace':
        opts.workspace = path.resolve(value());
        break;
      case '--root':
        opts.roots.push(path.resolve(value()));
        break;
      case '--destructive-tools': {
        const raw = value();
        const policy = raw === 'confirm' || raw === 'never' || raw === 'always' ? destructivePolicyFrom(raw) : undefined;
        if (!policy) throw new UsageError(`--destructive-tools must be confirm, never or always; got "${raw}".`);
        opts.destructiveTools = policy;
        break;
      }
      case '--allow-destructive':
        opts.allowDestructive.push(value());
        break;
      case '--trust-proxy':
        opts.trustProxy = true;
        break;
      case '--replica':
        try {
          opts.replica = parseReplicaPlace(value());
        } catch (error) {
          throw new UsageError((error as Error).message);
        }
        break;
      case '--accept-tool-changes':
        opts.acceptToolChanges.push(value());
        break;
      case '--verbose':
        opts.verbose = true;
        break;
      case '--dynamic':
        opts.dynamic = true;
        break;
      case '--no-quarantine':
        opts.quarantine = false;
        break;
      case '--http':
        opts.http = true;
        break;
      case '--port': {
        const raw = value();
        const port = Number(raw);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port needs a port number from 0 to 65535, got "${raw}".`);
        opts.port = port;
        break;
      }
      case '--host':
        opts.host = value();
        break;
      case '--token-file':
        opts.tokenFile = value();
        break;
      case '--no-auth':
        opts.noAuth = true;
        break;
      case '--browser':
        opts.browser = value();
        break;
      case '--elicitation':
        try {
          opts.elicitation = parseElicitationMode(value());
        } catch (error) {
          throw new UsageError((error as Error).message);
        }
        break;
      case '--tools':
        opts.toolsFile = value();
        break;
      case '--queries':
        opts.queriesFile = value();
        break;
      case '--split':
        opts.split = value();
        break;
      case '--out':
        opts.outFile = value();
        break;
      case '--cache-dir':
        opts.cacheDir = value();
        break;
      case '--records':
        opts.recordsFile = value();
        break;
      case '--no-memory':
        opts.memory = false;
        break;
      case '--embeddings':
        try {
          opts.embeddings = { ...opts.embeddings, provider: parseProvider(value()) };
        } catch (error) {
          throw new UsageError((error as Error).message);
        }
        break;
      case '--model':
        opts.embeddings = { ...opts.embeddings, model: value() };
        break;
      case '--endpoint':
        opts.embeddings = { ...opts.embeddings, endpoint: value() };
        break;
      case '--input': {
        const raw = value();
        const eq = raw.indexOf('=');
        if (eq <= 0) throw new UsageError(`--input needs ID=VALUE, got "${raw.slice(0, 40)}".`);
        opts.inputs.set(raw.slice(0, eq), raw.slice(eq + 1));
        break;
      }
      case '-h':
      case '--help':
        opts.command = 'help';
        break;
      default:
        if (arg.startsWith('-')) throw new UsageError(`Unknown option ${arg}.`);
        if (!opts.command) opts.command = arg;
        else opts.positional.push(arg);
    }
  }
  return opts;
}

async function promptInput(input: InputDefinition): Promise<string | undefined> {
  if (!process.stdin.isTTY) return input.default;
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    const question = `${input.description ?? input.id}${input.default ? ` [${input.default}]` : ''}: `;
    const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
    return answer === '' ? input.default : answer;
  } finally {
    rl.close();
  }
}

interface LoadedConfig {
  servers: ServerDefinition[];
  issues: ConfigIssue[];
  /** The config files' `router` blocks, in the order read. */
  blocks: RouterBlock[];
}

async function loadServers(opts: CliOptions): Promise<LoadedConfig> {
  if (opts.configs.length === 0) throw new UsageError('--config FILE is required.');
  const servers: ServerDefinition[] = [];
  const issues: ConfigIssue[] = [];
  const blocks: RouterBlock[] = [];
  // Servers taken over from VS Code live in the router's own file beside its mcp.json: read it first, as the extension does.
  const files = opts.configs.flatMap((file) => {
    const beside = routerConfigBeside(path.resolve(file));
    const own = path.basename(file) === 'mcp.json' && existsSync(beside) && !opts.configs.some((c) => path.resolve(c) === beside);
    return own ? [beside, file] : [file];
  });
  for (const file of files) {
    const parsed = await loadMcpConfigFile(path.resolve(file), {
      workspaceFolder: opts.workspace,
      resolveInput: async (input) => opts.inputs.get(input.id) ?? process.env[`MCP_TOOL_ROUTER_INPUT_${input.id}`] ?? (await promptInput(input)),
    });
    issues.push(...parsed.issues);
    if (parsed.router) blocks.push(parsed.router);
    for (const s of parsed.servers) {
      if (servers.some((x) => x.name === s.name)) {
        issues.push({ file: path.resolve(file), server: s.name, severity: 'warning', message: 'A server of this name was already defined in an earlier config; this one is ignored.' });
      } else servers.push(s);
    }
  }
  return { servers, issues, blocks };
}

/**
 * The call policy and roots of this run: flags first, then the config files' `router` blocks. Of several
 * files' policies the strictest holds (never, then confirm, then always), so adding a file never loosens it.
 */
export function runChoices(opts: Pick<CliOptions, 'destructiveTools' | 'allowDestructive' | 'roots'>, blocks: readonly RouterBlock[]): { policy: CallPolicy; roots: string[] } {
  const strictness: readonly DestructivePolicy[] = ['never', 'confirm', 'always'];
  const fromFiles = blocks.map((b) => b.destructiveTools).filter((p): p is DestructivePolicy => p !== undefined);
  const strictest = fromFiles.sort((a, b) => strictness.indexOf(a) - strictness.indexOf(b))[0];
  const allowed = [...new Set([...opts.allowDestructive, ...blocks.flatMap((b) => b.allowedDestructiveTools ?? [])])];
  const roots = [...new Set([...opts.roots, ...blocks.flatMap((b) => b.roots ?? [])])];
  return { policy: callPolicy(opts.destructiveTools ?? strictest, allowed, CLI_ALLOW_HINTS), roots };
}

export async function runCli(argv: readonly string[], out: (s: string) => void = (s) => process.stdout.write(s), err: (s: string) => void = (s) => process.stderr.write(s)): Promise<number> {
  let opts: CliOptions;
  try {
    opts = parseCliArgs(argv);
  } catch (error) {
    err(`${(error as Error).message}\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  setOnnxRuntimeFolder(path.join(opts.cacheDir ?? path.dirname(defaultCacheDir()), 'runtime'));
  if (opts.command === 'help' || opts.command === '') {
    (opts.command === 'help' ? out : err)(USAGE);
    return opts.command === 'help' ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
  if (opts.command === 'eval') {
    if (!opts.toolsFile || !opts.queriesFile || !opts.outFile) {
      err(`eval needs --tools, --queries and --out.\n\n${USAGE}`);
      return EXIT_CODES.usage;
    }
    try {
      return await runEval({ toolsFile: opts.toolsFile, queriesFile: opts.queriesFile, outFile: opts.outFile, ...(opts.split ? { split: opts.split } : {}), ...selectOptions(opts) }, out, err);
    } catch (error) {
      err(`${(error as Error).message}\n`);
      return EXIT_CODES.usage;
    }
  }
  if (opts.command === 'replay' && (!opts.recordsFile || (!opts.toolsFile && opts.configs.length === 0))) {
    err(`replay needs --records and either --config or --tools.\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  if (opts.command === 'replay' && opts.toolsFile) {
    try {
      return await runReplay(catalogueFromFile(loadToolsFile(opts.toolsFile)), replayOptions(opts), out, err);
    } catch (error) {
      err(`${(error as Error).message}\n`);
      return EXIT_CODES.usage;
    }
  }
  if (opts.command === 'select' && opts.toolsFile) {
    const prompt = opts.positional[0];
    if (!prompt) {
      err(`select needs a prompt.\n\n${USAGE}`);
      return EXIT_CODES.usage;
    }
    try {
      return await runSelect(prompt, catalogueFromFile(loadToolsFile(opts.toolsFile)), selectOptions(opts), out, err);
    } catch (error) {
      err(`${(error as Error).message}\n`);
      return EXIT_CODES.usage;
    }
  }
  if (!['tools', 'call', 'servers', 'select', 'serve', 'replay'].includes(opts.command)) {
    err(`Unknown command "${opts.command}".\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  let toolName: string | undefined;
  if (opts.command === 'call') {
    toolName = opts.positional[0];
    if (!toolName) {
      err(`call needs a tool name.\n\n${USAGE}`);
      return EXIT_CODES.usage;
    }
  }

  let loaded: LoadedConfig;
  try {
    loaded = await loadServers(opts);
  } catch (error) {
    err(`${(error as Error).message}\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  for (const issue of loaded.issues) err(`${formatConfigIssue(issue)}\n`);
  if (loaded.servers.length === 0 && loaded.issues.some((i) => i.severity === 'error') && opts.command !== 'servers') return EXIT_CODES.usage;
  const { policy, roots } = runChoices(opts, loaded.blocks);
  if (opts.command === 'serve') {
    let http: HttpServeOptions | undefined;
    try {
      http = httpServeOptions(opts);
    } catch (error) {
      err(`${(error as Error).message}\n`);
      return EXIT_CODES.usage;
    }
    return runServe({ features: featuresFor(opts, roots, err), servers: loaded.servers, dynamic: opts.dynamic, quarantine: opts.quarantine, verbose: opts.verbose, waitMs: opts.waitMs, embeddings: opts.embeddings, callPolicy: policy, pins: toolPinsFor(opts, err), ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}), ...(http ? { http } : {}) }, err);
  }

  const unknownAccepted = opts.acceptToolChanges.filter((name) => !loaded.servers.some((s) => s.name === name));
  if (unknownAccepted.length > 0) err(`--accept-tool-changes: no server named ${unknownAccepted.map((n) => `"${n}"`).join(', ')} in the config.\n`);
  const toolPins = toolPinsFor(opts, err);
  const router = new ToolRouter({ ...(opts.verbose ? { onLog: (server: string, line: string) => err(`[${server}] ${line}\n`) } : {}), features: featuresFor(opts, roots, err), toolPins });
  try {
    await router.applyConfig(loaded.servers);
    switch (opts.command) {
      case 'tools': {
        await router.whenSettled(opts.waitMs);
        reportUnready(router, err);
        reportHeldBack(router, toolPins, err);
        const tools = router.listTools();
        if (opts.json) {
          out(`${JSON.stringify(tools.map((t) => ({ name: t.name, server: t.server, originalName: t.originalName, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations, ...(t.schemaProblem ? { schemaProblem: t.schemaProblem } : {}) })), null, 2)}\n`);
        } else {
          for (const t of tools) out(`${t.name}${t.annotations.destructiveHint ? ' (destructive)' : ''}\n    ${t.description.split('\n')[0]?.slice(0, 160)}\n`);
          err(`${tools.length} tools from ${router.serverStatuses.filter((s) => s.state === 'ready').length} of ${loaded.servers.length} servers\n`);
        }
        return EXIT_CODES.ok;
      }
      case 'servers': {
        await router.whenSettled(opts.waitMs);
        const statuses = router.serverStatuses;
        if (opts.json) out(`${JSON.stringify(statuses, null, 2)}\n`);
        else for (const s of statuses) out(`${s.name}: ${s.state}${s.transport ? ` (${[s.transport, s.protocol].filter(Boolean).join(', ')})` : ''}, ${s.toolCount} tools, ${s.restarts} restarts${s.reason ? `\n    ${s.reason}` : ''}\n`);
        return EXIT_CODES.ok;
      }
      case 'select': {
        const prompt = opts.positional[0];
        if (!prompt) {
          err(`select needs a prompt.\n\n${USAGE}`);
          return EXIT_CODES.usage;
        }
        await router.whenSettled(opts.waitMs);
        reportUnready(router, err);
        reportHeldBack(router, toolPins, err);
        return await runSelect(prompt, router.listTools(), { ...selectOptions(opts), callPolicy: policy }, out, err);
      }
      case 'replay': {
        await router.whenSettled(opts.waitMs);
        reportUnready(router, err);
        reportHeldBack(router, toolPins, err);
        try {
          return await runReplay(router.listTools(), replayOptions(opts), out, err);
        } catch (error) {
          err(`${(error as Error).message}\n`);
          return EXIT_CODES.usage;
        }
      }
      case 'call': {
        const name = toolName!;
        const tool = await router.waitForTool(name, opts.waitMs);
        let envelope: CallEnvelope;
        if (!tool) {
          envelope = await router.call(name, opts.args ?? '{}');
          const s = router.unreadyOwnersOf(name)[0];
          if (s) {
            envelope = { ok: false, error: { type: 'SERVER_UNAVAILABLE', message: `"${name}" cannot be called: server "${s.name}" ${describeState(s.state)}${s.reason ? `: ${s.reason}` : ''}`, retryable: s.state !== 'failed' }, meta: { latencyMs: 0, bytes: 0, server: s.name, tool: name } };
          }
        } else {
          // The person typed this tool's name: that is the confirmation `confirm` asks for; `never` still refuses.
          const decision = decideCall(policy, tool, { canAsk: false, confirmedByPerson: true });
          envelope =
            decision.verdict === 'refuse'
              ? { ok: false, error: { type: 'NOT_APPROVED', message: decision.message, retryable: false }, meta: { latencyMs: 0, bytes: 0, server: tool.server, tool: tool.originalName, exposedName: tool.name } }
              : await router.call(name, opts.args ?? '{}', opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {});
        }
        out(`${JSON.stringify(envelope, null, 2)}\n`);
        if (!envelope.ok) err(`${envelope.error.type}: ${envelope.error.message}\n`);
        return exitCodeFor(envelope);
      }
    }
    return EXIT_CODES.usage;
  } finally {
    await router.dispose();
  }
}

function selectOptions(opts: CliOptions): SelectCliOptions {
  return { embeddings: opts.embeddings, json: opts.json, ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) };
}

function replayOptions(opts: CliOptions): ReplayCliOptions {
  return { ...selectOptions(opts), recordsFile: opts.recordsFile!, memory: opts.memory };
}

function reportUnready(router: ToolRouter, err: (s: string) => void): void {
  for (const s of router.serverStatuses) if (s.state !== 'ready') err(`Server "${s.name}" ${describeState(s.state)}${s.reason ? `: ${s.reason}` : ''}\n`);
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`mcp-tool-router: unexpected failure: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = EXIT_CODES.usage;
    },
  );
}
