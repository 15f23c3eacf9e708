import type { DataQuery } from '../src/core/evaluation/retrievalData';
import { retrievalMetrics } from '../src/core/evaluation/retrievalData';
import { needRecall, sentAll } from '../src/core/evaluation/selectionEvaluation';
import type { QueryOutcome } from '../src/core/evaluation/selectionEvaluation';
import { serverOfId } from './data/generalKinds';

/**
 * The parts of `eval:select` for the round-four team requests (tasks in the style of real ones): figures per
 * group (browse, dates, document, names, steps), the browser kind's recall, and `sent_all` by the number of
 * steps a task has. Only requests that carry a group are counted.
 */

export interface RoundFourFigures {
  /** Per group: requests, recall@25, all@25, sent_all (percent) and tools sent on average. */
  readonly groups: Record<string, { n: number; 'recall@25': number; 'all@25': number; sent_all: number; mean_sent: number }>;
  /** recall@25 of the browser tools that stand for an unnamed browsing need. */
  readonly 'browser_recall@25': number;
  /**
   * Of the requests with a browser need, the share (percent) whose selection, as sent and before any
   * alternative is credited, holds a browser tool that opens a page: the kind's recall credits any browser
   * tool, and a hover or a screenshot cannot open the site.
   */
  readonly browser_opener_sent: number;
  /** recall@25 of the gold tools of the cross-language names group. */
  readonly 'names_recall@25': number;
  /** Per number of steps: requests, sent_all and tools sent on average. */
  readonly bySteps: Record<string, { n: number; sent_all: number; mean_sent: number }>;
  /**
   * The tasks written for the browser server itself, each listing every page tool it needs (start, open,
   * type, click, read), summed up as a group is; absent when the set has none.
   */
  readonly pageTasks?: RoundFourFigures['groups'][string];
}

export function roundFourFigures(queries: readonly DataQuery[], outcomes: readonly QueryOutcome[], browserTools: ReadonlySet<string>, sent: { raw: readonly QueryOutcome[]; openers: ReadonlySet<string> }): RoundFourFigures | undefined {
  const picked = queries.map((q, i) => ({ q, o: outcomes[i]! })).filter(({ q }) => q.group !== undefined);
  if (picked.length === 0) return undefined;
  const summarise = (rows: typeof picked) => {
    const queries = rows.map((r) => r.q);
    const metrics = retrievalMetrics(queries, rows.map((r) => r.o.ranked));
    return {
      n: rows.length,
      'recall@25': metrics['recall@25'],
      'all@25': metrics['all@25'],
      sent_all: sentAll(queries, rows.map((r) => r.o.selected)),
      mean_sent: round1(rows.reduce((s, r) => s + r.o.selected.length, 0) / rows.length),
    };
  };
  const groups: RoundFourFigures['groups'] = {};
  for (const group of [...new Set(picked.map(({ q }) => q.group!))].sort()) groups[group] = summarise(picked.filter(({ q }) => q.group === group));
  const bySteps: RoundFourFigures['bySteps'] = {};
  for (const steps of [...new Set(picked.map(({ q }) => q.steps ?? 0))].sort((a, b) => a - b)) {
    const { n, sent_all, mean_sent } = summarise(picked.filter(({ q }) => (q.steps ?? 0) === steps));
    bySteps[String(steps)] = { n, sent_all, mean_sent };
  }
  const browser = needRecall(picked.map((r) => r.q), picked.map((r) => r.o.ranked), (q) => (q.general ?? []).filter((g) => browserTools.has(g)), 25);
  const names = picked.filter(({ q }) => q.group === 'names');
  const namesRecall = needRecall(names.map((r) => r.q), names.map((r) => r.o.ranked), (q) => q.gold, 25);
  const browsing = queries.map((q, i) => ({ q, o: sent.raw[i] })).filter(({ q, o }) => o && (q.general ?? []).some((g) => browserTools.has(g)));
  const opened = browsing.filter(({ o }) => o!.selected.some((name) => sent.openers.has(name))).length;
  const openerSent = browsing.length ? round1((100 * opened) / browsing.length) : 0;
  const pageServers = new Set([...browserTools].map(serverOfId));
  const pageRows = queries.map((q, i) => ({ q, o: outcomes[i]! })).filter(({ q }) => pageServers.has(q.id.replace(/-\d+$/, '')));
  const pageTasks = pageRows.length ? summarise(pageRows) : undefined;
  return { groups, 'browser_recall@25': browser.recall, browser_opener_sent: openerSent, 'names_recall@25': namesRecall.recall, bySteps, ...(pageTasks ? { pageTasks } : {}) };
}

/** The figures as a few lines of text for the console. */
export function roundFourTable(figures: RoundFourFigures): string {
  const lines = ['round four (team requests in the style of real tasks):', `  ${'group'.padEnd(10)}${'n'.padStart(5)}${'recall@25'.padStart(11)}${'all@25'.padStart(8)}${'sent_all'.padStart(10)}${'mean_sent'.padStart(11)}`];
  for (const [group, g] of Object.entries(figures.groups)) {
    lines.push(`  ${group.padEnd(10)}${String(g.n).padStart(5)}${g['recall@25'].toFixed(1).padStart(11)}${g['all@25'].toFixed(1).padStart(8)}${g.sent_all.toFixed(1).padStart(10)}${g.mean_sent.toFixed(1).padStart(11)}`);
  }
  lines.push(`  browser-kind recall@25 ${figures['browser_recall@25'].toFixed(1)} (a page-opening tool sent: ${figures.browser_opener_sent.toFixed(1)}%), cross-language names recall@25 ${figures['names_recall@25'].toFixed(1)}`);
  lines.push(`  sent_all by steps: ${Object.entries(figures.bySteps).map(([k, v]) => `${k} steps ${v.sent_all.toFixed(1)} (n ${v.n}, ${v.mean_sent.toFixed(1)} sent)`).join('; ')}`);
  const page = figures.pageTasks;
  if (page) lines.push(`  browser tasks with every page tool listed (${page.n}): every needed tool sent ${page.sent_all}% at ${page.mean_sent} tools`);
  return lines.join('\n');
}

function round1(x: number): number {
  return Math.round(10 * x) / 10;
}
