/** Secrets never reach the core's outputs; the embedding cache survives a kill mid-write. */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { parseMcpConfig } from '../../src/core/config/mcpConfigParser';
import { formatConfigIssue } from '../../src/core/config/serverConfig';
import { EmbeddingCache } from '../../src/core/embedding/embeddingCache';
import { ToolRouter } from '../../src/core/router/toolRouter';
import { REPO_ROOT, SCRIPTED, TEST_BACKOFF_MS, freePort, tempDir } from '../integration/serverHarness';
import { CACHE_TEST_MODEL, expectedVector } from './cacheVectors';
import type { ReliabilityCase } from './faultCases';
import { check, sleep, trackedCall } from './reliabilityHarness';

const SECRET = 'sk-PLANTED-7f3a9c1e2b';
const ENV_SECRET = 'envtok-PLANTED-44d1a0';
const HEADER_SECRET = 'hdr-PLANTED-b81c55';

export const secretCases: ReliabilityCase[] = [
  {
    name: 'planted secrets: input, API_TOKEN env, Authorization header: 0 hits in any output',
    run: async () => {
      const outputs: string[] = [];
      const port = await freePort(); // nothing listens: the HTTP server fails to connect
      const config = {
        inputs: [{ id: 'token', type: 'promptString', password: true, description: 'token' }],
        servers: {
          withsecret: { command: process.execPath, args: [SCRIPTED, `--api-key=${'${input:token}'}`], env: { API_TOKEN: ENV_SECRET, OTHER: '${input:token}' } },
          remote: { type: 'http', url: `http://127.0.0.1:${port}/mcp?token=${SECRET}`, headers: { Authorization: `Bearer ${HEADER_SECRET}` }, router: { startupTimeoutMs: 2000 } },
          broken: { type: 'http', url: `htp:/x?key=${SECRET}`, headers: { Authorization: `Bearer ${HEADER_SECRET}` } },
        },
      };
      const parsed = await parseMcpConfig(JSON.stringify(config), { file: '/tmp/secret.json', workspaceFolder: REPO_ROOT, resolveInput: async () => SECRET });
      outputs.push(...parsed.issues.map(formatConfigIssue));
      const router = new ToolRouter({ backoffMs: TEST_BACKOFF_MS, onLog: (server, line) => outputs.push(`${server}: ${line}`) });
      try {
        await router.applyConfig(parsed.servers);
        await router.whenSettled(15_000);
        for (const [name, args] of [['withsecret_echo', { message: 'hi' }], ['withsecret_fail', {}], ['withsecret_echo', { wrong: 1 }], ['remote_echo', {}], ['withsecret_hang', {}]] as const) {
          const e = await trackedCall(router, name, args, 10_000, 500);
          outputs.push(JSON.stringify(e ?? 'lost'));
        }
        await trackedCall(router, 'withsecret_crash', {}, 10_000);
        await router.getConnection('withsecret')?.whenReady(5_000);
        for (const s of router.serverStatuses) outputs.push(JSON.stringify(s));
        for (const name of ['withsecret', 'remote']) outputs.push(router.getConnection(name)?.log.text() ?? '');
        outputs.push(JSON.stringify(router.listTools()));
      } finally {
        await router.dispose();
      }
      const cacheDir = tempDir('secret-cache');
      const cache = new EmbeddingCache(cacheDir);
      await cache.put('model', [`a tool that uses ${SECRET}`], [new Float32Array([1, 2, 3])]);
      await cache.flush();
      for (const f of readdirSync(cacheDir)) outputs.push(readFileSync(path.join(cacheDir, f)).toString('latin1'));
      check(outputs.length > 10, 'too little output collected to prove anything');
      const all = outputs.join('\n');
      const hits = [SECRET, ENV_SECRET, HEADER_SECRET].flatMap((s) => outputs.filter((o) => o.includes(s)).map((o) => `${s} in: ${o.slice(0, 160)}`));
      check(all.includes('withsecret') && hits.length === 0, `${hits.length} outputs hold a planted secret:\n      ${hits.slice(0, 5).join('\n      ')}`);
    },
  },
];

export const cacheCases: ReliabilityCase[] = [
  {
    name: 'embedding cache: writer SIGKILLed mid-write, next load consistent',
    run: async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        const dir = tempDir('cache-kill');
        const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'cacheWriterChild.ts'), dir], { stdio: ['ignore', 'pipe', 'pipe'], cwd: REPO_ROOT });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        await new Promise<void>((resolve, reject) => {
          child.stdout.once('data', () => resolve());
          child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before its first flush: ${err}`)));
        });
        await sleep(50 + attempt * 97);
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
        const cache = new EmbeddingCache(dir);
        const texts = Array.from({ length: 500 }, (_, i) => `tool text 0-${i}`);
        const got = await cache.get(CACHE_TEST_MODEL, texts);
        let present = 0;
        got.forEach((v, i) => {
          if (!v) return;
          present++;
          const want = expectedVector(texts[i]!);
          check(v.length === want.length && v.every((x, j) => x === want[j]), `entry ${i} came back as garbage after the kill`);
        });
        check(present === 0 || present === 500, `a partial round came back: ${present} of 500`);
        await cache.put(CACHE_TEST_MODEL, ['after'], [expectedVector('after')]);
        await cache.flush();
        const reread = await new EmbeddingCache(dir).get(CACHE_TEST_MODEL, ['after']);
        check(reread[0]?.[0] === expectedVector('after')[0], 'the cache could not be written again after the kill');
      }
    },
  },
];
