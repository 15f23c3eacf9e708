import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { applyEdits, modify, parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { PERMISSION_BITS, type AtomicWriteOptions, writeFileAtomicSync } from '../util/atomicWrite';
import { describeError } from '../errors/describeError';

/**
 * Taking servers over from VS Code, and giving them back.
 *
 * VS Code starts every server of an `mcp.json` itself; the router starts them too, so without this each
 * runs twice and agent mode still receives every tool. Taking over moves the servers (and the inputs they
 * use) into the router's own file beside it, `mcp-tool-router.json` (same format, read by the extension
 * and by the CLI), and leaves VS Code's file with no servers: VS Code then sees only the router, through
 * the extension's MCP server definition. A backup holds the exact bytes of both files as they were, so
 * giving back restores them byte for byte. Edits made in between are detected and reported, never lost
 * silently: the caller asks before overwriting them.
 *
 * The files' permissions and links are kept: a symbolic link is written through and stays a link, a
 * rewritten mcp.json keeps its mode, and the router's file and the backup, which then hold its servers
 * and their secrets, are readable by no one who could not read mcp.json.
 */

/** The router's own server file, beside `mcp.json`. */
export const ROUTER_CONFIG_NAME = 'mcp-tool-router.json';
/** The backup written by a take-over, beside `mcp.json`; giving back removes it. */
export const TAKE_OVER_BACKUP_NAME = 'mcp.json.tool-router-backup';
/** The UTF-8 byte order mark: Windows editors often start a file with it; JSON parsers refuse it, VS Code accepts it. */
const UTF8_BOM = '\uFEFF';

interface Backup {
  readonly version: 1;
  /** Base64 of the exact bytes before the take-over (null: the file did not exist). */
  readonly mcpJson: string;
  readonly routerFile: string | null;
  /** SHA-256 of what the take-over wrote, to notice edits made since. */
  readonly wroteMcpJson: string;
  readonly wroteRouterFile: string;
  readonly servers: readonly string[];
  /** Permission bits before the take-over (null: the file did not exist); absent in older backups. */
  readonly mcpJsonMode?: number;
  readonly routerFileMode?: number | null;
}

export interface TakeOverResult {
  readonly moved: readonly string[];
  readonly routerFile: string;
  readonly backup: string;
}

export interface GiveBackCheck {
  /** The files were edited after the take-over: giving back would replace those edits. */
  readonly editedSince: readonly string[];
  readonly servers: readonly string[];
}

export function routerConfigBeside(mcpJson: string): string {
  return path.join(path.dirname(mcpJson), ROUTER_CONFIG_NAME);
}

export function backupBeside(mcpJson: string): string {
  return path.join(path.dirname(mcpJson), TAKE_OVER_BACKUP_NAME);
}

/** Whether this mcp.json's servers were taken over (a backup exists). */
export function isTakenOver(mcpJson: string): boolean {
  return existsSync(backupBeside(mcpJson));
}

/** Server names an mcp.json (JSONC) defines, or an error naming what is wrong with it. */
export function serverNamesIn(text: string): string[] {
  const root = parseDocument(text, 'mcp.json');
  return Object.keys(serversOf(root));
}

/**
 * Moves every server of `mcpJson` into the router's file beside it and leaves `mcpJson` with an empty
 * `servers` object (comments and other keys kept). Throws, changing nothing, when a file cannot be read or
 * parsed, when the servers were already taken over, or when a server's name is already in the router's file.
 */
export function takeOver(mcpJson: string): TakeOverResult {
  const backupFile = backupBeside(mcpJson);
  if (existsSync(backupFile)) throw new Error(`The servers of ${mcpJson} were already taken over (${backupFile} exists). Give them back first.`);
  const original = readFileSync(mcpJson);
  const { bom, text } = splitBom(original.toString('utf8'));
  const root = parseDocument(text, mcpJson);
  const key = 'servers' in root ? 'servers' : 'mcpServers' in root ? 'mcpServers' : undefined;
  const servers = serversOf(root);
  const names = Object.keys(servers);
  if (!key || names.length === 0) throw new Error(`${mcpJson} defines no servers: there is nothing to take over.`);

  const routerFile = routerConfigBeside(mcpJson);
  const routerOriginal = existsSync(routerFile) ? readFileSync(routerFile) : null;
  const routerRoot = routerOriginal ? parseDocument(routerOriginal.toString('utf8'), routerFile) : {};
  const routerServers = serversOf(routerRoot);
  const clash = names.filter((n) => n in routerServers);
  if (clash.length > 0) throw new Error(`${routerFile} already defines ${clash.map((n) => `"${n}"`).join(', ')}; rename or remove them there first.`);
  const routerInputs = Array.isArray(routerRoot['inputs']) ? (routerRoot['inputs'] as unknown[]) : [];
  const inputs = Array.isArray(root['inputs']) ? (root['inputs'] as unknown[]) : [];
  const inputIds = new Set(routerInputs.map((i) => (i as { id?: unknown })?.id));
  const merged = {
    ...routerRoot,
    ...(inputs.length + routerInputs.length > 0 ? { inputs: [...routerInputs, ...inputs.filter((i) => !inputIds.has((i as { id?: unknown })?.id))] } : {}),
    servers: { ...routerServers, ...servers },
  };
  const newRouterText = `${JSON.stringify(merged, null, 2)}\n`;
  // The mark stays: the file is edited in place, and its editor put it there.
  const newMcpText = bom + applyEdits(text, modify(text, [key], {}, { formattingOptions: { insertSpaces: true, tabSize: 2 } }));
  const mcpMode = permissionsOf(mcpJson);
  const routerMode = routerOriginal ? permissionsOf(routerFile) : null;
  // Both hold mcp.json's servers and secrets from now on, and the backup the router file's as well.
  const heldMode = mcpMode & (routerMode ?? PERMISSION_BITS);

  const backup: Backup = {
    version: 1,
    mcpJson: original.toString('base64'),
    routerFile: routerOriginal ? routerOriginal.toString('base64') : null,
    wroteMcpJson: sha256(newMcpText),
    wroteRouterFile: sha256(newRouterText),
    servers: names,
    mcpJsonMode: mcpMode,
    routerFileMode: routerMode,
  };
  // The backup is written first: if anything after it fails, giving back still restores the originals.
  // It is never written through a link, which could carry the secrets it holds somewhere else.
  writeFileAtomicSync(backupFile, JSON.stringify(backup, null, 2), { mode: heldMode });
  writeFileAtomicSync(routerFile, newRouterText, { mode: heldMode, throughSymlink: true });
  writeFileAtomicSync(mcpJson, newMcpText, { keepMode: true, throughSymlink: true });
  return { moved: names, routerFile, backup: backupFile };
}

/** What giving back would overwrite: files edited since the take-over. Throws when there is no backup. */
export function checkGiveBack(mcpJson: string): GiveBackCheck {
  const backup = readBackup(mcpJson);
  const editedSince: string[] = [];
  const routerFile = routerConfigBeside(mcpJson);
  if (!existsSync(mcpJson) || sha256(readFileSync(mcpJson, 'utf8')) !== backup.wroteMcpJson) editedSince.push(mcpJson);
  if (!existsSync(routerFile) || sha256(readFileSync(routerFile, 'utf8')) !== backup.wroteRouterFile) editedSince.push(routerFile);
  return { editedSince, servers: backup.servers };
}

/** Restores both files to their exact bytes and modes before the take-over, and removes the backup. */
export function giveBack(mcpJson: string): { restored: readonly string[] } {
  const backup = readBackup(mcpJson);
  const routerFile = routerConfigBeside(mcpJson);
  writeFileAtomicSync(mcpJson, Buffer.from(backup.mcpJson, 'base64'), { ...restoredMode(backup.mcpJsonMode), throughSymlink: true });
  if (backup.routerFile === null) rmSync(routerFile, { force: true });
  else writeFileAtomicSync(routerFile, Buffer.from(backup.routerFile, 'base64'), { ...restoredMode(backup.routerFileMode), throughSymlink: true });
  rmSync(backupBeside(mcpJson), { force: true });
  return { restored: backup.servers };
}

function readBackup(mcpJson: string): Backup {
  const file = backupBeside(mcpJson);
  let backup: Partial<Backup>;
  try {
    backup = JSON.parse(readFileSync(file, 'utf8')) as Partial<Backup>;
  } catch (error) {
    throw new Error(`No usable take-over backup for ${mcpJson} (${file}: ${describeError(error)}); there is nothing to give back.`, { cause: error });
  }
  const modesUsable = isModeOrAbsent(backup.mcpJsonMode) && (backup.routerFileMode === null || isModeOrAbsent(backup.routerFileMode));
  if (backup.version !== 1 || typeof backup.mcpJson !== 'string' || !Array.isArray(backup.servers) || !modesUsable) throw new Error(`${file} is not a take-over backup this version understands; restore the files by hand from it.`);
  return backup as Backup;
}

function isModeOrAbsent(mode: unknown): boolean {
  return mode === undefined || (Number.isInteger(mode) && (mode as number) >= 0 && (mode as number) <= PERMISSION_BITS);
}

/** A backup from before modes were recorded leaves each file the mode it has now. */
function restoredMode(mode: number | null | undefined): AtomicWriteOptions {
  return typeof mode === 'number' ? { mode } : { keepMode: true };
}

function permissionsOf(file: string): number {
  return statSync(file).mode & PERMISSION_BITS;
}

function splitBom(text: string): { bom: string; text: string } {
  return text.startsWith(UTF8_BOM) ? { bom: UTF8_BOM, text: text.slice(UTF8_BOM.length) } : { bom: '', text };
}

function parseDocument(text: string, file: string): Record<string, unknown> {
  const errors: ParseError[] = [];
  const root = parseJsonc(splitBom(text).text, errors, { allowTrailingComma: true });
  if (errors.length > 0 || typeof root !== 'object' || root === null || Array.isArray(root)) {
    throw new Error(`${file} is not a valid mcp.json (JSON with comments, an object at the top); fix it first.`);
  }
  return root as Record<string, unknown>;
}

function serversOf(root: Record<string, unknown>): Record<string, unknown> {
  const servers = root['servers'] ?? root['mcpServers'];
  return typeof servers === 'object' && servers !== null && !Array.isArray(servers) ? (servers as Record<string, unknown>) : {};
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
