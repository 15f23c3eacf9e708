import * as vscode from 'vscode';
import type { ConfigService } from './configService';
import { chatUsageRecord } from '../core/chat/turnUsage';
import { formatCoverageReport, replayThroughSelector, SwitchableUsageHints, type CoverageReport } from '../core/learning/coverageReplay';
import { neededTools, UsageMemory } from '../core/learning/usageMemory';
import { UsageStore } from '../core/learning/usageStore';
import type { ResultDocuments } from './callToolCommand';
import type { SelectionService } from './selectionService';
import { describeError } from '../core/errors/describeError';

/**
 * Learning from use inside VS Code: the use memory (src/core/learning) fed by `@router` turns and by an
 * agent's search-then-call, saved in this workspace's own storage (never synced, never sent anywhere),
 * switched by `toolRouter.learning.enabled`, cleared by **Clear Learned Tool Usage**, and measured by
 * **Replay Recorded Prompts (Coverage)**.
 */

/** An agent's call still follows its search within this time: one agent request rarely runs longer. */
const AGENT_SEARCH_WINDOW_MS = 10 * 60 * 1000;
/** Searches remembered for matching calls: an agent runs a few searches per request. */
const AGENT_SEARCHES_KEPT = 8;

export class UsageLearning implements vscode.Disposable {
  readonly memory: UsageMemory;
  private readonly store: UsageStore | undefined;
  private loaded: Promise<void>;
  private searches: Array<{ id: number; query: string; results: ReadonlySet<string>; at: number }> = [];
  private searchCount = 0;
  private readonly watcher: vscode.Disposable;

  /**
   * @param isTool whether a name is a routed tool: names the model made up are not recorded
   */
  constructor(context: vscode.ExtensionContext, config: ConfigService, private readonly log: vscode.LogOutputChannel, private readonly isTool: (name: string) => boolean) {
    const enabled = config.get('learning.enabled');
    // storageUri is per workspace; with no folder open, records live for the session only.
    this.store = context.storageUri ? new UsageStore(vscode.Uri.joinPath(context.storageUri, 'learning').fsPath, { log: (m) => log.warn(m) }) : undefined;
    this.memory = new UsageMemory({ enabled, onChange: () => this.store?.saveSoon(() => this.memory.records()) });
    this.loaded = enabled ? this.load() : Promise.resolve();
    this.watcher = config.onDidChange(['learning.enabled'], () => void this.setEnabled(config.get('learning.enabled')));
  }

  /** Resolves when the stored records have been read. */
  whenLoaded(): Promise<void> {
    return this.loaded;
  }

  /**
   * After a `@router` turn: its prompt, the tools offered up front and the tools the model called; the
   * tools it found during the turn and called are misses (see chatUsageRecord).
   */
  recordTurn(prompt: string, offered: readonly string[], called: readonly string[]): void {
    if (!this.memory.enabled) return;
    this.memory.record(chatUsageRecord(prompt, offered, called, this.isTool));
  }

  /** An agent's `toolRouter_searchTools` query and the tools it returned. */
  noteSearch(query: string, results: readonly string[]): void {
    if (!this.memory.enabled) return;
    this.searches.push({ id: ++this.searchCount, query, results: new Set(results), at: Date.now() });
    if (this.searches.length > AGENT_SEARCHES_KEPT) this.searches.shift();
  }

  /**
   * An agent's `toolRouter_callTool`: the tool was not offered up front, so it is a miss, recorded under
   * the query of the search that found it (the agent's prompt is not known to the router).
   */
  noteAgentCall(name: string): void {
    if (!this.memory.enabled || !this.isTool(name)) return;
    const now = Date.now();
    const recent = this.searches.filter((s) => now - s.at <= AGENT_SEARCH_WINDOW_MS);
    const search = [...recent].reverse().find((s) => s.results.has(name)) ?? recent[recent.length - 1];
    if (!search) return;
    this.memory.record({ prompt: search.query, offered: [], called: [name], misses: [name], source: 'agent', turnId: `agent-search-${search.id}` });
  }

  /** Forgets every record, in memory and on disk; returns how many there were. */
  async clear(): Promise<number> {
    await this.loaded;
    const count = this.memory.size;
    this.memory.clear();
    this.searches = [];
    await this.store?.delete();
    return count;
  }

  /** Writes what is waiting to be saved; resolves when it is on disk. */
  async flush(): Promise<void> {
    await this.store?.flush();
  }

  dispose(): void {
    this.watcher.dispose();
    void this.store?.flush();
  }

  private async load(): Promise<void> {
    if (!this.store) return;
    const stored = await this.store.load();
    // Turns recorded while the file was being read are kept with the stored ones.
    this.memory.replace([...stored, ...this.memory.records()]);
    if (stored.length) this.log.info(`Learning from use: ${stored.length} recorded prompt(s) loaded from ${this.store.file}.`);
  }

  private async setEnabled(on: boolean): Promise<void> {
    if (on === this.memory.enabled) return;
    if (on) {
      this.memory.enabled = true;
      this.loaded = this.load();
      this.log.info('Learning from use is on: prompts and the tools they needed are recorded in this workspace’s storage.');
    } else {
      // Off means nothing is kept: what was recorded is deleted too.
      await this.clear();
      this.memory.enabled = false;
      this.log.info('Learning from use is off; the recorded prompts were deleted.');
    }
  }
}

export async function clearUsageMemory(learning: UsageLearning): Promise<number> {
  const count = await learning.clear();
  void vscode.window.showInformationMessage(vscode.l10n.t('Cleared {0} recorded prompt(s) and the tools learned from them.', count));
  return count;
}

/** What Replay Recorded Prompts returns (tests read it): today's selector alone, and with the use memory. */
export interface ReplayResult {
  readonly alone: CoverageReport;
  readonly withMemory: CoverageReport;
  readonly text: string;
}

/**
 * Runs the recorded prompts through today's selector twice (alone, and with a use memory rebuilt in time
 * order from the earlier records only) and opens the report in a read-only document.
 */
export async function replayUsage(learning: UsageLearning, selection: SelectionService, results: ResultDocuments, arg?: { quiet?: boolean }): Promise<ReplayResult | undefined> {
  await learning.whenLoaded();
  const records = learning.memory.records();
  if (!records.some((r) => neededTools(r).length > 0)) {
    void vscode.window.showInformationMessage(
      learning.memory.enabled
        ? vscode.l10n.t('No recorded prompts with tool calls yet: chat with @router (or let an agent use the router) first.')
        : vscode.l10n.t('Learning from use is off (toolRouter.learning.enabled), so no prompts are recorded.'),
    );
    return undefined;
  }
  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Replaying {0} recorded prompt(s)', records.length), cancellable: true },
    async (progress, token) => {
      const controller = new AbortController();
      token.onCancellationRequested(() => controller.abort());
      const engine = await selection.getEngine();
      await engine.index?.whenReady();
      const catalogue = engine.selector.catalogue;
      const slot = new SwitchableUsageHints();
      const selector = engine.createSelector(slot);
      selector.setCatalogue(catalogue);
      let reported = 0;
      const onProgress = (done: number, total: number): void => {
        const pct = (50 * done) / total;
        progress.report({ increment: pct - reported });
        reported = pct;
      };
      const index = engine.index;
      const replay = (memory: boolean): Promise<CoverageReport> =>
        replayThroughSelector(records, selector, slot, { memory, ...(index ? { index } : {}), signal: controller.signal, onProgress });
      try {
        const alone = await replay(false);
        reported -= 50;
        const withMemory = await replay(true);
        return { alone, withMemory, tools: catalogue.length };
      } catch (error) {
        if (!token.isCancellationRequested) void vscode.window.showErrorMessage(vscode.l10n.t('Replaying the recorded prompts failed: {0}', describeError(error)));
        return undefined;
      }
    },
  );
  if (!outcome) return undefined;
  const text = [
    `Coverage replay: ${records.length} recorded prompt(s) of this workspace over today's ${outcome.tools} tools.`,
    'A turn is covered when every tool the model used (called, or missed and reached another way) was offered.',
    'Before = what was offered at the time; after = what today’s selection offers.',
    '',
    '== Today’s selector alone ==',
    formatCoverageReport(outcome.alone),
    '== Today’s selector with the use memory (rebuilt in time order: each prompt sees only earlier ones) ==',
    formatCoverageReport(outcome.withMemory),
  ].join('\n');
  if (!arg?.quiet) {
    const doc = await vscode.workspace.openTextDocument(results.add('coverage-replay', text, 'txt'));
    await vscode.window.showTextDocument(doc, { preview: true });
  }
  return { alone: outcome.alone, withMemory: outcome.withMemory, text };
}
