import * as vscode from 'vscode';
import type { ConfigService } from './configService';
import type { KeywordConfig } from '../core/selection/keywordStage';
import { createSelectionEngine, type EmbeddingSettings, type SelectionEngine } from '../core/selection/selectionEngine';
import type { Selection } from '../core/selection/selectionTypes';
import type { SelectionOptions, SelectionRequest } from '../core/selection/toolSelector';
import { inspectExposedTools, quarantineOf, type ToolFlag } from '../core/security/toolPoisoning';
import type { RoutedTool } from '../core/router/toolRouter';
import { listsToSave, SavedToolLists, SAVED_TOOL_LISTS_FOLDER, savedListsFile, selectionDigest, withSavedTools, type SavedServerTools } from '../core/router/savedToolLists';
import type { UsageMemory } from '../core/learning/usageMemory';
import type { RouterService } from './routerService';
import { SETTING_DEFAULTS } from './settingsSchema';
import type { ServerDefinition } from '../core/config/serverConfig';
import { describeError } from '../core/errors/describeError';
import { loadInWorker } from '../core/embedding/workerEmbedder';
import { waitAtMost } from '../core/util/waitAtMost';

/**
 * Selection inside VS Code: builds the selection engine from the settings, keeps its catalogue in step
 * with the router's tools, and rebuilds it when an embeddings or selection setting changes. The model
 * loads and tool texts are embedded in the background; until then selection runs on keywords.
 * It also checks every tool for poisoning when the catalogue changes, and quarantines high-severity
 * flags from selection while toolRouter.security.quarantineFlaggedTools is on.
 * While a server starts, selection ranks the tools it listed last time (savedToolLists.ts), so the first
 * prompt need not wait for every server; those tools are never offered until the server lists them.
 */

const API_KEY_SECRET = 'toolRouter.embeddings.apiKey';

/** How long building selection waits for the configuration to load (and the servers to be asked to start). */
const CONFIG_WAIT_MS = 5_000;

/** Quiet time after the last change before the tool lists are saved: a starting session changes often. */
const SAVE_DELAY_MS = 5_000;

/** The embeddings.* settings the engine is built from: all but the pretrained-model offer. */
const ENGINE_EMBEDDING_SETTINGS = Object.keys(SETTING_DEFAULTS).filter((k) => k.startsWith('embeddings.') && k !== 'embeddings.offerPretrainedModel');

export class SelectionService implements vscode.Disposable {
  private engine: Promise<SelectionEngine> | undefined;
  /** The newest engine that finished loading (what `current()` returns). */
  private latest: SelectionEngine | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly offTools: () => void;
  /** Exposed tool name → its poisoning flags (flagged tools only). */
  private flags: ReadonlyMap<string, readonly ToolFlag[]> = new Map();
  /** Exposed tool name → why it is quarantined (high-severity flags only). */
  private quarantined: ReadonlyMap<string, string> = new Map();
  /** Flags already written to the log, so a list refresh does not repeat them. */
  private readonly loggedFlags = new Set<string>();
  private readonly offStatus: () => void;
  private readonly savedLists: SavedToolLists;
  /** The lists saved last session, once read. */
  private saved: ReadonlyMap<string, SavedServerTools> = new Map();
  /** Saved tools in selection's catalogue now: ranked, but not yet listed by their server. */
  private savedNow: ReadonlySet<string> = new Set();
  private catalogue: readonly RoutedTool[] = [];
  /** selectionDigest of `catalogue`: a live list equal to the saved one changes nothing selection reads. */
  private catalogueDigest = '';
  private saveTimer: NodeJS.Timeout | undefined;
  /** A status change not yet applied to the catalogue: applied on the next turn, or sooner when read. */
  private statusRefresh: NodeJS.Immediate | undefined;
  private lastSaved = '';
  /** Resolves once the saved lists have been read (or found missing). */
  readonly savedListsRead: Promise<void>;

  /** @param usage the use memory (learning from use); selection runs without it when absent */
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly service: RouterService,
    private readonly config: ConfigService,
    private readonly usage?: UsageMemory,
  ) {
    // Per workspace, as its servers are: two windows on different folders must not drop each other's lists.
    // By path alone: a remote authority (code-server's host and port) may differ from one start to the next.
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.path);
    this.savedLists = new SavedToolLists(savedListsFile(vscode.Uri.joinPath(context.globalStorageUri, SAVED_TOOL_LISTS_FOLDER).fsPath, folders), (m) => service.log.warn(m));
    this.refreshCatalogue(true);
    // Flags are computed synchronously here, before the tree and the panel (which subscribe later) redraw.
    this.offTools = service.router.onDidChangeTools(() => {
      this.refreshCatalogue(true);
      this.scheduleSave();
    });
    // A server leaving `starting` takes its saved tools out, whether it listed tools or failed. Not inside
    // the router's event: a starting server would wait for the check of its saved tools before it spawns.
    this.offStatus = service.router.onDidChangeServerStatus(() => {
      this.statusRefresh ??= setImmediate(() => this.flushStatus());
    });
    this.savedListsRead = this.savedLists.load().then((saved) => {
      this.saved = saved;
      // Unchanged lists are not written again.
      this.lastSaved = JSON.stringify([...saved]);
      this.refreshCatalogue(false);
    });
    this.disposables.push(
      // The pretrained-model offer lives under embeddings.* but changes nothing the engine uses.
      config.onDidChange(['selection', ...ENGINE_EMBEDDING_SETTINGS], () => void this.rebuild()),
    );
  }

  /** The engine, created on first use (so activation never waits for the model). */
  getEngine(): Promise<SelectionEngine> {
    this.engine ??= this.create();
    return this.engine;
  }

  /**
   * The newest engine that has loaded, for callers that cannot wait (the gateway's sessions); after
   * `getEngine()` has resolved once there always is one.
   */
  current(): SelectionEngine {
    if (!this.latest) throw new Error('The selection engine has not loaded yet; await getEngine() first.');
    return this.latest;
  }

  async select(prompt: string, options: Omit<SelectionRequest, 'prompt'> = {}): Promise<Selection> {
    this.flushStatus();
    const engine = await this.getEngine();
    return engine.selector.select({ prompt, ...options });
  }

  /** Where this workspace's tool lists are saved (global storage, a file per set of workspace folders). */
  get toolListsFile(): string {
    return this.savedLists.file;
  }

  /** Whether `name` is a saved tool of a server still starting: ranked, but not callable or offerable yet. */
  isSavedOnly(name: string): boolean {
    this.flushStatus();
    return this.savedNow.has(name);
  }

  /**
   * Servers still starting whose tools selection cannot rank yet (no usable saved list): a prompt that
   * comes now would be ranked without them.
   */
  unrankedStartingServers(): string[] {
    this.flushStatus();
    const ranked = new Set(this.catalogue.map((t) => t.server));
    return this.startingServers().filter((d) => !ranked.has(d.name)).map((d) => d.name);
  }

  /** Writes the current tool lists now, if they changed (deactivation, the activation bench). */
  async saveToolLists(): Promise<void> {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const router = this.service.router;
    const connections = router.listConnections();
    if (connections.some((c) => c.currentState === 'starting')) return;
    // Servers that did not list tools this time keep what they listed before, while their definition stands.
    const lists = new Map(this.saved);
    for (const name of lists.keys()) if (!router.getConnection(name)) lists.delete(name);
    const ready = connections.filter((c) => c.currentState === 'ready').map((c) => c.definition);
    for (const [name, list] of listsToSave(router.listTools(), ready)) lists.set(name, list);
    const text = JSON.stringify([...lists]);
    if (text === this.lastSaved) return;
    try {
      await this.savedLists.save(lists);
      this.lastSaved = text;
      this.saved = lists;
    } catch (error) {
      this.service.log.warn(`The tool lists could not be saved to ${this.savedLists.file} (${describeError(error)}); the next start waits for the servers before ranking their tools.`);
    }
  }

  /** Exposed tool name → poisoning flags, for the server tree and the panel. */
  toolFlags(): ReadonlyMap<string, readonly ToolFlag[]> {
    this.flushStatus();
    return this.flags;
  }

  /** Exposed tool name → why it is kept out of selection (empty while the setting is off). */
  quarantinedTools(): ReadonlyMap<string, string> {
    return this.quarantine();
  }

  /** Read at every selection, so turning the setting off or on needs no rebuild. */
  private readonly quarantine = (): ReadonlyMap<string, string> => {
    const on = this.config.get('security.quarantineFlaggedTools');
    return on ? this.quarantined : new Map<string, string>();
  };

  /** Applies a pending status change: the saved tools of servers that started or stopped starting. */
  private flushStatus(): void {
    if (!this.statusRefresh) return;
    clearImmediate(this.statusRefresh);
    this.statusRefresh = undefined;
    this.refreshCatalogue(false);
    this.scheduleSave();
  }

  private startingServers(): ServerDefinition[] {
    return this.service.router.listConnections().filter((c) => c.currentState === 'starting').map((c) => c.definition);
  }

  /** Live tools plus the saved tools of servers still starting; selection gets it when it changed. */
  private refreshCatalogue(liveChanged: boolean): void {
    const { tools, saved } = withSavedTools(this.service.router.listTools(), this.startingServers(), this.saved);
    const sameSaved = saved.size === this.savedNow.size && [...saved].every((n) => this.savedNow.has(n));
    if (!liveChanged && sameSaved) return;
    this.savedNow = saved;
    // The digest covers all the poisoning check reads too (names, servers, descriptions, schemas).
    const digest = selectionDigest(tools);
    if (digest === this.catalogueDigest) return;
    this.catalogueDigest = digest;
    this.catalogue = tools;
    this.inspect(tools);
    // An engine still loading takes the newest catalogue itself; one that has loaded gets only the newest.
    void this.engine?.then((e) => {
      if (tools === this.catalogue && e.selector.catalogueSource !== tools) e.selector.setCatalogue(tools);
    });
  }

  private scheduleSave(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => void this.saveToolLists(), SAVE_DELAY_MS);
    this.saveTimer.unref?.();
  }

  private inspect(tools: readonly RoutedTool[]): void {
    const flags = inspectExposedTools(tools);
    const quarantined = quarantineOf(flags);
    for (const [name, list] of flags) {
      for (const f of list) {
        const key = `${name}\u0000${f.reason}`;
        if (this.loggedFlags.has(key)) continue;
        this.loggedFlags.add(key);
        // Reasons quote at most a short, sanitised excerpt of the server's text, never arguments or secrets.
        this.service.log.warn(`Tool "${name}" flagged (${f.severity}, ${f.kind}${f.severity === 'high' ? '; quarantined while toolRouter.security.quarantineFlaggedTools is on' : ''}): ${f.reason}`);
      }
    }
    this.flags = flags;
    this.quarantined = quarantined;
  }

  async setApiKey(value: string | undefined): Promise<void> {
    if (value) await this.context.secrets.store(API_KEY_SECRET, value);
    else await this.context.secrets.delete(API_KEY_SECRET);
    await this.rebuild();
  }

  dispose(): void {
    clearTimeout(this.saveTimer);
    clearImmediate(this.statusRefresh);
    this.offTools();
    this.offStatus();
    this.disposables.forEach((d) => d.dispose());
    void this.engine?.then((e) => e.dispose());
  }

  /** The old engine serves until the new one has loaded, so no caller ever holds a disposed engine. */
  private async rebuild(): Promise<void> {
    const old = this.engine;
    const next = this.create();
    this.engine = next;
    await next.catch(() => undefined);
    await old?.then((e) => e.dispose());
  }

  private async create(): Promise<SelectionEngine> {
    const provider = this.config.get('embeddings.provider');
    const endpoint = this.config.get('embeddings.endpoint');
    const apiKey = provider === 'openai' ? await this.context.secrets.get(API_KEY_SECRET) : undefined;
    const embeddings: EmbeddingSettings = {
      provider,
      model: this.config.get('embeddings.model'),
      ...(endpoint ? { endpoint } : {}),
      ...(apiKey ? { apiKey } : {}),
    };
    const keyword: KeywordConfig = {
      groups: this.config.get('selection.groups'),
      routes: this.config.get('selection.routes'),
      defaultGroups: this.config.get('selection.defaultGroups'),
    };
    const selection: Partial<SelectionOptions> = {
      minTools: this.config.get('selection.minTools'),
      depth: this.config.get('selection.depth'),
      cap: this.config.get('selection.cap'),
      coreTools: this.config.get('selection.coreTools'),
      allowedTools: this.config.get('selection.allowedTools'),
      callPolicy: this.config.callPolicy(),
      keyword,
    };
    const log = (m: string): void => this.service.log.warn(m);
    const engine = await createSelectionEngine({
      embeddings,
      selection,
      root: this.context.extensionUri.fsPath,
      cacheFolder: vscode.Uri.joinPath(this.context.globalStorageUri, 'embeddings').fsPath,
      log,
      // The model loads and runs in a worker thread, so the extension host's own thread stays free.
      loadModel: loadInWorker({
        script: vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'embedWorker.js').fsPath,
        onRestart: (reason) => this.service.log.warn(`The embedding worker stopped (${reason}) and was started again; the embeds it had are sent again.`),
      }),
      // The servers are asked to start before this thread builds selection: a server starts in parallel.
      after: waitAtMost(this.service.whenLoaded(), CONFIG_WAIT_MS),
      quarantine: this.quarantine,
      ...(this.usage ? { usage: this.usage } : {}),
    });
    // Prompt vectors are compared only with records of the same model.
    if (this.usage) this.usage.modelId = engine.index?.modelId;
    if (engine.embedderProblem) this.service.log.warn(`Tool selection uses keywords only: ${engine.embedderProblem}`);
    for (const issue of engine.selector.issues) this.service.log.warn(`Selection settings: ${issue}`);
    engine.selector.setCatalogue(this.catalogue);
    // The model's session starts while the servers are still starting, not when the first prompt comes.
    void engine.warmUp();
    this.latest = engine;
    this.service.log.info(`Tool selection ready (${embeddings.provider === 'none' ? 'keywords only' : `${embeddings.provider} embeddings, model ${embeddings.model}`}).`);
    return engine;
  }
}
