import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kindProviders, readKindLabels } from '../../../scripts/data/generalKinds';
import { CATALOGUES } from '../../../scripts/data/catalogueList';
import { loadToolsFile } from '../../../src/core/evaluation/retrievalData';

const TOOLS = path.resolve(__dirname, '..', '..', '..', 'data', 'requests', 'tools.jsonl');

function labelsFolder(files: Record<string, Record<string, string>>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinds-'));
  for (const [name, labels] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), JSON.stringify(labels));
  return dir;
}

describe("the team's general-purpose labels (data/requests/kinds)", () => {
  it('label only tools that exist', () => {
    const ids = new Set(loadToolsFile(TOOLS).map((t) => t.id));
    for (const { tool } of readKindLabels()) assert.ok(ids.has(tool), `${tool} is not in tools.jsonl`);
  });

  it("turn each written kind into its split's primary tool, a browser's navigate for browser", () => {
    const providers = kindProviders();
    const table = Object.fromEntries([...providers].map(([split, byKind]) => [split, Object.fromEntries(byKind)]));
    assert.equal(table.train?.browser, 'chromedevtools_navigate_page');
    assert.equal(table.dev?.browser, 'selenium_navigate');
    assert.equal(table.test?.browser, 'playwright_browser_navigate');
    assert.equal(table.train?.time_now, 'calctools_datetime');
    assert.equal(table.train?.calculate, 'calctools_math');
    assert.equal(table.train?.convert_document, 'pdfmaker_pdf-document');
    assert.equal(table.dev?.convert_document, 'excel_excel_write_to_sheet');
    // Round four adds servers beside the earlier ones of test without moving its primaries.
    assert.equal(table.test?.convert_document, 'markdownify_pdf-to-markdown');
    assert.equal(table.test?.web_fetch, 'webresearch_visit_page');
    const general = new Set(CATALOGUES.filter((c) => c.kind === 'mcp' && c.general).map((c) => c.server));
    for (const byKind of providers.values()) for (const tool of byKind.values()) assert.ok(general.has(tool.slice(0, tool.indexOf('_'))), tool);
  });

  it('refuse a tool labelled in two files, and an unknown kind, naming the files', () => {
    const twice = labelsFolder({ 'a.json': { x_open: 'web_fetch' }, 'b.json': { x_open: 'browser' } });
    assert.throws(() => readKindLabels(twice), /b\.json: "x_open" is labelled in a\.json too/);
    const unknown = labelsFolder({ 'a.json': { x_open: 'surf' } });
    assert.throws(() => readKindLabels(unknown), /a\.json: "x_open" has unknown kind "surf"; use one of .*browser/);
  });
});
