import type { Event } from 'vscode';

/**
 * What MCP Tool Router offers other extensions: `vscode.extensions.getExtension<ToolRouterApi>(
 * 'mcp-tool-router.mcp-tool-router')`, then `activate()` or `exports`. Plain functions and plain data,
 * so the router's own classes can change without breaking callers. This file imports only types from
 * `vscode`: another extension may copy it as it is. docs/api.md describes it.
 */

/** Raised only for a change that breaks callers; members are added without changing it. */
export const TOOL_ROUTER_API_VERSION = 1;

export interface ToolRouterApi {
  /** {@link TOOL_ROUTER_API_VERSION} of the API this object implements: check it before use. */
  readonly version: typeof TOOL_ROUTER_API_VERSION;

  /** Every configured server and its state, as the server list shows them. */
  listServers(): ToolRouterServer[];

  /** Every tool the router offers now, under its exposed (server-prefixed) name. */
  listTools(): ToolRouterTool[];

  /**
   * The tools `@router` would send a model for `prompt`, best first, without calling a model. Quarantined
   * tools and tools the destructive-tools policy refuses are left out, as they are for `@router`.
   */
  selectTools(prompt: string): Promise<ToolRouterSelection>;

  /**
   * Calls `tool` (an exposed name from {@link listTools}) with `args`, as the Call Tool command does:
   * arguments are checked against the tool's schema, and a destructive tool asks the person first, or is
   * refused, as toolRouter.selection.allowDestructiveTools says. Waits up to 30 s for a tool whose
   * server is still starting. Resolves to `undefined` when there is no such tool or the person declined
   * (the person is told either way); a failed call resolves to a result with `ok: false`.
   */
  callTool(tool: string, args?: Readonly<Record<string, unknown>>): Promise<ToolRouterCallResult | undefined>;

  /** Fires when a server's state or the list of tools changes; read the new lists with the functions above. */
  readonly onDidChange: Event<void>;

  /**
   * Resolves once the configuration has been read and every server has become ready or failed, or after
   * `timeoutMs` (30 s when not given), whichever comes first.
   */
  whenSettled(timeoutMs?: number): Promise<void>;
}

export interface ToolRouterServer {
  readonly name: string;
  readonly state: 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped' | 'disabled';
  /** Why the server is not ready, in words a person can act on. */
  readonly reason?: string;
  readonly toolCount: number;
}

export interface ToolRouterTool {
  /** The name to call it by. */
  readonly name: string;
  readonly server: string;
  /** Its name on its server. */
  readonly originalName: string;
  /** The server's own description. */
  readonly description: string;
  /** The server's JSON Schema for the arguments, as the server sent it. */
  readonly inputSchema: unknown;
  /** The server marks it as one that may change or delete data. */
  readonly destructive: boolean;
}

export interface ToolRouterSelection {
  readonly prompt: string;
  /** `embedding+keyword`, or `keyword-only` while (or when) no embedding model is available. */
  readonly method: string;
  readonly tools: readonly ToolRouterSelectedTool[];
}

export interface ToolRouterSelectedTool {
  readonly name: string;
  /** The relevance the ranking used, when a scorer ran (pinned and keyword-only tools have none). */
  readonly score?: number;
  /** Why it was chosen, in one line. */
  readonly reason: string;
}

/**
 * How a call ended: exactly one of these, whatever went wrong. `content` holds the MCP content blocks
 * as the server sent them.
 */
export type ToolRouterCallResult =
  | { readonly ok: true; readonly content: ReadonlyArray<{ readonly type: string }>; readonly structuredContent?: unknown; readonly meta: ToolRouterCallMeta }
  | { readonly ok: false; readonly error: ToolRouterCallError; readonly meta: ToolRouterCallMeta };

export interface ToolRouterCallError {
  /** `INVALID_ARGUMENTS`, `UNKNOWN_TOOL`, `SERVER_UNAVAILABLE`, `TIMEOUT`, `TOOL_ERROR`, `NOT_APPROVED`, … */
  readonly type: string;
  /** What happened and what to try. */
  readonly message: string;
  /** Whether the same call may succeed later. */
  readonly retryable: boolean;
}

export interface ToolRouterCallMeta {
  readonly server: string;
  readonly latencyMs: number;
}
