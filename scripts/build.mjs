// Bundles the CLI (and, later, the extension) with esbuild. Type checking runs separately (`npm run typecheck`).
import * as esbuild from 'esbuild';
import { chmod, writeFile } from 'node:fs/promises';

const production = process.argv.includes('--production');
/**
 * `--stage DIR` (scripts/package.mjs): only what the VSIX ships, the extension bundle and the panel script,
 * built under DIR, so dist/ and media/ stay as the CLI, the tests and a development host see them.
 */
const stageAt = process.argv.indexOf('--stage');
const stage = stageAt >= 0 ? process.argv[stageAt + 1] : undefined;
if (stageAt >= 0 && !stage) throw new Error('--stage needs a folder after it.');
const root = (file) => (stage ? `${stage}/${file}` : file);

/** Options shared by every Node bundle: CommonJS for Node 20 and VS Code's extension host. */
const nodeBundle = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  // onnxruntime-node loads a native binary; it ships beside the bundle (dist/node_modules in the VSIX).
  external: ['onnxruntime-node'],
  // jsonc-parser's UMD build uses dynamic requires esbuild cannot follow; its ESM build bundles cleanly.
  mainFields: ['module', 'main'],
};

if (!stage) {
  await esbuild.build({
    ...nodeBundle,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
  });
  await chmod('dist/cli.js', 0o755);
}

const extension = await esbuild.build({
  ...nodeBundle,
  entryPoints: ['src/extension/extension.ts'],
  outfile: root('dist/extension.js'),
  // Provided by VS Code at run time.
  external: ['vscode', 'onnxruntime-node'],
  metafile: true,
});
// The notices list exactly the packages that end up inside the extension bundle.
await writeFile(root('dist/extension.meta.json'), JSON.stringify(extension.metafile));

// The local model's worker thread (src/core/embedding/workerEmbedder.ts): a bundle of its own beside the
// extension's, holding the embedding code (the tokenizer, onnxruntime's loader), which the extension's lacks.
const worker = await esbuild.build({
  ...nodeBundle,
  entryPoints: ['src/core/embedding/embedWorker.ts'],
  outfile: root('dist/embedWorker.js'),
  metafile: true,
});
await writeFile(root('dist/embedWorker.meta.json'), JSON.stringify(worker.metafile));

// The Tool Router panel's webview script: a browser bundle (an IIFE, no module loader in a webview).
// The stylesheet media/panel.css is hand-written and ships as is.
await esbuild.build({
  bundle: true,
  platform: 'browser',
  target: 'es2022',
  format: 'iife',
  sourcemap: false,
  minify: production,
  logLevel: 'warning',
  entryPoints: ['src/webview/main.ts'],
  outfile: root('media/panel.js'),
});

// The extension-host test suite, loaded by VS Code from out/test; mocha comes from node_modules.
if (!stage) {
  await esbuild.build({
    ...nodeBundle,
    entryPoints: ['test/extension/suite/index.ts'],
    outfile: 'out/test/extension/index.js',
    external: ['vscode', 'mocha', 'onnxruntime-node'],
  });
}

// Benchmarks run the same bundled code that ships, not the TypeScript through a loader.
if (process.argv.includes('--bench') && !stage) {
  for (const name of ['routerBench', 'embedBench', 'selectBench', 'tokenBench', 'loadBench', 'catalogueBench']) {
    await esbuild.build({ ...nodeBundle, sourcemap: false, entryPoints: [`bench/${name}.ts`], outfile: `out/bench/${name}.js` });
  }
  // Loaded by VS Code as an extension-host "test" module: bench:activation's measurement.
  await esbuild.build({ ...nodeBundle, sourcemap: false, entryPoints: ['bench/activationSuite.ts'], outfile: 'out/bench/activationSuite.js', external: ['vscode'] });
}
