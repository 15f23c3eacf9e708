import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError, UnauthorizedError } from '@modelcontextprotocol/client';
import { redactSecrets } from '../config/serverConfig';
import type { CallErrorType } from '../errors/callErrors';
import { describeError } from '../errors/describeError';
import type { ServerState } from './serverStatus';

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
  if (isSdkError(error, SdkErrorCode.RequestTimeout)) {
    return new ConnectionError('TIMEOUT', `Server "${server}" did not answer ${method} within ${at.timeoutMs} ms (router.callTimeoutMs); try again, or raise the limit.`, true);
  }
  if (isAbortError(error)) return new ConnectionError('CANCELLED', `The ${method} request to "${server}" was cancelled.`, false);
  if (isSdkError(error, SdkErrorCode.ConnectionClosed) || at.stale) {
    return new ConnectionError('SERVER_RESTARTED', `Server "${server}" stopped while answering ${method}; try again once it is back.`, true);
  }
  if (isSdkError(error, SdkErrorCode.InvalidResult) || isSdkError(error, SdkErrorCode.UnsupportedResultType)) {
    return new ConnectionError('INVALID_RESULT', redactSecrets(`Server "${server}" answered ${method} with an invalid result: ${describeError(error)}`, at.secrets), false);
  }
  return new ConnectionError('SERVER_UNAVAILABLE', redactSecrets(`Asking server "${server}" for ${method} failed: ${describeError(error)}`, at.secrets), true);
}

/** The SDK's own failure with this code (a timeout, a closed connection), as opposed to the server's answer. */
export function isSdkError(error: unknown, code: SdkErrorCode): error is SdkError {
  return error instanceof SdkError && error.code === code;
}

/**
 * Streamable HTTP answered 4xx (old SSE-only servers answer 404/405 to POST): worth trying SSE. Not when
 * the answer carried a JSON-RPC error: that server speaks streamable HTTP (a 2026-07-28 server answers
 * -32020 to a request without its headers, -32022 to a version it does not know), and SSE would only hide it.
 */
export function shouldFallBackToSse(error: unknown): boolean {
  if (error instanceof ProtocolError) return false;
  if (error instanceof SdkHttpError) return error.status >= 400 && error.status < 500 && error.status !== 401 && error.status !== 403 && !carriesJsonRpcError(error);
  if (error instanceof SdkError) return false;
  return /\b(404|405|400)\b/.test(describeError(error));
}

/** A JSON-RPC error code (-32xxx) in an HTTP error's message or data: the body was an MCP answer. */
function carriesJsonRpcError(error: SdkHttpError): boolean {
  return /"code"\s*:\s*-32\d{3}/.test(`${error.message} ${safeJson(error.data)}`);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/**
 * A missing executable will not appear by retrying, and a server that still refuses after sign-in and
 * step-up (401 or 403 again) will not change its mind either; other start errors might be transient.
 */
export function isPermanentStartError(error: unknown): boolean {
  if (error instanceof SdkHttpError && (error.status === 401 || error.status === 403)) return true;
  if (error instanceof UnauthorizedError) return true;
  if (revisionRefusal(error) !== undefined) return true;
  return /was not found: check "command"|is not executable|is not spoken over SSE/.test(describeError(error));
}

/**
 * The server does not speak the revision `router.protocol` pins: a 2026-07-28-only server refused
 * `initialize` (-32022, naming what it supports), or a pinned 2026-07-28 was not offered. Retrying will
 * not change that; the configuration must. Undefined for any other error.
 */
export function revisionRefusal(error: unknown): string | undefined {
  if (isSdkError(error, SdkErrorCode.EraNegotiationFailed) && /no fallback in pin mode/.test(error.message)) {
    return 'the server does not speak 2026-07-28, which router.protocol pins; set router.protocol to "auto"';
  }
  const body = error instanceof SdkHttpError ? (error.data as { text?: unknown }).text : undefined;
  const refused = error instanceof ProtocolError ? { code: error.code, data: error.data } : typeof body === 'string' ? jsonRpcError(body) : undefined;
  if (refused?.code !== -32022) return undefined;
  const supported = (refused.data as { supported?: unknown } | undefined)?.supported;
  const speaks = Array.isArray(supported) && supported.every((v) => typeof v === 'string') ? ` (it speaks ${supported.join(', ')})` : '';
  return `the server does not speak the protocol revision router.protocol pins${speaks}; set router.protocol to "auto"`;
}

function jsonRpcError(body: string): { code: unknown; data: unknown } | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; data?: unknown } };
    return parsed.error ? { code: parsed.error.code, data: parsed.error.data } : undefined;
  } catch {
    return undefined;
  }
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || /aborted/i.test(error.message));
}

/** "has failed", "is stopped"…: state names read as sentences in messages. */
export function describeState(state: ServerState): string {
  return state === 'failed' ? 'has failed' : `is ${state}`;
}

/** Why a server cannot be asked right now, for a call or a forwarded request made while it is not ready. */
export function unavailableError(server: string, state: ServerState, reason: string | undefined): ConnectionError {
  const why = reason ? `: ${reason}` : '';
  switch (state) {
    case 'starting':
      return new ConnectionError('SERVER_UNAVAILABLE', `Server "${server}" is still starting; try again in a moment.`, true);
    case 'restarting':
      return new ConnectionError('SERVER_UNAVAILABLE', `Server "${server}" is restarting${why}.`, true);
    case 'disabled':
      return new ConnectionError('SERVER_UNAVAILABLE', `Server "${server}" is disabled; enable it in the configuration to use its tools.`, false);
    default:
      return new ConnectionError('SERVER_UNAVAILABLE', `Server "${server}" ${describeState(state)}${why}`, false);
  }
}

/** A remote call whose response stream dropped and was not resumed (`dropped` says how it dropped, secrets already hidden). */
export function droppedCallError(server: string, tool: string, dropped: string): ConnectionError {
  return new ConnectionError(
    'SERVER_RESTARTED',
    `The connection to server "${server}" dropped while "${tool}" was running (${dropped}), and the server did not resume the response. The call's effect is unknown, so check before retrying.`,
    true,
  );
}

/** Where a failed tool call stood when it failed, for {@link callError}. */
export interface FailedCall {
  readonly server: string;
  readonly tool: string;
  readonly timeoutMs: number;
  /** The connection started over (a restart, a stop) after the call was sent. */
  readonly superseded: boolean;
  readonly ready: boolean;
  /** Why the server is not ready, when it is not. */
  readonly reason: string | undefined;
  readonly remote: boolean;
  readonly secrets?: readonly string[];
}

/**
 * A tool call's failure as the router reports it, secrets hidden. `reconnect` is told when a remote
 * server went away mid-call: reconnecting gives the next call a chance.
 */
export function callError(error: unknown, at: FailedCall, reconnect: (why: string) => void): Error {
  const classified = classifyCallError(error, at, reconnect);
  if (!(classified instanceof ConnectionError)) return classified;
  const message = redactSecrets(classified.message, at.secrets);
  return message === classified.message ? classified : new ConnectionError(classified.type, message, classified.retryable);
}

function classifyCallError(error: unknown, at: FailedCall, reconnect: (why: string) => void): Error {
  const { server, tool } = at;
  if (isSdkError(error, SdkErrorCode.RequestTimeout)) {
    return new ConnectionError('TIMEOUT', `Server "${server}" did not answer "${tool}" within ${at.timeoutMs} ms (router.callTimeoutMs). The call was cancelled; the tool may still have acted.`, true);
  }
  if (isSdkError(error, SdkErrorCode.ConnectionClosed) || ((error instanceof ProtocolError || error instanceof SdkError) && at.superseded)) {
    return new ConnectionError('SERVER_RESTARTED', `Server "${server}" stopped while "${tool}" was running${at.reason ? ` (${at.reason})` : ''}. The server is being restarted; the call's effect is unknown, so check before retrying.`, true);
  }
  if (error instanceof ProtocolError) return new ConnectionError('PROTOCOL_ERROR', `Server "${server}" answered "${tool}" with error ${error.code}: ${error.message}`, false);
  // The server answered, with something that is not a tool result: asking again gets the same answer.
  if (isSdkError(error, SdkErrorCode.InvalidResult) || isSdkError(error, SdkErrorCode.UnsupportedResultType)) {
    return new ConnectionError('INVALID_RESULT', `Server "${server}" returned an invalid result for "${tool}": ${error.message}`, false);
  }
  // The server kept asking for input past the round limit: it answered, but never with a result.
  if (isSdkError(error, SdkErrorCode.InputRequiredRoundsExceeded)) return new ConnectionError('PROTOCOL_ERROR', `Server "${server}" kept asking for input on "${tool}" and never returned a result: ${error.message}`, false);
  if (isAbortError(error)) return new ConnectionError('CANCELLED', `The call to "${tool}" on "${server}" was cancelled.`, false);
  if (at.superseded || !at.ready) {
    return new ConnectionError('SERVER_RESTARTED', `Server "${server}" stopped while "${tool}" was running. The server is being restarted; the call's effect is unknown, so check before retrying.`, true);
  }
  const message = describeError(error);
  if (at.remote && /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|terminated|other side closed/i.test(message)) {
    reconnect(`the connection failed during a call: ${message}`);
    return new ConnectionError('SERVER_RESTARTED', `The connection to server "${server}" failed while "${tool}" was running (${message}). Reconnecting; the call's effect is unknown.`, true);
  }
  return new ConnectionError('SERVER_UNAVAILABLE', `Calling "${tool}" on server "${server}" failed: ${message}`, true);
}
