// `npm run package [-- --target linux-x64 | -- --all]`: builds the production bundle, writes the third-party notices,
// and packs the VSIX for one platform (the current one by default), or for every platform, into out/.
// Every run bundles its JavaScript dependencies into the extension bundle, so the VSIX carries no node_modules.
// Everything is staged in a temporary folder, never in dist/: the CLI and the tests use dist/ meanwhile.
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants as zlib } from 'node:zlib';

/**
 * The platforms the VSIX is built for, as `vsce package --target` names them: those onnxruntime-node
 * ships a native binary for (its bin/napi-v6 folders). darwin-x64, linux-armhf and Alpine have none, so
 * the local model could not run there.
 */
const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-arm64', 'win32-x64', 'win32-arm64'];
/** The VSIX must stay small enough to download and install quickly: 20 MiB per platform at most. */
const MAX_VSIX_BYTES = 20 * 1024 * 1024;
/**
 * Native files above this are shipped brotli-compressed and unpacked on first use
 * (src/core/embedding/ortRuntime.ts): onnxruntime's library is most of the VSIX, and the zip a VSIX is
 * made of compresses it to 17.9 MB where brotli's best setting reaches 12.7 MB.
 */
const COMPRESS_ABOVE_BYTES = 1024 * 1024;
/**
 * Windows files for GPU execution only (DirectML and the shader compiler). onnxruntime.dll delay-loads
 * DirectML.dll and does not import the compiler at all (read from its PE import tables), so on the CPU,
 * which is all the router uses, they are never loaded; they would add 36 MB.
 */
const GPU_ONLY_FILES = new Set(['DirectML.dll', 'dxcompiler.dll', 'dxil.dll']);
/**
 * The router's own data files that ship brotli-compressed as `<file>.br`, read back in memory when
 * loaded (src/core/util/bundledText.ts): brotli takes these 83 KB (and more) below
 * the zip's own compression, room the VSIX needs under its budget. .vscodeignore lists the .br files.
 */
const COMPRESSED_DATA_FILES = ['media/needs/general-needs.json', 'media/spelling/words.txt', 'media/spelling/names.txt', 'media/names/name-aliases.json', 'media/model/tokenizer.json'];

/**
 * The extension's bundle ships brotli-compressed too, behind a loader of a few lines (loader()): the two MCP
 * SDK halves it carries since the move to SDK 2.x compress 139 KB smaller with brotli than in the zip. The
 * embedding worker's bundle ships the same way.
 */
const BUNDLES = [
  { plain: 'dist/extension.js', compressed: 'dist/extension.bundle.js.br' },
  { plain: 'dist/embedWorker.js', compressed: 'dist/embedWorker.bundle.js.br' },
];
/** What the VSIX is made from besides the bundle: copied into the staging folder as they are. */
const SHIPPED = ['package.json', 'package.nls.json', 'README.md', 'LICENSE', 'THIRD_PARTY_NOTICES.md', '.vscodeignore', 'media', 'l10n'];
const loader = (compressed) => `"use strict";
// Part of MCP Tool Router, brotli-compressed to keep the VSIX small (scripts/package.mjs): unpacked in
// memory and compiled as this very file, so __filename, require() and VS Code's view of the module are
// what they would be for the plain bundle.
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const code = zlib.brotliDecompressSync(fs.readFileSync(path.join(__dirname, '${path.basename(compressed)}'))).toString('utf8');
module._compile(code, __filename);
`;

/** Brotli at its best setting and largest window: these files are compressed once and unpacked often. */
const brotliBest = (bytes) => brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_LGWIN]: 24, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length } });

const all = process.argv.includes('--all');
const i = process.argv.indexOf('--target');
const targets = all ? TARGETS : [i >= 0 ? process.argv[i + 1] : `${process.platform}-${process.arch}`];
for (const target of targets) {
  if (!TARGETS.includes(target)) {
    console.error(`Unknown target "${target}". Use one of: ${TARGETS.join(', ')} (or --all).`);
    process.exit(1);
  }
}
const { version, name } = JSON.parse(readFileSync('package.json', 'utf8'));
mkdirSync('out', { recursive: true });

const run = (cmd, args, cwd) => execFileSync(cmd, args, { stdio: 'inherit', ...(cwd ? { cwd } : {}) });
const stage = mkdtempSync(path.join(os.tmpdir(), 'tool-router-package-'));
let failed = false;
try {
  run(process.execPath, ['scripts/build.mjs', '--production', '--stage', stage]);
  run(process.execPath, ['scripts/third-party-notices.mjs', '--meta', `${stage}/dist/extension.meta.json`, '--meta', `${stage}/dist/embedWorker.meta.json`]);
  // media/panel.js was just built into the stage, minified; the repository's own (development) copy stays out.
  for (const item of SHIPPED) cpSync(item, `${stage}/${item}`, { recursive: true, filter: (src) => src !== path.join('media', 'panel.js') });
  for (const file of COMPRESSED_DATA_FILES) {
    writeFileSync(`${stage}/${file}.br`, brotliBest(readFileSync(file)));
    rmSync(`${stage}/${file}`);
  }
  for (const { plain, compressed } of BUNDLES) {
    writeFileSync(`${stage}/${compressed}`, brotliBest(readFileSync(`${stage}/${plain}`)));
    writeFileSync(`${stage}/${plain}`, loader(compressed));
  }
  for (const target of targets) {
    const out = path.resolve(`out/${name}-${target}-${version}.vsix`);
    stageOnnxRuntime(target, `${stage}/dist/node_modules`);
    run(process.execPath, [path.resolve('node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--no-rewrite-relative-links', '--target', target, '--out', out], stage);
    const bytes = statSync(out).size;
    console.log(`${path.relative(process.cwd(), out)}: ${(bytes / 1024 / 1024).toFixed(2)} MiB`);
    if (bytes > MAX_VSIX_BYTES) {
      console.error(`${out} is larger than ${MAX_VSIX_BYTES / 1024 / 1024} MiB.`);
      failed = true;
    }
  }
} finally {
  rmSync(stage, { recursive: true, force: true });
}
if (failed) process.exit(1);

/**
 * onnxruntime-node cannot be bundled (it loads a native binary), so it is copied next to the bundle as
 * dist/node_modules (`into`), with only the target platform's binaries: all platforms together are 288 MB.
 */
function stageOnnxRuntime(vsceTarget, into) {
  const [platform, arch] = vsceTarget.split('-');
  const os = platform === 'alpine' ? undefined : platform;
  const binaries = `node_modules/onnxruntime-node/bin/napi-v6/${os}/${arch}`;
  if (!os || !existsSync(binaries)) {
    console.error(`onnxruntime-node has no binaries for ${vsceTarget} (looked in ${binaries}); this target cannot run the local embedding model.`);
    process.exit(1);
  }
  rmSync(into, { recursive: true, force: true });
  // CommonJS only (the bundle require()s it), no source maps and no typings: every megabyte counts.
  const keep = (src) => !src.endsWith('.map') && !src.endsWith('.d.ts') && !src.includes(`${path.sep}esm`);
  const copy = (from, to) => cpSync(from, `${into}/${to}`, { recursive: true, filter: keep });
  copy('node_modules/onnxruntime-node/package.json', 'onnxruntime-node/package.json');
  copy('node_modules/onnxruntime-node/dist', 'onnxruntime-node/dist');
  cpSync(binaries, `${into}/onnxruntime-node/bin/napi-v6/${os}/${arch}`, { recursive: true, filter: (src) => !GPU_ONLY_FILES.has(path.basename(src)) });
  copy('node_modules/onnxruntime-common/package.json', 'onnxruntime-common/package.json');
  copy('node_modules/onnxruntime-common/dist', 'onnxruntime-common/dist');
  compressLargeFiles(into, `onnxruntime-node/bin/napi-v6/${os}/${arch}`, os, arch);
}

/** Replaces each large file under `into`/`dir` by `<file>.br`, listed with its SHA-256 in compressed.json. */
function compressLargeFiles(into, dir, platform, arch) {
  const { version } = JSON.parse(readFileSync('node_modules/onnxruntime-node/package.json', 'utf8'));
  const files = [];
  /** SHA-256 → the path shipped for it: macOS's runtime comes as two identical files under two names. */
  const shipped = new Map();
  for (const name of readdirSync(`${into}/${dir}`)) {
    const file = `${into}/${dir}/${name}`;
    const bytes = readFileSync(file);
    if (bytes.length <= COMPRESS_ABOVE_BYTES) continue;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    rmSync(file);
    if (shipped.has(sha256)) {
      files.push({ path: `${dir}/${name}`, sha256, copyOf: shipped.get(sha256) });
      continue;
    }
    // Brotli's best setting takes a minute or two per library, so each result is kept by content hash.
    const cached = `.cache/package/${sha256}.br`;
    if (!existsSync(cached)) {
      console.log(`compressing ${file} (${(bytes.length / 1024 / 1024).toFixed(1)} MB) with brotli; this takes a minute or two`);
      mkdirSync('.cache/package', { recursive: true });
      writeFileSync(`${cached}.tmp`, brotliBest(bytes));
      renameSync(`${cached}.tmp`, cached);
    }
    cpSync(cached, `${file}.br`);
    shipped.set(sha256, `${dir}/${name}`);
    files.push({ path: `${dir}/${name}`, sha256 });
  }
  writeFileSync(`${into}/compressed.json`, `${JSON.stringify({ version, platform, arch, files }, null, 2)}\n`);
}
