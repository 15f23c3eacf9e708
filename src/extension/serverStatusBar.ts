import * as vscode from 'vscode';
import type { ConfigService } from './configService';
import { COMMANDS } from './commandIds';
import type { RouterService } from './routerService';

/** `$(plug) 2/3 · 27 tools` in the status bar; clicking it lists the servers with their actions. */
export class ServerStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('toolRouter.status', vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [];

  /** @param memory where the one-time take-over offer is remembered (the workspace's state) */
  constructor(
    private readonly service: RouterService,
    private readonly config: ConfigService,
    private readonly memory?: vscode.Memento,
  ) {
    this.item.name = vscode.l10n.t('MCP Tool Router');
    this.item.command = COMMANDS.listServers;
    const offTools = service.router.onDidChangeTools(() => this.update());
    const offStatus = service.router.onDidChangeServerStatus(() => this.update());
    this.disposables.push(
      this.item,
      { dispose: offTools },
      { dispose: offStatus },
      service.onDidChangeIssues(() => this.update()),
      config.onDidChange(['showStatusBar'], () => this.update()),
    );
    this.update();
  }

  update(): void {
    const show = this.config.get('showStatusBar');
    const statuses = this.service.router.serverStatuses;
    if (!show || (statuses.length === 0 && this.service.configIssues.length === 0)) {
      this.item.hide();
      return;
    }
    const ready = statuses.filter((s) => s.state === 'ready').length;
    const starting = statuses.some((s) => s.state === 'starting' || s.state === 'restarting');
    const failed = statuses.filter((s) => s.state === 'failed').length;
    const tools = this.service.router.listTools().length;
    this.item.text = `${starting ? '$(sync~spin)' : '$(plug)'} ${ready}/${statuses.length} · ${vscode.l10n.t('{0} tools', tools)}`;
    const lines = statuses.map((s) => `${s.name}: ${s.state}${s.state === 'ready' ? ` (${s.toolCount})` : ''}`);
    const errors = this.service.configIssues.filter((i) => i.severity === 'error').length;
    if (errors) lines.push(vscode.l10n.t('{0} configuration error(s): see the MCP Tool Router log', errors));
    const shared = this.service.sharedWithVsCode;
    if (shared.length > 0) this.item.text += ` · $(arrow-swap) ${vscode.l10n.t('{0} run twice', shared.length)}`;
    this.offerTakeOverOnce(shared);
    const sharedNote = shared.length > 0 ? `\n\n${escapeMarkdown(vscode.l10n.t('VS Code also starts {0} from its mcp.json.', shared.join(', ')))} [${vscode.l10n.t('Route them through the router')}](command:${COMMANDS.takeOverServers})` : '';
    // Trusted links for two commands only: the tooltip opens the panel or takes servers over, the click lists the servers.
    const tooltip = new vscode.MarkdownString(`${vscode.l10n.t('MCP Tool Router servers')}\n\n${lines.map((l) => `- ${escapeMarkdown(l)}`).join('\n')}${sharedNote}\n\n[${vscode.l10n.t('Show Tool Router Panel')}](command:${COMMANDS.showPanel})`);
    tooltip.isTrusted = { enabledCommands: [COMMANDS.showPanel, COMMANDS.takeOverServers] };
    this.item.tooltip = tooltip;
    this.item.backgroundColor = failed > 0 || errors > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  /**
   * The first time servers run twice in a workspace, asks once whether to route them through the router;
   * after that the status bar's "run twice" and its tooltip link stay the way to do it.
   */
  private offerTakeOverOnce(shared: readonly string[]): void {
    if (shared.length === 0 || !this.memory || this.memory.get<boolean>(TAKE_OVER_OFFERED_KEY)) return;
    void this.memory.update(TAKE_OVER_OFFERED_KEY, true);
    const route = vscode.l10n.t('Route Through the Router');
    void vscode.window
      .showInformationMessage(vscode.l10n.t('VS Code also starts {0} from its mcp.json, so each runs twice and agent mode gets every tool. Route them through the router?', shared.join(', ')), route)
      .then((answer) => (answer === route ? vscode.commands.executeCommand(COMMANDS.takeOverServers) : undefined));
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}

/** Workspace state: the take-over was offered once already. */
export const TAKE_OVER_OFFERED_KEY = 'toolRouter.takeOverOffered';

/** Server names and reasons come from config files: shown as text, never as markdown. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|]/g, '\\$&');
}
