/**
 * The shape of one configured MCP server after parsing and substitution.
 *
 * The on-disk format is VS Code's `mcp.json` (`{"servers": {...}, "inputs": [...]}`) or Claude Desktop's
 * `{"mcpServers": {...}}`. Router-specific options live under an optional `router` key on each server so a
 * single file can serve both VS Code's own MCP support and this router.
 */

/** Where a configured server came from, so every error can name the file and the server. */
export interface ConfigSource {
  /** A path or a label such as `settings:toolRouter.servers`. */
  readonly file: string;
}

export interface StdioLaunch {
  readonly type: 'stdio';
  readonly command: string;
  readonly args: readonly string[];
  /** Variables added to the inherited environment; values may be secrets and are never logged. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export interface RemoteLaunch {
  /** `http` tries streamable HTTP first and falls back to SSE, as VS Code does; `sse` uses SSE only. */
  readonly type: 'http' | 'sse';
  readonly url: string;
  /** May carry secrets (Authorization); never logged. */
  readonly headers: Readonly<Record<string, string>>;
}

export type ServerLaunch = StdioLaunch | RemoteLaunch;

/** Router options that apply to one server. Defaults are in {@link DEFAULT_ROUTER_OPTIONS}. */
export interface RouterOptions {
  readonly enabled: boolean;
  /** Globs over the server's original tool names; empty means every tool is allowed. */
  readonly toolsAllowed: readonly string[];
  /** Globs over the server's original tool names; a denied tool is never exposed. */
  readonly toolsDenied: readonly string[];
  readonly callTimeoutMs: number;
  readonly maxConcurrentCalls: number;
  readonly maxResponseBytes: number;
  readonly startupTimeoutMs: number;
  /**
   * Tools whose input schema is missing or cannot be compiled fail closed unless this is true:
   * calling them would send unchecked arguments to the server.
   */
  readonly allowUnvalidatedTools: boolean;
  /**
   * Tell this server the client's roots (VS Code: the workspace folders; CLI: each --root). Some servers
   * widen what they reach to the roots they are told (the filesystem server replaces its configured
   * folders with them), so a server can be kept to its own configuration with false.
   */
  readonly roots: boolean;
  /**
   * The MCP revision spoken to this server: `auto` asks the server and uses the newest both speak;
   * a revision pins it (a pinned 2026-07-28 server that does not speak it fails to start, with why).
   * SSE servers always speak 2025-11-25.
   */
  readonly protocol: ProtocolSetting;
  /**
   * OAuth for a remote server that uses the MCP authorization spec: a client registered with its
   * authorization server beforehand, and the scopes to ask for. Without it, the router registers itself
   * (dynamic client registration or a client ID metadata document) when the server asks for sign-in.
   */
  readonly oauth?: OAuthSettings;
}

export type ProtocolSetting = 'auto' | '2025-11-25' | '2026-07-28';
export const PROTOCOL_SETTINGS: readonly ProtocolSetting[] = ['auto', '2025-11-25', '2026-07-28'];

export interface OAuthSettings {
  readonly clientId?: string;
  /** May be an `${input:…}`; kept out of every log. */
  readonly clientSecret?: string;
  readonly scopes?: readonly string[];
  /**
   * An https URL where this client's metadata document is published (a client ID metadata document):
   * used as the client ID with authorization servers that support it, instead of registering.
   */
  readonly clientMetadataUrl?: string;
}

/**
 * Two minutes: long enough for slow real work (builds, searches) and short enough that a hung server
 * is noticed within one chat turn. VS Code's own MCP client uses no shorter limit.
 */
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/** Four calls at once per server keeps a single slow server from starving the rest of the chat turn. */
export const DEFAULT_MAX_CONCURRENT_CALLS = 4;
/**
 * 256 KiB is about 64k tokens at 4 characters per token: past that a single result already
 * fills most models' context, so the rest is cut and the cut is reported.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024;
/** `npx`-launched servers may install on first start; a minute covers that on a slow machine. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;

export const DEFAULT_ROUTER_OPTIONS: RouterOptions = {
  enabled: true,
  toolsAllowed: [],
  toolsDenied: [],
  callTimeoutMs: DEFAULT_CALL_TIMEOUT_MS,
  maxConcurrentCalls: DEFAULT_MAX_CONCURRENT_CALLS,
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
  startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
  allowUnvalidatedTools: false,
  roots: true,
  protocol: 'auto',
};

export interface ServerDefinition {
  /** The name as written in the config file. */
  readonly name: string;
  readonly launch: ServerLaunch;
  readonly options: RouterOptions;
  readonly source: ConfigSource;
  /**
   * A stable digest of launch + options; when it changes the server is restarted, when it does not
   * a config reload leaves the running server alone.
   */
  readonly fingerprint: string;
  /**
   * Values that must never be shown: every `${input:…}` value, env values whose name looks like a secret,
   * and header values. The connection replaces them in its log and error messages.
   */
  readonly secrets?: readonly string[];
}

/** Env var names that hold credentials by convention (API_TOKEN, GITHUB_PAT, DB_PASSWORD, …). */
export const SECRET_NAME_PATTERN = /token|secret|key|passw|pwd|pat$|auth|credential|cookie|session/i;
/** Shorter values are not redacted: replacing "1" or "true" everywhere would garble logs and protect nothing. */
export const MIN_SECRET_LENGTH = 4;

/** Replaces every secret in `text` with `[redacted]`, longest first so a secret inside another goes too. */
export function redactSecrets(text: string, secrets: readonly string[] | undefined): string {
  if (!secrets || secrets.length === 0) return text;
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}

/** One problem found in a config file. Problems are collected, never thrown, so other servers still start. */
export interface ConfigIssue {
  readonly file: string;
  readonly server?: string;
  /** A dotted path inside the server entry, e.g. `args[2]` or `router.callTimeoutMs`. */
  readonly field?: string;
  readonly message: string;
  readonly severity: 'error' | 'warning';
}

export function formatConfigIssue(issue: ConfigIssue): string {
  const where = [issue.file, issue.server ? `server "${issue.server}"` : undefined, issue.field ? `field "${issue.field}"` : undefined]
    .filter(Boolean)
    .join(', ');
  return `${issue.severity === 'error' ? 'Error' : 'Warning'} in ${where}: ${issue.message}`;
}

/** A value's type as config messages name it: `null`, `an array`, `a number`… */
export function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}
