import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import {
  MIN_SECRET_LENGTH,
  SECRET_NAME_PATTERN,
  describeType,
  type ConfigIssue,
  type RemoteLaunch,
  type ServerDefinition,
  type ServerLaunch,
  type StdioLaunch,
} from './serverConfig';
import { parseEnvFile } from './envFile';
import { parseRouterBlock, type RouterBlock } from './routerBlock';
import { parseRouterOptions, type ParsedRouterOptions } from './routerOptions';
import { isRecord } from '../util/isRecord';
import { canonicalJson } from '../util/canonicalJson';
import { describeError } from '../errors/describeError';

/**
 * Reads MCP server configuration in VS Code's `mcp.json` format (JSON with comments) or Claude Desktop's
 * `mcpServers` form, substitutes `${input:ID}`, `${env:VAR}` and `${workspaceFolder}`, and returns every
 * valid server together with a list of problems. One bad server never stops the others.
 */

/** A declared prompt input (`inputs` in mcp.json). Only `promptString` and `pickString` exist in VS Code. */
export interface InputDefinition {
  readonly id: string;
  readonly type: 'promptString' | 'pickString';
  readonly description?: string;
  readonly password?: boolean;
  readonly default?: string;
  readonly options?: readonly string[];
}

/** Supplies the value of `${input:ID}`; undefined means the user gave none, and the server is skipped. */
export type InputResolver = (input: InputDefinition) => Promise<string | undefined>;

export interface ConfigContext {
  /** The path (or a label like `settings:toolRouter.servers`) used in error messages. */
  readonly file: string;
  /** Substituted for `${workspaceFolder}`; relative `cwd` and `envFile` are resolved against it. */
  readonly workspaceFolder?: string;
  /** Defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly resolveInput?: InputResolver;
}

export interface ParsedConfig {
  readonly servers: ServerDefinition[];
  readonly inputs: InputDefinition[];
  readonly issues: ConfigIssue[];
  /** The top-level `router` block, when the file has one (routerBlock.ts). */
  readonly router?: RouterBlock;
}

/**
 * A config bigger than this is not a hand-written mcp.json; refusing it keeps a hostile or mistaken file
 * from stalling the extension host while it is parsed.
 */
export const MAX_CONFIG_BYTES = 2 * 1024 * 1024;

const KNOWN_SERVER_FIELDS = new Set([
  'type', 'command', 'args', 'env', 'envFile', 'cwd', 'url', 'headers', 'router',
  // Fields VS Code or Claude Desktop use that the router does not need; accepted silently.
  'dev', 'disabled', 'gallery', 'version', 'description', 'alwaysAllow', 'autoApprove', 'timeout',
]);
const VARIABLE_PATTERN = /\$\{([^}]*)\}/g;

export async function loadMcpConfigFile(filePath: string, ctx: Omit<ConfigContext, 'file'>): Promise<ParsedConfig> {
  let text: string;
  try {
    text = await readFile(filePath, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file does not exist' : describeError(error);
    return { servers: [], inputs: [], issues: [{ file: filePath, severity: 'error', message: `Cannot read the config: ${reason}. Check the path.` }] };
  }
  return parseMcpConfig(text, { ...ctx, file: filePath });
}

export async function parseMcpConfig(text: string, ctx: ConfigContext): Promise<ParsedConfig> {
  const issues: ConfigIssue[] = [];
  const file = ctx.file;
  if (Buffer.byteLength(text, 'utf8') > MAX_CONFIG_BYTES) {
    issues.push({ file, severity: 'error', message: `The config is larger than ${MAX_CONFIG_BYTES} bytes; an mcp.json this large is not supported. Split it or remove unused entries.` });
    return { servers: [], inputs: [], issues };
  }
  // Editors on Windows often save a byte order mark; it is not part of the JSON.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const parseErrors: ParseError[] = [];
  const root: unknown = parseJsonc(text, parseErrors, { allowTrailingComma: true, disallowComments: false });
  if (parseErrors.length > 0) {
    const first = parseErrors[0]!;
    const { line, column } = lineAndColumn(text, first.offset);
    issues.push({ file, severity: 'error', message: `Invalid JSON at line ${line}, column ${column}: ${printParseErrorCode(first.error)}. Fix the syntax; no server in this file was started.` });
    return { servers: [], inputs: [], issues };
  }
  if (!isRecord(root)) {
    issues.push({ file, severity: 'error', message: 'The config must be a JSON object with a "servers" (or "mcpServers") object.' });
    return { servers: [], inputs: [], issues };
  }

  const inputs = parseInputs(root['inputs'], file, issues);
  const router = parseRouterBlock(root['router'], file, issues);
  const withRouter = router ? { router } : {};
  const serversNode = root['servers'] ?? root['mcpServers'];
  if (serversNode === undefined) {
    issues.push({ file, severity: 'warning', message: 'No "servers" or "mcpServers" object found; nothing to start.' });
    return { servers: [], inputs, issues, ...withRouter };
  }
  if (!isRecord(serversNode)) {
    issues.push({ file, severity: 'error', field: root['servers'] !== undefined ? 'servers' : 'mcpServers', message: 'Must be an object mapping server names to server definitions.' });
    return { servers: [], inputs, issues, ...withRouter };
  }

  const resolvedInputs = new Map<string, string | undefined>();
  const servers: ServerDefinition[] = [];
  for (const [name, entry] of Object.entries(serversNode)) {
    const serverIssues: ConfigIssue[] = [];
    const def = await parseServer(name, entry, ctx, inputs, resolvedInputs, serverIssues);
    issues.push(...serverIssues);
    if (def && !serverIssues.some((i) => i.severity === 'error')) servers.push(def);
  }
  return { servers, inputs, issues, ...withRouter };
}

/** One server entry: its transport's launch, its router options, and a fingerprint that changes with either. */
async function parseServer(
  name: string,
  entry: unknown,
  ctx: ConfigContext,
  inputs: readonly InputDefinition[],
  resolvedInputs: Map<string, string | undefined>,
  issues: ConfigIssue[],
): Promise<ServerDefinition | undefined> {
  const reader = new ServerEntryReader(name, ctx, inputs, resolvedInputs, issues);
  if (name.trim() === '') return reader.err(undefined, 'A server name must not be empty.');
  if (!isRecord(entry)) return reader.err(undefined, 'Must be an object with "command" (stdio) or "url" (http/sse).');

  for (const key of Object.keys(entry)) {
    if (!KNOWN_SERVER_FIELDS.has(key)) reader.warn(key, `Unknown field "${key}" is ignored. Known fields: ${[...KNOWN_SERVER_FIELDS].slice(0, 9).join(', ')}.`);
  }
  const type = launchType(entry, reader);
  if (type === undefined) return undefined;
  const launch = type === 'stdio' ? await readStdioLaunch(entry, ctx, reader) : await readRemoteLaunch(entry, type, reader);
  const options = await readRouterOptions(entry, reader);
  if (entry['disabled'] === true) options.enabled = false;
  if (!launch) return undefined;
  // Keys sorted, so reordering `env` or `headers` does not count as a change.
  const fingerprint = createHash('sha256').update(canonicalJson({ launch, options })).digest('hex').slice(0, 16);
  const shown = [...reader.secrets].filter((v) => v.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  return { name, launch, options, source: { file: ctx.file }, fingerprint, ...(shown.length ? { secrets: shown } : {}) };
}

/**
 * Reads the values of one server entry: records its issues, substitutes `${…}` variables (asking for each
 * input once per file) and collects the secrets the values carry, so messages and logs can hide them.
 */
class ServerEntryReader {
  readonly secrets = new Set<string>();

  constructor(
    private readonly name: string,
    private readonly ctx: ConfigContext,
    private readonly inputs: readonly InputDefinition[],
    private readonly resolvedInputs: Map<string, string | undefined>,
    private readonly issues: ConfigIssue[],
  ) {}

  err(field: string | undefined, message: string): undefined {
    this.issues.push({ file: this.ctx.file, server: this.name, ...(field ? { field } : {}), severity: 'error', message });
    return undefined;
  }

  warn(field: string | undefined, message: string): void {
    this.issues.push({ file: this.ctx.file, server: this.name, ...(field ? { field } : {}), severity: 'warning', message });
  }

  /** The value with every variable replaced; undefined when one cannot be (the reason is recorded). */
  async substitute(value: string, field: string): Promise<string | undefined> {
    let out = '';
    let last = 0;
    for (const match of value.matchAll(VARIABLE_PATTERN)) {
      out += value.slice(last, match.index);
      last = (match.index ?? 0) + match[0].length;
      const variable = match[1] ?? '';
      const replacement = await this.resolveVariable(variable, field);
      if (replacement === undefined) return undefined;
      out += replacement;
    }
    return out + value.slice(last);
  }

  /** A string field, substituted; undefined when absent (an error if required) or not a string. */
  async stringField(entry: Record<string, unknown>, key: string, required: boolean): Promise<string | undefined> {
    const v = entry[key];
    if (v === undefined) {
      if (required) this.err(key, `"${key}" is required.`);
      return undefined;
    }
    if (typeof v !== 'string') return this.err(key, `"${key}" must be a string, got ${describeType(v)}.`);
    return this.substitute(v, key);
  }

  /** An object of string values (`env`, `headers`), substituted; a bad value is reported and left out. */
  async stringMap(entry: Record<string, unknown>, key: string): Promise<Record<string, string>> {
    const v = entry[key];
    const out: Record<string, string> = {};
    if (v === undefined || v === null) return out;
    if (!isRecord(v)) {
      this.err(key, `"${key}" must be an object of string values, got ${describeType(v)}.`);
      return out;
    }
    for (const [k, raw] of Object.entries(v)) {
      if (raw === null) continue; // VS Code allows null to unset a variable
      if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
        this.err(`${key}.${k}`, `must be a string, got ${describeType(raw)}.`);
        continue;
      }
      const s = await this.substitute(String(raw), `${key}.${k}`);
      if (s !== undefined) Object.defineProperty(out, k, { value: s, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  private async resolveVariable(variable: string, field: string): Promise<string | undefined> {
    const { ctx } = this;
    if (variable === 'workspaceFolder') {
      if (!ctx.workspaceFolder) return this.err(field, '${workspaceFolder} is used but no workspace folder is open. Open a folder or use an absolute path.');
      return ctx.workspaceFolder;
    }
    if (variable === 'userHome') return (ctx.env ?? process.env)['HOME'] ?? (ctx.env ?? process.env)['USERPROFILE'] ?? '';
    if (variable === 'pathSeparator' || variable === '/') return path.sep;
    if (variable.startsWith('env:')) {
      const key = variable.slice(4);
      const v = (ctx.env ?? process.env)[key];
      if (v === undefined) this.warn(field, `Environment variable ${key} is not set; substituted an empty string.`);
      return v ?? '';
    }
    if (variable.startsWith('input:')) return this.resolveInput(variable.slice(6), field);
    return this.err(field, `Unknown variable \${${variable}}. Supported: \${workspaceFolder}, \${userHome}, \${env:NAME}, \${input:ID}.`);
  }

  /** `${input:ID}`: asked for once per file, and always a secret. */
  private async resolveInput(id: string, field: string): Promise<string | undefined> {
    const def = this.inputs.find((i) => i.id === id);
    if (!def) return this.err(field, `\${input:${id}} refers to an input that is not declared in "inputs". Add {"id": "${id}", "type": "promptString"}.`);
    if (!this.resolvedInputs.has(id)) {
      try {
        this.resolvedInputs.set(id, this.ctx.resolveInput ? await this.ctx.resolveInput(def) : undefined);
      } catch (error) {
        this.resolvedInputs.set(id, undefined);
        return this.err(field, `Asking for input "${id}" failed: ${describeError(error)}`);
      }
    }
    const v = this.resolvedInputs.get(id);
    if (v === undefined) return this.err(field, `No value was given for input "${id}"; the server was not started. Provide it when asked (or with --input ${id}=VALUE on the CLI).`);
    this.secrets.add(v);
    return v;
  }
}

/** The transport an entry declares, or the one its fields imply; undefined (the error recorded) when neither. */
function launchType(entry: Record<string, unknown>, reader: ServerEntryReader): ServerLaunch['type'] | undefined {
  const declaredType = entry['type'];
  if (declaredType === undefined) {
    if (entry['command'] !== undefined) return 'stdio';
    if (entry['url'] !== undefined) return 'http';
    return reader.err(undefined, 'Needs "command" (a stdio server) or "url" (an http or sse server).');
  }
  if (declaredType === 'stdio' || declaredType === 'http' || declaredType === 'sse') return declaredType;
  if (declaredType === 'streamableHttp' || declaredType === 'streamable-http') return 'http';
  return reader.err('type', `Unknown type ${JSON.stringify(declaredType)}. Use "stdio", "http" or "sse".`);
}

/** A stdio server: command, arguments, working folder and environment (its `envFile` first, then `env`). */
async function readStdioLaunch(entry: Record<string, unknown>, ctx: ConfigContext, reader: ServerEntryReader): Promise<StdioLaunch | undefined> {
  const command = await reader.stringField(entry, 'command', true);
  const args = await readArgs(entry, reader);
  let cwd = await reader.stringField(entry, 'cwd', false);
  if (cwd !== undefined && !path.isAbsolute(cwd)) cwd = path.resolve(ctx.workspaceFolder ?? path.dirname(path.resolve(ctx.file)), cwd);
  const env: Record<string, string> = {};
  const envFile = await reader.stringField(entry, 'envFile', false);
  if (envFile !== undefined) {
    const envPath = path.isAbsolute(envFile) ? envFile : path.resolve(ctx.workspaceFolder ?? path.dirname(path.resolve(ctx.file)), envFile);
    try {
      const parsed = parseEnvFile(await readFile(envPath, 'utf8'));
      for (const bad of parsed.badLines) reader.warn('envFile', `Line ${bad} of ${envPath} is not KEY=VALUE and was ignored.`);
      Object.assign(env, parsed.values);
    } catch {
      reader.err('envFile', `Cannot read env file ${envPath}. Check that it exists.`);
    }
  }
  Object.assign(env, await reader.stringMap(entry, 'env'));
  for (const [key, value] of Object.entries(env)) if (SECRET_NAME_PATTERN.test(key)) reader.secrets.add(value);
  if (command === undefined) return undefined;
  if (command.trim() === '') return reader.err('command', '"command" must not be empty.');
  return { type: 'stdio', command, args, env, ...(cwd !== undefined ? { cwd } : {}) };
}

async function readArgs(entry: Record<string, unknown>, reader: ServerEntryReader): Promise<string[]> {
  const rawArgs = entry['args'];
  const args: string[] = [];
  if (rawArgs !== undefined && !Array.isArray(rawArgs)) reader.err('args', `"args" must be an array of strings, got ${describeType(rawArgs)}.`);
  if (Array.isArray(rawArgs)) {
    for (let i = 0; i < rawArgs.length; i++) {
      const a: unknown = rawArgs[i];
      if (typeof a !== 'string' && typeof a !== 'number') {
        reader.err(`args[${i}]`, `must be a string, got ${describeType(a)}.`);
        continue;
      }
      const s = await reader.substitute(String(a), `args[${i}]`);
      if (s !== undefined) args.push(s);
    }
  }
  return args;
}

/** An http or sse server: its URL (http or https only) and headers, whose values are all secrets. */
async function readRemoteLaunch(entry: Record<string, unknown>, type: RemoteLaunch['type'], reader: ServerEntryReader): Promise<RemoteLaunch | undefined> {
  const url = await reader.stringField(entry, 'url', true);
  const headers = await reader.stringMap(entry, 'headers');
  for (const value of Object.values(headers)) {
    reader.secrets.add(value);
    // "Bearer abc": the credential alone may show up in a message too.
    const credential = value.split(/\s+/).pop();
    if (credential) reader.secrets.add(credential);
  }
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return reader.err('url', `"${redactUrl(url)}" is not a valid URL. Use a full address such as http://localhost:3000/mcp.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return reader.err('url', `Only http: and https: URLs are supported, got ${parsed.protocol}`);
  return { type, url, headers };
}

/** The entry's `router` block. OAuth client credentials may use variables (a secret from `${input:…}`), kept out of logs. */
async function readRouterOptions(entry: Record<string, unknown>, reader: ServerEntryReader): Promise<ParsedRouterOptions> {
  const routerField = (field: string): string => (field ? `router.${field}` : 'router');
  let routerNode = entry['router'];
  if (isRecord(routerNode) && isRecord(routerNode['oauth'])) {
    const oauth: Record<string, unknown> = { ...routerNode['oauth'] };
    for (const field of ['clientId', 'clientSecret'] as const) {
      if (typeof oauth[field] !== 'string') continue;
      const resolved = await reader.substitute(oauth[field], `router.oauth.${field}`);
      if (resolved === undefined) delete oauth[field];
      else oauth[field] = resolved;
      if (field === 'clientSecret' && resolved) reader.secrets.add(resolved);
    }
    routerNode = { ...routerNode, oauth };
  }
  return parseRouterOptions(routerNode, (field, message) => reader.err(routerField(field), message), (field, message) => reader.warn(routerField(field), message));
}

function parseInputs(node: unknown, file: string, issues: ConfigIssue[]): InputDefinition[] {
  if (node === undefined) return [];
  if (!Array.isArray(node)) {
    issues.push({ file, field: 'inputs', severity: 'error', message: '"inputs" must be an array of {id, type, description}.' });
    return [];
  }
  const out: InputDefinition[] = [];
  node.forEach((raw: unknown, i) => {
    if (!isRecord(raw) || typeof raw['id'] !== 'string') {
      issues.push({ file, field: `inputs[${i}]`, severity: 'error', message: 'Each input needs a string "id".' });
      return;
    }
    const type = raw['type'] === 'pickString' ? 'pickString' : 'promptString';
    out.push({
      id: raw['id'],
      type,
      ...(typeof raw['description'] === 'string' ? { description: raw['description'] } : {}),
      ...(typeof raw['password'] === 'boolean' ? { password: raw['password'] } : {}),
      ...(typeof raw['default'] === 'string' ? { default: raw['default'] } : {}),
      ...(Array.isArray(raw['options']) ? { options: raw['options'].filter((o): o is string => typeof o === 'string') } : {}),
    });
  });
  return out;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** URLs can carry credentials in the user-info part or the query; error messages show neither. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = '***';
      u.password = '';
    }
    const hadQuery = u.search !== '' || u.hash !== '';
    u.search = '';
    u.hash = '';
    return `${u.toString()}${hadQuery ? '?…' : ''}`;
  } catch {
    // Not a URL, but it may still hold a query or user-info with a secret in it.
    const bare = url.replace(/[?#].*$/s, '?…').replace(/^([^/]*\/\/)?[^/@]*@/, '$1***@');
    return bare.length > 80 ? `${bare.slice(0, 77)}…` : bare;
  }
}
