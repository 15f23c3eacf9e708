import * as vscode from 'vscode';
import { formatConfigIssue, type ConfigIssue, type ServerDefinition } from '../core/config/serverConfig';
import { ToolRouter } from '../core/router/toolRouter';
import { ToolPins } from '../core/security/toolPins';
import { FileToolPinStore, TOOL_PINS_FILE_NAME } from '../core/security/toolPinStore';
import type { ConfigService } from './configService';
import { InputSecrets } from './inputSecrets';
import { VsCodeClientHost } from './clientHost';
import { ServerConfigSources, type VsCodeMcpJson } from './serverConfigSources';
import { howToAcceptInVsCode } from './commandIds';
import * as path from 'node:path';
import { describeError } from '../core/errors/describeError';

/**
 * The router inside VS Code: it loads servers from the config sources, keeps them in step with changes,
 * gives each server its own log channel, and reports config problems. Everything else (commands, status
 * bar, tree) talks to the router through this service.
 */
const DISABLED_SERVERS_KEY = 'toolRouter.disabledServers';

export class RouterService implements vscode.Disposable {
  readonly router: ToolRouter;
  /** The approved definition of every tool, in the extension's global storage (one file for all workspaces). */
  readonly toolPins: ToolPins;
  readonly inputs: InputSecrets;
  /** Sign-in, elicitation, sampling and roots for the routed servers. */
  readonly clientHost: VsCodeClientHost;
  /** The extension's own log: config problems and lifecycle notes (never argument values or secrets). */
  readonly log: vscode.LogOutputChannel;
  private readonly sources: ServerConfigSources;
  private readonly serverLogs = new Map<string, vscode.LogOutputChannel>();
  private readonly disposables: vscode.Disposable[] = [];
  private reloading: Promise<void> = Promise.resolve();
  private lastIssues: ConfigIssue[] = [];
  private loadedServers: readonly ServerDefinition[] = [];
  private readonly issuesChanged = new vscode.EventEmitter<readonly ConfigIssue[]>();
  readonly onDidChangeIssues = this.issuesChanged.event;
  private shownIssueKeys = new Set<string>();

  constructor(private readonly context: vscode.ExtensionContext, config: ConfigService) {
    this.log = vscode.window.createOutputChannel('MCP Tool Router', { log: true });
    this.inputs = new InputSecrets(context.secrets, context.globalState);
    this.clientHost = new VsCodeClientHost(context, this.log);
    this.toolPins = new ToolPins(new FileToolPinStore(path.join(context.globalStorageUri.fsPath, TOOL_PINS_FILE_NAME)), {
      onProblem: (message) => this.reportPinProblem(message),
      howToAccept: howToAcceptInVsCode,
    });
    // Read while the configuration is, rather than after it: no server lists a tool before the pins are read.
    void this.toolPins.whenLoaded();
    this.router = new ToolRouter({ onLog: (server, line) => this.serverLog(server).info(line), features: this.clientHost.features(), toolPins: this.toolPins });
    this.sources = new ServerConfigSources(config, this.inputs.resolve, userSettingsFolder(context));
    this.disposables.push(this.log, this.sources, this.issuesChanged, this.sources.onDidChange(() => void this.reload()));
  }

  get configIssues(): readonly ConfigIssue[] {
    return this.lastIssues;
  }

  /** VS Code's own mcp.json files (workspace folders, user level) that exist. */
  vsCodeMcpJsonFiles(): Promise<VsCodeMcpJson[]> {
    return this.sources.vsCodeMcpJsonFiles();
  }

  /**
   * Servers the router starts from one of VS Code's own mcp.json files: VS Code starts them as well, so
   * they run twice until they are taken over.
   */
  get sharedWithVsCode(): readonly string[] {
    return this.loadedServers.filter((s) => path.basename(s.source.file) === 'mcp.json').map((s) => s.name);
  }

  /** Loads (or reloads) the configuration; calls are serialised so two reloads never interleave. */
  reload(): Promise<void> {
    this.reloading = this.reloading.then(() => this.doReload()).catch((error: unknown) => {
      this.log.error(`Reloading the server configuration failed: ${describeError(error)}`);
    });
    return this.reloading;
  }

  /** Resolves when the configuration loads under way (at activation, or after a change) have finished. */
  whenLoaded(): Promise<void> {
    return this.reloading;
  }

  /** Servers the user disabled from the UI, per workspace; the config files are left untouched. */
  get disabledServers(): ReadonlySet<string> {
    return new Set(this.context.workspaceState.get<string[]>(DISABLED_SERVERS_KEY, []));
  }

  async setServerEnabled(server: string, enabled: boolean): Promise<void> {
    const set = new Set(this.disabledServers);
    if (enabled) set.delete(server);
    else set.add(server);
    await this.context.workspaceState.update(DISABLED_SERVERS_KEY, [...set]);
    await this.reload();
  }

  serverLog(server: string): vscode.LogOutputChannel {
    let channel = this.serverLogs.get(server);
    if (!channel) {
      channel = vscode.window.createOutputChannel(`MCP Tool Router: ${server}`, { log: true });
      this.serverLogs.set(server, channel);
    }
    return channel;
  }

  dispose(): void {
    void this.router.dispose();
    this.serverLogs.forEach((c) => c.dispose());
    this.disposables.forEach((d) => d.dispose());
  }

  private async doReload(): Promise<void> {
    const loaded = await this.sources.load();
    const disabled = this.disabledServers;
    const servers = loaded.servers.map((s) => (disabled.has(s.name) ? { ...s, options: { ...s.options, enabled: false }, fingerprint: `${s.fingerprint}:disabled` } : s));
    const issues = loaded.issues;
    this.lastIssues = issues;
    this.loadedServers = loaded.servers;
    this.issuesChanged.fire(issues);
    for (const issue of issues) (issue.severity === 'error' ? this.log.error : this.log.warn).call(this.log, formatConfigIssue(issue));
    this.showNewErrors(issues);
    this.log.info(`Configuration loaded: ${servers.length} server(s)${issues.length ? `, ${issues.length} problem(s)` : ''}.`);
    await this.router.applyConfig(servers);
  }

  /** A pin file that cannot be read or written weakens the rug-pull check: said loudly, in the log and a warning. */
  private reportPinProblem(message: string): void {
    this.log.error(message);
    void vscode.window.showWarningMessage(`MCP Tool Router: ${message}`, vscode.l10n.t('Show Log')).then((pick) => {
      if (pick) this.log.show(true);
    });
  }

  /** Each distinct config error is shown once as a notification; repeats go to the log only. */
  private showNewErrors(issues: readonly ConfigIssue[]): void {
    const errors = issues.filter((i) => i.severity === 'error');
    const keys = new Set(errors.map(formatConfigIssue));
    const fresh = errors.filter((e) => !this.shownIssueKeys.has(formatConfigIssue(e)));
    this.shownIssueKeys = keys;
    if (fresh.length === 0) return;
    const first = formatConfigIssue(fresh[0]!);
    const more = fresh.length > 1 ? vscode.l10n.t(' (and {0} more)', fresh.length - 1) : '';
    void vscode.window.showErrorMessage(`MCP Tool Router: ${first}${more}`, vscode.l10n.t('Show Log')).then((pick) => {
      if (pick) this.log.show(true);
    });
  }
}

/**
 * VS Code's user settings folder (`…/User`), where the user-level mcp.json lives: two levels above the
 * extension's global storage (`…/User/globalStorage/<extension id>`).
 */
function userSettingsFolder(context: vscode.ExtensionContext): vscode.Uri | undefined {
  const storage = context.globalStorageUri;
  if (storage.scheme !== 'file') return undefined;
  return vscode.Uri.file(path.dirname(path.dirname(storage.fsPath)));
}
