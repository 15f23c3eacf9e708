/**
 * `npm run bench:router`: the router's call overhead against a direct SDK client, measured side by side.
 *
 * Both sides call server-everything's `echo` over stdio, each through its own server process. Calls are
 * interleaved (direct, router, direct, router, …) so machine noise hits both sides alike. Then 100 calls
 * at once go through the router, in rounds, to measure throughput and check that no call is lost.
 * A third side calls the same echo through the HTTP gateway (the router's own streamable HTTP server on
 * 127.0.0.1, with its bearer token, as VS Code's agent mode and other clients reach it), with the SDK's
 * HTTP client, interleaved with the direct calls in the same way.
 * The last line is JSON: {"p50_ratio", "p95_ratio", "gateway_p50_ratio", "gateway_p95_ratio", "calls_per_s", "lost"}.
 */
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { HttpGateway, newGatewaySecret } from '../src/core/gateway/httpGateway';
import { CALL_TOOL_NAME, RouterGateway } from '../src/core/gateway/routerGateway';
import { LexicalRanker } from '../src/core/selection/lexicalRanker';
import { rankableFor } from '../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../src/core/selection/toolSelector';
import { parseMcpConfig } from '../src/core/config/mcpConfigParser';
import { percentile } from '../src/core/router/callStatistics';
import { ToolRouter } from '../src/core/router/toolRouter';

const EVERYTHING = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
/** Warm-up calls per side, discarded: JIT and pipe buffers settle within a few hundred calls. */
const WARMUP_CALLS = 300;
/** Measured calls per side; 3,000 gives a p95 from 150 tail samples. */
const MEASURED_CALLS = Number(process.env['BENCH_CALLS'] ?? 3000);
const CONCURRENCY = 100;
const CONCURRENT_ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 30);

async function main(): Promise<void> {
  const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));

  const parsed = await parseMcpConfig(
    JSON.stringify({ servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], router: { maxConcurrentCalls: CONCURRENCY } } } }),
    { file: 'bench' },
  );
  const router = new ToolRouter();
  await router.applyConfig(parsed.servers);
  await router.whenSettled(30_000);
  if (!router.getTool('everything_echo')) throw new Error('server-everything did not start under the router');

  // The gateway over the same router; selection plays no part in a call, so a keyword selector will do.
  const selector = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS }, { createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)) });
  const secret = newGatewaySecret();
  const http = new HttpGateway({ token: secret, createGateway: () => new RouterGateway(router, { selector }), rateBurst: 1e9, ratePerSecond: 1e9 });
  const url = await http.start();
  const viaGateway = new Client({ name: 'bench-gateway', version: '1.0.0' });
  await viaGateway.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));

  const callDirect = async (message: string): Promise<string> => {
    const r = (await direct.callTool({ name: 'echo', arguments: { message } })) as { content: Array<{ text?: string }> };
    return r.content[0]?.text ?? '';
  };
  const callRouter = async (message: string): Promise<string> => {
    const r = await router.call('everything_echo', { message });
    return r.ok ? String(r.content[0]?.['text'] ?? '') : `error: ${r.error.message}`;
  };

  const callGateway = async (message: string): Promise<string> => {
    const r = (await viaGateway.callTool({ name: CALL_TOOL_NAME, arguments: { name: 'everything_echo', arguments: { message } } })) as { content: Array<{ text?: string }> };
    const envelope = JSON.parse(r.content[0]?.text ?? '{}') as { content?: Array<{ text?: string }> };
    return envelope.content?.[0]?.text ?? '';
  };

  for (let i = 0; i < WARMUP_CALLS; i++) {
    await callDirect(`w${i}`);
    await callRouter(`w${i}`);
    await callGateway(`w${i}`);
  }

  const directMs: number[] = [];
  const routerMs: number[] = [];
  const gatewayMs: number[] = [];
  for (let i = 0; i < MEASURED_CALLS; i++) {
    // Rotate which side goes first so none always benefits from a warm cache.
    const order: Array<[() => Promise<string>, number[]]> = [[() => callDirect(`m${i}`), directMs], [() => callRouter(`m${i}`), routerMs], [() => callGateway(`m${i}`), gatewayMs]];
    for (let k = 0; k < i % 3; k++) order.push(order.shift()!);
    for (const [fn, sink] of order) {
      const t0 = performance.now();
      await fn();
      sink.push(performance.now() - t0);
    }
  }

  const d = { p50: percentile(directMs, 50), p95: percentile(directMs, 95) };
  const r = { p50: percentile(routerMs, 50), p95: percentile(routerMs, 95) };
  console.log(`sequential echo calls over stdio, ${MEASURED_CALLS} per side, interleaved`);
  console.log(`  direct SDK client   p50 ${d.p50.toFixed(3)} ms   p95 ${d.p95.toFixed(3)} ms`);
  console.log(`  through the router  p50 ${r.p50.toFixed(3)} ms   p95 ${r.p95.toFixed(3)} ms`);
  console.log(`  ratio               p50 ${(r.p50 / d.p50).toFixed(3)}      p95 ${(r.p95 / d.p95).toFixed(3)}`);
  const g = { p50: percentile(gatewayMs, 50), p95: percentile(gatewayMs, 95) };
  console.log(`  through the HTTP gateway (client → HTTP → router → stdio)   p50 ${g.p50.toFixed(3)} ms   p95 ${g.p95.toFixed(3)} ms`);
  console.log(`  ratio to direct     p50 ${(g.p50 / d.p50).toFixed(3)}      p95 ${(g.p95 / d.p95).toFixed(3)}`);

  const throughput = async (call: (m: string) => Promise<string>): Promise<{ perSecond: number; lost: number }> => {
    let lost = 0;
    const t0 = performance.now();
    for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
      const messages = Array.from({ length: CONCURRENCY }, (_, i) => `c${round}-${i}`);
      const results = await Promise.all(messages.map((m) => call(m).catch((e: unknown) => `error: ${String(e)}`)));
      results.forEach((text, i) => {
        if (text !== `Echo: ${messages[i]}`) lost++;
      });
    }
    const seconds = (performance.now() - t0) / 1000;
    return { perSecond: (CONCURRENT_ROUNDS * CONCURRENCY) / seconds, lost };
  };
  const directThroughput = await throughput(callDirect);
  const routerThroughput = await throughput(callRouter);
  console.log(`${CONCURRENCY} concurrent calls × ${CONCURRENT_ROUNDS} rounds`);
  console.log(`  direct SDK client   ${directThroughput.perSecond.toFixed(0)} calls/s   lost ${directThroughput.lost}`);
  console.log(`  through the router  ${routerThroughput.perSecond.toFixed(0)} calls/s   lost ${routerThroughput.lost}   (ratio ${(routerThroughput.perSecond / directThroughput.perSecond).toFixed(3)})`);

  await direct.close();
  await viaGateway.close();
  await http.close();
  await router.dispose();
  console.log(
    JSON.stringify({
      p50_ratio: round3(r.p50 / d.p50),
      p95_ratio: round3(r.p95 / d.p95),
      gateway_p50_ratio: round3(g.p50 / d.p50),
      gateway_p95_ratio: round3(g.p95 / d.p95),
      calls_per_s: Math.round(routerThroughput.perSecond),
      lost: routerThroughput.lost,
    }),
  );
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
