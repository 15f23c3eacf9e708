import * as path from 'node:path';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { EXIT_CODES } from '../core/router/callEnvelope';
import { loadMcpConfigFile, type InputDefinition } from '../core/config/mcpConfigParser';
import { formatConfigIssue, type ConfigIssue, type ServerDefinition } from '../core/config/serverConfig';
import { loadToolsFile } from '../core/evaluation/retrievalData';
import { ToolRouter } from '../core/router/toolRouter';
import { catalogueFromFile, defaultCacheDir, runEval, runSelect } from './selectCommands';
import { cliClientFeatures, defaultElicitationMode } from './clientFeatures';
import type { ClientFeatures } from '../core/connection/clientFeatures';
import { setOnnxRuntimeFolder } from '../core/embedding/ortRuntime';
import { runReplay } from './replayCommand';
import { runServe, type HttpServeOptions } from './serveCommand';
import { httpServeOptions, parseCliArgs, replayOptions, selectOptions, UsageError, USAGE, type CliOptions } from './cliArgs';
import { ROUTER_COMMANDS } from './routerCommands';
import { ToolPins } from '../core/security/toolPins';
import { FileToolPinStore, TOOL_PINS_FILE_NAME } from '../core/security/toolPinStore';
import { routerConfigBeside } from '../core/config/takeOver';
import type { RouterBlock } from '../core/config/routerBlock';
import { callPolicy, CLI_ALLOW_HINTS, type CallPolicy, type DestructivePolicy } from '../core/policy/callPolicy';
import { describeError } from '../core/errors/describeError';

/**
 * `mcp-tool-router`: the core, outside VS Code. Its commands and options are USAGE (cliArgs.ts); this file
 * reads the config and sends each command where it runs: on a catalogue file alone (eval, select or replay
 * with --tools), as a gateway (serve, serveCommand.ts), or on a router over the servers (routerCommands.ts).
 *
 * Exit codes: 0 ok, 1 usage or config error, 2 invalid arguments (the server was not called),
 * 3 the tool reported an error, 4 unknown tool, 5 server unavailable (or timed out).
 */

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
    err(`${describeError(error)}\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  setOnnxRuntimeFolder(path.join(opts.cacheDir ?? path.dirname(defaultCacheDir()), 'runtime'));
  if (opts.command === 'help' || opts.command === '') {
    (opts.command === 'help' ? out : err)(USAGE);
    return opts.command === 'help' ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
  return (await runOnFiles(opts, out, err)) ?? (await runOnServers(opts, out, err));
}

/**
 * The commands that need no servers, as they read a catalogue file: `eval`, and `select` or `replay`
 * with `--tools`. Undefined for any other command, which the servers must answer.
 */
async function runOnFiles(opts: CliOptions, out: (s: string) => void, err: (s: string) => void): Promise<number | undefined> {
  if (opts.command === 'eval') {
    if (!opts.toolsFile || !opts.queriesFile || !opts.outFile) {
      err(`eval needs --tools, --queries and --out.\n\n${USAGE}`);
      return EXIT_CODES.usage;
    }
    return usageOnError(err, () => runEval({ toolsFile: opts.toolsFile!, queriesFile: opts.queriesFile!, outFile: opts.outFile!, ...(opts.split ? { split: opts.split } : {}), ...selectOptions(opts) }, out, err));
  }
  if (opts.command === 'replay' && (!opts.recordsFile || (!opts.toolsFile && opts.configs.length === 0))) {
    err(`replay needs --records and either --config or --tools.\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  const toolsFile = opts.toolsFile;
  if (opts.command === 'replay' && toolsFile) {
    return usageOnError(err, () => runReplay(catalogueFromFile(loadToolsFile(toolsFile)), replayOptions(opts), out, err));
  }
  if (opts.command === 'select' && toolsFile) {
    const prompt = opts.positional[0];
    if (!prompt) {
      err(`select needs a prompt.\n\n${USAGE}`);
      return EXIT_CODES.usage;
    }
    return usageOnError(err, () => runSelect(prompt, catalogueFromFile(loadToolsFile(toolsFile)), selectOptions(opts), out, err));
  }
  return undefined;
}

/** A command on the configured servers: `serve`, or one of ROUTER_COMMANDS on a router made for it. */
async function runOnServers(opts: CliOptions, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const command = ROUTER_COMMANDS.get(opts.command);
  if (!command && opts.command !== 'serve') {
    err(`Unknown command "${opts.command}".\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  if (opts.command === 'call' && !opts.positional[0]) {
    err(`call needs a tool name.\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  const loaded = await loadForCommand(opts, err);
  if (typeof loaded === 'number') return loaded;
  const { policy, roots } = runChoices(opts, loaded.blocks);
  if (!command) return serve(opts, loaded.servers, policy, roots, err);

  const unknownAccepted = opts.acceptToolChanges.filter((name) => !loaded.servers.some((s) => s.name === name));
  if (unknownAccepted.length > 0) err(`--accept-tool-changes: no server named ${unknownAccepted.map((n) => `"${n}"`).join(', ')} in the config.\n`);
  const pins = toolPinsFor(opts, err);
  const router = new ToolRouter({ ...(opts.verbose ? { onLog: (server: string, line: string) => err(`[${server}] ${line}\n`) } : {}), features: featuresFor(opts, roots, err), toolPins: pins });
  try {
    await router.applyConfig(loaded.servers);
    return await command({ opts, router, pins, policy, serverCount: loaded.servers.length, out, err });
  } finally {
    await router.dispose();
  }
}

/** The config files, read and their problems printed; the exit code instead when the run cannot go on. */
async function loadForCommand(opts: CliOptions, err: (s: string) => void): Promise<LoadedConfig | number> {
  let loaded: LoadedConfig;
  try {
    loaded = await loadServers(opts);
  } catch (error) {
    err(`${describeError(error)}\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  for (const issue of loaded.issues) err(`${formatConfigIssue(issue)}\n`);
  if (loaded.servers.length === 0 && loaded.issues.some((i) => i.severity === 'error') && opts.command !== 'servers') return EXIT_CODES.usage;
  return loaded;
}

/** `serve`: its --http settings checked first (a bad one is a usage error), then the gateway until it stops. */
async function serve(opts: CliOptions, servers: readonly ServerDefinition[], policy: CallPolicy, roots: readonly string[], err: (s: string) => void): Promise<number> {
  let http: HttpServeOptions | undefined;
  try {
    http = httpServeOptions(opts);
  } catch (error) {
    err(`${describeError(error)}\n`);
    return EXIT_CODES.usage;
  }
  return runServe({ features: featuresFor(opts, roots, err), servers, dynamic: opts.dynamic, quarantine: opts.quarantine, verbose: opts.verbose, waitMs: opts.waitMs, embeddings: opts.embeddings, callPolicy: policy, pins: toolPinsFor(opts, err), ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}), ...(http ? { http } : {}) }, err);
}

/** Runs a command whose failures (a file that cannot be read, a bad line) are usage errors: printed, exit 1. */
async function usageOnError(err: (s: string) => void, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    err(`${describeError(error)}\n`);
    return EXIT_CODES.usage;
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`mcp-tool-router: unexpected failure: ${describeError(error)}\n`);
      process.exitCode = EXIT_CODES.usage;
    },
  );
}
