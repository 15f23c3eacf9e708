import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { assembleQueries } from '../../../scripts/data/buildRequestSet';
import { CATALOGUES } from '../../../scripts/data/catalogueList';
import { loadQueriesFile, loadToolsFile } from '../../../src/core/selection/retrievalData';

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
    for (const c of CATALOGUES) assert.ok((perServer.get(c.server) ?? 0) >= 20, `${c.server}: ${perServer.get(c.server) ?? 0} requests`);
    for (const split of ['train', 'dev', 'test']) assert.ok(queries.some((q) => q.split === split), split);
  });

  it('about half the requests need several tools', () => {
    const multi = queries.filter((q) => q.gold.length >= 2).length / queries.length;
    assert.ok(multi >= 0.3 && multi <= 0.8, `${(multi * 100).toFixed(0)}% need 2+ tools`);
  });
});
