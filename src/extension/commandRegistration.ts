import * as vscode from 'vscode';
import { callToolCommand, type CallToolRequest, type ResultDocuments } from './callToolCommand';
import { COMMANDS } from './commandIds';
import { downloadModel, explainSelection, setEmbeddingsApiKey, type DownloadModelArgs } from './selectionCommands';
import { disableServer, listServers, refreshTools, restartServer, showServerLog, signIn, signOut } from './serverCommands';
import type { ExtensionServices } from './services';
import { giveBackServers, takeOverServers, type TakeOverArgs } from './takeOverCommands';
import { reviewToolChanges, type PinnedDefinitionDocuments, type ReviewToolChangesArgs } from './toolPinCommands';
import { clearUsageMemory, replayUsage } from './usageLearning';

/**
 * Every command in COMMANDS, registered here and nowhere else (a unit test checks that each one is).
 * Commands take an optional argument, so tests and other extensions can run them without questions.
 */

/** The read-only documents commands open: call results and reports, and approved tool definitions. */
export interface CommandDocuments {
  readonly results: ResultDocuments;
  readonly pins: PinnedDefinitionDocuments;
}

export function registerCommands(context: vscode.ExtensionContext, services: ExtensionServices, documents: CommandDocuments): vscode.Disposable[] {
  return [...serverCommands(services, documents), ...selectionCommands(context, services, documents.results), ...panelCommands(services)];
}

/** The servers and their tools: calling, restarting, signing in, taking over from VS Code, reviewing changes. */
function serverCommands({ service, config }: ExtensionServices, documents: CommandDocuments): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(COMMANDS.callTool, (request?: CallToolRequest) => callToolCommand(service, config, documents.results, request ?? {})),
    vscode.commands.registerCommand(COMMANDS.restartServer, (arg?: unknown) => restartServer(service, arg)),
    vscode.commands.registerCommand(COMMANDS.showServerLog, (arg?: unknown) => showServerLog(service, arg)),
    vscode.commands.registerCommand(COMMANDS.refreshTools, (arg?: unknown) => refreshTools(service, arg)),
    vscode.commands.registerCommand(COMMANDS.listServers, () => listServers(service)),
    vscode.commands.registerCommand(COMMANDS.signIn, (arg?: unknown) => signIn(service, arg)),
    vscode.commands.registerCommand(COMMANDS.signOut, (arg?: unknown) => signOut(service, arg)),
    vscode.commands.registerCommand(COMMANDS.takeOverServers, (arg?: TakeOverArgs) => takeOverServers(service, arg)),
    vscode.commands.registerCommand(COMMANDS.giveBackServers, (arg?: TakeOverArgs) => giveBackServers(service, arg)),
    vscode.commands.registerCommand(COMMANDS.disableServer, (arg?: unknown) => disableServer(service, arg)),
    vscode.commands.registerCommand(COMMANDS.reviewToolChanges, (arg?: ReviewToolChangesArgs) => reviewToolChanges(service, documents.pins, arg)),
    vscode.commands.registerCommand(COMMANDS.clearSavedInputs, async () => {
      const n = await service.inputs.clear();
      void vscode.window.showInformationMessage(vscode.l10n.t('Cleared {0} saved input value(s).', n));
    }),
  ];
}

/** Selection, its model, and learning from use. */
function selectionCommands(context: vscode.ExtensionContext, { service, selection, learning }: ExtensionServices, results: ResultDocuments): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(COMMANDS.explainSelection, (arg?: { prompt?: string; quiet?: boolean }) => explainSelection(selection, results, arg)),
    vscode.commands.registerCommand(COMMANDS.downloadModel, (arg?: DownloadModelArgs) => downloadModel(context, service, arg)),
    vscode.commands.registerCommand(COMMANDS.setEmbeddingsApiKey, () => setEmbeddingsApiKey(selection)),
    vscode.commands.registerCommand(COMMANDS.clearUsageMemory, () => clearUsageMemory(learning)),
    vscode.commands.registerCommand(COMMANDS.replayUsage, (arg?: { quiet?: boolean }) => replayUsage(learning, selection, results, arg)),
  ];
}

/** The panel and the cost window it shows. */
function panelCommands({ cost, panel }: ExtensionServices): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(COMMANDS.showPanel, () => panel.show()),
    vscode.commands.registerCommand(COMMANDS.resume, () => {
      cost.resume();
      panel.refreshCost();
      void vscode.window.showInformationMessage(vscode.l10n.t('MCP Tool Router resumed.'));
    }),
    vscode.commands.registerCommand(COMMANDS.resetCostWindow, () => {
      cost.resetWindow();
      panel.refreshCost();
      void vscode.window.showInformationMessage(vscode.l10n.t('MCP Tool Router: the cost window was reset.'));
    }),
  ];
}
