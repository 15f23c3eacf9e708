import * as fs from 'node:fs';
import * as path from 'node:path';

/** The router's name as MCP peers see it (clientInfo, serverInfo); also how its own package.json is recognised. */
export const PRODUCT_NAME = 'mcp-tool-router';

/** Said when no package.json of ours is beside the code (a bundle copied on its own). */
const UNKNOWN_VERSION = 'dev';

/**
 * How many folders up from this module package.json may be: src/core/util from source, dist/ in the
 * bundles, out/bench and out/test/extension for the benches and the extension tests.
 */
const MAX_ROOT_DEPTH = 4;

export interface ProductInfo {
  readonly name: string;
  readonly version: string;
}

let cached: ProductInfo | undefined;

/**
 * The name and version MCP peers are told, the version read once from our package.json: a lookup from
 * this module works the same from source and from the esbuild bundles, so nothing has to be kept in step.
 */
export function productInfo(): ProductInfo {
  cached ??= { name: PRODUCT_NAME, version: readVersion(__dirname) ?? UNKNOWN_VERSION };
  return cached;
}

/** The version in the nearest package.json named {@link PRODUCT_NAME}, looking up from `dir`. */
export function readVersion(dir: string): string | undefined {
  for (let i = 0; i <= MAX_ROOT_DEPTH; i++, dir = path.dirname(dir)) {
    const manifest = readManifest(path.join(dir, 'package.json'));
    if (manifest?.name === PRODUCT_NAME) return typeof manifest.version === 'string' ? manifest.version : undefined;
  }
  return undefined;
}

function readManifest(file: string): { name?: unknown; version?: unknown } | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
  } catch {
    // Missing or unreadable: keep looking further up.
    return undefined;
  }
}
