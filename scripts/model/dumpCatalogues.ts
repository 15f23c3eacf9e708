/**
 * Saves the tool lists of real MCP servers to test/fixtures/catalogues/NAME.json, so that the default
 * model's sanity test ranks real catalogues without starting servers. Each file records how it was made.
 *
 *   npx tsx scripts/model/dumpCatalogues.ts [NAME ...]
 *
 * server-everything, server-memory and server-filesystem come from node_modules; the Notion server is
 * not a dependency and is fetched with `npx -y @notionhq/notion-mcp-server@VERSION` (it lists its tools
 * without a token); so is @playwright/mcp (it lists its tools without starting a browser).
 *
 * The probe servers (catalogueSources/probeServers.ts) go to test/fixtures/catalogues/probe/NAME.json
 * instead: they are never trained on, only measured by `npm run eval:needs`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { REPO_ROOT } from './dataSets';
import { GENERAL_SOURCES } from './catalogueSources/generalServers';
import { NON_ENGLISH_SOURCES } from './catalogueSources/nonEnglishServers';
import { PROBE_SOURCES } from './catalogueSources/probeServers';
import { ROUND_FOUR_SOURCES } from './catalogueSources/roundFourServers';
import type { CatalogueSource } from './catalogueSources/sourceTypes';
import { describeError } from '../../src/core/errors/describeError';

const OUT_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'catalogues');
/** Probe catalogues are kept apart so that nothing that reads OUT_DIR trains on them. */
const PROBE_DIR = path.join(OUT_DIR, 'probe');
const outputFile = (name: string): string => path.join(name in PROBE_SOURCES ? PROBE_DIR : OUT_DIR, `${name}.json`);
const modulePath = (pkg: string): string => path.join(REPO_ROOT, 'node_modules', pkg, 'dist', 'index.js');

/** Pinned so that a refresh is a deliberate change: the fixture is compared with the model's rankings. */
const NOTION_SERVER_VERSION = '2.5.2';
const PLAYWRIGHT_SERVER_VERSION = '0.0.83';

const SOURCES: Record<string, CatalogueSource> = {
  everything: { command: process.execPath, args: [modulePath('@modelcontextprotocol/server-everything')], producedWith: '@modelcontextprotocol/server-everything (node_modules), stdio' },
  memory: { command: process.execPath, args: [modulePath('@modelcontextprotocol/server-memory')], producedWith: '@modelcontextprotocol/server-memory (node_modules), stdio' },
  filesystem: { command: process.execPath, args: [modulePath('@modelcontextprotocol/server-filesystem'), os.tmpdir()], producedWith: '@modelcontextprotocol/server-filesystem (node_modules), stdio, one allowed directory' },
  playwright: { command: 'npx', args: ['-y', `@playwright/mcp@${PLAYWRIGHT_SERVER_VERSION}`], producedWith: `npx -y @playwright/mcp@${PLAYWRIGHT_SERVER_VERSION} (Apache-2.0), stdio (tools/list starts no browser)` },
  notion: { command: 'npx', args: ['-y', `@notionhq/notion-mcp-server@${NOTION_SERVER_VERSION}`], producedWith: `npx -y @notionhq/notion-mcp-server@${NOTION_SERVER_VERSION} (MIT), stdio, no token (tools/list needs none)` },
  ...GENERAL_SOURCES,
  ...NON_ENGLISH_SOURCES,
  ...ROUND_FOUR_SOURCES,
  ...PROBE_SOURCES,
};

function packageVersion(source: CatalogueSource): string | undefined {
  // The pinned package is the last argument, or the last one before the server's own options.
  const pinned = [...source.args].reverse().map((arg) => /@(\d+\.\d+\.\d+)$/.exec(arg)).find((m) => m !== null);
  if (pinned) return pinned[1];
  const entry = source.args[0];
  if (!entry || !entry.includes('node_modules')) return undefined;
  const pkgJson = path.join(path.dirname(path.dirname(entry)), 'package.json');
  return fs.existsSync(pkgJson) ? (JSON.parse(fs.readFileSync(pkgJson, 'utf8')) as { version?: string }).version : undefined;
}

/** Processes started under `pid` (npx starts the server as a grandchild), read from /proc where there is one. */
function descendantsOf(pid: number): number[] {
  if (!fs.existsSync('/proc')) return [];
  const parentOf = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The field after the parenthesised command name is the state, then the parent's id.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended while the table was read.
    }
  }
  const out: number[] = [];
  for (let frontier = [pid]; frontier.length; ) {
    frontier = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    out.push(...frontier);
  }
  return out;
}

async function dump(name: string, source: CatalogueSource): Promise<void> {
  const env = source.env ? { ...(process.env as Record<string, string>), ...source.env } : undefined;
  const transport = new StdioClientTransport({ command: source.command, args: [...source.args], stderr: 'ignore', ...(env ? { env } : {}), ...(source.cwd ? { cwd: source.cwd } : {}) });
  const client = new Client({ name: 'mcp-tool-router-dump-catalogues', version: '0.1.0' });
  await client.connect(transport);
  try {
    const tools: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools.map((t) => ({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema })));
      cursor = page.nextCursor;
    } while (cursor);
    const server = client.getServerVersion();
    const file = outputFile(name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const note = `Produced by scripts/model/dumpCatalogues.ts from ${source.producedWith}; re-run it to refresh.`;
    fs.writeFileSync(file, `${JSON.stringify({ server: name, serverInfo: server ?? null, packageVersion: packageVersion(source) ?? null, note, tools }, null, 2)}\n`);
    process.stdout.write(`${name}: ${tools.length} tools → ${path.relative(REPO_ROOT, file)}\n`);
  } finally {
    // Some servers outlive their stdin (one keeps an HTTP file server open): end what this dump started.
    const started = transport.pid ? descendantsOf(transport.pid) : [];
    await client.close();
    for (const pid of started) {
      try {
        process.kill(pid);
      } catch {
        // Already gone.
      }
    }
  }
}

async function main(): Promise<void> {
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(SOURCES);
  for (const name of names) {
    const source = SOURCES[name];
    if (!source) throw new Error(`Unknown catalogue "${name}"; known: ${Object.keys(SOURCES).join(', ')}`);
    await dump(name, source);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${describeError(err)}\n`);
  process.exit(1);
});
