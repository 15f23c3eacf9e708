/**
 * The extension's settings and their defaults, in one place. This file imports nothing from `vscode`, so
 * a plain-Node test can check that package.json declares exactly these defaults.
 */
export const SETTINGS_SECTION = 'toolRouter';

export interface ExtensionSettings {
  /** Servers in mcp.json format (`{"servers": {...}, "inputs": [...]}`), or a bare map of servers. */
  readonly servers: Record<string, unknown>;
  /** Read `.vscode/mcp.json` of each workspace folder. */
  readonly readWorkspaceMcpJson: boolean;
  /** Show the ready/total servers and tool count in the status bar. */
  readonly showStatusBar: boolean;
}

export const SETTING_DEFAULTS: ExtensionSettings = {
  servers: {},
  readWorkspaceMcpJson: true,
  showStatusBar: true,
};

/** Every command the extension contributes; a test checks these against package.json and the registry. */
export const COMMANDS = {
  callTool: 'toolRouter.callTool',
  restartServer: 'toolRouter.restartServer',
  showServerLog: 'toolRouter.showServerLog',
  refreshTools: 'toolRouter.refreshTools',
  listServers: 'toolRouter.listServers',
  disableServer: 'toolRouter.disableServer',
  clearSavedInputs: 'toolRouter.clearSavedInputs',
} as const;

export const VIEW_SERVERS = 'toolRouter.servers';
