import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assembleQueries } from '../../../scripts/data/buildRequestSet';
import { CATALOGUES } from '../../../scripts/data/catalogueList';
import { loadQueriesFile, loadToolsFile } from '../../../src/core/evaluation/retrievalData';

const DIR = path.resolve(__dirname, '..', '..', '..', 'data', 'requests');

describe('the team-written request set (data/requests)', () => {
  const tools = loadToolsFile(path.join(DIR, 'tools.jsonl'));
  const queries = loadQueriesFile(path.join(DIR, 'queries.jsonl'));

  it('queries.jsonl is what written/*.jsonl give (rebuild with scripts/data/buildRequestSet.ts)', () => {
    const built = assembleQueries();
    assert.deepEqual(queries.map((q) => q.id), built.map((q) => q.id));
    assert.equal(fs.readFileSync(path.join(DIR, 'queries.jsonl'), 'utf8'), built.map((q) => JSON.stringify(q)).join('\n') + '\n');
  });

  it('has at least 3,000 requests over the five real MCP servers and at least 40 OpenAPI catalogues', () => {
    assert.ok(queries.length >= 3000, `${queries.length} requests`);
    const servers = new Set(tools.map((t) => t.server));
    for (const real of ['everything', 'memory', 'filesystem', 'notion', 'playwright']) assert.ok(servers.has(real), real);
    assert.ok(CATALOGUES.filter((c) => c.kind === 'openapi').length >= 40);
  });

  it('every catalogue has requests, and each split holds whole catalogues', () => {
    const serverOf = new Map(tools.map((t) => [t.id, t.server!]));
    const splitOf = new Map(CATALOGUES.map((c) => [c.server, c.split]));
    const perServer = new Map<string, number>();
    for (const q of queries) {
      for (const g of q.gold) {
        const server = serverOf.get(g)!;
        assert.equal(splitOf.get(server), q.split, `${q.id} needs ${g} from a ${splitOf.get(server)} catalogue`);
        perServer.set(server, (perServer.get(server) ?? 0) + 1);
      }
    }
    // A general-purpose server is reached only through the needs that imply it (one primary tool per kind).
    for (const c of CATALOGUES) {
      const least = c.kind === 'mcp' && c.general ? 10 : 20;
      assert.ok((perServer.get(c.server) ?? 0) >= least, `${c.server}: ${perServer.get(c.server) ?? 0} requests`);
    }
    for (const split of ['train', 'dev', 'test']) assert.ok(queries.some((q) => q.split === split), split);
  });

  it('has at least 1,000 requests needing an unnamed general-purpose tool, most beside named tools', () => {
    const raw = fs.readFileSync(path.join(DIR, 'queries.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { gold: string[]; kinds?: string[]; general?: string[] });
    const needing = raw.filter((q) => (q.kinds ?? []).length > 0);
    assert.ok(needing.length >= 1000, `${needing.length} requests`);
    const beside = needing.filter((q) => q.gold.length > (q.general ?? []).length).length / needing.length;
    assert.ok(beside >= 0.8, `${(beside * 100).toFixed(0)}% also need a named tool`);
    for (const q of raw) for (const g of q.general ?? []) assert.ok(q.gold.includes(g), `general tool ${g} is gold too`);
  });

  it('has at least 5 catalogues described in another language, in every split, with requests', () => {
    const foreign = CATALOGUES.filter((c) => c.kind === 'mcp' && c.language && c.language !== 'en');
    assert.ok(foreign.length >= 5, `${foreign.length} catalogues`);
    for (const split of ['train', 'dev', 'test']) assert.ok(foreign.some((c) => c.split === split), split);
  });

  it('about half the requests need several tools', () => {
    const multi = queries.filter((q) => q.gold.length >= 2).length / queries.length;
    assert.ok(multi >= 0.3 && multi <= 0.8, `${(multi * 100).toFixed(0)}% need 2+ tools`);
  });

  it('carries a line\'s steps and group into queries.jsonl, and refuses bad ones naming the line', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'written-'));
    const line = (extra: Record<string, unknown>): string => JSON.stringify({ query: `book the offsite ${JSON.stringify(extra)}`, gold: ['calendar_events_insert'], ...extra });
    fs.writeFileSync(path.join(dir, 'a.jsonl'), `${line({ steps: 2, group: 'dates' })}\n${line({})}\n`);
    const [withBoth, without] = assembleQueries(undefined, true, dir);
    assert.equal(withBoth!.steps, 2);
    assert.equal(withBoth!.group, 'dates');
    assert.ok(!('steps' in without!) && !('group' in without!));
    for (const [extra, message] of [
      [{ steps: 0 }, /a\.jsonl:1: "steps" must be a whole number from 1 to 6, not 0/],
      [{ steps: 2.5 }, /"steps" must be a whole number/],
      [{ steps: '3' }, /"steps" must be a whole number from 1 to 6, not "3"/],
      [{ steps: 7 }, /"steps" must be a whole number/],
      [{ group: 'shopping' }, /a\.jsonl:1: "group" must be one of browse, dates, document, names, steps, not "shopping"/],
    ] as const) {
      fs.writeFileSync(path.join(dir, 'a.jsonl'), `${line(extra)}\n`);
      assert.throws(() => assembleQueries(undefined, true, dir), message);
    }
  });

  it('round-four lines keep their steps and group', () => {
    const grouped = queries.filter((q) => q.group !== undefined);
    assert.ok(grouped.length > 0, 'no request has a group');
    for (const q of grouped) assert.ok(q.steps === undefined || (Number.isInteger(q.steps) && q.steps >= 1 && q.steps <= 6), q.id);
  });
});
