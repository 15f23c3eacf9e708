// @ts-check
/* eslint-disable @typescript-eslint/no-require-imports -- the extension host loads extensions and extensionTestsPath with require(), and provides `vscode` only to require() */
/**
 * extensionTestsPath entry: VS Code's extension host calls run() and reports
 * pass or fail by whether the returned promise resolves or rejects.
 */
const path = require('node:path');
// mocha 12 is an ES module; require() of it works on the extension host's Node 24
// and returns the module namespace, whose named export Mocha is the class.
const { Mocha } = require('mocha');

/** Long enough for the first command call, which activates the extension. */
const TEST_TIMEOUT_MS = 10_000;

function run() {
  // SELFTEST_HANG=1: a run() that never settles, to prove the runner's --timeout.
  if (process.env.SELFTEST_HANG === '1') return new Promise(() => {});
  // color: the output reaches a log, not a terminal.
  const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', color: false, timeout: TEST_TIMEOUT_MS });
  mocha.addFile(path.join(__dirname, 'greet.test.js'));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} test(s) failed`)) : resolve(undefined)));
  });
}

module.exports = { run };
