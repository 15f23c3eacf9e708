import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** l10n/bundle.l10n.json holds every string the extension passes to vscode.l10n.t: `npm run l10n` writes it. */
describe('l10n bundle', function () {
  this.timeout(60_000);

  it('is current with the strings in src (run npm run l10n after changing them)', () => {
    const root = path.resolve(__dirname, '../..');
    const out = mkdtempSync(path.join(os.tmpdir(), 'l10n-'));
    execFileSync(process.execPath, [path.join(root, 'node_modules/@vscode/l10n-dev/dist/cli.js'), 'export', '--outDir', out, path.join(root, 'src')], { stdio: 'ignore' });
    const fresh = JSON.parse(readFileSync(path.join(out, 'bundle.l10n.json'), 'utf8')) as Record<string, string>;
    const shipped = JSON.parse(readFileSync(path.join(root, 'l10n/bundle.l10n.json'), 'utf8')) as Record<string, string>;
    assert.ok(Object.keys(fresh).length > 50);
    assert.deepEqual(Object.keys(shipped).sort(), Object.keys(fresh).sort());
  });
});
