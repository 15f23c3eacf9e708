import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseMcpConfig } from '../../src/core/config/mcpConfigParser';
import { backupBeside, checkGiveBack, giveBack, isTakenOver, routerConfigBeside, serverNamesIn, takeOver } from '../../src/core/config/takeOver';

/** Windows has no POSIX permission bits (only read-only) and needs a privilege to make symbolic links. */
const POSIX = process.platform !== 'win32';
/** In octal, as `ls -l` and chmod say it, so a failure reads `644 !== 600`. */
const modeOf = (file: string): string => (statSync(file).mode & 0o777).toString(8);

const MCP_JSON = `{
  // the team's servers
  "inputs": [{ "type": "promptString", "id": "token", "password": true }],
  "servers": {
    "everything": { "type": "stdio", "command": "node", "args": ["everything.js"] },
    "github": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${input:token}" } },
  },
  "extra": 1
}
`;

function folder(text = MCP_JSON): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'take-over-'));
  const file = path.join(dir, 'mcp.json');
  writeFileSync(file, text);
  return file;
}

describe('taking servers over from VS Code and giving them back', () => {
  it('moves the servers and their inputs to the router file, leaving mcp.json without servers but otherwise as it was', async () => {
    const file = folder();
    const result = takeOver(file);
    assert.deepEqual(result.moved, ['everything', 'github']);
    assert.ok(isTakenOver(file));
    const left = readFileSync(file, 'utf8');
    assert.match(left, /\/\/ the team's servers/);
    assert.match(left, /"extra": 1/);
    assert.deepEqual((await parseMcpConfig(left, { file })).servers, []);
    const router = await parseMcpConfig(readFileSync(routerConfigBeside(file), 'utf8'), { file: routerConfigBeside(file), resolveInput: async () => 'secret' });
    assert.deepEqual(router.servers.map((s) => s.name), ['everything', 'github']);
    assert.deepEqual(router.issues, []);
  });

  it('gives back byte for byte, and removes the router file it created and the backup', () => {
    const file = folder();
    const before = readFileSync(file);
    takeOver(file);
    assert.deepEqual(checkGiveBack(file).editedSince, []);
    giveBack(file);
    assert.ok(readFileSync(file).equals(before));
    assert.ok(!existsSync(routerConfigBeside(file)));
    assert.ok(!existsSync(backupBeside(file)));
  });

  it('keeps a router file that existed, restoring it exactly', () => {
    const file = folder();
    const mine = '{ "servers": { "local": { "command": "node", "args": ["x.js"] } } }\n';
    writeFileSync(routerConfigBeside(file), mine);
    takeOver(file);
    assert.match(readFileSync(routerConfigBeside(file), 'utf8'), /"local"[\s\S]*"everything"/);
    giveBack(file);
    assert.equal(readFileSync(routerConfigBeside(file), 'utf8'), mine);
  });

  it('reports edits made since the take-over before giving back', () => {
    const file = folder();
    takeOver(file);
    writeFileSync(routerConfigBeside(file), '{ "servers": {} }');
    assert.deepEqual(checkGiveBack(file).editedSince, [routerConfigBeside(file)]);
  });

  it('refuses, changing nothing, when there is nothing to move, a name clashes, it was done already, or the file is broken', () => {
    assert.throws(() => takeOver(folder('{ "servers": {} }')), /defines no servers/);
    const clash = folder();
    writeFileSync(routerConfigBeside(clash), '{ "servers": { "github": { "command": "x" } } }');
    assert.throws(() => takeOver(clash), /already defines "github"/);
    assert.equal(readFileSync(clash, 'utf8'), MCP_JSON);
    const twice = folder();
    takeOver(twice);
    assert.throws(() => takeOver(twice), /already taken over/);
    assert.throws(() => takeOver(folder('{ "servers": ')), /not a valid mcp.json/);
    assert.throws(() => giveBack(folder()), /nothing to give back/);
  });

  it('accepts an mcp.json that starts with a UTF-8 byte order mark, keeps the mark, and gives back byte for byte', async () => {
    const file = folder(`\uFEFF${MCP_JSON}`);
    const before = readFileSync(file);
    assert.deepEqual(serverNamesIn(before.toString('utf8')), ['everything', 'github']);
    assert.deepEqual(takeOver(file).moved, ['everything', 'github']);
    const left = readFileSync(file);
    assert.deepEqual([...left.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'the rewritten mcp.json keeps its byte order mark');
    assert.deepEqual((await parseMcpConfig(left.toString('utf8').slice(1), { file })).servers, []);
    assert.match(readFileSync(routerConfigBeside(file), 'utf8'), /"everything"[\s\S]*"github"/);
    assert.deepEqual(checkGiveBack(file).editedSince, [], 'the mark is not mistaken for an edit');
    giveBack(file);
    assert.ok(readFileSync(file).equals(before));
  });

  it('accepts a router file that starts with a byte order mark', () => {
    const file = folder();
    writeFileSync(routerConfigBeside(file), '\uFEFF{ "servers": { "local": { "command": "node" } } }\n');
    takeOver(file);
    assert.match(readFileSync(routerConfigBeside(file), 'utf8'), /"local"[\s\S]*"everything"/);
  });

  (POSIX ? describe : describe.skip)('file modes (POSIX only)', () => {
    it('keeps a 0600 mcp.json 0600, writes the router file and the backup 0600, and gives back the same modes', () => {
      const file = folder();
      chmodSync(file, 0o600);
      takeOver(file);
      assert.equal(modeOf(file), '600', 'mcp.json');
      assert.equal(modeOf(routerConfigBeside(file)), '600', 'router file');
      assert.equal(modeOf(backupBeside(file)), '600', 'backup');
      giveBack(file);
      assert.equal(modeOf(file), '600');
    });

    it('narrows a router file that existed to the mcp.json\'s mode while it holds its servers, and gives its own mode back', () => {
      const file = folder();
      chmodSync(file, 0o600);
      writeFileSync(routerConfigBeside(file), '{ "servers": {} }\n');
      chmodSync(routerConfigBeside(file), 0o644);
      takeOver(file);
      assert.equal(modeOf(routerConfigBeside(file)), '600');
      assert.equal(modeOf(backupBeside(file)), '600');
      giveBack(file);
      assert.equal(modeOf(routerConfigBeside(file)), '644');
      assert.equal(modeOf(file), '600');
    });

    it('gives the backup no wider a mode than the router file it holds', () => {
      const file = folder();
      chmodSync(file, 0o644);
      writeFileSync(routerConfigBeside(file), '{ "servers": {} }\n');
      chmodSync(routerConfigBeside(file), 0o600);
      takeOver(file);
      assert.equal(modeOf(file), '644');
      assert.equal(modeOf(routerConfigBeside(file)), '600');
      assert.equal(modeOf(backupBeside(file)), '600');
    });

    it('gives back the original mode even when mcp.json was made wider in between', () => {
      const file = folder();
      chmodSync(file, 0o600);
      takeOver(file);
      chmodSync(file, 0o666);
      giveBack(file);
      assert.equal(modeOf(file), '600');
    });

    it('gives back from a backup written before modes were recorded, leaving modes as they are, and refuses one whose mode is not a mode', () => {
      const file = folder();
      chmodSync(file, 0o600);
      takeOver(file);
      const backup = JSON.parse(readFileSync(backupBeside(file), 'utf8')) as Record<string, unknown>;
      assert.equal(backup['mcpJsonMode'], 0o600);
      writeFileSync(backupBeside(file), JSON.stringify({ ...backup, mcpJsonMode: 0o4777 }));
      assert.throws(() => giveBack(file), /not a take-over backup this version understands/);
      delete backup['mcpJsonMode'];
      delete backup['routerFileMode'];
      writeFileSync(backupBeside(file), JSON.stringify(backup));
      giveBack(file);
      assert.equal(readFileSync(file, 'utf8'), MCP_JSON);
      assert.equal(modeOf(file), '600');
    });
  });

  (POSIX ? describe : describe.skip)('a symbolic link for mcp.json (POSIX only)', () => {
    it('writes through the link to its target, keeps the link a link, and gives back the target\'s bytes', () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'take-over-link-'));
      mkdirSync(path.join(dir, 'dotfiles'));
      mkdirSync(path.join(dir, '.vscode'));
      const target = path.join(dir, 'dotfiles', 'mcp.json');
      writeFileSync(target, MCP_JSON);
      chmodSync(target, 0o600);
      const link = path.join(dir, '.vscode', 'mcp.json');
      symlinkSync(path.join('..', 'dotfiles', 'mcp.json'), link);
      takeOver(link);
      assert.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link after the take-over');
      assert.doesNotMatch(readFileSync(target, 'utf8'), /"everything"/);
      assert.equal(modeOf(target), '600');
      assert.ok(existsSync(path.join(dir, '.vscode', 'mcp-tool-router.json')), 'the router file is beside the link, where VS Code looks');
      assert.deepEqual(readdirSync(path.join(dir, 'dotfiles')), ['mcp.json'], 'no temporary file left beside the target');
      assert.deepEqual(checkGiveBack(link).editedSince, []);
      giveBack(link);
      assert.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link after giving back');
      assert.equal(readFileSync(target, 'utf8'), MCP_JSON);
      assert.equal(modeOf(target), '600');
    });

    it('writes through a linked router file too, and leaves the link when giving back', () => {
      const file = folder();
      const dir = path.dirname(file);
      const shared = path.join(dir, 'shared-router.json');
      writeFileSync(shared, '{ "servers": {} }\n');
      symlinkSync(shared, routerConfigBeside(file));
      takeOver(file);
      assert.ok(lstatSync(routerConfigBeside(file)).isSymbolicLink());
      assert.match(readFileSync(shared, 'utf8'), /"everything"/);
      giveBack(file);
      assert.ok(lstatSync(routerConfigBeside(file)).isSymbolicLink());
      assert.equal(readFileSync(shared, 'utf8'), '{ "servers": {} }\n');
    });
  });
});
