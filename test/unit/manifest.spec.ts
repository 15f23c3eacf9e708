import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { COMMANDS } from '../../src/extension/commandIds';
import { SETTINGS_SECTION, SETTING_DEFAULTS } from '../../src/extension/settingsSchema';

/** package.json and the code must agree: one place holds each default, and this test holds them together. */
const root = path.resolve(__dirname, '../..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  activationEvents: string[];
  contributes: { commands: Array<{ command: string; title: string; category: string }>; configuration: { properties: Record<string, { default: unknown }> } };
};
const nls = JSON.parse(readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;

describe('package.json manifest', () => {
  it('declares exactly the settings the code reads, with the same defaults', () => {
    const declared = manifest.contributes.configuration.properties;
    const expected = Object.fromEntries(Object.entries(SETTING_DEFAULTS).map(([k, v]) => [`${SETTINGS_SECTION}.${k}`, v]));
    assert.deepEqual(Object.keys(declared).sort(), Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected)) assert.deepEqual(declared[key]?.default, value, `default of ${key}`);
  });

  it('contributes exactly the commands the code registers, all in the Tool Router category', () => {
    assert.deepEqual(manifest.contributes.commands.map((c) => c.command).sort(), Object.values(COMMANDS).sort());
    for (const c of manifest.contributes.commands) assert.equal(nls[c.category.replace(/%/g, '')], 'Tool Router');
  });

  it('registers every command of COMMANDS exactly once', () => {
    // The extension-host tests check the registry itself; this catches a missing registration without VS Code.
    const folder = path.join(root, 'src', 'extension');
    const sources = readdirSync(folder).filter((f) => f.endsWith('.ts')).map((f) => readFileSync(path.join(folder, f), 'utf8'));
    const registered = sources.flatMap((text) => [...text.matchAll(/registerCommand\(\s*COMMANDS\.(\w+)/g)].map((m) => m[1]));
    assert.deepEqual(registered.sort(), Object.keys(COMMANDS).sort());
  });

  it('has a translation entry for every %key% it uses', () => {
    const keys = JSON.stringify(manifest).match(/%[\w.]+%/g) ?? [];
    const missing = keys.map((k) => k.slice(1, -1)).filter((k) => !(k in nls));
    assert.deepEqual(missing, []);
  });

  it('asks for no newer VS Code than 1.139, and its @types/vscode is no newer than engines.vscode', () => {
    const engine = manifest.engines.vscode.replace(/^\^/, '').split('.').map(Number);
    assert.ok(engine[0] === 1 && (engine[1] ?? 0) <= 139, manifest.engines.vscode);
    const types = (manifest.devDependencies['@types/vscode'] ?? '').replace(/^[\^~]/, '').split('.').map(Number);
    assert.ok((types[1] ?? 0) <= (engine[1] ?? 0), `@types/vscode ${manifest.devDependencies['@types/vscode']} is newer than engines.vscode ${manifest.engines.vscode}`);
  });

  it('activates lazily: on a workspace mcp.json or its view, never on startup', () => {
    assert.ok(manifest.activationEvents.includes('workspaceContains:.vscode/mcp.json'));
    assert.ok(!manifest.activationEvents.includes('*'));
    assert.ok(!manifest.activationEvents.includes('onStartupFinished'));
  });
});
