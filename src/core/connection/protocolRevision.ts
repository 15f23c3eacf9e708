import type { VersionNegotiationOptions } from '@modelcontextprotocol/client';
import type { ProtocolSetting, RemoteLaunch, StdioLaunch } from '../config/serverConfig';

/**
 * Which MCP revision the router speaks to a server. With `auto` (the default) the SDK's client asks the
 * server first (`server/discover`, the 2026-07-28 way) and falls back to `initialize` (2025-11-25) when the
 * answer says the server is older; `router.protocol` pins one revision instead. The rest of the router
 * never sees the revision: a connection offers the same tools, calls and status either way.
 */

export const MODERN_PROTOCOL_VERSION = '2026-07-28';
export const LEGACY_PROTOCOL_VERSION = '2025-11-25';

/**
 * On stdio a server that does not answer the probe is a 2025 server that ignores requests before
 * `initialize`; a started local process answers in milliseconds, so waiting longer only delays such
 * servers at every start. A server still starting (an `npx` install) then runs as 2025-11-25, which works.
 */
export const STDIO_PROBE_TIMEOUT_MS = 5_000;

/** The SDK client's negotiation for a server's setting; over HTTP the probe gets the whole start-up time (silence there is an outage). */
export function versionNegotiation(setting: ProtocolSetting, launch: StdioLaunch | RemoteLaunch, startupTimeoutMs: number): VersionNegotiationOptions {
  if (setting === LEGACY_PROTOCOL_VERSION || launch.type === 'sse') return { mode: 'legacy' };
  const timeoutMs = launch.type === 'stdio' ? Math.min(STDIO_PROBE_TIMEOUT_MS, startupTimeoutMs) : startupTimeoutMs;
  return { mode: setting === MODERN_PROTOCOL_VERSION ? { pin: MODERN_PROTOCOL_VERSION } : 'auto', probe: { timeoutMs } };
}

/**
 * A stdio server that exited while the router probed it, in `auto` mode: some servers (rmcp-based ones)
 * end the process when the first message is not `initialize`. Such a server is started once more and
 * spoken to as 2025-11-25 without a probe; a server that exits for another reason fails again, as before.
 */
export function mayHaveExitedOnProbe(setting: ProtocolSetting, exitInfo: string | undefined): boolean {
  return setting === 'auto' && exitInfo !== undefined;
}
