// The router as the client under test in the MCP conformance suite's client scenarios. The suite runs
// `node scripts/conformance/client.mjs <server-url>` with MCP_CONFORMANCE_SCENARIO (and, for some
// scenarios, MCP_CONFORMANCE_CONTEXT) set. This script does what a user of the CLI would do against such a
// server: write an mcp.json naming it (with a pre-registered OAuth client when the scenario gives one),
// and run `mcp-tool-router call` on the scenario's tools in turn, or `tools` when a scenario has nothing to
// call. The CLI finds out by itself which protocol revision the server speaks.
// Sign-in pages are "opened" by follow.mjs, which loads the URL and follows its redirect to the router's
// loopback listener, as a browser would after the user approved.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.resolve(here, '..', '..', 'dist', 'cli.js');
const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};

/** The tool each scenario's server offers, and the arguments a user would give it. */
const CALLS = {
  tools_call: [['add_numbers', { a: 5, b: 3 }]],
  'elicitation-sep1034-client-defaults': [['test_client_elicitation_defaults', {}]],
  'sse-retry': [['test_reconnection', {}]],
  // valid_tool requires its x-mcp-header argument `region`; the router refuses a call without it, as it should.
  'http-invalid-tool-headers': [['valid_tool', { region: 'us-east1' }]],
  'sep-2322-client-request-state': ['test_mrtr_echo_state', 'test_mrtr_unrelated', 'test_mrtr_no_state', 'test_mrtr_no_result_type'].map((t) => [t, {}]),
  // The scenario names the calls it wants, with their arguments.
  'http-custom-headers': (context.toolCalls ?? []).map((c) => [c.name, c.arguments ?? {}]),
};
const calls = CALLS[scenario] ?? (scenario.startsWith('auth/') ? [['test-tool', {}]] : []);

const dir = mkdtempSync(path.join(os.tmpdir(), 'router-conformance-'));
// The suite's client ID metadata document scenario expects this published document URL as the client ID.
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';
const oauth = context.client_id
  ? { clientId: context.client_id, ...(context.client_secret ? { clientSecret: context.client_secret } : {}) }
  : scenario === 'auth/basic-cimd'
    ? { clientMetadataUrl: CIMD_URL }
    : undefined;
const config = path.join(dir, 'mcp.json');
writeFileSync(config, JSON.stringify({ servers: { s: { type: 'http', url, ...(oauth ? { router: { oauth } } : {}) } } }));

const common = ['--config', config, '--cache-dir', path.join(dir, 'cache'), '--embeddings', 'none', '--wait', '20000', '--browser', `${process.execPath} ${path.join(here, 'follow.mjs')}`, '--elicitation', 'accept-defaults'];
if (process.env.CONFORMANCE_VERBOSE) common.push('--verbose');
const cliRun = (args) => {
  const r = spawnSync(process.execPath, [cli, ...args, ...common], { encoding: 'utf8', timeout: 60_000 });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  return r;
};

let status = 0;
if (scenario === 'json-schema-2020-12-preservation') {
  // List the tools, then hand one tool's schema back to the server, as it was listed.
  const listed = cliRun(['tools', '--json']);
  const tools = listed.status === 0 ? JSON.parse(listed.stdout) : [];
  const schema = tools.find((t) => t.originalName === 'json_schema_2020_12_tool')?.inputSchema;
  status = listed.status ?? 1;
  if (schema) status = cliRun(['call', 's_json_schema_echo', '--args', JSON.stringify({ schema })]).status ?? 1;
} else if (calls.length === 0) {
  status = cliRun(['tools']).status ?? 1;
} else {
  for (const [tool, args] of calls) {
    const r = cliRun(['call', `s_${tool}`, '--args', JSON.stringify(args)]);
    if (status === 0) status = r.status ?? 1;
  }
}
process.exit(status);
