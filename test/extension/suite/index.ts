/**
 * The extension-host test suite's entry point: VS Code (or code-server, through our harness) loads this
 * file and calls `run()`. Test files are bundled in; requiring them after mocha's `pre-require` lets
 * them see `describe` and `it`.
 */
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec' });
  mocha.suite.emit('pre-require', globalThis, 'extension-tests', mocha);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- must load after pre-require, so not a static import
  require('./extension.test');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
  require('./chat.test');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
  require('./remote.test');
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} extension test(s) failed`)) : resolve()));
  });
}
