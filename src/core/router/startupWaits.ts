/**
 * How long a request waits for servers still starting before it is answered without them. Two defaults,
 * because the callers differ: the command line answers about exactly these servers, so it waits as long
 * as one may take to start; the editor holds a chat turn or a command meanwhile, so it answers sooner, and
 * a late server's tools still arrive with tools/list_changed.
 */
import { DEFAULT_STARTUP_TIMEOUT_MS } from '../config/serverConfig';

/** The command line's `--wait` (every command, `serve` included): until each server is ready or has failed. */
export const CLI_STARTUP_WAIT_MS = DEFAULT_STARTUP_TIMEOUT_MS;
/** The editor's gateway and commands (and a GatewayCore given no wait): long enough for most first `npx` starts. */
export const EDITOR_STARTUP_WAIT_MS = 30_000;
