/** Faults of real server processes: crashes, hangs, garbage, bad results, hostile tool lists, floods, slow starts, HTTP faults. */
import { TOOL_NAME_PATTERN } from '../../src/core/router/naming';
import type { ToolRouter } from '../../src/core/router/toolRouter';
import { readLines, scripted, startEverythingHttp, tempDir } from '../integration/serverHarness';
import * as path from 'node:path';
import { startFaultyProxy } from './faultyHttpProxy';
import { HEALTHY, assertNeighbourHealthy, check, errorOf, errorType, sleep, startRouter, trackedCall } from './reliabilityHarness';

export interface ReliabilityCase {
  readonly name: string;
  /**
   * How many inputs the case tries, each counted as a case in the totals (default 1): the fuzz case's
   * 10,000 argument objects are 10,000 cases. A failed run counts all of them as failed.
   */
  readonly inputs?: number;
  readonly run: () => Promise<void>;
}

async function withRouter(servers: Record<string, unknown>, body: (router: ToolRouter) => Promise<void>, settle = true): Promise<void> {
  const router = await startRouter({ healthy: HEALTHY, ...servers }, {}, settle ? 20_000 : 0);
  try {
    await body(router);
    await assertNeighbourHealthy(router);
  } finally {
    await router.dispose();
  }
}

function namesServer(e: Awaited<ReturnType<typeof trackedCall>>, server: string): void {
  check(e && !e.ok, `expected an error envelope, got ${errorOf(e)}`);
  check(e.error.message.includes(`"${server}"`), `the error does not name server "${server}": ${e.error.message}`);
}

export const faultCases: ReliabilityCase[] = [
  {
    name: 'crash before a call: exits at once, backoff then failed',
    run: () => {
      const marker = path.join(tempDir('rel'), 'marker');
      return withRouter({ faulty: scripted(['--exit-at-once', '--marker', marker]) }, async (router) => {
        const conn = router.getConnection('faulty')!;
        const deadline = Date.now() + 15_000;
        while (conn.currentState !== 'failed' && Date.now() < deadline) await sleep(50);
        const status = conn.status;
        check(status.state === 'failed', `state is ${status.state}, not failed`);
        check(/exit code 3/.test(status.reason ?? '') && /gave up after 8 failed starts/.test(status.reason ?? ''), `reason does not say why: ${status.reason}`);
        const starts = readLines(marker).filter((l) => l.startsWith('started')).length;
        // One more: the first start's exit might have been an exit on the protocol probe, so it is started once more as 2025-11-25.
        check(starts === 9, `expected 9 starts (MAX_CONSECUTIVE_FAILURES, plus one without the probe), saw ${starts}`);
        namesServer(await trackedCall(router, 'faulty_echo', { message: 'x' }, 5_000), 'faulty');
      });
    },
  },
  {
    name: 'crash just before a call (killed from outside)',
    run: () =>
      withRouter({ faulty: scripted() }, async (router) => {
        const pid = router.getConnection('faulty')!.status.pid;
        check(pid !== undefined, 'no pid');
        process.kill(pid, 'SIGKILL');
        const e = await trackedCall(router, 'faulty_echo', { message: 'x' }, 15_000);
        check(e !== undefined, 'the call was lost');
        if (!e.ok) namesServer(e, 'faulty');
        const conn = router.getConnection('faulty')!;
        const deadline = Date.now() + 10_000;
        while (conn.status.restarts < 1 && Date.now() < deadline) await sleep(25);
        check(conn.status.restarts >= 1 && (await conn.whenReady(10_000)), 'the server was not restarted');
        const again = await trackedCall(router, 'faulty_echo', { message: 'y' }, 10_000);
        check(again?.ok, `after the restart: ${errorOf(again)}`);
      }),
  },
  {
    name: 'crash during a call: SERVER_RESTARTED, then restarted',
    run: () =>
      withRouter({ faulty: scripted([], { maxConcurrentCalls: 8 }) }, async (router) => {
        const pending = [trackedCall(router, 'faulty_hang', {}, 15_000), trackedCall(router, 'faulty_sleep', { ms: 60_000 }, 15_000)];
        const crash = await trackedCall(router, 'faulty_crash', {}, 15_000);
        const all = [crash, ...(await Promise.all(pending))];
        for (const e of all) {
          namesServer(e, 'faulty');
          check(errorType(e) === 'SERVER_RESTARTED', `expected SERVER_RESTARTED, got ${errorOf(e)}`);
        }
        check(await router.getConnection('faulty')!.whenReady(10_000), 'not restarted');
        check((await trackedCall(router, 'faulty_echo', { message: 'a' }, 10_000))?.ok, 'echo after restart failed');
      }),
  },
  {
    name: 'crash after a call (between calls)',
    run: () =>
      withRouter({ faulty: scripted(['--exit-after-call']) }, async (router) => {
        const first = await trackedCall(router, 'faulty_echo', { message: 'a' }, 10_000);
        check(first?.ok, `first call: ${errorOf(first)}`);
        const conn = router.getConnection('faulty')!;
        const deadline = Date.now() + 10_000;
        while (conn.status.restarts < 1 && Date.now() < deadline) await sleep(25);
        check(conn.status.restarts >= 1, 'the exit was not noticed');
        check(await conn.whenReady(10_000), 'not ready again');
        const second = await trackedCall(router, 'faulty_echo', { message: 'b' }, 10_000);
        check(second?.ok, `second call: ${errorOf(second)}`);
      }),
  },
  {
    name: 'hangs without answering: every queued call times out naming the server',
    run: () =>
      withRouter({ faulty: scripted([], { maxConcurrentCalls: 2, callTimeoutMs: 600 }) }, async (router) => {
        const calls = await Promise.all(Array.from({ length: 6 }, () => trackedCall(router, 'faulty_hang', {}, 10_000)));
        for (const e of calls) {
          namesServer(e, 'faulty');
          check(errorType(e) === 'TIMEOUT', `expected TIMEOUT, got ${errorOf(e)}`);
        }
        check((await trackedCall(router, 'faulty_echo', { message: 'a' }, 5_000))?.ok, 'the server is not usable after timeouts');
      }),
  },
  {
    name: 'writes garbage to stdout: skipped and logged',
    run: () =>
      withRouter({ faulty: scripted(['--garbage']) }, async (router) => {
        const e = await trackedCall(router, 'faulty_echo', { message: 'through garbage' }, 10_000);
        check(e?.ok, errorOf(e));
        check(router.getConnection('faulty')!.log.text().includes('ignored non-JSON-RPC output'), 'garbage not logged');
      }),
  },
  {
    name: 'oversized result: cut to the cap and said so',
    run: () =>
      withRouter({ faulty: scripted([], { maxResponseBytes: 4096 }) }, async (router) => {
        const e = await trackedCall(router, 'faulty_big', { bytes: 5_000_000 }, 20_000);
        check(e?.ok, errorOf(e));
        check(e.meta.truncated?.originalBytes !== undefined && e.meta.truncated.originalBytes > 5_000_000, 'meta.truncated missing');
        check(e.meta.bytes <= 4096, `result is ${e.meta.bytes} bytes, above the 4096 cap`);
      }),
  },
  {
    name: 'invalid result shape: INVALID_RESULT',
    run: () =>
      withRouter({ faulty: scripted(['--bad-result']) }, async (router) => {
        const e = await trackedCall(router, 'faulty_bad_result', {}, 10_000);
        namesServer(e, 'faulty');
        check(errorType(e) === 'INVALID_RESULT', errorOf(e));
      }),
  },
  {
    name: 'hostile tool list: duplicate/invalid names, invalid schemas fail closed',
    run: () => {
      const marker = path.join(tempDir('rel'), 'marker');
      return withRouter({ faulty: scripted(['--hostile-tools', '--marker', marker]) }, async (router) => {
        const tools = router.listTools().filter((t) => t.server === 'faulty');
        const lower = new Set(router.listTools().map((t) => t.name.toLowerCase()));
        check(lower.size === router.listTools().length, 'exposed names are not unique');
        for (const t of tools) check(TOOL_NAME_PATTERN.test(t.name), `name ${JSON.stringify(t.name)} breaks the provider pattern`);
        check(tools.filter((t) => t.originalName === 'echo').length === 1, 'duplicate echo exposed twice');
        check(!tools.some((t) => t.originalName === '' || t.originalName.length === 1000), 'empty or 1000-char name exposed');
        const log = router.getConnection('faulty')!.log.text();
        check(/skipped an invalid tool/.test(log), 'skipped tools not logged');
        const expected: Record<string, RegExp> = {
          remote_ref: /remote/,
          ref_cycle: /\$ref|recurs|cycle|call stack/i,
          root_ref: /\$ref|recurs|cycle/i,
          huge_enum: /enum/,
          bad_regex: /regular expression|pattern/i,
          redos_regex: /nested quantifier/,
          not_object_schema: /string, not an object/,
        };
        for (const [tool, reason] of Object.entries(expected)) {
          const t = tools.find((x) => x.originalName === tool);
          check(t, `${tool} missing from the catalogue`);
          check(t.schemaProblem && reason.test(t.schemaProblem), `${tool}: schema problem ${JSON.stringify(t.schemaProblem)} does not match ${reason}`);
          const e = await trackedCall(router, t.name, { a: `${'a'.repeat(40)}!` }, 5_000);
          check(e && !e.ok && e.error.type === 'SCHEMA_UNAVAILABLE', `${tool}: ${errorOf(e)}`);
        }
        const called = readLines(marker).filter((l) => l.startsWith('call '));
        check(called.length === 0, `the server was called for fail-closed tools: ${called.join(', ')}`);
      });
    },
  },
  {
    name: 'floods 10,000 list_changed + 10,000 log notifications: stays responsive',
    inputs: 20_000,
    run: () =>
      withRouter({ faulty: scripted() }, async (router) => {
        let maxLag = 0;
        let last = performance.now();
        const ticker = setInterval(() => {
          const now = performance.now();
          maxLag = Math.max(maxLag, now - last - 10);
          last = now;
        }, 10);
        try {
          const flood = trackedCall(router, 'faulty_flood', { count: 10_000 }, 30_000);
          const neighbours = await Promise.all(Array.from({ length: 20 }, (_, i) => trackedCall(router, 'healthy_echo', { message: `n${i}` }, 10_000)));
          check(neighbours.every((e) => e?.ok), 'the healthy server did not answer during the flood');
          const e = await flood;
          check(e?.ok, `flood call: ${errorOf(e)}`);
          // The call must be answered within its budget; how fast is printed, not tested: it took 1.5–2.0 s on a
          // 2-core machine. The wait is the flooding server's own: a plain SDK client, no router, waits as long.
          const after = performance.now();
          const echo = await trackedCall(router, 'faulty_echo', { message: 'after flood' }, 10_000);
          console.log(`       (echo after the flood answered in ${Math.round(performance.now() - after)} ms)`);
          check(echo?.ok, `echo after the flood: ${errorOf(echo)}`);
        } finally {
          clearInterval(ticker);
        }
        check(maxLag < 1_000, `the event loop stalled for ${Math.round(maxLag)} ms`);
      }),
  },
  {
    name: 'slow to start: a call waits for it',
    run: () =>
      withRouter(
        { faulty: scripted(['--slow-start', '1500']) },
        async (router) => {
          const e = await trackedCall(router, 'faulty_echo', { message: 'patient' }, 15_000);
          check(e !== undefined, 'lost');
          // The tool is not in the catalogue until the server is up; the caller waits for it as the CLI does.
          if (!e.ok) {
            check(e.error.type === 'UNKNOWN_TOOL', errorOf(e));
            check(await router.waitForTool('faulty_echo', 10_000), 'the slow server never listed its tools');
            const again = await trackedCall(router, 'faulty_echo', { message: 'patient' }, 10_000);
            check(again?.ok, errorOf(again));
          }
        },
        false,
      ),
  },
  {
    name: 'slower than startupTimeoutMs: restarting with a reason',
    run: () =>
      withRouter({ faulty: scripted(['--slow-start', '5000'], { startupTimeoutMs: 400 }) }, async (router) => {
        const status = router.getConnection('faulty')!.status;
        check(status.state === 'restarting' || status.state === 'failed', `state ${status.state}`);
        check(/startupTimeoutMs|initialize/.test(status.reason ?? ''), `reason: ${status.reason}`);
      }),
  },
  {
    name: 'HTTP server answers 500: error names the server, recovers',
    run: async () => {
      const upstream = await startEverythingHttp('streamableHttp');
      const proxy = await startFaultyProxy(upstream.url);
      try {
        await withRouter({ remote: { type: 'http', url: proxy.url, router: { callTimeoutMs: 5_000 } } }, async (router) => {
          check((await trackedCall(router, 'remote_echo', { message: 'a' }, 10_000))?.ok, 'the proxied server did not work before the fault');
          proxy.mode = 'status500';
          const e = await trackedCall(router, 'remote_echo', { message: 'b' }, 15_000);
          namesServer(e, 'remote');
          check(proxy.faults > 0, 'no fault was injected');
          proxy.mode = 'pass';
          const conn = router.getConnection('remote')!;
          const deadline = Date.now() + 15_000;
          let ok = false;
          while (!ok && Date.now() < deadline) {
            await conn.whenReady(2_000);
            ok = (await trackedCall(router, 'remote_echo', { message: 'c' }, 10_000))?.ok === true;
            if (!ok) await sleep(100);
          }
          check(ok, 'the remote server did not recover after the 500s stopped');
        });
      } finally {
        await proxy.close();
        await upstream.stop();
      }
    },
  },
  {
    // The SDK loses a POST response stream that breaks without an event id; the router ends such a call
    // itself after a short grace period (STREAM_RESUME_GRACE_MS) with an error that says what happened.
    name: 'HTTP connection dropped mid-stream: call ends at once with "dropped", next call works',
    run: async () => {
      const upstream = await startEverythingHttp('streamableHttp');
      const proxy = await startFaultyProxy(upstream.url);
      try {
        await withRouter({ remote: { type: 'http', url: proxy.url, router: { callTimeoutMs: 30_000 } } }, async (router) => {
          proxy.mode = 'dropCallMidStream';
          const started = Date.now();
          const e = await trackedCall(router, 'remote_echo', { message: 'b' }, 35_000);
          namesServer(e, 'remote');
          check(proxy.faults > 0, 'no fault was injected');
          const tookMs = Date.now() - started;
          check(tookMs < 10_000, `the dropped call took ${tookMs} ms; it should end soon after the drop, not at its 30,000 ms timeout`);
          check(e?.ok === false && e.error.type === 'SERVER_RESTARTED' && /dropped while "echo" was running/.test(e.error.message), `the error should say the connection dropped: ${errorOf(e)}`);
          check(/SSE stream disconnected|terminated/.test(router.getConnection('remote')!.log.text()), 'the dropped stream was not logged');
          proxy.mode = 'pass';
          const deadline = Date.now() + 15_000;
          let ok = false;
          while (!ok && Date.now() < deadline) {
            await router.getConnection('remote')!.whenReady(2_000);
            ok = (await trackedCall(router, 'remote_echo', { message: 'c' }, 10_000))?.ok === true;
            if (!ok) await sleep(100);
          }
          check(ok, `no recovery after the drop (the dropped call took ${tookMs} ms: ${errorOf(e)})`);
        });
      } finally {
        await proxy.close();
        await upstream.stop();
      }
    },
  },
];
