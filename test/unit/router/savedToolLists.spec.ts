import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_ROUTER_OPTIONS, type ServerDefinition } from '../../../src/core/config/serverConfig';
import type { ServerTool } from '../../../src/core/connection/serverTool';
import { routedTool, type RoutedTool } from '../../../src/core/router/routedTool';
import { listsToSave, MAX_SAVED_WORKSPACES, parseSavedLists, SavedToolLists, savedListKey, savedListsFile, selectionDigest, withSavedTools } from '../../../src/core/router/savedToolLists';

type Def = Pick<ServerDefinition, 'name' | 'launch' | 'options'>;
const def = (name: string, args: string[] = [], env: Record<string, string> = {}, denied: string[] = []): Def => ({
  name,
  launch: { type: 'stdio', command: 'node', args, env },
  options: { ...DEFAULT_ROUTER_OPTIONS, toolsDenied: denied },
});
const files = def('files', ['files.js']);
const notes = def('notes', ['notes.js']);
const read: ServerTool = { name: 'read', description: 'Reads a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, annotations: { readOnlyHint: true } };
const write: ServerTool = { name: 'write', title: 'Write', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } };
const add: ServerTool = { name: 'add', description: 'Adds a note' };
const live: RoutedTool[] = [routedTool('files_read', 'files', read, undefined), routedTool('files_write', 'files', write, undefined), routedTool('notes_add', 'notes', add, undefined)];
const tempFile = (): string => path.join(mkdtempSync(path.join(os.tmpdir(), 'tool-lists-')), 'workspace', 'tool-lists.json');

describe('saved tool lists', () => {
  it('keys a list by the launch and the tool filters, never by environment values (which may be secrets)', () => {
    assert.equal(savedListKey(def('files', ['files.js'], { TOKEN: 'a' })), savedListKey(def('files', ['files.js'], { TOKEN: 'b' })));
    assert.notEqual(savedListKey(files), savedListKey(def('files', ['other.js'])));
    assert.notEqual(savedListKey(files), savedListKey(def('files', ['files.js'], {}, ['write'])));
    assert.notEqual(savedListKey(files), savedListKey(def('files2', ['files.js'])));
  });

  it('gives back the saved tools, as the router exposed them, only for starting servers with the same key', () => {
    const saved = listsToSave(live, [files, notes]);
    const both = withSavedTools([], [files, notes], saved);
    assert.deepEqual(both.tools.map((t) => t.name), ['files_read', 'files_write', 'notes_add']);
    assert.deepEqual([...both.saved], ['files_read', 'files_write', 'notes_add']);
    // The same as selection reads them when they are listed live.
    assert.equal(selectionDigest(both.tools), selectionDigest(live));
    // notes is no longer starting (it listed, failed or was disabled): its saved tools are gone.
    const one = withSavedTools([live[2]!], [files], saved);
    assert.deepEqual(one.tools.map((t) => t.name), ['notes_add', 'files_read', 'files_write']);
    assert.deepEqual([...one.saved], ['files_read', 'files_write']);
    // A changed launch or filter: that server's list is not used.
    assert.deepEqual(withSavedTools([], [def('files', ['files.js'], {}, ['write']), notes], saved).tools.map((t) => t.name), ['notes_add']);
  });

  it('never takes a live tool for a saved one', () => {
    const saved = listsToSave(live, [files]);
    const { tools, saved: names } = withSavedTools([live[0]!], [files], saved);
    assert.deepEqual(tools.map((t) => t.name), ['files_read', 'files_write']);
    assert.equal(tools[0], live[0]);
    assert.deepEqual([...names], ['files_write']);
  });

  it('writes the file readable by the user only, making its folder, and reads it back', async () => {
    const file = tempFile();
    const store = new SavedToolLists(file);
    await store.save(listsToSave(live, [files, notes]));
    if (process.platform !== 'win32') assert.equal(statSync(file).mode & 0o777, 0o600);
    const back = await store.load();
    assert.deepEqual([...back.keys()], ['files', 'notes']);
    assert.equal(selectionDigest(withSavedTools([], [files, notes], back).tools), selectionDigest(live));
  });

  it('reads nothing, silently, when there is no file yet', async () => {
    const lines: string[] = [];
    const lists = await new SavedToolLists(tempFile(), (m) => lines.push(m)).load();
    assert.equal(lists.size, 0);
    assert.deepEqual(lines, []);
  });

  it('ignores a file that is not a saved list, saying which file and why', async () => {
    for (const [text, why] of [
      ['{not json', /JSON/],
      [JSON.stringify({ format: 'other' }), /not a saved tool list file/],
      [JSON.stringify({ format: 'mcp-tool-router/tool-lists', version: 9, servers: {} }), /version 9/],
      [JSON.stringify({ format: 'mcp-tool-router/tool-lists', version: 1, servers: { files: { key: 'k', tools: [{ name: '' , exposedName: 'x' }] } } }), /servers\["files"\]\.tools\[0\]/],
      [JSON.stringify({ format: 'mcp-tool-router/tool-lists', version: 1, servers: { files: { key: 'k', tools: [{ name: 'read' }] } } }), /exposedName/],
    ] as const) {
      const file = tempFile();
      mkdirSync(path.dirname(file));
      writeFileSync(file, text);
      const lines: string[] = [];
      const lists = await new SavedToolLists(file, (m) => lines.push(m)).load();
      assert.equal(lists.size, 0);
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, why);
      assert.ok(lines[0]!.includes(file));
      // The file is left as it was: the next save replaces it whole.
      assert.equal(readFileSync(file, 'utf8'), text);
    }
  });

  it('names one file per set of workspace folders, whatever their order', () => {
    assert.equal(savedListsFile('/s', ['/a', '/b']), savedListsFile('/s', ['/b', '/a']));
    assert.notEqual(savedListsFile('/s', ['/a']), savedListsFile('/s', ['/a', '/b']));
    assert.notEqual(savedListsFile('/s', []), savedListsFile('/s', ['/a']));
    assert.match(path.basename(savedListsFile('/s', [])), /^[0-9a-f]{32}\.json$/);
  });

  it('keeps the lists of the most recently saved workspaces only', async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'tool-lists-'));
    const lists = listsToSave(live, [files]);
    for (let i = 0; i < MAX_SAVED_WORKSPACES + 3; i++) {
      const file = savedListsFile(folder, [`/w${i}`]);
      await new SavedToolLists(file).save(lists);
      // Older saves get older times, as they would have over days.
      utimesSync(file, new Date(1_000_000 + i * 1000), new Date(1_000_000 + i * 1000));
    }
    await new SavedToolLists(savedListsFile(folder, ['/w0'])).save(lists);
    const left = readdirSync(folder);
    assert.equal(left.length, MAX_SAVED_WORKSPACES);
    assert.ok(left.includes(path.basename(savedListsFile(folder, ['/w0']))), 'the one just saved stays');
    for (const gone of [1, 2, 3]) assert.ok(!left.includes(path.basename(savedListsFile(folder, [`/w${gone}`]))), `the oldest go (w${gone})`);
  });

  it('parses what it writes and nothing it does not understand', () => {
    assert.throws(() => parseSavedLists({ format: 'mcp-tool-router/tool-lists', version: 1, servers: { files: { tools: [] } } }), /needs a "key" string/);
    assert.equal(parseSavedLists({ format: 'mcp-tool-router/tool-lists', version: 1, servers: {} }).size, 0);
  });
});
