// @ts-check
/* eslint-disable @typescript-eslint/no-require-imports -- the extension host loads extensions and extensionTestsPath with require(), and provides `vscode` only to require() */
/* global describe, it -- mocha's bdd interface defines them before this file loads */
const assert = require('node:assert/strict');
const vscode = require('vscode');

describe('vscode-host self-test', () => {
  it('runs inside a real VS Code and calls the extension command', async () => {
    assert.match(vscode.version, /^1\.\d+\.\d+/);
    const greeting = await vscode.commands.executeCommand('vscodeHostSelftest.greet', 'host');
    assert.equal(greeting, 'hello host');
  });

  it('sees environment variables given to the runner', () => {
    // selftest.sh sets it; proves env reaches the extension host.
    assert.equal(process.env.SELFTEST_MARKER, 'from-runner');
  });

  it('fails on demand (SELFTEST_FAIL=1), to prove failures reach the exit code', () => {
    assert.notEqual(process.env.SELFTEST_FAIL, '1', 'SELFTEST_FAIL=1 asked this test to fail');
  });
});
