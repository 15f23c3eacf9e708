/**
 * Absurd arguments: nested 100,000 deep, larger than MAX_ARGUMENT_BYTES, more values than
 * MAX_ARGUMENT_NODES, cyclic. Each must end as INVALID_ARGUMENTS (not retryable) naming the limit, before
 * any server sees it, through the router and through the stdio gateway's raw JSON-RPC.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ServerConnection } from '../../src/core/connection/serverConnection';
import { MAX_ARGUMENT_BYTES, MAX_ARGUMENT_NODES } from '../../src/core/schema/argumentNormalizer';
import { EVERYTHING, REPO_ROOT, tempDir } from '../integration/serverHarness';
import type { ReliabilityCase } from './faultCases';
import { HEALTHY, check, errorOf, startRouter, trackedCall } from './reliabilityHarness';

const LEVELS = 100_000;

function nestedObject(levels: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

function nestedText(levels: number): string {
  return `${'{"a":'.repeat(levels)}"bottom"${'}'.repeat(levels)}`;
}

function cyclic(): Record<string, unknown> {
  const node: Record<string, unknown> = { message: 'loop' };
  node['self'] = node;
  return node;
}

/** Arguments for everything_echo and the limit its refusal must name. */
const ABSURD: ReadonlyArray<{ readonly label: string; readonly args: () => unknown; readonly limit: string }> = [
  { label: 'object 100,000 deep', args: () => ({ message: 'x', extra: nestedObject(LEVELS) }), limit: 'MAX_ARGUMENT_DEPTH' },
  { label: 'JSON string 100,000 deep', args: () => `{"message":"x","extra":${nestedText(LEVELS)}}`, limit: 'MAX_ARGUMENT_DEPTH' },
  { label: 'arrays 100,000 deep', args: () => `{"message":"x","extra":${'['.repeat(LEVELS)}${']'.repeat(LEVELS)}}`, limit: 'MAX_ARGUMENT_DEPTH' },
  { label: 'a cycle', args: cyclic, limit: 'MAX_ARGUMENT_DEPTH' },
  { label: 'one byte over MAX_ARGUMENT_BYTES (object)', args: () => ({ message: 'x'.repeat(MAX_ARGUMENT_BYTES - 14 + 1) }), limit: 'MAX_ARGUMENT_BYTES' },
  { label: 'over MAX_ARGUMENT_BYTES (string)', args: () => JSON.stringify({ message: '€'.repeat(MAX_ARGUMENT_BYTES / 2) }), limit: 'MAX_ARGUMENT_BYTES' },
  { label: 'MAX_ARGUMENT_NODES values', args: () => ({ message: 'x', extra: new Array<number>(MAX_ARGUMENT_NODES).fill(0) }), limit: 'MAX_ARGUMENT_NODES' },
  { label: 'a sparse array of 10^9', args: () => ({ message: 'x', extra: new Array(1e9) }), limit: 'MAX_ARGUMENT_NODES' },
];

/** One raw JSON-RPC exchange with `mcp-tool-router serve --dynamic` (direct tool calls too) over stdio, built as text so no client serialises it. */
async function throughStdioGateway(requests: readonly string[]): Promise<string[]> {
  const dir = tempDir('limits');
  const config = path.join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
  const tsx = path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');
  const child = spawn(process.execPath, [tsx, path.join(REPO_ROOT, 'src/cli/main.ts'), 'serve', '--config', config, '--embeddings', 'none', '--dynamic'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const answers = new Map<number, string>();
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const id = (JSON.parse(line) as { id?: number }).id;
      if (typeof id === 'number') answers.set(id, line);
    }
  });
  const answer = async (id: number): Promise<string> => {
    const deadline = Date.now() + 60_000;
    while (!answers.has(id)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the gateway did not answer request ${id}: ${stderr.slice(-1000)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return answers.get(id)!;
  };
  try {
    child.stdin.write('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"reliability","version":"1"}}}\n');
    await answer(0);
    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const out: string[] = [];
    for (const [i, request] of requests.entries()) {
      child.stdin.write(`{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":${request}}\n`);
      out.push(await answer(i + 1));
    }
    return out;
  } finally {
    // Closing stdin stops the gateway and its servers; the group is killed only if that hangs.
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin.end();
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** The text of a tools/call answer line, and whether it is an error result. */
function resultOf(line: string | undefined): { text: string; isError: boolean } {
  const result = (JSON.parse(line ?? '{}') as { result?: { content?: Array<{ text?: string }>; isError?: boolean } }).result;
  return { text: (result?.content ?? []).map((b) => b.text ?? '').join('\n'), isError: result?.isError === true };
}

export const argumentLimitCases: ReliabilityCase[] = [
  {
    name: `absurd arguments through the router: ${ABSURD.length} kinds refused as INVALID_ARGUMENTS, none reaching the server`,
    inputs: ABSURD.length,
    run: async () => {
      let calls = 0;
      // Read through a function: the check below would otherwise narrow the count to the literal 0.
      const reached = (): number => calls;
      const router = await startRouter(
        { everything: HEALTHY },
        {
          createConnection: (def, options) => {
            const conn = new ServerConnection(def, options);
            const original = conn.callTool.bind(conn);
            conn.callTool = (...args) => {
              calls++;
              return original(...args);
            };
            return conn;
          },
        },
      );
      try {
        for (const { label, args, limit } of ABSURD) {
          const e = await trackedCall(router, 'everything_echo', args(), 15_000);
          check(e && !e.ok && e.error.type === 'INVALID_ARGUMENTS' && !e.error.retryable, `${label}: ${errorOf(e)}`);
          check(e.error.message.includes(limit), `${label}: the refusal does not name ${limit}: ${e.error.message}`);
        }
        check(reached() === 0, `${reached()} absurd calls reached the server`);
        const fine = await trackedCall(router, 'everything_echo', { message: 'still fine' }, 15_000);
        check(fine?.ok === true && reached() === 1, `an ordinary call after them failed: ${errorOf(fine)}`);
      } finally {
        await router.dispose();
      }
    },
  },
  {
    name: 'absurd arguments through the stdio gateway: 100,000 deep, direct and through toolRouter_callTool',
    inputs: 2,
    run: async () => {
      const deep = nestedText(LEVELS);
      const [viaCallTool, direct, after] = await throughStdioGateway([
        `{"name":"toolRouter_callTool","arguments":{"name":"everything_echo","arguments":{"message":"x","extra":${deep}}}}`,
        `{"name":"everything_echo","arguments":{"message":"x","extra":${deep}}}`,
        '{"name":"toolRouter_callTool","arguments":{"name":"everything_echo","arguments":{"message":"still fine"}}}',
      ]);
      for (const [label, line] of [['toolRouter_callTool', viaCallTool], ['direct', direct]] as const) {
        const { text, isError } = resultOf(line);
        check(isError && text.startsWith('INVALID_ARGUMENTS') && text.includes('MAX_ARGUMENT_DEPTH'), `${label}: not refused as INVALID_ARGUMENTS naming MAX_ARGUMENT_DEPTH: ${line?.slice(0, 400)}`);
      }
      check(resultOf(after).text.includes('Echo: still fine'), `the gateway stopped serving after absurd arguments: ${after?.slice(0, 400)}`);
    },
  },
];
