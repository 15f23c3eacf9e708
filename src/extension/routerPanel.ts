import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ConfigService } from './configService';
import type { CostMonitor } from '../core/guards/costMonitor';
import {
  coalesce,
  describeRejected,
  isExplain,
  isPinTool,
  isReady,
  isResetCostWindow,
  isResume,
  isSelectTurn,
  isShowServerLog,
  isWebviewMessage,
  type ExtensionMessage,
  type PanelState,
  type PinReply,
  type ServersView,
  type TurnView,
} from '../webview/protocol';
import { pinRefusal } from '../webview/nearMissView';
import type { RouterParticipant, TurnRecord } from './chatParticipant';
import type { RouterService } from './routerService';
import type { SelectionService } from './selectionService';
import { COMMANDS, VIEW_PANEL } from './commandIds';
import { SETTINGS_SECTION } from './settingsSchema';
import { describeError } from '../core/errors/describeError';

/**
 * The Tool Router panel: a webview view that follows every `@router` turn (selection, calls, guard
 * warnings), the cost window and the servers. The webview (src/webview/main.ts, bundled to
 * media/panel.js) asks for the state with `ready`; after that only batched updates are sent.
 */

/** Updates within this window go out as one batch, so a busy turn does not flood the view. */
export const PANEL_FLUSH_MS = 100;
/** The cost window and call statistics change without events; while the view is visible they are polled this often. */
export const PANEL_POLL_MS = 1000;
/** Turns sent in full with the state; older ones are fetched when picked (`selectTurn`). */
export const PANEL_STATE_TURNS = 20;
/** Tool descriptions are cut to this for the panel; the full text is in Call Tool…. */
const MAX_DESCRIPTION_CHARS = 300;
/** The core-tools setting, under SETTINGS_SECTION: the list Pin adds to. */
const CORE_TOOLS_KEY = 'selection.coreTools';

export class RouterPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private queue: ExtensionMessage[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private lastCostKey = '';
  private lastServersKey = '';
  private readonly disposables: vscode.Disposable[] = [];
  private viewDisposables: vscode.Disposable[] = [];
  /** For tests: how many messages from the webview were rejected, and how many batches were posted. */
  readonly counters = { rejected: 0, batches: 0, messages: 0 };

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly service: RouterService,
    private readonly selection: SelectionService,
    private readonly participant: RouterParticipant,
    private readonly cost: CostMonitor,
    private readonly config: ConfigService,
  ) {
    const offStatus = service.router.onDidChangeServerStatus(() => this.queueServers());
    const offTools = service.router.onDidChangeTools(() => this.queueServers());
    this.disposables.push(
      { dispose: offStatus },
      { dispose: offTools },
      participant.onDidFinishTurn((record) => {
        this.post({ type: 'turnAdded', turn: turnView(record), loops: this.participant.loopHistory() });
        this.queueCost(true);
        this.queueServers();
      }),
      config.onDidChange(['security'], () => this.queueServers()),
    );
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** Reveals the view (the `toolRouter.showPanel` command). */
  async show(): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_PANEL}.focus`);
  }

  /** Sends the current cost window at once (after Resume or Reset from anywhere). */
  refreshCost(): void {
    this.queueCost(true);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.viewDisposables.forEach((d) => d.dispose());
    this.view = view;
    this.ready = false;
    this.queue = [];
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    this.viewDisposables = [
      view.webview.onDidReceiveMessage((m: unknown) => void this.receive(m)),
      view.onDidChangeVisibility(() => this.updatePolling()),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.view = undefined;
          this.ready = false;
          this.updatePolling();
        }
      }),
    ];
    this.updatePolling();
  }

  dispose(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.viewDisposables.forEach((d) => d.dispose());
    this.disposables.forEach((d) => d.dispose());
  }

  // -------------------------------------------------------------------------------------------------

  private async receive(message: unknown): Promise<void> {
    if (!isWebviewMessage(message)) {
      this.counters.rejected++;
      this.service.log.warn(`Tool Router panel: ignored ${describeRejected(message)}.`);
      return;
    }
    if (isReady(message)) {
      this.ready = true;
      this.queue = [];
      this.post({ type: 'state', state: this.state() });
    } else if (isExplain(message)) {
      try {
        const selection = await this.selection.select(message.prompt);
        this.post({ type: 'explained', id: message.id, selection });
      } catch (error) {
        this.post({ type: 'explainFailed', id: message.id, prompt: message.prompt, message: describeError(error) });
      }
    } else if (isResume(message)) {
      await vscode.commands.executeCommand(COMMANDS.resume);
    } else if (isResetCostWindow(message)) {
      await vscode.commands.executeCommand(COMMANDS.resetCostWindow);
    } else if (isSelectTurn(message)) {
      const record = this.participant.history.find((r) => r.turn === message.turn);
      if (record) this.post({ type: 'turn', turn: turnView(record) });
    } else if (isShowServerLog(message)) {
      await vscode.commands.executeCommand(COMMANDS.showServerLog, message.server);
    } else if (isPinTool(message)) {
      this.post({ type: 'pinned', ...(await this.pin(message.tool)) });
    }
  }

  /**
   * Adds `tool` to the core tools, which are sent with every prompt: in the workspace's settings, or the
   * user's when no folder is open. It starts from the list in force, so a user-level list is not lost.
   */
  private async pin(tool: string): Promise<PinReply> {
    const scope = vscode.workspace.workspaceFolders?.length ? 'workspace' : 'user';
    const refusal = pinRefusal(tool, new Set(this.service.router.listTools().map((t) => t.name)));
    if (refusal) return { tool, outcome: 'refused', scope, detail: refusal };
    const inForce = this.config.get(CORE_TOOLS_KEY);
    if (inForce.includes(tool)) return { tool, outcome: 'already', scope };
    const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
    const set = config.inspect<string[]>(CORE_TOOLS_KEY);
    const base = (scope === 'workspace' ? set?.workspaceValue : set?.globalValue) ?? inForce;
    try {
      await config.update(CORE_TOOLS_KEY, [...base, tool], scope === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
      this.service.log.info(`Tool Router panel: pinned ${tool} (${SETTINGS_SECTION}.${CORE_TOOLS_KEY}, ${scope} settings).`);
      return { tool, outcome: 'added', scope };
    } catch (error) {
      const detail = describeError(error);
      this.service.log.warn(`Tool Router panel: could not pin ${tool}: ${detail}`);
      return { tool, outcome: 'failed', scope, detail };
    }
  }

  private state(): PanelState {
    const history = this.participant.history;
    const cost = this.cost.snapshot();
    const servers = this.servers();
    this.lastCostKey = costKey(cost);
    this.lastServersKey = JSON.stringify(servers);
    return {
      turns: history.slice(-PANEL_STATE_TURNS).map(turnView),
      turnNumbers: history.map((r) => r.turn),
      cost,
      loops: this.participant.loopHistory(),
      servers,
      descriptions: this.descriptions(),
    };
  }

  private servers(): ServersView {
    const router = this.service.router;
    const flags = this.selection.toolFlags();
    const quarantining = this.config.get('security.quarantineFlaggedTools');
    return {
      statuses: router.serverStatuses,
      stats: router.stats.all(),
      toolServers: Object.fromEntries(router.listTools().map((t) => [t.name, t.server])),
      ...(flags.size > 0
        ? { flags: Object.fromEntries([...flags].map(([name, list]) => [name, list.map((f) => ({ ...f, ...(quarantining && f.severity === 'high' ? { quarantined: true } : {}) }))])) }
        : {}),
    };
  }

  private descriptions(): Record<string, string> {
    return Object.fromEntries(
      this.service.router.listTools().map((t) => {
        const d = t.originalDescription || t.description;
        return [t.name, d.length > MAX_DESCRIPTION_CHARS ? `${d.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : d];
      }),
    );
  }

  private queueCost(force = false): void {
    const snapshot = this.cost.snapshot();
    const key = costKey(snapshot);
    if (!force && key === this.lastCostKey) return;
    this.lastCostKey = key;
    this.post({ type: 'cost', cost: snapshot });
  }

  private queueServers(): void {
    const servers = this.servers();
    const key = JSON.stringify(servers);
    if (key === this.lastServersKey) return;
    this.lastServersKey = key;
    this.post({ type: 'servers', servers, descriptions: this.descriptions() });
  }

  /** Queues a message; nothing is sent before the webview's `ready` (its state then covers it). */
  private post(message: ExtensionMessage): void {
    if (!this.view || !this.ready) return;
    this.queue.push(message);
    this.flushTimer ??= setTimeout(() => this.flush(), PANEL_FLUSH_MS);
  }

  private flush(): void {
    this.flushTimer = undefined;
    const view = this.view;
    const batch = coalesce(this.queue);
    this.queue = [];
    if (!view || batch.length === 0) return;
    this.counters.batches++;
    this.counters.messages += batch.length;
    for (const m of batch) void view.webview.postMessage(m);
  }

  private updatePolling(): void {
    const poll = this.view?.visible === true;
    if (poll && !this.pollTimer) {
      this.pollTimer = setInterval(() => {
        this.queueCost();
        this.queueServers();
      }, PANEL_POLL_MS);
    } else if (!poll && this.pollTimer) {
      clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    }
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(media, 'panel.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, 'panel.css'));
    const csp = [`default-src 'none'`, `style-src ${webview.cspSource}`, `img-src ${webview.cspSource}`, `font-src ${webview.cspSource}`, `script-src 'nonce-${nonce}'`].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>${escapeAttribute(vscode.l10n.t('Tool Router'))}</title>
</head>
<body>
<main>
<h1 class="visually-hidden">${escapeAttribute(vscode.l10n.t('Tool Router'))}</h1>
<p id="status" class="status" role="status"></p>
<div id="app"><p class="muted">${escapeAttribute(vscode.l10n.t('Loading…'))}</p></div>
</main>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }
}

/** A TurnRecord as the panel needs it: no answer text and no results (they can be large). */
export function turnView(record: TurnRecord): TurnView {
  return {
    turn: record.turn,
    prompt: record.prompt,
    at: record.at,
    selection: record.selection,
    calls: record.result.calls.map((c) => ({
      name: c.call.name,
      ok: c.envelope.ok,
      ...(c.envelope.ok ? {} : { errorType: c.envelope.error.type }),
      latencyMs: c.envelope.meta.latencyMs,
      ...(c.confirmation ? { confirmation: c.confirmation } : {}),
    })),
    warnings: record.result.warnings,
    usage: record.result.usage,
    paused: record.result.paused,
    ...(record.result.found.length ? { found: record.result.found } : {}),
  };
}

/** What decides whether the cost view changed: `now` moves every poll, the rest only with usage. */
function costKey(s: ReturnType<CostMonitor['snapshot']>): string {
  const minute = s.buckets.at(-1)?.start ?? 0;
  return JSON.stringify([minute, s.totals, s.countedTokens, s.limits, s.paused?.at ?? 0, s.topTools.length, s.shortWindowRate, s.baselineRate]);
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
