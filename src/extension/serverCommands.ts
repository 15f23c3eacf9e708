import * as vscode from 'vscode';
import type { ServerStatus } from '../core/connection/serverConnection';
import type { ToolFlag } from '../core/security/toolPoisoning';
import type { RoutedTool } from '../core/router/toolRouter';
import type { RouterService } from './routerService';
import { COMMANDS } from './commandIds';
import { BROWSER_UI } from './clientHost';
import { DEFAULT_SIGN_IN_TIMEOUT_MS } from '../core/auth/oauthProvider';

/**
 * Restart Server, Show Server Log, Refresh Tools, List Servers and Disable Server, plus the tree of servers
 * and their tools. Each command takes an optional server name (from the tree, a test or another command)
 * and asks with a QuickPick only when none is given.
 */

const STATE_ICONS: Record<ServerStatus['state'], string> = {
  ready: 'pass',
  starting: 'sync~spin',
  restarting: 'sync~spin',
  failed: 'error',
  stopped: 'circle-slash',
  disabled: 'circle-slash',
};

function serverArg(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg instanceof ServerNode) return arg.status.name;
  return undefined;
}

/** The server list's entry that runs the take-over instead of naming a server. */
const TAKE_OVER_PICK = '\u0000take-over';

async function pickServer(service: RouterService, title: string): Promise<string | undefined> {
  const statuses = service.router.serverStatuses;
  if (statuses.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No MCP servers are configured. Add them to .vscode/mcp.json or the toolRouter.servers setting.'));
    return undefined;
  }
  const shared = new Set(service.sharedWithVsCode);
  const takeOver = { label: `$(arrow-swap) ${vscode.l10n.t('Route Workspace Servers Through the Router')}`, description: vscode.l10n.t('{0} also started by VS Code', shared.size), name: TAKE_OVER_PICK };
  const pick = await vscode.window.showQuickPick(
    [
      ...statuses.map((s) => ({ label: `$(${STATE_ICONS[s.state]}) ${s.name}`, description: [describe(s), shared.has(s.name) ? vscode.l10n.t('also started by VS Code') : ''].filter(Boolean).join(' · '), detail: s.reason, name: s.name })),
      ...(shared.size > 0 ? [takeOver] : []),
    ],
    { title },
  );
  if (pick?.name === TAKE_OVER_PICK) {
    await vscode.commands.executeCommand(COMMANDS.takeOverServers);
    return undefined;
  }
  return pick?.name;
}

function describe(s: ServerStatus): string {
  const parts = [s.state, vscode.l10n.t('{0} tools', s.toolCount)];
  if (s.transport) parts.push(s.transport);
  if (s.restarts) parts.push(vscode.l10n.t('{0} restarts', s.restarts));
  return parts.join(' · ');
}

export async function restartServer(service: RouterService, arg?: unknown): Promise<void> {
  const name = serverArg(arg) ?? (await pickServer(service, vscode.l10n.t('Restart which MCP server?')));
  if (!name) return;
  if (!service.router.getConnection(name)) {
    void vscode.window.showErrorMessage(vscode.l10n.t('There is no MCP server named "{0}".', name));
    return;
  }
  service.log.info(`Restarting ${name} at the user's request.`);
  await service.router.restartServer(name);
}

/**
 * Sign In: connects to the server again with sign-in allowed, which opens its authorization page in the
 * browser; the tokens go to SecretStorage. Without an argument, picks among the servers that need it.
 */
export async function signIn(service: RouterService, arg?: unknown): Promise<boolean> {
  const name = serverArg(arg) ?? (await pickAuthServer(service, vscode.l10n.t('Sign in to which MCP server?'), true));
  const connection = name ? service.router.getConnection(name) : undefined;
  if (!connection?.oauth) {
    if (name) void vscode.window.showErrorMessage(vscode.l10n.t('Server "{0}" is not a remote server that signs in.', name));
    return false;
  }
  connection.oauth.setUi(BROWSER_UI);
  service.log.info(`Signing in to ${connection.name}: opening its authorization page.`);
  await connection.signIn();
  await connection.whenSettled(DEFAULT_SIGN_IN_TIMEOUT_MS);
  const ok = connection.status.state === 'ready';
  if (!ok) void vscode.window.showErrorMessage(vscode.l10n.t('Sign-in to "{0}" did not complete: {1}', connection.name, connection.status.reason ?? connection.status.state));
  return ok;
}

/** Sign Out: forgets the server's tokens and registration (SecretStorage), then reconnects without them. */
export async function signOut(service: RouterService, arg?: unknown): Promise<void> {
  const name = serverArg(arg) ?? (await pickAuthServer(service, vscode.l10n.t('Sign out of which MCP server?'), false));
  const connection = name ? service.router.getConnection(name) : undefined;
  if (!connection?.oauth) return;
  connection.oauth.setUi(undefined);
  await connection.signOut();
  service.log.info(`Signed out of ${connection.name}.`);
  void vscode.window.showInformationMessage(vscode.l10n.t('Signed out of "{0}".', connection.name));
}

async function pickAuthServer(service: RouterService, title: string, needing: boolean): Promise<string | undefined> {
  const candidates = service.router.serverStatuses.filter((s) => service.router.getConnection(s.name)?.oauth && (!needing || s.needsSignIn));
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(needing ? vscode.l10n.t('No MCP server needs sign-in.') : vscode.l10n.t('No remote MCP server to sign out of.'));
    return undefined;
  }
  if (candidates.length === 1) return candidates[0]!.name;
  return (await vscode.window.showQuickPick(candidates.map((s) => ({ label: s.name, description: s.needsSignIn ? vscode.l10n.t('needs sign-in') : '' })), { title }))?.label;
}

export async function showServerLog(service: RouterService, arg?: unknown): Promise<void> {
  const name = serverArg(arg) ?? (await pickServer(service, vscode.l10n.t('Show the log of which MCP server?')));
  if (name) service.serverLog(name).show(true);
}

export async function refreshTools(service: RouterService, arg?: unknown): Promise<number> {
  await service.router.refreshTools(serverArg(arg));
  return service.router.listTools().length;
}

export async function disableServer(service: RouterService, arg?: unknown): Promise<void> {
  const name = serverArg(arg) ?? (await pickServer(service, vscode.l10n.t('Disable which MCP server?')));
  if (name) await service.setServerEnabled(name, false);
}

/** The server list with actions: picking a server offers restart, log, and enable/disable. */
export async function listServers(service: RouterService): Promise<void> {
  const name = await pickServer(service, vscode.l10n.t('MCP servers'));
  if (!name) return;
  const status = service.router.getConnection(name)?.status;
  const disabled = service.disabledServers.has(name);
  const actions = [
    { label: `$(debug-restart) ${vscode.l10n.t('Restart')}`, run: () => restartServer(service, name) },
    { label: `$(output) ${vscode.l10n.t('Show Log')}`, run: () => showServerLog(service, name) },
    disabled
      ? { label: `$(play) ${vscode.l10n.t('Enable')}`, run: () => service.setServerEnabled(name, true) }
      : { label: `$(circle-slash) ${vscode.l10n.t('Disable')}`, run: () => service.setServerEnabled(name, false) },
  ];
  const action = await vscode.window.showQuickPick(actions, { title: `${name}: ${status ? describe(status) : ''}` });
  await action?.run();
}

/** Exposed tool name → poisoning flags; the SelectionService keeps them. */
export type ToolFlagSource = () => ReadonlyMap<string, readonly ToolFlag[]>;

export class ServerNode extends vscode.TreeItem {
  /** @param sharedWithVsCode VS Code starts this server too, from its own mcp.json */
  constructor(readonly status: ServerStatus, flaggedTools = 0, sharedWithVsCode = false) {
    super(status.name, status.toolCount > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    const flagged = flaggedTools > 0 ? vscode.l10n.t('{0} flagged', flaggedTools) : '';
    const shared = sharedWithVsCode ? vscode.l10n.t('also started by VS Code') : '';
    this.description = [status.needsSignIn ? vscode.l10n.t('needs sign-in') : describe(status), flagged ? `⚠ ${flagged}` : '', shared].filter(Boolean).join(' · ');
    this.tooltip = [
      status.reason ?? describe(status),
      flagged ? vscode.l10n.t('{0} tool(s) flagged as possibly poisoned; see their tooltips.', flaggedTools) : '',
      shared ? vscode.l10n.t('VS Code starts this server from its mcp.json as well, so it runs twice. Run "Tool Router: Route Workspace Servers Through the Router" to leave it to the router.') : '',
    ]
      .filter(Boolean)
      .join('\n');
    this.iconPath = new vscode.ThemeIcon(STATE_ICONS[status.state]);
    this.contextValue = status.needsSignIn ? 'server.needsSignIn' : `server.${status.state}`;
    if (status.needsSignIn) this.iconPath = new vscode.ThemeIcon('account');
  }
}

export class ToolNode extends vscode.TreeItem {
  constructor(readonly tool: RoutedTool, readonly flags: readonly ToolFlag[] = []) {
    super(tool.name, vscode.TreeItemCollapsibleState.None);
    this.description = tool.originalDescription.split('\n')[0]?.slice(0, 80);
    const tooltip = new vscode.MarkdownString(`**${tool.name}** (${tool.server} / ${tool.originalName})\n\n${tool.originalDescription}`);
    if (flags.length > 0) {
      tooltip.appendMarkdown(`\n\n---\n\n$(warning) **${vscode.l10n.t('Possible tool poisoning')}**\n\n`);
      // Reasons quote the server's text: appended as text so it cannot add links or markup.
      for (const f of flags) tooltip.appendText(`• ${f.severity}: ${f.reason}\n`);
    }
    tooltip.supportThemeIcons = true;
    this.tooltip = tooltip;
    const icon = flags.length > 0 || tool.schemaProblem ? 'warning' : tool.annotations.destructiveHint ? 'flame' : 'tools';
    this.iconPath = flags.some((f) => f.severity === 'high') ? new vscode.ThemeIcon(icon, new vscode.ThemeColor('problemsWarningIcon.foreground')) : new vscode.ThemeIcon(icon);
    this.contextValue = 'tool';
    this.command = { command: 'toolRouter.callTool', title: vscode.l10n.t('Call Tool…'), arguments: [{ tool: tool.name }] };
  }
}

export class ServerTreeProvider implements vscode.TreeDataProvider<ServerNode | ToolNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly offs: Array<() => void>;

  constructor(private readonly service: RouterService, private readonly flags: ToolFlagSource = () => new Map()) {
    this.offs = [service.router.onDidChangeTools(() => this.changed.fire()), service.router.onDidChangeServerStatus(() => this.changed.fire())];
  }

  getTreeItem(element: ServerNode | ToolNode): vscode.TreeItem {
    return element;
  }

  getChildren(element?: ServerNode | ToolNode): Array<ServerNode | ToolNode> {
    const flags = this.flags();
    if (!element) {
      const tools = this.service.router.listTools();
      const shared = new Set(this.service.sharedWithVsCode);
      return this.service.router.serverStatuses.map((s) => new ServerNode(s, tools.filter((t) => t.server === s.name && flags.has(t.name)).length, shared.has(s.name)));
    }
    if (element instanceof ServerNode) return this.service.router.listTools().filter((t) => t.server === element.status.name).map((t) => new ToolNode(t, flags.get(t.name)));
    return [];
  }

  dispose(): void {
    this.offs.forEach((off) => off());
    this.changed.dispose();
  }
}
