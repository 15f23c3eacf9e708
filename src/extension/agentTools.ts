import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { confirmationMarkdown, destructiveApproval, refusedByPolicyMessage } from '../core/chat/callApproval';
import { searchHits } from '../core/chat/toolSearch';
import type { DestructivePolicy } from '../core/selection/selectionTypes';
import type { RouterService } from './routerService';
import type { SelectionService } from './selectionService';
import { destructivePolicySetting, SETTINGS_SECTION, SETTING_DEFAULTS } from './settings';
import type { UsageLearning } from './usageLearning';

/**
 * The router for Copilot's agent mode and other MCP clients: two language-model tools (search and call)
 * so an agent can find and use any routed tool without loading all of them, and the router's gateway
 * (`mcp-tool-router serve --dynamic`) registered as an MCP server through VS Code's definition provider.
 */

/** Search results returned to an agent by default, and at most. */
const DEFAULT_SEARCH_LIMIT = 10;
const MAX_SEARCH_LIMIT = 50;

interface SearchInput {
  query: string;
  limit?: number;
}

interface CallInput {
  name: string;
  arguments?: unknown;
}

function text(value: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(value)]);
}

/** @param learning learning from use: searches and the calls after them are recorded as misses (when on) */
export function registerAgentTools(service: RouterService, selection: SelectionService, learning?: UsageLearning): vscode.Disposable {
  const search = vscode.lm.registerTool<SearchInput>('toolRouter_searchTools', {
    async invoke(options) {
      const query = typeof options.input?.query === 'string' ? options.input.query.trim() : '';
      if (!query) return text('Give a non-empty "query": what the tool should do.');
      const limit = Math.min(MAX_SEARCH_LIMIT, Math.max(1, Math.floor(Number(options.input.limit ?? DEFAULT_SEARCH_LIMIT)) || DEFAULT_SEARCH_LIMIT));
      const result = await selection.select(query);
      // The same search as the gateway's and @router's: quarantined tools never reach the model through it,
      // nor destructive ones while the policy is `never` (they could not be called anyway).
      const hits = searchHits(result, (name) => service.router.getTool(name), {
        limit,
        quarantined: selection.quarantinedTools(),
        ...(currentPolicy() === 'never' ? { exclude: (tool) => tool.annotations.destructiveHint === true } : {}),
      });
      const found = hits.map((h) => ({ name: h.name, server: h.server, description: h.description, score: h.score, inputSchema: h.inputSchema, destructive: h.annotations?.destructiveHint === true }));
      learning?.noteSearch(query, found.map((t) => t.name));
      return text(JSON.stringify({ query, method: result.method, tools: found }, null, 2));
    },
  });
  const call = vscode.lm.registerTool<CallInput>('toolRouter_callTool', {
    /**
     * VS Code shows confirmationMessages before invoke. A destructive tool follows
     * toolRouter.selection.allowDestructiveTools: `confirm` asks (naming the tool and its arguments),
     * `always` does not, `never` refuses in invoke. Other tools not marked read-only ask, as before.
     */
    prepareInvocation(options) {
      const tool = typeof options.input?.name === 'string' ? service.router.getTool(options.input.name) : undefined;
      if (!tool) return undefined;
      const destructive = tool.annotations.destructiveHint === true;
      const approval = destructiveApproval(currentPolicy(), destructive);
      const args = options.input.arguments ?? {};
      if (approval === 'refuse') return { invocationMessage: vscode.l10n.t('Not running {0}: destructive tools are turned off', tool.name) };
      const invocationMessage = vscode.l10n.t('Calling {0}', tool.name);
      if (approval === 'ask') {
        return { invocationMessage, confirmationMessages: { title: vscode.l10n.t('Run {0}? Its server marks it as destructive', tool.name), message: new vscode.MarkdownString(confirmationMarkdown(tool, args, true)) } };
      }
      if (destructive || tool.annotations.readOnlyHint) return { invocationMessage };
      return { invocationMessage, confirmationMessages: { title: vscode.l10n.t('Run {0}?', tool.name), message: new vscode.MarkdownString(confirmationMarkdown(tool, args, false)) } };
    },
    async invoke(options, token) {
      const name = typeof options.input?.name === 'string' ? options.input.name : '';
      if (!name) return text('Give the "name" of the tool to call (see toolRouter_searchTools).');
      const tool = service.router.getTool(name);
      // Checked again here: the policy may have changed since prepareInvocation, and nothing else stops the call.
      if (tool && destructiveApproval(currentPolicy(), tool.annotations.destructiveHint === true) === 'refuse') return text(refusedByPolicyMessage(name));
      const controller = new AbortController();
      token.onCancellationRequested(() => controller.abort());
      const envelope = await service.router.call(name, options.input.arguments ?? {}, { signal: controller.signal });
      learning?.noteAgentCall(name);
      return text(JSON.stringify(envelope, null, 2));
    },
  });
  return vscode.Disposable.from(search, call);
}

function currentPolicy(): DestructivePolicy {
  return destructivePolicySetting(vscode.workspace.getConfiguration(SETTINGS_SECTION).get<unknown>('selection.allowDestructiveTools'));
}

/**
 * Offers the gateway to VS Code as an MCP server. It runs the CLI on VS Code's own Node runtime with the
 * same server configuration (the workspace mcp.json files and the toolRouter.servers setting).
 */
export function registerGatewayDefinition(context: vscode.ExtensionContext): vscode.Disposable {
  const changed = new vscode.EventEmitter<void>();
  const provider = vscode.lm.registerMcpServerDefinitionProvider('toolRouter.gateway', {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: async () => {
      const configs: string[] = [];
      for (const folder of vscode.workspace.workspaceFolders ?? []) {
        const file = vscode.Uri.joinPath(folder.uri, '.vscode', 'mcp.json');
        try {
          await vscode.workspace.fs.stat(file);
          configs.push(file.fsPath);
        } catch {
          // no mcp.json in this folder
        }
      }
      const fromSettings = vscode.workspace.getConfiguration(SETTINGS_SECTION).get<Record<string, unknown>>('servers', SETTING_DEFAULTS.servers);
      if (Object.keys(fromSettings).length > 0) {
        const dir = context.globalStorageUri.fsPath;
        mkdirSync(dir, { recursive: true });
        const file = path.join(dir, 'gateway-servers.json');
        writeFileSync(file, JSON.stringify('servers' in fromSettings || 'mcpServers' in fromSettings ? fromSettings : { servers: fromSettings }));
        configs.push(file);
      }
      if (configs.length === 0) return [];
      const cli = vscode.Uri.joinPath(context.extensionUri, 'dist', 'cli.js').fsPath;
      const workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      const quarantine = vscode.workspace.getConfiguration(SETTINGS_SECTION).get<boolean>('security.quarantineFlaggedTools', SETTING_DEFAULTS['security.quarantineFlaggedTools']);
      const args = [cli, 'serve', '--dynamic', ...(quarantine ? [] : ['--no-quarantine']), ...configs.flatMap((c) => ['--config', c]), ...(workspace ? ['--workspace', workspace] : [])];
      // VS Code's own executable runs plain Node scripts with ELECTRON_RUN_AS_NODE.
      return [new vscode.McpStdioServerDefinition('MCP Tool Router', process.execPath, args, { ELECTRON_RUN_AS_NODE: '1' })];
    },
  });
  const watcher = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration(`${SETTINGS_SECTION}.servers`) || e.affectsConfiguration(`${SETTINGS_SECTION}.security`)) changed.fire();
  });
  return vscode.Disposable.from(provider, watcher, changed);
}
