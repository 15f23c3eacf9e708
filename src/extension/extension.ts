import * as vscode from 'vscode';
import { setOnnxRuntimeFolder } from '../core/embedding/ortRuntime';
import type { ToolRouterApi } from './api';
import { createToolRouterApi } from './apiAdapter';
import { argumentDiagnostics, ResultDocuments, RESULT_SCHEME } from './callToolCommand';
import { PARTICIPANT_ID } from './chatParticipant';
import { VIEW_PANEL, VIEW_SERVERS } from './commandIds';
import { registerCommands, type CommandDocuments } from './commandRegistration';
import { ConfigService } from './configService';
import { withInternals } from './internals';
import { registerModelNotices } from './modelOffer';
import { ServerStatusBar } from './serverStatusBar';
import { costLimits, createServices, type ExtensionServices } from './services';
import { PIN_DIFF_SCHEME, PinnedDefinitionDocuments, registerHeldBackNotices } from './toolPinCommands';

/**
 * Activation is kept light: commands, the tree and the status bar are registered at once, and servers
 * start in the background, so VS Code's start is never held up by an MCP server.
 */

export function activate(context: vscode.ExtensionContext): ToolRouterApi {
  const startedAt = performance.now();
  setOnnxRuntimeFolder(vscode.Uri.joinPath(context.globalStorageUri, 'runtime').fsPath);
  const config = new ConfigService();
  const services = createServices(context, config);
  const documents: CommandDocuments = { results: new ResultDocuments(), pins: new PinnedDefinitionDocuments() };
  context.subscriptions.push(
    ...registerChat(context, services),
    services.learning,
    ...registerPanel(services),
    config,
    ...registerServers(context, services, documents),
    registerModelNotices(context, services.service, services.selection, config),
    ...registerCommands(context, services, documents),
  );
  flushOnExit = async () => {
    await Promise.all([services.learning.flush(), services.selection.saveToolLists()]);
  };
  removeRetiredGatewayFile(context);
  const loaded = services.service.reload();
  // Selection is built once the servers have been asked to start, off the activation path.
  void loaded.then(() => services.selection.getEngine());
  const { api, disposable } = createToolRouterApi(services, documents.results, loaded);
  context.subscriptions.push(disposable);
  return withInternals(api, { ...services, activation: { startedAt, ms: performance.now() - startedAt } });
}

/** `@router` in the chat view. */
function registerChat(context: vscode.ExtensionContext, { participant }: ExtensionServices): vscode.Disposable[] {
  const chat = vscode.chat.createChatParticipant(PARTICIPANT_ID, participant.handler);
  chat.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icon.png');
  return [participant, chat];
}

/** The gateway, the panel, and the cost window the panel shows, which follows the cost.* settings. */
function registerPanel({ gateway, panel, cost, config }: ExtensionServices): vscode.Disposable[] {
  return [
    gateway,
    panel,
    vscode.window.registerWebviewViewProvider(VIEW_PANEL, panel),
    config.onDidChange(['cost'], () => {
      cost.configure(costLimits(config));
      panel.refreshCost();
    }),
  ];
}

/** The router, selection, the server tree, the status bar, and the documents commands open. */
function registerServers(context: vscode.ExtensionContext, { service, selection, tree, config }: ExtensionServices, documents: CommandDocuments): vscode.Disposable[] {
  return [
    service,
    selection,
    tree,
    argumentDiagnostics,
    new ServerStatusBar(service, config, context.workspaceState),
    vscode.window.registerTreeDataProvider(VIEW_SERVERS, tree),
    vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, documents.results),
    vscode.workspace.registerTextDocumentContentProvider(PIN_DIFF_SCHEME, documents.pins),
    registerHeldBackNotices(service),
  ];
}

/** A server list, env values and headers included, that nothing reads any more: deleted, so no secret stays on disk. */
function removeRetiredGatewayFile(context: vscode.ExtensionContext): void {
  void Promise.resolve(vscode.workspace.fs.delete(vscode.Uri.joinPath(context.globalStorageUri, 'gateway-servers.json'))).catch(() => undefined);
}

/** Set by activate: saves the use memory's last records and the tool lists, which would otherwise wait for a delayed write. */
let flushOnExit: (() => Promise<void>) | undefined;

export async function deactivate(): Promise<void> {
  // Everything else is disposed through context.subscriptions, which also ends every server's process tree.
  await flushOnExit?.();
}
