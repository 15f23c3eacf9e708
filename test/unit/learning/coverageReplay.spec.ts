import assert from 'node:assert/strict';
import { coverageSummary, formatCoverageReport, replayCoverage, SwitchableUsageHints } from '../../../src/core/learning/coverageReplay';
import { UsageMemory, type UsageRecord } from '../../../src/core/learning/usageMemory';
import { LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';
import { rankableFor } from '../../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../../src/core/selection/toolSelector';

const T0 = Date.UTC(2025, 2, 1);
const MINUTE = 60_000;

function rec(at: number, prompt: string, offered: string[], called: string[], misses: string[] = [], extra: Partial<UsageRecord> = {}): UsageRecord {
  return { at, prompt, offered, called, misses, ...extra };
}

/**
 * A catalogue where lexical ranking alone sends the wrong tool for "weekly trends report": the words
 * match the analytics tools, while what the team actually uses for it is pdf_render (found by past use).
 */
const TOOLS: SelectableTool[] = [
  { name: 'pdf_render', server: 'pdf', description: 'Render an HTML document to a PDF file.' },
  { name: 'analytics_weekly_trends', server: 'analytics', description: 'Weekly trends of page views.' },
  { name: 'analytics_report', server: 'analytics', description: 'Build a report of the trends in traffic.' },
  { name: 'mail_send', server: 'mail', description: 'Send an email message.' },
  { name: 'files_read', server: 'files', description: 'Read a file from the disk.' },
  { name: 'files_write', server: 'files', description: 'Write a file to the disk.' },
  { name: 'calendar_events', server: 'calendar', description: 'List calendar events.' },
  { name: 'weather_now', server: 'weather', description: 'Current weather for a city.' },
];

/** The real selector (lexical ranking, as without an embedder), offering only its top 2, with swappable hints. */
// The prompts say "pdf", which names the pdf server; its lift is off so that only the memory brings pdf_render.
function lexicalSelector(): { selector: ToolSelector; slot: SwitchableUsageHints } {
  const slot = new SwitchableUsageHints();
  const selector = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, minTools: 2, cap: 2, lexicalZThreshold: 99, promptServerLift: 0 }, { createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)), usage: slot });
  selector.setCatalogue(TOOLS);
  return { selector, slot };
}

describe('coverage replay', () => {
  it('reports coverage before (as recorded) and after (the selector given), with lost and gained turns', async () => {
    const records = [
      rec(T0, 'send the minutes to the team', ['mail_send'], ['mail_send']),
      rec(T0 + MINUTE, 'read the notes file', ['mail_send'], ['files_read'], ['files_read']),
      rec(T0 + 2 * MINUTE, 'write the summary to disk', ['files_write'], ['files_write']),
      rec(T0 + 3 * MINUTE, 'hello', ['mail_send'], []),
      rec(T0 + 4 * MINUTE, 'use the retired tool', ['old_tool'], ['old_tool']),
    ];
    const now: Record<string, string[]> = {
      'send the minutes to the team': ['mail_send'],
      'read the notes file': ['files_read'],
      'write the summary to disk': ['files_read'],
    };
    const report = await replayCoverage(records, async (r) => now[r.prompt] ?? [], { catalogue: TOOLS.map((t) => t.name) });
    assert.equal(report.turns, 3);
    assert.equal(report.skipped, 2, 'no tool needed, and a tool no longer in the catalogue');
    assert.equal(report.coveredBefore, 2);
    assert.equal(report.coveredAfter, 2);
    assert.deepEqual(report.lost.map((t) => t.prompt), ['write the summary to disk']);
    assert.deepEqual(report.lost[0]!.missingAfter, ['files_write']);
    assert.deepEqual(report.gained.map((t) => t.prompt), ['read the notes file']);
    assert.deepEqual(report.stillMissing, []);
    assert.equal(report.timeOrdered, false);
    const summary = coverageSummary(report);
    assert.equal(summary['turns'], 3);
    assert.equal(summary['coverage_before'], 66.7);
    assert.equal(summary['coverage_after'], 66.7);
    const text = formatCoverageReport(report);
    assert.match(text, /coverage {2}before 66\.7% \(2\/3\) {3}after 66\.7% \(2\/3\)/);
    assert.match(text, /Lost coverage \(1\):\n {2}\[2025-03-01 00:02\] write the summary to disk\n {6}needed files_write; not offered after: files_write/);
    assert.match(text, /Gained coverage \(1\):/);
  });

  it('counts an agent search’s tools as needed, though nothing was offered up front', async () => {
    const records = [rec(T0, 'find a tool to send mail', [], ['mail_send'], ['mail_send'], { source: 'agent' })];
    const report = await replayCoverage(records, async () => ['mail_send']);
    assert.equal(report.agentTurns, 1);
    assert.equal(report.coverageBefore, 0);
    assert.equal(report.coverageAfter, 1);
  });

  it('time-ordered: the memory holds only earlier records, so a turn never sees its own answer', async () => {
    const { selector, slot } = lexicalSelector();
    const offeredFor = async (r: UsageRecord, hints: SwitchableUsageHints['current']): Promise<string[]> => {
      slot.current = hints;
      return (await selector.select({ prompt: r.prompt })).tools.map((t) => t.name);
    };
    const records = [
      rec(T0, 'make a pdf of the weekly trends report', ['analytics_weekly_trends', 'analytics_report'], ['pdf_render'], ['pdf_render']),
      rec(T0 + 7 * 24 * 60 * MINUTE, 'make a pdf of the weekly trends report for march', ['analytics_weekly_trends', 'analytics_report'], ['pdf_render'], ['pdf_render']),
    ];
    const alone = await replayCoverage(records, offeredFor);
    assert.equal(alone.coveredAfter, 0, 'lexical ranking alone does not offer pdf_render in its top 2');

    const seen: number[] = [];
    const withMemory = await replayCoverage(records, async (r, hints) => {
      seen.push((hints as UsageMemory).size);
      return offeredFor(r, hints);
    }, { timeOrdered: true });
    assert.deepEqual(seen, [0, 1], 'the first turn replays with an empty memory, the second with the first only');
    assert.equal(withMemory.timeOrdered, true);
    assert.deepEqual(withMemory.gained.map((t) => t.index), [1]);
    assert.deepEqual(withMemory.stillMissing.map((t) => t.index), [0]);
  });

  it('time-ordered: records of another model get the vector the selector made for them now', async () => {
    const vectors = new Map([['first', Float32Array.from([1, 0])], ['second', Float32Array.from([0.8, 0.6])]]);
    const remembered: Array<Float32Array | undefined> = [];
    const records = [rec(T0, 'first', [], ['a'], [], { vector: Float32Array.from([0, 1]), modelId: 'old-model' }), rec(T0 + MINUTE, 'second', [], ['a'])];
    await replayCoverage(
      records,
      async (r, hints) => {
        remembered.push(...(hints as UsageMemory).records().map((x) => x.vector));
        hints!.hintsFor(r.prompt, vectors.get(r.prompt));
        return [];
      },
      { timeOrdered: { modelId: 'new-model' } },
    );
    assert.deepEqual(remembered, [vectors.get('first')]);
  });

  it('time-ordered mode replays in time order whatever the order given, and reports in the order given', async () => {
    const order: string[] = [];
    const records = [rec(T0 + MINUTE, 'second', [], ['a']), rec(T0, 'first', [], ['a'])];
    const report = await replayCoverage(records, async (r) => (order.push(r.prompt), ['a']), { timeOrdered: true });
    assert.deepEqual(order, ['first', 'second']);
    assert.deepEqual(report.details.map((t) => t.prompt), ['second', 'first']);
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(replayCoverage([rec(T0, 'x', [], ['a'])], async () => [], { signal: controller.signal }), /cancelled/);
  });
});

describe('selector with the use memory', () => {
  it('ranks a tool a similar past prompt needed higher, and leaves unrelated prompts alone', async () => {
    const memory = new UsageMemory();
    const selector = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, minTools: 2, cap: 2, lexicalZThreshold: 99, promptServerLift: 0 }, { createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)), usage: memory });
    selector.setCatalogue(TOOLS);
    const prompt = 'make a pdf of the weekly trends report for march';
    const rankOf = async (p: string, name: string): Promise<number> => (await selector.select({ prompt: p })).ranking.findIndex((r) => r.name === name);
    const before = await rankOf(prompt, 'pdf_render');
    assert.ok(!(await selector.select({ prompt })).tools.some((t) => t.name === 'pdf_render'));

    memory.record({ prompt: 'make a pdf of the weekly trends report', offered: ['analytics_weekly_trends', 'analytics_report'], called: ['analytics_report'], misses: ['pdf_render'] });
    const after = await rankOf(prompt, 'pdf_render');
    assert.ok(after < before, `rank ${before} → ${after}`);
    assert.ok((await selector.select({ prompt })).tools.some((t) => t.name === 'pdf_render'));

    const unrelated = 'what is the weather in Lisbon';
    const plain = new ToolSelector(selector.options, { createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)) });
    plain.setCatalogue(TOOLS);
    assert.deepEqual((await selector.select({ prompt: unrelated })).ranking, (await plain.select({ prompt: unrelated })).ranking);
  });
});
