import assert from 'node:assert/strict';
import * as path from 'node:path';
import { loadGeneralNeeds } from '../../../src/core/selection/selectionEngine';
import { LexicalRanker, toolFieldTerms } from '../../../src/core/selection/lexicalRanker';
import { isUnspaced } from '../../../src/core/selection/lexicalTerms';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';
import { embeddingTextFor, rankableFor } from '../../../src/core/selection/toolIndex';
import { contentKey, TOOL_READINGS_VERSION, ToolReadings } from '../../../src/core/selection/toolReadings';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const needs = loadGeneralNeeds(ROOT)!;

const TOOLS: SelectableTool[] = [
  { name: 'files_read_text_file', server: 'files', originalName: 'read_text_file', description: 'Read the complete contents of a file as text.', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'web_navigate', server: 'web', originalName: 'browser_navigate', description: 'Navigate to a URL', inputSchema: { type: 'object', properties: { url: { type: 'string' } } } },
  { name: 'maps_weather', server: 'maps', originalName: 'maps_weather', description: '根据城市名称查询天气预报', inputSchema: { type: 'object', properties: { city: { type: 'string', description: '城市名称' } } } },
];

/** A reading's parts as the functions it stands for would give them now. */
function readNow(tool: SelectableTool): unknown {
  return { fieldTerms: toolFieldTerms(rankableFor(tool)), embeddingText: embeddingTextFor(tool), unspaced: isUnspaced(tool.description), kinds: [...needs.toolProbabilities(tool)] };
}

describe('ToolReadings', () => {
  it('reads each tool as the lexical ranker, the index and the needs model would', () => {
    const readings = new ToolReadings({ model: needs, digest: 'd' }).read(TOOLS);
    assert.equal(readings.length, TOOLS.length);
    TOOLS.forEach((tool, i) => assert.deepEqual(readings[i], readNow(tool)));
    assert.equal(readings[2]!.unspaced, true);
    const browser = needs.kinds.indexOf('browser');
    assert.ok(readings[1]!.kinds[browser]! > 0.5, 'a navigate tool reads as a browser tool');
  });

  it('reads again only new or changed tools', () => {
    let fresh = 0;
    const store = new ToolReadings({ model: needs, digest: 'd' }, () => fresh++);
    const first = store.read(TOOLS);
    assert.equal(fresh, 1, 'a first catalogue reads its tools anew');
    const again = store.read(TOOLS.map((t) => ({ ...t })));
    assert.equal(fresh, 1, 'the same tools again read nothing anew');
    again.forEach((r, i) => assert.equal(r, first[i], 'the same content gives the reading kept'));
    const edited = TOOLS.map((t, i) => (i === 1 ? { ...t, description: 'Open a web page at an address and wait for it to load' } : t));
    const third = store.read(edited);
    assert.equal(fresh, 2, 'a changed tool is read anew');
    assert.equal(third[0], first[0]);
    assert.notEqual(third[1], first[1]);
    assert.deepEqual(third[1], readNow(edited[1]!));
  });

  it('keys a tool by everything its reading depends on', () => {
    const base = TOOLS[0]!;
    const key = contentKey(base);
    assert.equal(contentKey({ ...base }), key);
    for (const changed of [{ ...base, server: 'other' }, { ...base, originalName: 'read_file' }, { ...base, description: 'x' }, { ...base, originalDescription: 'x' }, { ...base, inputSchema: { type: 'object', properties: {} } }, { ...base, name: 'files_read' }]) {
      assert.notEqual(contentKey(changed), key);
    }
  });

  it('saves and loads readings, so a later start reads no tool', () => {
    const first = new ToolReadings({ model: needs, digest: 'd' });
    first.read(TOOLS);
    const saved = JSON.parse(JSON.stringify(first.save())) as unknown;
    let fresh = 0;
    const later = new ToolReadings({ model: needs, digest: 'd' }, () => fresh++);
    assert.deepEqual(later.load(saved), { taken: TOOLS.length });
    const readings = later.read(TOOLS);
    assert.equal(fresh, 0, 'nothing read anew');
    TOOLS.forEach((tool, i) => assert.deepEqual(readings[i], readNow(tool)));
  });

  it('refuses saved readings of another version, another needs model or another shape', () => {
    const first = new ToolReadings({ model: needs, digest: 'd' });
    first.read(TOOLS);
    const saved = first.save();
    assert.match(JSON.stringify(new ToolReadings({ model: needs, digest: 'other' }).load(saved)), /another unnamed-needs model/);
    assert.match(JSON.stringify(new ToolReadings({ model: needs, digest: 'd' }).load({ ...saved, version: TOOL_READINGS_VERSION + 1 })), /another version/);
    assert.match(JSON.stringify(new ToolReadings({ model: needs, digest: 'd' }).load({ ...saved, reader: 'another' })), /reads tools differently/);
    for (const junk of [null, 3, 'x', [], { version: 1 }]) assert.ok('refused' in new ToolReadings({ model: needs, digest: 'd' }).load(junk));
    // A reading of the wrong shape is skipped; the rest are taken.
    const key = Object.keys(saved.readings)[0]!;
    const broken = { ...saved, readings: { ...saved.readings, [key]: { f: [['x']], e: 'x', u: 0, k: [] } } };
    assert.deepEqual(new ToolReadings({ model: needs, digest: 'd' }).load(broken), { taken: TOOLS.length - 1 });
  });

  it('gives the lexical ranker the same scores with readings as without', () => {
    const readings = new ToolReadings({ model: needs, digest: 'd' }).read(TOOLS);
    const plain = new LexicalRanker(TOOLS.map(rankableFor));
    const read = new LexicalRanker(TOOLS.map(rankableFor), { fieldTerms: readings.map((r) => r.fieldTerms) });
    for (const prompt of ['read the notes file', 'open the booking site', '北京天气怎么样']) assert.deepEqual([...read.score(prompt)], [...plain.score(prompt)]);
  });
});
