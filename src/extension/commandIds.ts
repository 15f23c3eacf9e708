/**
 * The ids of the extension's commands and views. This file imports nothing from `vscode`, so a
 * plain-Node test can check them against package.json and against the registrations.
 */

/** Every command the extension contributes; a test checks these against package.json and the registry. */
export const COMMANDS = {
  callTool: 'toolRouter.callTool',
  restartServer: 'toolRouter.restartServer',
  showServerLog: 'toolRouter.showServerLog',
  refreshTools: 'toolRouter.refreshTools',
  listServers: 'toolRouter.listServers',
  disableServer: 'toolRouter.disableServer',
  clearSavedInputs: 'toolRouter.clearSavedInputs',
  explainSelection: 'toolRouter.explainSelection',
  downloadModel: 'toolRouter.downloadModel',
  setEmbeddingsApiKey: 'toolRouter.setEmbeddingsApiKey',
  resume: 'toolRouter.resume',
  resetCostWindow: 'toolRouter.resetCostWindow',
  showPanel: 'toolRouter.showPanel',
  clearUsageMemory: 'toolRouter.clearUsageMemory',
  replayUsage: 'toolRouter.replayUsage',
  takeOverServers: 'toolRouter.takeOverServers',
  giveBackServers: 'toolRouter.giveBackServers',
  signIn: 'toolRouter.signIn',
  signOut: 'toolRouter.signOut',
  reviewToolChanges: 'toolRouter.reviewToolChanges',
} as const;

export const VIEW_SERVERS = 'toolRouter.servers';
/** The Tool Router panel (a webview view): selection, cost window, guard warnings, servers. */
export const VIEW_PANEL = 'toolRouter.panel';

/** The command as the palette shows it (category: title), for messages that tell the user to run it. */
export const REVIEW_TOOL_CHANGES_TITLE = 'Tool Router: Review Changed Tools';

/** The message of a held-back call in VS Code: the command to run. */
export function howToAcceptInVsCode(): string {
  return `Run the command "${REVIEW_TOOL_CHANGES_TITLE}" to see the change and accept it.`;
}
