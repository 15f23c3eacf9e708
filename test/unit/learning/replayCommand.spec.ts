import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/main';
import type { UsageRecord } from '../../../src/core/learning/usageMemory';
import { UsageStore } from '../../../src/core/learning/usageStore';

/**
 * `mcp-tool-router replay` on a catalogue file (the live-config path differs only in where the catalogue
 * comes from): the records file is written by the same store the extension uses.
 */

const TOOLS = [
  { id: 'analytics_weekly_trends', name: 'weekly_trends', server: 'analytics', description: 'Weekly trends of page views.' },
  { id: 'analytics_report', name: 'report', server: 'analytics', description: 'Build a report of the trends in traffic.' },
  { id: 'mail_send', name: 'send', server: 'mail', description: 'Send an email message.' },
  { id: 'files_read', name: 'read', server: 'files', description: 'Read a file from the disk.' },
  { id: 'files_write', name: 'write', server: 'files', description: 'Write a file to the disk.' },
  { id: 'calendar_events', name: 'events', server: 'calendar', description: 'List calendar events.' },
  { id: 'weather_now', name: 'now', server: 'weather', description: 'Current weather for a city.' },
  { id: 'notes_search', name: 'search', server: 'notes', description: 'Search the notes.' },
  { id: 'tasks_add', name: 'add', server: 'tasks', description: 'Add a task to a list.' },
  { id: 'chat_post', name: 'post', server: 'chat', description: 'Post a message in a channel.' },
  // Shares no word with "weekly trends report for the board": only past use can bring it in.
  { id: 'pdf_render', name: 'render', server: 'pdf', description: 'Render an HTML document to a PDF file.' },
];

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2025, 2, 1);
const RECORDS: UsageRecord[] = [
  { at: T0, prompt: 'weekly trends report for the board', offered: ['analytics_weekly_trends'], called: ['analytics_report'], misses: ['pdf_render', 'analytics_report'] },
  { at: T0 + DAY, prompt: 'weekly trends report for the board, march edition', offered: ['analytics_weekly_trends'], called: ['analytics_report'], misses: ['pdf_render', 'analytics_report'] },
  { at: T0 + 2 * DAY, prompt: 'send an email message to the team', offered: ['mail_send'], called: ['mail_send'], misses: [] },
];

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, (s) => void (out += s), (s) => void (err += s));
  return { code, out, err };
}

describe('CLI replay', () => {
  let dir: string;
  let toolsFile: string;
  let recordsFile: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-cli-'));
    toolsFile = path.join(dir, 'tools.jsonl');
    fs.writeFileSync(toolsFile, `${TOOLS.map((t) => JSON.stringify(t)).join('\n')}\n`);
    const store = new UsageStore(dir);
    await store.save(RECORDS);
    recordsFile = store.file;
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prints coverage before and after, the turns that changed, and ends with one JSON line', async () => {
    const r = await cli(['replay', '--records', recordsFile, '--tools', toolsFile, '--embeddings', 'none']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /3 records from .* over 11 tools; after = today's selector with the use memory of the earlier records/);
    assert.match(r.out, /coverage {2}before 33\.3% \(1\/3\)/);
    const last = JSON.parse(r.out.trimEnd().split('\n').pop()!) as Record<string, unknown>;
    assert.equal(last['turns'], 3);
    assert.equal(last['coverage_before'], 33.3);
    assert.equal(typeof last['coverage_after'], 'number');
    assert.equal(last['time_ordered_memory'], true);
  });

  it('with the memory, the later similar prompt gains the tool the earlier one missed', async function () {
    // Runs the replay command twice (~0.25 s idle); a loaded machine is several times slower.
    this.timeout(20_000);
    const withMemory = await cli(['replay', '--records', recordsFile, '--tools', toolsFile, '--embeddings', 'none', '--json']);
    const alone = await cli(['replay', '--records', recordsFile, '--tools', toolsFile, '--embeddings', 'none', '--json', '--no-memory']);
    assert.equal(withMemory.code, 0, withMemory.err);
    assert.equal(alone.code, 0, alone.err);
    const report = (out: string): { details: Array<{ index: number; missingAfter: string[] }> } => JSON.parse(out.slice(0, out.trimEnd().lastIndexOf('\n'))) as never;
    const missing = (out: string, index: number): string[] => report(out).details.find((t) => t.index === index)!.missingAfter;
    assert.ok(missing(alone.out, 1).includes('pdf_render'), 'lexical ranking alone does not offer pdf_render');
    assert.ok(!missing(withMemory.out, 1).includes('pdf_render'));
    assert.ok(missing(withMemory.out, 0).includes('pdf_render'), 'the first turn has no earlier records to learn from');
    const summary = (out: string): Record<string, unknown> => JSON.parse(out.trimEnd().split('\n').pop()!) as Record<string, unknown>;
    assert.equal(summary(alone.out)['time_ordered_memory'], false);
  });

  it('runs with the bundled embedding model too (prompt vectors compared in the memory)', async function () {
    this.timeout(30_000);
    const r = await cli(['replay', '--records', recordsFile, '--tools', toolsFile, '--cache-dir', path.join(dir, 'cache')]);
    assert.equal(r.code, 0, r.err);
    const summary = JSON.parse(r.out.trimEnd().split('\n').pop()!) as Record<string, unknown>;
    assert.equal(summary['turns'], 3);
    assert.equal(summary['time_ordered_memory'], true);
  });

  it('refuses to run without records or a catalogue, and reports a missing records file', async () => {
    assert.equal((await cli(['replay', '--tools', toolsFile])).code, 1);
    assert.match((await cli(['replay', '--records', recordsFile])).err, /replay needs --records and either --config or --tools/);
    const missing = await cli(['replay', '--records', path.join(dir, 'none.jsonl'), '--tools', toolsFile, '--embeddings', 'none']);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /Cannot read the records file .*none\.jsonl: it does not exist/);
  });
});
