/** Bad input: fuzzed arguments against real tool schemas, hostile configs and malformed webview messages. */
import Ajv from 'ajv';
import { parseMcpConfig } from '../../src/core/config/mcpConfigParser';
import { ServerConnection } from '../../src/core/connection/serverConnection';
import { ConnectionError } from '../../src/core/connection/serverConnection';
import { isWebviewMessage } from '../../src/webview/protocol';
import { scripted } from '../integration/serverHarness';
import type { ReliabilityCase } from './faultCases';
import { HEALTHY, check, startRouter, trackedCall } from './reliabilityHarness';

/** Tools whose real call has no side effect and ends fast; other tools are fuzzed but not sent on. */
const SENT_TO_SERVER = new Set(['echo', 'get-sum', 'get-annotated-message', 'get-structured-content', 'get-tiny-image', 'get-resource-reference', 'get-resource-links', 'fail']);
const FUZZ_CASES = 10_000;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fuzzValue(rand: () => number, depth: number): unknown {
  const pick = Math.floor(rand() * 16);
  switch (pick) {
    case 0: return NaN;
    case 1: return Infinity;
    case 2: return -Infinity;
    case 3: return 'x'.repeat(Math.floor(rand() * 200_000));
    case 4: return '\ud800lone\udfff';
    case 5: return null;
    case 6: return true;
    case 7: return Math.floor(rand() * 1e6) - 5e5;
    case 8: return rand() * 10;
    case 9: return String(Math.floor(rand() * 100));
    case 10: return depth < 3 ? [fuzzValue(rand, depth + 1), fuzzValue(rand, depth + 1)] : [];
    case 11: return deepNest(Math.floor(rand() * 2000));
    case 12: return JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}');
    case 13: return 'Chicago';
    case 14: return 'success';
    default: return 'hello';
  }
}

function deepNest(depth: number): unknown {
  let v: unknown = {};
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

function fuzzArgs(rand: () => number, schema: Record<string, unknown>): unknown {
  const properties = Object.keys((schema['properties'] as Record<string, unknown> | undefined) ?? {});
  const mode = rand();
  if (mode < 0.05) return fuzzValue(rand, 0); // not an object at all
  if (mode < 0.1) return JSON.stringify({ [properties[0] ?? 'x']: fuzzValue(rand, 0) }); // a JSON string
  const out: Record<string, unknown> = JSON.parse(rand() < 0.3 ? '{"__proto__": {"polluted": true}}' : '{}');
  for (const p of properties) if (rand() < 0.8) out[p] = fuzzValue(rand, 0);
  if (rand() < 0.3) out['extra_' + Math.floor(rand() * 10)] = fuzzValue(rand, 0);
  if (rand() < 0.1) Object.defineProperty(out, 'constructor', { value: { prototype: { polluted: true } }, enumerable: true });
  return out;
}

export const badInputCases: ReliabilityCase[] = [
  {
    name: `fuzz ${FUZZ_CASES.toLocaleString('en')} argument objects against real schemas`,
    inputs: FUZZ_CASES,
    run: async () => {
      const referee = new Ajv({ strict: false, allErrors: false, validateFormats: false });
      const refereeChecks = new Map<string, (v: unknown) => boolean>();
      let reached = 0;
      let invalidReached = 0;
      const router = await startRouter(
        { everything: HEALTHY, scripted: scripted() },
        {
          createConnection: (def, options) => {
            const conn = new ServerConnection(def, options);
            const original = conn.callTool.bind(conn);
            conn.callTool = async (tool, args, opts) => {
              reached++;
              const schema = conn.tools.find((t) => t.name === tool)?.inputSchema as Record<string, unknown> | undefined;
              const key = `${def.name}/${tool}`;
              let valid = refereeChecks.get(key);
              if (!valid) {
                const copy = { ...(schema ?? {}) };
                delete copy['$schema'];
                valid = referee.compile(copy);
                refereeChecks.set(key, valid);
              }
              if (!valid(args)) invalidReached++;
              if (!SENT_TO_SERVER.has(tool)) throw new ConnectionError('CANCELLED', `fuzz: "${tool}" is not sent on (side effects)`, false);
              return original(tool, args, opts);
            };
            return conn;
          },
        },
      );
      try {
        const tools = router.listTools().filter((t) => !t.schemaProblem);
        check(tools.length >= 15, `only ${tools.length} tools to fuzz`);
        const rand = mulberry32(20261122);
        const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort().join(',');
        let envelopes = 0;
        for (let i = 0; i < FUZZ_CASES; i++) {
          const tool = tools[Math.floor(rand() * tools.length)]!;
          const e = await trackedCall(router, tool.name, fuzzArgs(rand, tool.inputSchema as Record<string, unknown>), 15_000, 5_000);
          if (e) envelopes++;
        }
        const protoAfter = Object.getOwnPropertyNames(Object.prototype).sort().join(',');
        check(protoBefore === protoAfter && !('polluted' in {}), 'Object.prototype was polluted');
        check(envelopes === FUZZ_CASES, `${FUZZ_CASES - envelopes} fuzz calls ended without an envelope`);
        check(reached > 0, 'no fuzzed call reached a server: the fuzzer only produced invalid input');
        check(invalidReached === 0, `${invalidReached} of ${reached} calls reached a server with arguments its schema rejects`);
        console.log(`    fuzz: ${FUZZ_CASES} calls over ${tools.length} tools, ${reached} passed validation, ${invalidReached} invalid reached a server`);
      } finally {
        await router.dispose();
      }
    },
  },
  {
    name: 'hostile configs: missing command, bad URL, unknown fields, huge file',
    // missing command, bad URL, unknown fields, huge file, garbage
    inputs: 5,
    run: async () => {
      const parse = (text: string) => parseMcpConfig(text, { file: '/tmp/hostile.json', workspaceFolder: '/tmp' });
      const a = await parse(JSON.stringify({ servers: { nocmd: { type: 'stdio', args: ['x'] }, ok: { command: 'node' } } }));
      check(a.issues.some((i) => i.severity === 'error' && i.server === 'nocmd' && /command/.test(`${i.field} ${i.message}`)), 'missing command not reported');
      check(a.servers.map((s) => s.name).join() === 'ok', 'the good server did not survive');
      const b = await parse(JSON.stringify({ servers: { badurl: { type: 'http', url: 'htp:/nope' } } }));
      check(b.issues.some((i) => i.severity === 'error' && i.field === 'url'), 'bad URL not reported');
      const c = await parse(JSON.stringify({ servers: { s: { command: 'node', flavour: 'x', router: { speed: 11 } } } }));
      check(c.issues.filter((i) => i.severity === 'warning').length >= 2 && c.servers.length === 1, 'unknown fields not warned');
      const huge = await parse(`{"servers": {"s": {"command": "node", "args": ["${'a'.repeat(3 * 1024 * 1024)}"]}}}`);
      check(huge.servers.length === 0 && huge.issues.some((i) => i.severity === 'error' && /larger than/.test(i.message)), 'huge file not refused');
      const garbage = await parse('{"servers": [1, 2, {"__proto__": {"polluted": 1}}], ');
      check(garbage.servers.length === 0 && garbage.issues.length > 0 && !('polluted' in {}), 'garbage config not reported');
    },
  },
  {
    name: 'malformed webview messages: 2,000 random objects, none accepted unless valid',
    inputs: 2_000,
    run: async () => {
      const rand = mulberry32(7);
      const types = ['ready', 'explain', 'resume', 'resetCostWindow', 'selectTurn', 'showServerLog', 'nope', 'constructor', '__proto__'];
      let wronglyAccepted = 0;
      let accepted = 0;
      for (let i = 0; i < 2_000; i++) {
        const m: Record<string, unknown> = rand() < 0.1 ? JSON.parse('{"__proto__": {"type": "ready"}}') : {};
        if (rand() < 0.9) m['type'] = rand() < 0.8 ? types[Math.floor(rand() * types.length)] : fuzzValue(rand, 0);
        if (rand() < 0.5) m['prompt'] = fuzzValue(rand, 0);
        if (rand() < 0.5) m['id'] = rand() < 0.5 ? Math.floor(rand() * 5) : fuzzValue(rand, 0);
        if (rand() < 0.5) m['turn'] = fuzzValue(rand, 0);
        if (rand() < 0.5) m['server'] = fuzzValue(rand, 0);
        const candidate: unknown = rand() < 0.05 ? fuzzValue(rand, 0) : m;
        const ok = isWebviewMessage(candidate);
        if (ok) accepted++;
        if (ok && !independentlyValid(candidate)) wronglyAccepted++;
      }
      check(wronglyAccepted === 0, `${wronglyAccepted} invalid messages accepted`);
      check(accepted > 0, 'the generator never produced a valid message, so the check proves nothing');
    },
  },
];

/** The protocol written out again from its types, independently of the guards under test. */
function independentlyValid(m: unknown): boolean {
  if (typeof m !== 'object' || m === null || Array.isArray(m) || !Object.prototype.hasOwnProperty.call(m, 'type')) return false;
  const r = m as Record<string, unknown>;
  switch (r['type']) {
    case 'ready':
    case 'resume':
    case 'resetCostWindow':
      return true;
    case 'explain':
      return typeof r['id'] === 'number' && Number.isSafeInteger(r['id']) && r['id'] > 0 && typeof r['prompt'] === 'string' && r['prompt'].trim() !== '' && r['prompt'].length <= 10_000;
    case 'selectTurn':
      return typeof r['turn'] === 'number' && Number.isInteger(r['turn']) && r['turn'] >= 0;
    case 'showServerLog':
      return typeof r['server'] === 'string' && r['server'].length > 0 && r['server'].length <= 200;
    default:
      return false;
  }
}
