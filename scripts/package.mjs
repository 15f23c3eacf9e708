// `npm run package [-- --target linux-x64]`: builds the production bundle, writes the third-party notices,
// and packs the VSIX for one platform (the current one by default) into out/.
// Every run bundles its JavaScript dependencies into dist/extension.js, so the VSIX carries no node_modules.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';

/** VS Code's platform targets, as `vsce package --target` names them. */
const TARGETS = ['win32-x64', 'win32-arm64', 'linux-x64', 'linux-arm64', 'linux-armhf', 'darwin-x64', 'darwin-arm64', 'alpine-x64', 'alpine-arm64'];
/** The VSIX must stay small enough to install quickly; the issue sets 25 MB per platform. */
const MAX_VSIX_BYTES = 25 * 1024 * 1024;

const i = process.argv.indexOf('--target');
const target = i >= 0 ? process.argv[i + 1] : `${process.platform}-${process.arch}`;
if (!TARGETS.includes(target)) {
  console.error(`Unknown target "${target}". Use one of: ${TARGETS.join(', ')}.`);
  process.exit(1);
}
const { version, name } = JSON.parse(readFileSync('package.json', 'utf8'));
const out = `out/${name}-${target}-${version}.vsix`;
mkdirSync('out', { recursive: true });

const run = (cmd, args) => execFileSync(cmd, args, { stdio: 'inherit' });
run(process.execPath, ['scripts/build.mjs', '--production']);
run(process.execPath, ['scripts/third-party-notices.mjs']);
run(process.execPath, ['node_modules/@vscode/vsce/vsce', 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--target', target, '--out', out]);

const bytes = statSync(out).size;
console.log(`${out}: ${(bytes / 1024 / 1024).toFixed(2)} MB`);
if (bytes > MAX_VSIX_BYTES) {
  console.error(`The VSIX is larger than ${MAX_VSIX_BYTES / 1024 / 1024} MB.`);
  process.exit(1);
}
