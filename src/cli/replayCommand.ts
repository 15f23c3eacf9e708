import { coverageSummary, formatCoverageReport, replayThroughSelector, SwitchableUsageHints } from '../core/learning/coverageReplay';
import { readUsageFile } from '../core/learning/usageStore';
import { createSelectionEngine } from '../core/selection/selectionEngine';
import type { SelectableTool } from '../core/selection/selectionTypes';
import { defaultCacheDir, projectRoot, type SelectCliOptions } from './selectCommands';
import { loadInProcess } from '../core/embedding/onnxEmbedder';

/**
 * `replay`: the prompts recorded by the extension's use memory (its `tool-usage.jsonl`), run through
 * today's selector over a live config's catalogue (or a tools file). It prints the share of turns in
 * which every tool the model used was offered, as recorded ("before") and now ("after"), with the turns
 * that lost or gained coverage, and ends with one JSON line.
 *
 * By default "after" includes the use memory, rebuilt in time order from the earlier records only (as
 * the extension would have had it then); `--no-memory` replays the selector alone.
 */

export interface ReplayCliOptions extends SelectCliOptions {
  readonly recordsFile: string;
  /** Replay with the time-ordered use memory (default) or the selector alone. */
  readonly memory: boolean;
}

export async function runReplay(catalogue: readonly SelectableTool[], opts: ReplayCliOptions, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const records = await readUsageFile(opts.recordsFile);
  const slot = new SwitchableUsageHints();
  const engine = await createSelectionEngine({ loadModel: loadInProcess,
    embeddings: opts.embeddings,
    root: projectRoot(),
    cacheFolder: opts.cacheDir ?? defaultCacheDir(),
    log: (m) => err(`${m}\n`),
    usage: slot,
  });
  try {
    engine.selector.setCatalogue(catalogue);
    await engine.index?.whenReady();
    const report = await replayThroughSelector(records, engine.selector, slot, { memory: opts.memory, ...(engine.index ? { index: engine.index } : {}) });
    const summary = coverageSummary(report);
    if (opts.json) out(`${JSON.stringify(report, null, 2)}\n`);
    else out(`${records.length} records from ${opts.recordsFile} over ${catalogue.length} tools; after = today's selector${opts.memory ? ' with the use memory of the earlier records' : ' alone (--no-memory)'}\n${formatCoverageReport(report)}`);
    out(`${JSON.stringify(summary)}\n`);
    return 0;
  } finally {
    await engine.dispose();
  }
}
