import type { ToolRouterApi } from './api';
import type { ExtensionServices } from './services';

/**
 * The extension's own services, for its extension-host tests, its browser tests' driver and
 * bench:activation, which look inside (a turn's history, a connection's pid, the cost window). They hang
 * off the exported API under a symbol, outside {@link ToolRouterApi}: not part of the API, and free to
 * change in any release.
 */

/** `Symbol.for`, so the test bundles, built apart from the extension, find the same key. */
export const INTERNALS_KEY = Symbol.for('mcp-tool-router.internals');

export interface ToolRouterInternals extends ExtensionServices {
  /** How long `activate()` took, and when it started (`performance.now()` of the extension host). */
  readonly activation: { readonly startedAt: number; readonly ms: number };
}

/** `api` with `internals` under {@link INTERNALS_KEY}: not enumerable, so it is not listed with the API. */
export function withInternals(api: ToolRouterApi, internals: ToolRouterInternals): ToolRouterApi {
  return Object.defineProperty(api, INTERNALS_KEY, { value: internals, enumerable: false });
}

/** The internals behind an API the extension exported. */
export function internalsOf(api: ToolRouterApi): ToolRouterInternals {
  const internals = (api as unknown as Record<symbol, ToolRouterInternals | undefined>)[INTERNALS_KEY];
  if (!internals) throw new Error('The exported API carries no internals: is it the MCP Tool Router extension of this folder?');
  return internals;
}
