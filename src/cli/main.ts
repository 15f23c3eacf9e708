import * as path from 'node:path';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { EXIT_CODES, exitCodeFor, type CallEnvelope } from '../core/router/callEnvelope';
import { loadMcpConfigFile, type InputDefinition } from '../core/config/mcpConfigParser';
import { formatConfigIssue, type ConfigIssue, type ServerDefinition } from '../core/config/serverConfig';
import { describeState } from '../core/connection/serverConnection';
import { loadToolsFile } from '../core/evaluation/retrievalData';
import { ToolRouter } from '../core/router/toolRouter';
import { catalogueFromFile, defaultCacheDir, runEval, runSelect, type SelectCliOptions } from './selectCommands';
import { cliClientFeatures, defaultElicitationMode } from './clientFeatures';
import type { ClientFeatures } from '../core/connection/clientFeatures';
import { setOnnxRuntimeFolder } from '../core/embedding/ortRuntime';
import { runReplay, type ReplayCliOptions } from './replayCommand';
import { runServe, type HttpServeOptions } from './serveCommand';
import { httpServeOptions, parseCliArgs, UsageError, USAGE, type CliOptions } from './cliArgs';
import { heldBackMessage, ToolPins } from '../core/security/toolPins';
import { FileToolPinStore, TOOL_PINS_FILE_NAME } from '../core/security/toolPinStore';
import { routerConfigBeside } from '../core/config/takeOver';
import type { RouterBlock } from '../core/config/routerBlock';
import { callPolicy, CLI_ALLOW_HINTS, decideCall, type CallPolicy, type DestructivePolicy } from '../core/policy/callPolicy';

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
