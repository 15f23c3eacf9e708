import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ToolRouterApi } from '../../../src/extension/api';
import { internalsOf, type ToolRouterInternals } from '../../../src/extension/internals';

/** Helpers shared by the extension-host test files. */

export const EXTENSION_ID = 'mcp-tool-router.mcp-tool-router';

/** The extension's API, activating it when needed. */
export async function api(): Promise<ToolRouterApi> {
  const extension = vscode.extensions.getExtension<ToolRouterApi>(EXTENSION_ID);
  assert.ok(extension, `extension ${EXTENSION_ID} is not installed`);
  return extension.isActive ? extension.exports : extension.activate();
}

/** The extension's services behind its API, for what the API does not show (a connection's pid, the config issues). */
export async function internals(): Promise<ToolRouterInternals> {
  return internalsOf(await api());
}

export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
