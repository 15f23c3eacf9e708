// `npm run package [-- --target linux-x64]`: builds the production bundle, writes the third-party notices,
// and packs the VSIX for one platform (the current one by default) into out/.
// Every run bundles its JavaScript dependencies into dist/extension.js, so the VSIX carries no node_modules.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';

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
stageOnnxRuntime(target);
run(process.execPath, ['scripts/third-party-notices.mjs']);
run(process.execPath, ['node_modules/@vscode/vsce/vsce', 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--no-rewrite-relative-links', '--target', target, '--out', out]);

const bytes = statSync(out).size;
rmSync('dist/node_modules', { recursive: true, force: true });
console.log(`${out}: ${(bytes / 1024 / 1024).toFixed(2)} MB`);
if (bytes > MAX_VSIX_BYTES) {
  console.error(`The VSIX is larger than ${MAX_VSIX_BYTES / 1024 / 1024} MB.`);
  process.exit(1);
}

/**
 * onnxruntime-node cannot be bundled (it loads a native binary), so it is copied next to the bundle as
 * dist/node_modules, with only the target platform's binaries: all platforms together are 288 MB.
 */
function stageOnnxRuntime(vsceTarget) {
  const [platform, arch] = vsceTarget.split('-');
  const os = platform === 'alpine' ? undefined : platform;
  const binaries = `node_modules/onnxruntime-node/bin/napi-v6/${os}/${arch}`;
  if (!os || !existsSync(binaries)) {
    console.error(`onnxruntime-node has no binaries for ${vsceTarget} (looked in ${binaries}); this target cannot run the local embedding model.`);
    process.exit(1);
  }
  rmSync('dist/node_modules', { recursive: true, force: true });
  // CommonJS only (the bundle require()s it), and no source maps: every megabyte counts against the 25 MB limit.
  const keep = (src) => !src.endsWith('.map') && !src.includes(`${path.sep}esm`);
  const copy = (from, to) => cpSync(from, `dist/node_modules/${to}`, { recursive: true, filter: keep });
  copy('node_modules/onnxruntime-node/package.json', 'onnxruntime-node/package.json');
  copy('node_modules/onnxruntime-node/dist', 'onnxruntime-node/dist');
  copy(binaries, `onnxruntime-node/bin/napi-v6/${os}/${arch}`);
  copy('node_modules/onnxruntime-common/package.json', 'onnxruntime-common/package.json');
  copy('node_modules/onnxruntime-common/dist', 'onnxruntime-common/dist');
}
