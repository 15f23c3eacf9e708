import { exitCodeFor, EXIT_CODES, notApproved, type CallEnvelope } from '../core/router/callEnvelope';
import { describeState } from '../core/connection/serverConnection';
import { decideCall, type CallPolicy } from '../core/policy/callPolicy';
import type { ToolRouter } from '../core/router/toolRouter';
import { heldBackMessage, type ToolPins } from '../core/security/toolPins';
import { replayOptions, selectOptions, USAGE, type CliOptions } from './cliArgs';
import { runReplay } from './replayCommand';
import { runSelect } from './selectCommands';
import { describeError } from '../core/errors/describeError';

/**
 * The commands that run on the configured servers: `tools`, `servers`, `select`, `replay` and `call`, each
 * given a router that has just been handed the config (main.ts makes it and disposes of it).
 */

export interface RouterRun {
  readonly opts: CliOptions;
  readonly router: ToolRouter;
  readonly pins: ToolPins;
  readonly policy: CallPolicy;
  /** Servers in the config, ready or not: the `tools` summary counts them. */
  readonly serverCount: number;
  readonly out: (s: string) => void;
  readonly err: (s: string) => void;
}

export const ROUTER_COMMANDS: ReadonlyMap<string, (run: RouterRun) => Promise<number>> = new Map([
  ['tools', listTools],
  ['servers', listServers],
  ['select', selectLive],
  ['replay', replayLive],
  ['call', callTool],
]);

async function listTools({ opts, router, pins, serverCount, out, err }: RouterRun): Promise<number> {
  await router.whenSettled(opts.waitMs);
  reportUnready(router, err);
  reportHeldBack(router, pins, err);
  const tools = router.listTools();
  if (opts.json) {
    out(`${JSON.stringify(tools.map((t) => ({ name: t.name, server: t.server, originalName: t.originalName, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations, ...(t.schemaProblem ? { schemaProblem: t.schemaProblem } : {}) })), null, 2)}\n`);
  } else {
    for (const t of tools) out(`${t.name}${t.annotations.destructiveHint ? ' (destructive)' : ''}\n    ${t.description.split('\n')[0]?.slice(0, 160)}\n`);
    err(`${tools.length} tools from ${router.serverStatuses.filter((s) => s.state === 'ready').length} of ${serverCount} servers\n`);
  }
  return EXIT_CODES.ok;
}

async function listServers({ opts, router, out }: RouterRun): Promise<number> {
  await router.whenSettled(opts.waitMs);
  const statuses = router.serverStatuses;
  if (opts.json) out(`${JSON.stringify(statuses, null, 2)}\n`);
  else for (const s of statuses) out(`${s.name}: ${s.state}${s.transport ? ` (${[s.transport, s.protocol].filter(Boolean).join(', ')})` : ''}, ${s.toolCount} tools, ${s.restarts} restarts${s.reason ? `\n    ${s.reason}` : ''}\n`);
  return EXIT_CODES.ok;
}

async function selectLive({ opts, router, pins, policy, out, err }: RouterRun): Promise<number> {
  const prompt = opts.positional[0];
  if (!prompt) {
    err(`select needs a prompt.\n\n${USAGE}`);
    return EXIT_CODES.usage;
  }
  await router.whenSettled(opts.waitMs);
  reportUnready(router, err);
  reportHeldBack(router, pins, err);
  return await runSelect(prompt, router.listTools(), { ...selectOptions(opts), callPolicy: policy }, out, err);
}

async function replayLive({ opts, router, pins, out, err }: RouterRun): Promise<number> {
  await router.whenSettled(opts.waitMs);
  reportUnready(router, err);
  reportHeldBack(router, pins, err);
  try {
    return await runReplay(router.listTools(), replayOptions(opts), out, err);
  } catch (error) {
    err(`${describeError(error)}\n`);
    return EXIT_CODES.usage;
  }
}

/** Calls the named tool (main.ts checked that a name was given) and prints its envelope. */
async function callTool({ opts, router, policy, out, err }: RouterRun): Promise<number> {
  const name = opts.positional[0]!;
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
        ? notApproved(tool, decision.message)
        : await router.call(name, opts.args ?? '{}', opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {});
  }
  out(`${JSON.stringify(envelope, null, 2)}\n`);
  if (!envelope.ok) err(`${envelope.error.type}: ${envelope.error.message}\n`);
  return exitCodeFor(envelope);
}

function reportUnready(router: ToolRouter, err: (s: string) => void): void {
  for (const s of router.serverStatuses) if (s.state !== 'ready') err(`Server "${s.name}" ${describeState(s.state)}${s.reason ? `: ${s.reason}` : ''}\n`);
}

function reportHeldBack(router: ToolRouter, pins: ToolPins, err: (s: string) => void): void {
  for (const held of router.heldBackTools()) err(`${heldBackMessage(held, pins)}\n`);
}
