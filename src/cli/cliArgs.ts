import * as path from 'node:path';
import { isLoopbackHost } from '../core/gateway/httpGateway';
import { parseReplicaPlace, type ReplicaPlace } from '../core/gateway/replicaSessions';
import { readGatewayToken } from '../core/gateway/tokenFile';
import { destructivePolicyFrom, type DestructivePolicy } from '../core/policy/callPolicy';
import { CLI_STARTUP_WAIT_MS } from '../core/router/startupWaits';
import { DEFAULT_EMBEDDING_SETTINGS, type EmbeddingSettings } from '../core/selection/selectionEngine';
import { parseElicitationMode, type ElicitationMode } from './clientFeatures';
import type { ReplayCliOptions } from './replayCommand';
import type { HttpServeOptions } from './serveCommand';
import { parseProvider, type SelectCliOptions } from './selectCommands';
import { describeError } from '../core/errors/describeError';

/** The command line of `mcp-tool-router`: its usage text, its options, and their parsing and checks. */

export const USAGE = `Usage:
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
  --wait MS          how long to wait for servers to start (default ${CLI_STARTUP_WAIT_MS})
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

export interface CliOptions {
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
    throw new UsageError(describeError(error));
  }
  return { host, token, ...(opts.port !== undefined ? { port: opts.port } : {}), ...proxyOptions(opts) };
}

/** What a gateway behind the user's reverse proxy is told: trust its forwarded address, and its place. */
function proxyOptions(opts: Partial<Pick<CliOptions, 'trustProxy' | 'replica'>>): Pick<HttpServeOptions, 'trustProxy' | 'replica'> {
  return { ...(opts.trustProxy ? { trustProxy: true } : {}), ...(opts.replica ? { replica: opts.replica } : {}) };
}

export function parseCliArgs(argv: readonly string[]): CliOptions {
  const opts = defaultCliOptions();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const option = OPTIONS.get(arg);
    if (option) {
      option(opts, optionValues(arg, () => argv[++i]));
    } else if (arg.startsWith('-')) {
      throw new UsageError(`Unknown option ${arg}.`);
    } else if (!opts.command) {
      opts.command = arg;
    } else {
      opts.positional.push(arg);
    }
  }
  return opts;
}

function defaultCliOptions(): CliOptions {
  return { command: '', positional: [], configs: [], json: false, waitMs: CLI_STARTUP_WAIT_MS, workspace: process.cwd(), inputs: new Map(), verbose: false, dynamic: false, quarantine: true, memory: true, http: false, noAuth: false, embeddings: { ...DEFAULT_EMBEDDING_SETTINGS }, roots: [], allowDestructive: [], trustProxy: false, acceptToolChanges: [] };
}

/** An option's value, read from the words after it; every error names the option and is a usage error. */
interface OptionValues {
  value(): string;
  /** A positive whole number of milliseconds. */
  number(): number;
  /** The value read by a parser whose errors name the option. */
  parsed<T>(parse: (raw: string) => T): T;
}

function optionValues(arg: string, next: () => string | undefined): OptionValues {
  const value = (): string => {
    const v = next();
    if (v === undefined || (v.startsWith('--') && arg !== '--args')) throw new UsageError(`${arg} needs a value.`);
    return v;
  };
  return {
    value,
    number: () => {
      const raw = value();
      const n = Number(raw);
      if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${arg} needs a positive whole number of milliseconds, got "${raw}".`);
      return n;
    },
    parsed: (parse) => {
      const raw = value();
      try {
        return parse(raw);
      } catch (error) {
        throw new UsageError(describeError(error));
      }
    },
  };
}

type OptionReader = (opts: CliOptions, values: OptionValues) => void;

/** Every option and what it sets; a Map, so a word such as "constructor" is never taken for one. */
const OPTIONS: ReadonlyMap<string, OptionReader> = new Map<string, OptionReader>([
  ['--config', (o, v) => { o.configs.push(v.value()); }],
  ['--json', (o) => { o.json = true; }],
  ['--args', (o, v) => { o.args = v.value(); }],
  ['--timeout', (o, v) => { o.timeoutMs = v.number(); }],
  ['--wait', (o, v) => { o.waitMs = v.number(); }],
  ['--workspace', (o, v) => { o.workspace = path.resolve(v.value()); }],
  ['--root', (o, v) => { o.roots.push(path.resolve(v.value())); }],
  ['--destructive-tools', (o, v) => { o.destructiveTools = destructivePolicy(v.value()); }],
  ['--allow-destructive', (o, v) => { o.allowDestructive.push(v.value()); }],
  ['--trust-proxy', (o) => { o.trustProxy = true; }],
  ['--replica', (o, v) => { o.replica = v.parsed(parseReplicaPlace); }],
  ['--accept-tool-changes', (o, v) => { o.acceptToolChanges.push(v.value()); }],
  ['--verbose', (o) => { o.verbose = true; }],
  ['--dynamic', (o) => { o.dynamic = true; }],
  ['--no-quarantine', (o) => { o.quarantine = false; }],
  ['--http', (o) => { o.http = true; }],
  ['--port', (o, v) => { o.port = portNumber(v.value()); }],
  ['--host', (o, v) => { o.host = v.value(); }],
  ['--token-file', (o, v) => { o.tokenFile = v.value(); }],
  ['--no-auth', (o) => { o.noAuth = true; }],
  ['--browser', (o, v) => { o.browser = v.value(); }],
  ['--elicitation', (o, v) => { o.elicitation = v.parsed(parseElicitationMode); }],
  ['--tools', (o, v) => { o.toolsFile = v.value(); }],
  ['--queries', (o, v) => { o.queriesFile = v.value(); }],
  ['--split', (o, v) => { o.split = v.value(); }],
  ['--out', (o, v) => { o.outFile = v.value(); }],
  ['--cache-dir', (o, v) => { o.cacheDir = v.value(); }],
  ['--records', (o, v) => { o.recordsFile = v.value(); }],
  ['--no-memory', (o) => { o.memory = false; }],
  ['--embeddings', (o, v) => { o.embeddings = { ...o.embeddings, provider: v.parsed(parseProvider) }; }],
  ['--model', (o, v) => { o.embeddings = { ...o.embeddings, model: v.value() }; }],
  ['--endpoint', (o, v) => { o.embeddings = { ...o.embeddings, endpoint: v.value() }; }],
  ['--input', (o, v) => { setInput(o.inputs, v.value()); }],
  ['-h', (o) => { o.command = 'help'; }],
  ['--help', (o) => { o.command = 'help'; }],
]);

function destructivePolicy(raw: string): DestructivePolicy {
  const policy = destructivePolicyFrom(raw);
  if (!policy) throw new UsageError(`--destructive-tools must be confirm, never or always; got "${raw}".`);
  return policy;
}

function portNumber(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port needs a port number from 0 to 65535, got "${raw}".`);
  return n;
}

function setInput(inputs: Map<string, string>, raw: string): void {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new UsageError(`--input needs ID=VALUE, got "${raw.slice(0, 40)}".`);
  inputs.set(raw.slice(0, eq), raw.slice(eq + 1));
}

/** What `select` and `eval` take from the command line. */
export function selectOptions(opts: CliOptions): SelectCliOptions {
  return { embeddings: opts.embeddings, json: opts.json, ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) };
}

/** What `replay` takes from the command line (checked before: --records is given). */
export function replayOptions(opts: CliOptions): ReplayCliOptions {
  return { ...selectOptions(opts), recordsFile: opts.recordsFile!, memory: opts.memory };
}
