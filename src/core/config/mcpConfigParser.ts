import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import {
  DEFAULT_ROUTER_OPTIONS,
  MIN_SECRET_LENGTH,
  PROTOCOL_SETTINGS,
  SECRET_NAME_PATTERN,
  type ConfigIssue,
  type ProtocolSetting,
  type RouterOptions,
  type ServerDefinition,
  type ServerLaunch,
} from './serverConfig';
import { parseEnvFile } from './envFile';
import { parseRouterBlock, type RouterBlock } from './routerBlock';
import { isRecord } from '../util/isRecord';
import { canonicalJson } from '../util/canonicalJson';

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
/** A cut result must still hold the note that says it was cut (512 bytes are reserved for it). */
export const MIN_RESPONSE_BYTES = 1024;
const KNOWN_ROUTER_FIELDS = new Set([...Object.keys(DEFAULT_ROUTER_OPTIONS), 'oauth']);
const VARIABLE_PATTERN = /\$\{([^}]*)\}/g;

export async function loadMcpConfigFile(filePath: string, ctx: Omit<ConfigContext, 'file'>): Promise<ParsedConfig> {
  let text: string;
  try {
    text = await readFile(filePath, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file does not exist' : String((error as Error).message);
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

async function parseServer(
  name: string,
  entry: unknown,
  ctx: ConfigContext,
  inputs: readonly InputDefinition[],
  resolvedInputs: Map<string, string | undefined>,
  issues: ConfigIssue[],
): Promise<ServerDefinition | undefined> {
  const file = ctx.file;
  const err = (field: string | undefined, message: string): undefined => {
    issues.push({ file, server: name, ...(field ? { field } : {}), severity: 'error', message });
    return undefined;
  };
  const warn = (field: string | undefined, message: string): void => {
    issues.push({ file, server: name, ...(field ? { field } : {}), severity: 'warning', message });
  };
  if (name.trim() === '') return err(undefined, 'A server name must not be empty.');
  if (!isRecord(entry)) return err(undefined, 'Must be an object with "command" (stdio) or "url" (http/sse).');

  for (const key of Object.keys(entry)) {
    if (!KNOWN_SERVER_FIELDS.has(key)) warn(key, `Unknown field "${key}" is ignored. Known fields: ${[...KNOWN_SERVER_FIELDS].slice(0, 9).join(', ')}.`);
  }

  const secrets = new Set<string>();
  const substitute = async (value: string, field: string): Promise<string | undefined> => {
    let out = '';
    let last = 0;
    for (const match of value.matchAll(VARIABLE_PATTERN)) {
      out += value.slice(last, match.index);
      last = (match.index ?? 0) + match[0].length;
      const variable = match[1] ?? '';
      const replacement = await resolveVariable(variable, field);
      if (replacement === undefined) return undefined;
      out += replacement;
    }
    return out + value.slice(last);
  };

  const resolveVariable = async (variable: string, field: string): Promise<string | undefined> => {
    if (variable === 'workspaceFolder') {
      if (!ctx.workspaceFolder) return err(field, '${workspaceFolder} is used but no workspace folder is open. Open a folder or use an absolute path.');
      return ctx.workspaceFolder;
    }
    if (variable === 'userHome') return (ctx.env ?? process.env)['HOME'] ?? (ctx.env ?? process.env)['USERPROFILE'] ?? '';
    if (variable === 'pathSeparator' || variable === '/') return path.sep;
    if (variable.startsWith('env:')) {
      const key = variable.slice(4);
      const v = (ctx.env ?? process.env)[key];
      if (v === undefined) warn(field, `Environment variable ${key} is not set; substituted an empty string.`);
      return v ?? '';
    }
    if (variable.startsWith('input:')) {
      const id = variable.slice(6);
      const def = inputs.find((i) => i.id === id);
      if (!def) return err(field, `\${input:${id}} refers to an input that is not declared in "inputs". Add {"id": "${id}", "type": "promptString"}.`);
      if (!resolvedInputs.has(id)) {
        try {
          resolvedInputs.set(id, ctx.resolveInput ? await ctx.resolveInput(def) : undefined);
        } catch (error) {
          resolvedInputs.set(id, undefined);
          return err(field, `Asking for input "${id}" failed: ${(error as Error).message}`);
        }
      }
      const v = resolvedInputs.get(id);
      if (v === undefined) return err(field, `No value was given for input "${id}"; the server was not started. Provide it when asked (or with --input ${id}=VALUE on the CLI).`);
      secrets.add(v);
      return v;
    }
    return err(field, `Unknown variable \${${variable}}. Supported: \${workspaceFolder}, \${userHome}, \${env:NAME}, \${input:ID}.`);
  };

  const stringField = async (key: string, required: boolean): Promise<string | undefined> => {
    const v = entry[key];
    if (v === undefined) {
      if (required) err(key, `"${key}" is required.`);
      return undefined;
    }
    if (typeof v !== 'string') return err(key, `"${key}" must be a string, got ${describeType(v)}.`);
    return substitute(v, key);
  };

  const stringMap = async (key: string): Promise<Record<string, string>> => {
    const v = entry[key];
    const out: Record<string, string> = {};
    if (v === undefined || v === null) return out;
    if (!isRecord(v)) {
      err(key, `"${key}" must be an object of string values, got ${describeType(v)}.`);
      return out;
    }
    for (const [k, raw] of Object.entries(v)) {
      if (raw === null) continue; // VS Code allows null to unset a variable
      if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
        err(`${key}.${k}`, `must be a string, got ${describeType(raw)}.`);
        continue;
      }
      const s = await substitute(String(raw), `${key}.${k}`);
      if (s !== undefined) Object.defineProperty(out, k, { value: s, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };

  const declaredType = entry['type'];
  let type: ServerLaunch['type'];
  if (declaredType === undefined) {
    if (entry['command'] !== undefined) type = 'stdio';
    else if (entry['url'] !== undefined) type = 'http';
    else return err(undefined, 'Needs "command" (a stdio server) or "url" (an http or sse server).');
  } else if (declaredType === 'stdio' || declaredType === 'http' || declaredType === 'sse') {
    type = declaredType;
  } else if (declaredType === 'streamableHttp' || declaredType === 'streamable-http') {
    type = 'http';
  } else {
    return err('type', `Unknown type ${JSON.stringify(declaredType)}. Use "stdio", "http" or "sse".`);
  }

  let launch: ServerLaunch | undefined;
  if (type === 'stdio') {
    const command = await stringField('command', true);
    const rawArgs = entry['args'];
    const args: string[] = [];
    if (rawArgs !== undefined && !Array.isArray(rawArgs)) err('args', `"args" must be an array of strings, got ${describeType(rawArgs)}.`);
    if (Array.isArray(rawArgs)) {
      for (let i = 0; i < rawArgs.length; i++) {
        const a: unknown = rawArgs[i];
        if (typeof a !== 'string' && typeof a !== 'number') {
          err(`args[${i}]`, `must be a string, got ${describeType(a)}.`);
          continue;
        }
        const s = await substitute(String(a), `args[${i}]`);
        if (s !== undefined) args.push(s);
      }
    }
    let cwd = await stringField('cwd', false);
    if (cwd !== undefined && !path.isAbsolute(cwd)) cwd = path.resolve(ctx.workspaceFolder ?? path.dirname(path.resolve(ctx.file)), cwd);
    const env: Record<string, string> = {};
    const envFile = await stringField('envFile', false);
    if (envFile !== undefined) {
      const envPath = path.isAbsolute(envFile) ? envFile : path.resolve(ctx.workspaceFolder ?? path.dirname(path.resolve(ctx.file)), envFile);
      try {
        const parsed = parseEnvFile(await readFile(envPath, 'utf8'));
        for (const bad of parsed.badLines) warn('envFile', `Line ${bad} of ${envPath} is not KEY=VALUE and was ignored.`);
        Object.assign(env, parsed.values);
      } catch {
        err('envFile', `Cannot read env file ${envPath}. Check that it exists.`);
      }
    }
    Object.assign(env, await stringMap('env'));
    for (const [key, value] of Object.entries(env)) if (SECRET_NAME_PATTERN.test(key)) secrets.add(value);
    if (command !== undefined) {
      if (command.trim() === '') err('command', '"command" must not be empty.');
      else launch = { type: 'stdio', command, args, env, ...(cwd !== undefined ? { cwd } : {}) };
    }
  } else {
    const url = await stringField('url', true);
    const headers = await stringMap('headers');
    for (const value of Object.values(headers)) {
      secrets.add(value);
      // "Bearer abc": the credential alone may show up in a message too.
      const credential = value.split(/\s+/).pop();
      if (credential) secrets.add(credential);
    }
    if (url !== undefined) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        err('url', `"${redactUrl(url)}" is not a valid URL. Use a full address such as http://localhost:3000/mcp.`);
      }
      if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        err('url', `Only http: and https: URLs are supported, got ${parsed.protocol}`);
      } else if (parsed) {
        launch = { type, url, headers };
      }
    }
  }

  const routerField = (field: string): string => (field ? `router.${field}` : 'router');
  // OAuth client credentials may use variables (a secret from `${input:…}`); the secret is kept out of logs.
  let routerNode = entry['router'];
  if (isRecord(routerNode) && isRecord(routerNode['oauth'])) {
    const oauth: Record<string, unknown> = { ...routerNode['oauth'] };
    for (const field of ['clientId', 'clientSecret'] as const) {
      if (typeof oauth[field] !== 'string') continue;
      const resolved = await substitute(oauth[field], `router.oauth.${field}`);
      if (resolved === undefined) delete oauth[field];
      else oauth[field] = resolved;
      if (field === 'clientSecret' && resolved) secrets.add(resolved);
    }
    routerNode = { ...routerNode, oauth };
  }
  const options = parseRouterOptions(routerNode, (field, message) => err(routerField(field), message), (field, message) => warn(routerField(field), message));
  if (entry['disabled'] === true) options.enabled = false;
  if (!launch) return undefined;
  // Keys sorted, so reordering `env` or `headers` does not count as a change.
  const fingerprint = createHash('sha256').update(canonicalJson({ launch, options })).digest('hex').slice(0, 16);
  const shown = [...secrets].filter((v) => v.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  return { name, launch, options, source: { file }, fingerprint, ...(shown.length ? { secrets: shown } : {}) };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function parseRouterOptions(
  node: unknown,
  err: (field: string, message: string) => void,
  warn: (field: string, message: string) => void,
): Mutable<RouterOptions> {
  const options: Mutable<RouterOptions> = { ...DEFAULT_ROUTER_OPTIONS };
  if (node === undefined) return options;
  if (!isRecord(node)) {
    err('', `"router" must be an object, got ${describeType(node)}.`);
    return options;
  }
  for (const [key, value] of Object.entries(node)) {
    if (!KNOWN_ROUTER_FIELDS.has(key)) {
      warn(key, `Unknown router option "${key}" is ignored. Known: ${[...KNOWN_ROUTER_FIELDS].join(', ')}.`);
      continue;
    }
    switch (key) {
      case 'enabled':
      case 'allowUnvalidatedTools':
      case 'roots':
        if (typeof value !== 'boolean') err(key, `must be true or false, got ${describeType(value)}.`);
        else options[key] = value;
        break;
      case 'toolsAllowed':
      case 'toolsDenied':
        if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) err(key, 'must be an array of glob strings such as ["read_*"].');
        else options[key] = value as string[];
        break;
      case 'oauth': {
        if (!isRecord(value)) {
          err(key, `must be an object {"clientId", "clientSecret", "scopes"}, got ${describeType(value)}.`);
          break;
        }
        const oauth: { clientId?: string; clientSecret?: string; scopes?: string[]; clientMetadataUrl?: string } = {};
        for (const [field, v] of Object.entries(value)) {
          if (field === 'clientId' || field === 'clientSecret') {
            if (typeof v !== 'string' || v === '') err(`oauth.${field}`, `must be a non-empty string, got ${describeType(v)}.`);
            else oauth[field] = v;
          } else if (field === 'scopes') {
            if (typeof v === 'string') oauth.scopes = v.split(/\s+/).filter(Boolean);
            else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) oauth.scopes = v as string[];
            else err('oauth.scopes', 'must be an array of scope names such as ["read", "write"].');
          } else if (field === 'clientMetadataUrl') {
            if (typeof v === 'string' && /^https:\/\/[^/]+\/./.test(v)) oauth.clientMetadataUrl = v;
            else err('oauth.clientMetadataUrl', 'must be an https URL with a path, where the client metadata document is published.');
          } else warn(`oauth.${field}`, `Unknown OAuth option "${field}" is ignored. Known: clientId, clientSecret, scopes, clientMetadataUrl.`);
        }
        if (oauth.clientSecret && !oauth.clientId) err('oauth.clientSecret', 'a client secret needs its "clientId".');
        options.oauth = oauth;
        break;
      }
      case 'protocol':
        if (typeof value !== 'string' || !(PROTOCOL_SETTINGS as readonly string[]).includes(value)) err(key, `must be one of ${PROTOCOL_SETTINGS.map((p) => `"${p}"`).join(', ')}, got ${JSON.stringify(value)}.`);
        else options.protocol = value as ProtocolSetting;
        break;
      case 'callTimeoutMs':
      case 'maxConcurrentCalls':
      case 'maxResponseBytes':
      case 'startupTimeoutMs': {
        const min = key === 'maxResponseBytes' ? MIN_RESPONSE_BYTES : 1;
        if (typeof value !== 'number' || !Number.isInteger(value) || value < min) err(key, `must be a whole number of at least ${min}, got ${JSON.stringify(value)}.`);
        else options[key] = value;
        break;
      }
    }
  }
  return options;
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

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
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
