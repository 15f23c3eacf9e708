import * as vscode from 'vscode';
import type { ConfigService } from './configService';
import type { KeywordConfig } from '../core/selection/keywordStage';
import { createSelectionEngine, type EmbeddingSettings, type SelectionEngine } from '../core/selection/selectionEngine';
import type { Selection } from '../core/selection/selectionTypes';
import type { SelectionOptions, SelectionRequest } from '../core/selection/toolSelector';
import { inspectExposedTools, quarantineOf, type ToolFlag } from '../core/security/toolPoisoning';
import type { RoutedTool } from '../core/router/toolRouter';
import type { UsageMemory } from '../core/learning/usageMemory';
import type { RouterService } from './routerService';
import { SETTING_DEFAULTS } from './settingsSchema';

/**
 * Selection inside VS Code: builds the selection engine from the settings, keeps its catalogue in step
 * with the router's tools, and rebuilds it when an embeddings or selection setting changes. The model
 * loads and tool texts are embedded in the background; until then selection runs on keywords.
 * It also checks every tool for poisoning when the catalogue changes, and quarantines high-severity
 * flags from selection while toolRouter.security.quarantineFlaggedTools is on.
 */

const API_KEY_SECRET = 'toolRouter.embeddings.apiKey';

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

  /** @param usage the use memory (learning from use); selection runs without it when absent */
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly service: RouterService,
    private readonly config: ConfigService,
    private readonly usage?: UsageMemory,
  ) {
    this.inspect(service.router.listTools());
    // Flags are computed synchronously here, before the tree and the panel (which subscribe later) redraw.
    this.offTools = service.router.onDidChangeTools((tools) => {
      this.inspect(tools);
      void this.engine?.then((e) => e.selector.setCatalogue(tools));
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
    const engine = await this.getEngine();
    return engine.selector.select({ prompt, ...options });
  }

  /** Exposed tool name → poisoning flags, for the server tree and the panel. */
  toolFlags(): ReadonlyMap<string, readonly ToolFlag[]> {
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
    this.offTools();
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
      quarantine: this.quarantine,
      ...(this.usage ? { usage: this.usage } : {}),
    });
    // Prompt vectors are compared only with records of the same model.
    if (this.usage) this.usage.modelId = engine.index?.modelId;
    if (engine.embedderProblem) this.service.log.warn(`Tool selection uses keywords only: ${engine.embedderProblem}`);
    for (const issue of engine.selector.issues) this.service.log.warn(`Selection settings: ${issue}`);
    engine.selector.setCatalogue(this.service.router.listTools());
    // The model's session starts while the servers are still starting, not when the first prompt comes.
    void engine.warmUp();
    this.latest = engine;
    this.service.log.info(`Tool selection ready (${embeddings.provider === 'none' ? 'keywords only' : `${embeddings.provider} embeddings, model ${embeddings.model}`}).`);
    return engine;
  }
}
