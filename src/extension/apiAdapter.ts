import * as vscode from 'vscode';
import type { CallEnvelope } from '../core/router/callEnvelope';
import type { RoutedTool } from '../core/router/toolRouter';
import { EDITOR_STARTUP_WAIT_MS } from '../core/router/startupWaits';
import type { Selection } from '../core/selection/selectionTypes';
import type { ServerStatus } from '../core/connection/serverConnection';
import { TOOL_ROUTER_API_VERSION, type ToolRouterApi, type ToolRouterCallResult, type ToolRouterSelection, type ToolRouterServer, type ToolRouterTool } from './api';
import { callToolCommand, type ResultDocuments } from './callToolCommand';
import type { ExtensionServices } from './services';

/**
 * The public API (api.ts) over the extension's services: each member copies what it returns into the
 * API's own plain types, so internal fields never become something callers rely on.
 */

/** @param loaded resolves when activation's first read of the configuration has finished */
export function createToolRouterApi(services: ExtensionServices, results: ResultDocuments, loaded: Promise<void>): { api: ToolRouterApi; disposable: vscode.Disposable } {
  const { service, selection, config } = services;
  const router = service.router;
  const changed = new vscode.EventEmitter<void>();
  const offTools = router.onDidChangeTools(() => changed.fire());
  const offStatus = router.onDidChangeServerStatus(() => changed.fire());
  const api: ToolRouterApi = {
    version: TOOL_ROUTER_API_VERSION,
    listServers: () => router.serverStatuses.map(serverOf),
    listTools: () => router.listTools().map(toolOf),
    selectTools: async (prompt) => selectionOf(await selection.select(prompt)),
    callTool: async (tool, args = {}) => {
      const envelope = await callToolCommand(service, config, results, { tool, args, quiet: true });
      return envelope && callResultOf(envelope);
    },
    onDidChange: changed.event,
    whenSettled: async (timeoutMs = EDITOR_STARTUP_WAIT_MS) => {
      await loaded;
      await router.whenSettled(timeoutMs);
    },
  };
  const disposable = new vscode.Disposable(() => {
    offTools();
    offStatus();
    changed.dispose();
  });
  return { api, disposable };
}

function serverOf(s: ServerStatus): ToolRouterServer {
  return { name: s.name, state: s.state, ...(s.reason ? { reason: s.reason } : {}), toolCount: s.toolCount };
}

function toolOf(t: RoutedTool): ToolRouterTool {
  return { name: t.name, server: t.server, originalName: t.originalName, description: t.originalDescription, inputSchema: t.inputSchema, destructive: t.annotations.destructiveHint === true };
}

function selectionOf(s: Selection): ToolRouterSelection {
  return { prompt: s.prompt, method: s.method, tools: s.tools.map((t) => ({ name: t.name, ...(t.score !== undefined ? { score: t.score } : {}), reason: t.reason })) };
}

function callResultOf(e: CallEnvelope): ToolRouterCallResult {
  const meta = { server: e.meta.server, latencyMs: e.meta.latencyMs };
  if (!e.ok) return { ok: false, error: { type: e.error.type, message: e.error.message, retryable: e.error.retryable }, meta };
  return { ok: true, content: e.content, ...(e.structuredContent !== undefined ? { structuredContent: e.structuredContent } : {}), meta };
}
