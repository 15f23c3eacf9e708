import * as vscode from 'vscode';
import { settings } from './configService';
import { argumentDiagnostics, callToolCommand, ResultDocuments, RESULT_SCHEME, type CallToolRequest } from './callToolCommand';
import { RouterService } from './routerService';
import { disableServer, listServers, refreshTools, restartServer, ServerTreeProvider, showServerLog, signIn, signOut } from './serverCommands';
import { CostMonitor, type CostLimits } from '../core/guards/costMonitor';
import { GatewayHost } from './gatewayHost';
import { setOnnxRuntimeFolder } from '../core/embedding/ortRuntime';
import { giveBackServers, takeOverServers, type TakeOverArgs } from './takeOverCommands';
import { PARTICIPANT_ID, RouterParticipant } from './chatParticipant';
import { RouterPanel } from './routerPanel';
import { registerModelNotices } from './modelOffer';
import { downloadModel, explainSelection, setEmbeddingsApiKey, type DownloadModelArgs } from './selectionCommands';
import { SelectionService } from './selectionService';
import { ServerStatusBar } from './serverStatusBar';
import { COMMANDS, VIEW_PANEL, VIEW_SERVERS } from './settings';
import { clearUsageMemory, replayUsage, UsageLearning } from './usageLearning';
import { PIN_DIFF_SCHEME, PinnedDefinitionDocuments, registerHeldBackNotices, reviewToolChanges, type ReviewToolChangesArgs } from './toolPinCommands';

/**
 * Activation is kept light: commands, the tree and the status bar are registered at once, and servers
 * start in the background, so VS Code's start is never held up by an MCP server.
 */

/** What `activate` returns: other extensions and the extension-host tests use it. */
export interface ToolRouterApi {
  readonly service: RouterService;
  readonly selection: SelectionService;
  readonly participant: RouterParticipant;
  /** The cost window `@router` charges (tests push it over its limits). */
  readonly cost: CostMonitor;
  /** The Tool Router panel's provider (tests read its counters). */
  readonly panel: RouterPanel;
  /** Learning from use: the use memory and its store (tests read and clear it). */
  readonly learning: UsageLearning;
  /** The gateway served by the extension host (tests connect to it as another MCP client would). */
  readonly gateway: GatewayHost;
  /** How long `activate()` took, and when it started (`performance.now()` of the extension host): bench:activation. */
  readonly activation: { readonly startedAt: number; readonly ms: number };
  /** Resolves when the configuration has been loaded and servers have had `timeoutMs` to settle. */
  whenSettled(timeoutMs?: number): Promise<void>;
}

/** How long `whenSettled` waits for slow servers by default. */
const DEFAULT_SETTLE_MS = 30_000;

export function activate(context: vscode.ExtensionContext): ToolRouterApi {
  const startedAt = performance.now();
  setOnnxRuntimeFolder(vscode.Uri.joinPath(context.globalStorageUri, 'runtime').fsPath);
  const service = new RouterService(context);
  settings.setLog(service.log);
  const results = new ResultDocuments();
  const pinDocuments = new PinnedDefinitionDocuments();
  const learning = new UsageLearning(context, service.log, (name) => service.router.getTool(name) !== undefined);
  const selection = new SelectionService(context, service, learning.memory);
  const tree = new ServerTreeProvider(service, () => selection.toolFlags());
  const cost = new CostMonitor(costLimits());
  service.clientHost.setCostMonitor(cost);
  // Read when each chat starts, so a change of loops.perTool applies from the next chat on.
  const loopOptions = () => ({ perTool: settings.get('loops.perTool') });
  const participant = new RouterParticipant(service, selection, cost, loopOptions, learning);
  const panel = new RouterPanel(context.extensionUri, service, selection, participant, cost);
  const gateway = new GatewayHost(service, selection, learning, String(context.extension.packageJSON.version ?? 'dev'));
  const chat = vscode.chat.createChatParticipant(PARTICIPANT_ID, participant.handler);
  chat.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icon.png');
  context.subscriptions.push(
    participant,
    chat,
    learning,
    vscode.commands.registerCommand(COMMANDS.clearUsageMemory, () => clearUsageMemory(learning)),
    vscode.commands.registerCommand(COMMANDS.replayUsage, (arg?: { quiet?: boolean }) => replayUsage(learning, selection, results, arg)),
    gateway,
    panel,
    vscode.window.registerWebviewViewProvider(VIEW_PANEL, panel),
    vscode.commands.registerCommand(COMMANDS.showPanel, () => panel.show()),
    settings,
    settings.onDidChange(['cost'], () => {
      cost.configure(costLimits());
      panel.refreshCost();
    }),
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
    service,
    selection,
    tree,
    argumentDiagnostics,
    new ServerStatusBar(service, context.workspaceState),
    vscode.window.registerTreeDataProvider(VIEW_SERVERS, tree),
    vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, results),
    vscode.workspace.registerTextDocumentContentProvider(PIN_DIFF_SCHEME, pinDocuments),
    vscode.commands.registerCommand(COMMANDS.reviewToolChanges, (arg?: ReviewToolChangesArgs) => reviewToolChanges(service, pinDocuments, arg)),
    registerHeldBackNotices(service),
    vscode.commands.registerCommand(COMMANDS.callTool, (request?: CallToolRequest) => callToolCommand(service, results, request ?? {})),
    vscode.commands.registerCommand(COMMANDS.restartServer, (arg?: unknown) => restartServer(service, arg)),
    vscode.commands.registerCommand(COMMANDS.showServerLog, (arg?: unknown) => showServerLog(service, arg)),
    vscode.commands.registerCommand(COMMANDS.refreshTools, (arg?: unknown) => refreshTools(service, arg)),
    vscode.commands.registerCommand(COMMANDS.listServers, () => listServers(service)),
    vscode.commands.registerCommand(COMMANDS.signIn, (arg?: unknown) => signIn(service, arg)),
    vscode.commands.registerCommand(COMMANDS.signOut, (arg?: unknown) => signOut(service, arg)),
    vscode.commands.registerCommand(COMMANDS.takeOverServers, (arg?: TakeOverArgs) => takeOverServers(service, arg)),
    vscode.commands.registerCommand(COMMANDS.giveBackServers, (arg?: TakeOverArgs) => giveBackServers(service, arg)),
    vscode.commands.registerCommand(COMMANDS.disableServer, (arg?: unknown) => disableServer(service, arg)),
    vscode.commands.registerCommand(COMMANDS.explainSelection, (arg?: { prompt?: string; quiet?: boolean }) => explainSelection(selection, results, arg)),
    vscode.commands.registerCommand(COMMANDS.downloadModel, (arg?: DownloadModelArgs) => downloadModel(context, service, arg)),
    registerModelNotices(context, service, selection),
    vscode.commands.registerCommand(COMMANDS.setEmbeddingsApiKey, () => setEmbeddingsApiKey(selection)),
    vscode.commands.registerCommand(COMMANDS.clearSavedInputs, async () => {
      const n = await service.inputs.clear();
      void vscode.window.showInformationMessage(vscode.l10n.t('Cleared {0} saved input value(s).', n));
    }),
  );
  flushLearning = () => learning.flush();
  // Versions before the in-host gateway wrote the toolRouter.servers setting (env values and headers
  // included) to this file for a separate gateway process; nothing reads it now, so it is removed.
  void Promise.resolve(vscode.workspace.fs.delete(vscode.Uri.joinPath(context.globalStorageUri, 'gateway-servers.json'))).catch(() => undefined);
  const loaded = service.reload();
  // The model loads after the servers have been asked to start, off the activation path.
  void loaded.then(() => selection.getEngine());
  const activation = { startedAt, ms: performance.now() - startedAt };
  return {
    activation,
    service,
    selection,
    participant,
    cost,
    panel,
    learning,
    gateway,
    whenSettled: async (timeoutMs = DEFAULT_SETTLE_MS) => {
      await loaded;
      await service.router.whenSettled(timeoutMs);
    },
  };
}

function costLimits(): CostLimits {
  return {
    enabled: settings.get('cost.enabled'),
    hourlyTokenCap: settings.get('cost.hourlyTokenCap'),
    shortWindowMinutes: settings.get('cost.shortWindowMinutes'),
    spikeMultiplier: settings.get('cost.spikeMultiplier'),
    minimumBaselineTokensPerMinute: settings.get('cost.minimumBaselineTokensPerMinute'),
  };
}

/** Set by activate: saves the use memory's last records, which would otherwise wait for a delayed write. */
let flushLearning: (() => Promise<void>) | undefined;

export async function deactivate(): Promise<void> {
  // Everything else is disposed through context.subscriptions, which also ends every server's process tree.
  await flushLearning?.();
}
