import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallErrorType } from '../router/callEnvelope';
import { redactSecrets } from '../config/serverConfig';
import type { ServerState } from './serverConnection';

/** How a connection's failures are told apart and put into words. */

/** A failure of the connection rather than of the tool; the router turns it into an envelope error. */
export class ConnectionError extends Error {
  constructor(readonly type: CallErrorType, message: string, readonly retryable: boolean) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/** A forwarded request (resources, prompts, completions) that failed on the way, as a ConnectionError. */
export function forwardError(error: unknown, at: { readonly server: string; readonly method: string; readonly timeoutMs: number; readonly stale: boolean; readonly secrets?: readonly string[] }): ConnectionError {
  const { server, method } = at;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return new ConnectionError('TIMEOUT', `Server "${server}" did not answer ${method} within ${at.timeoutMs} ms (router.callTimeoutMs); try again, or raise the limit.`, true);
  }
  if (isAbortError(error)) return new ConnectionError('CANCELLED', `The ${method} request to "${server}" was cancelled.`, false);
  if ((error instanceof McpError && error.code === ErrorCode.ConnectionClosed) || at.stale) {
    return new ConnectionError('SERVER_RESTARTED', `Server "${server}" stopped while answering ${method}; try again once it is back.`, true);
  }
  return new ConnectionError('SERVER_UNAVAILABLE', redactSecrets(`Asking server "${server}" for ${method} failed: ${describeError(error)}`, at.secrets), true);
}

/** Streamable HTTP answered 4xx (old SSE-only servers answer 404/405 to POST): worth trying SSE. */
export function shouldFallBackToSse(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code !== undefined && error.code >= 400 && error.code < 500 && error.code !== 401 && error.code !== 403;
  return /\b(404|405|400)\b/.test(describeError(error));
}

/**
 * A missing executable will not appear by retrying, and a server that still refuses after sign-in and
 * step-up (401 or 403 again) will not change its mind either; other start errors might be transient.
 */
export function isPermanentStartError(error: unknown): boolean {
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) return true;
  if (error instanceof UnauthorizedError) return true;
  return /was not found: check "command"|is not executable/.test(describeError(error));
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || /aborted/i.test(error.message));
}

/** "has failed", "is stopped"…: state names read as sentences in messages. */
export function describeState(state: ServerState): string {
  return state === 'failed' ? 'has failed' : `is ${state}`;
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
