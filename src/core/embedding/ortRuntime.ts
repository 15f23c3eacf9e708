import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { threadId } from 'node:worker_threads';
import { brotliDecompressSync } from 'node:zlib';
import type * as Ort from 'onnxruntime-node';

/**
 * Loads onnxruntime-node. In a development checkout it is the npm package as installed. In the VSIX its
 * native library ships brotli-compressed (the runtime is most of the package's size, and a VSIX is a zip,
 * which compresses it far less), listed in `compressed.json` beside the package with each file's SHA-256:
 * on first use the package is unpacked once into `runtimeFolder` (the extension's global storage, or the
 * CLI's cache), each file checked against its hash, and loaded from there.
 */

/** Written by scripts/package.mjs beside the staged package. */
export const COMPRESSED_MANIFEST = 'compressed.json';

interface CompressedManifest {
  readonly version: string;
  /** The platform the staged binaries are for (`process.platform` / `process.arch` names). */
  readonly platform: string;
  readonly arch: string;
  /**
   * Package-relative paths of the files shipped as `<path>.br`, with the SHA-256 of their content; a file
   * identical to one already listed names it in `copyOf` and is not shipped twice.
   */
  readonly files: ReadonlyArray<{ readonly path: string; readonly sha256: string; readonly copyOf?: string }>;
}

let loading: Promise<typeof Ort> | undefined;
let runtimeFolder: string | undefined;

/**
 * Where a compressed runtime may be unpacked: the host says it once at start (the extension its global
 * storage, the CLI its cache folder). The folder is needed only when the runtime ships compressed.
 */
export function setOnnxRuntimeFolder(folder: string): void {
  runtimeFolder = folder;
}

/** The folder set by setOnnxRuntimeFolder, for a worker thread that loads the runtime on its own. */
export function onnxRuntimeFolder(): string | undefined {
  return runtimeFolder;
}

/** onnxruntime-node, unpacked first when it ships compressed. Loaded once per process. */
export function loadOnnxRuntime(): Promise<typeof Ort> {
  loading ??= load(runtimeFolder).catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function load(runtimeFolder: string | undefined): Promise<typeof Ort> {
  let packageDir: string;
  try {
    packageDir = path.dirname(require.resolve('onnxruntime-node/package.json'));
  } catch {
    return import('onnxruntime-node');
  }
  const manifestFile = path.join(path.dirname(packageDir), COMPRESSED_MANIFEST);
  if (!existsSync(manifestFile)) return import('onnxruntime-node');
  if (!runtimeFolder) throw new Error('onnxruntime-node ships compressed here and no folder was given to unpack it into');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as CompressedManifest;
  if (manifest.platform !== process.platform || manifest.arch !== process.arch) {
    throw new Error(`this build of the extension is for ${manifest.platform}-${manifest.arch}, not ${process.platform}-${process.arch}; install the VSIX made for this platform`);
  }
  const stamp = createHash('sha256').update(JSON.stringify(manifest)).digest('hex').slice(0, 12);
  const target = path.join(runtimeFolder, `onnxruntime-${manifest.version}-${process.platform}-${process.arch}-${stamp}`);
  if (!existsSync(path.join(target, 'ready'))) unpack(path.dirname(packageDir), manifest, target);
  // The unpacked copy is loaded with Node's own require (not the bundler's), from its own folder.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path known only at run time
  return require(path.join(target, 'node_modules', 'onnxruntime-node')) as typeof Ort;
}

/** Copies the staged packages and decompresses their `.br` files into `target`, atomically. */
function unpack(stagedModules: string, manifest: CompressedManifest, target: string): void {
  // The thread too: the extension host and its embedding worker share a process id.
  const temp = `${target}.${process.pid}.${threadId}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp, { recursive: true });
  const modules = path.join(temp, 'node_modules');
  for (const name of ['onnxruntime-node', 'onnxruntime-common']) {
    cpSync(path.join(stagedModules, name), path.join(modules, name), { recursive: true, filter: (src) => !src.endsWith('.br') });
  }
  for (const file of manifest.files) {
    const bytes = brotliDecompressSync(readFileSync(path.join(stagedModules, `${file.copyOf ?? file.path}.br`)));
    const sha = createHash('sha256').update(bytes).digest('hex');
    if (sha !== file.sha256) {
      rmSync(temp, { recursive: true, force: true });
      throw new Error(`the packaged ${file.path} is damaged (sha256 ${sha.slice(0, 12)}… instead of ${file.sha256.slice(0, 12)}…); reinstall the extension`);
    }
    writeFileSync(path.join(modules, file.path), bytes, { mode: 0o755 });
  }
  writeFileSync(path.join(temp, 'ready'), `${new Date().toISOString()}\n`);
  // What an interrupted unpack left behind is replaced.
  if (existsSync(target) && !existsSync(path.join(target, 'ready'))) rmSync(target, { recursive: true, force: true });
  try {
    renameSync(temp, target);
  } catch (error) {
    // Another window unpacked it at the same moment: theirs is as good as ours.
    rmSync(temp, { recursive: true, force: true });
    if (!existsSync(path.join(target, 'ready'))) throw error;
  }
}
