import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseMcpConfig } from '../../src/core/config/mcpConfigParser';
import { backupBeside, checkGiveBack, giveBack, isTakenOver, routerConfigBeside, takeOver } from '../../src/core/config/takeOver';

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
});
