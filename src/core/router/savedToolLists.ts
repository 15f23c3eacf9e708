/**
 * The tool lists of the last session, kept so selection can rank while servers are still starting. A
 * saved tool is only ever ranked: it is never called, offered to a model or listed to a client, since
 * those read the router's live catalogue, which never holds one. A server's list is used only while that
 * server is starting under the same launch and tool filters it had when the list was saved.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { ServerDefinition } from '../config/serverConfig';
import { toServerTool, type ServerTool } from '../connection/serverTool';
import { serverPinKey } from '../security/toolPins';
import { canonicalJson } from '../util/canonicalJson';
import { writeFileAtomic } from '../util/atomicWrite';
import { isRecord } from '../util/isRecord';
import { describeError } from '../errors/describeError';
import { routedTool, type RoutedTool } from './routedTool';

/** The folder of saved lists, one file per workspace, in the extension's global storage. */
export const SAVED_TOOL_LISTS_FOLDER = 'tool-lists';
/** The newest files this many are kept; older workspaces' lists are removed when one is saved. */
export const MAX_SAVED_WORKSPACES = 20;
const FORMAT = 'mcp-tool-router/tool-lists';
const VERSION = 1;
/** A larger file is not ours: thousands of real tools stay far below it. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

/** One server's tools as last listed, under the exposed names they had then. */
export interface SavedServerTools {
  /** {@link savedListKey} of the server's definition when the list was saved. */
  readonly key: string;
  readonly tools: ReadonlyArray<{ readonly name: string; readonly tool: ServerTool }>;
}

/**
 * What must not have changed for a saved list to stand for a server: its name and launch as tool pins
 * key them (no environment values or headers, which may be secrets), and its tool filters.
 */
export function savedListKey(def: Pick<ServerDefinition, 'name' | 'launch' | 'options'>): string {
  const filters = { allowed: def.options.toolsAllowed, denied: def.options.toolsDenied };
  return createHash('sha256').update(canonicalJson({ server: serverPinKey(def), filters })).digest('hex');
}

/** The saved tools of every server in `starting` whose key is unchanged, as the router would expose them. */
export function savedToolsFor(saved: ReadonlyMap<string, SavedServerTools>, starting: ReadonlyArray<Pick<ServerDefinition, 'name' | 'launch' | 'options'>>): RoutedTool[] {
  const out: RoutedTool[] = [];
  for (const def of starting) {
    const list = saved.get(def.name);
    if (!list || list.key !== savedListKey(def)) continue;
    for (const { name, tool } of list.tools) out.push(routedTool(name, def.name, tool, undefined));
  }
  return out;
}

/** The live tools of `servers` grouped for saving, with each server's key. */
export function listsToSave(tools: readonly RoutedTool[], servers: ReadonlyArray<Pick<ServerDefinition, 'name' | 'launch' | 'options'>>): Map<string, SavedServerTools> {
  const out = new Map<string, SavedServerTools>();
  for (const def of servers) {
    const own = tools.filter((t) => t.server === def.name).map((t) => ({ name: t.name, tool: serverToolOf(t) }));
    out.set(def.name, { key: savedListKey(def), tools: own });
  }
  return out;
}

function serverToolOf(t: RoutedTool): ServerTool {
  return {
    name: t.originalName,
    ...(t.title !== undefined ? { title: t.title } : {}),
    description: t.originalDescription,
    inputSchema: t.inputSchema,
    annotations: t.annotations,
  };
}

/**
 * The file of one workspace's lists in `folder`, named by a digest of its folders' paths, so the same
 * folders find it again whatever window, port or remote authority opens them.
 */
export function savedListsFile(folder: string, workspaceFolders: readonly string[]): string {
  const id = createHash('sha256').update(canonicalJson([...workspaceFolders].sort())).digest('hex').slice(0, 32);
  return path.join(folder, `${id}.json`);
}

/** Reads and writes the saved lists: one JSON file, written whole through a rename. */
export class SavedToolLists {
  constructor(readonly file: string, private readonly log: (message: string) => void = () => undefined) {}

  /** The saved lists; none when there is no file, and none (said once in the log) when it cannot be read. */
  async load(): Promise<Map<string, SavedServerTools>> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.log(`The saved tool lists in ${this.file} could not be read (${describeError(error)}); selection waits for the servers instead. They are written again once the servers have listed their tools.`);
      return new Map();
    }
    try {
      if (text.length > MAX_FILE_BYTES) throw new Error(`it is ${text.length} bytes, more than ${MAX_FILE_BYTES}`);
      return parseSavedLists(JSON.parse(text));
    } catch (error) {
      this.log(`The saved tool lists in ${this.file} were not used (${describeError(error)}); selection waits for the servers instead. The file is written again once the servers have listed their tools.`);
      return new Map();
    }
  }

  async save(lists: ReadonlyMap<string, SavedServerTools>): Promise<void> {
    const servers = Object.fromEntries([...lists].map(([name, l]) => [name, { key: l.key, tools: l.tools.map(({ name, tool }) => ({ ...tool, exposedName: name })) }]));
    await mkdir(path.dirname(this.file), { recursive: true });
    await writeFileAtomic(this.file, JSON.stringify({ format: FORMAT, version: VERSION, servers }), { mode: 0o600 });
    await this.prune();
  }

  /** Removes all but the MAX_SAVED_WORKSPACES newest files beside this one; a file that cannot go stays. */
  private async prune(): Promise<void> {
    const folder = path.dirname(this.file);
    const names = (await readdir(folder).catch(() => [] as string[])).filter((n) => /^[0-9a-f]{32}\.json$/.test(n));
    if (names.length <= MAX_SAVED_WORKSPACES) return;
    const dated = await Promise.all(names.map(async (n) => ({ file: path.join(folder, n), at: (await stat(path.join(folder, n)).catch(() => undefined))?.mtimeMs ?? 0 })));
    dated.sort((a, b) => b.at - a.at);
    for (const { file } of dated.slice(MAX_SAVED_WORKSPACES)) if (file !== this.file) await rm(file, { force: true }).catch(() => undefined);
  }
}

/** Checks a parsed file; throws naming the first thing that is wrong. Tools are checked as a server's would be. */
export function parseSavedLists(value: unknown): Map<string, SavedServerTools> {
  if (!isRecord(value) || value['format'] !== FORMAT) throw new Error(`it is not a saved tool list file (no "format": "${FORMAT}")`);
  if (value['version'] !== VERSION) throw new Error(`it has version ${JSON.stringify(value['version'])}, and this version of the router reads version ${VERSION}`);
  const servers = value['servers'];
  if (!isRecord(servers)) throw new Error('"servers" is not an object');
  const out = new Map<string, SavedServerTools>();
  for (const [server, list] of Object.entries(servers)) {
    if (!isRecord(list) || typeof list['key'] !== 'string' || !Array.isArray(list['tools'])) throw new Error(`servers["${server}"] needs a "key" string and a "tools" array`);
    const tools = list['tools'].map((raw: unknown, i: number) => {
      const tool = toServerTool(raw);
      if (typeof tool === 'string') throw new Error(`servers["${server}"].tools[${i}]: ${tool}`);
      const exposed = (raw as Record<string, unknown>)['exposedName'];
      if (typeof exposed !== 'string' || exposed.length === 0) throw new Error(`servers["${server}"].tools[${i}] needs an "exposedName" string`);
      return { name: exposed, tool };
    });
    out.set(server, { key: list['key'], tools });
  }
  return out;
}

/**
 * The catalogue selection ranks: the live tools, and the saved tools of servers still starting (those
 * the live list does not have already). `saved` names the saved ones, which no caller may use as live.
 */
export function withSavedTools(live: readonly RoutedTool[], starting: ReadonlyArray<Pick<ServerDefinition, 'name' | 'launch' | 'options'>>, saved: ReadonlyMap<string, SavedServerTools>): { tools: RoutedTool[]; saved: Set<string> } {
  const liveNames = new Set(live.map((t) => t.name));
  const extra = savedToolsFor(saved, starting).filter((t) => !liveNames.has(t.name));
  return { tools: [...live, ...extra], saved: new Set(extra.map((t) => t.name)) };
}

/**
 * A digest of what selection reads of each tool (selectionTypes.ts SelectableTool): when the live list
 * gives the same as the saved one, selection's catalogue need not be built again.
 */
export function selectionDigest(tools: readonly RoutedTool[]): string {
  const hash = createHash('sha256');
  for (const t of tools) hash.update(canonicalJson([t.name, t.server, t.originalName, t.description, t.inputSchema ?? null, t.annotations])).update('\n');
  return hash.digest('hex');
}
