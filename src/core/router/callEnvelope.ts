/**
 * Every tool call ends in exactly one envelope, whatever went wrong:
 * `{ok: true, content, meta}` or `{ok: false, error: {type, message, retryable}, meta}`.
 * The CLI maps error types to exit codes; the chat feeds `error.message` to the model, so messages say
 * what happened and what to try.
 */

/** MCP content blocks are passed through as the server sent them (text, image, audio, resource, …). */
export type ContentBlock = { type: string } & Record<string, unknown>;

export type CallErrorType =
  /** Arguments failed parsing or schema validation; the server was not called. */
  | 'INVALID_ARGUMENTS'
  /** The tool's schema is missing or does not compile, so it fails closed; the server was not called. */
  | 'SCHEMA_UNAVAILABLE'
  | 'UNKNOWN_TOOL'
  /** The server is not running (failed, disabled, stopped) or could not be reached. */
  | 'SERVER_UNAVAILABLE'
  /** The server exited or the connection dropped while the call was in flight. */
  | 'SERVER_RESTARTED'
  | 'TIMEOUT'
  /** The tool ran and reported an error (`isError: true`). */
  | 'TOOL_ERROR'
  /** The server answered with something that is not a valid tool result. */
  | 'INVALID_RESULT'
  /** The server answered the request with a JSON-RPC error. */
  | 'PROTOCOL_ERROR'
  | 'CANCELLED'
  /**
   * The loop detector refused the call: the same call kept returning the same result, or the tool kept
   * returning nothing, in this turn. The server was not called; the message says what to try instead.
   */
  | 'LOOP_DETECTED'
  /** A destructive tool the user declined, or that the destructive-tools policy refuses; the server was not called. */
  | 'NOT_APPROVED';

export interface CallMeta {
  readonly latencyMs: number;
  /** Size of the result as returned (after any cut), in UTF-8 bytes of its JSON. */
  readonly bytes: number;
  readonly server: string;
  readonly tool: string;
  readonly exposedName?: string;
  /** Set when the result was cut to the server's size cap. */
  readonly truncated?: { readonly originalBytes: number; readonly limitBytes: number };
  /** Argument fixes made before validation, such as `"5" → 5`. */
  readonly normalized?: readonly string[];
}

export interface CallError {
  readonly type: CallErrorType;
  readonly message: string;
  readonly retryable: boolean;
  /** For validation errors: each failing path. */
  readonly issues?: ReadonlyArray<{ readonly path: string; readonly message: string }>;
}

export type CallEnvelope =
  | { readonly ok: true; readonly content: ContentBlock[]; readonly structuredContent?: unknown; readonly meta: CallMeta }
  | { readonly ok: false; readonly error: CallError; readonly content?: ContentBlock[]; readonly meta: CallMeta };

/** CLI exit codes, documented in the README. */
export const EXIT_CODES = {
  ok: 0,
  usage: 1,
  invalidArguments: 2,
  toolError: 3,
  unknownTool: 4,
  serverUnavailable: 5,
} as const;

export function exitCodeFor(envelope: CallEnvelope): number {
  if (envelope.ok) return EXIT_CODES.ok;
  switch (envelope.error.type) {
    // Refused before the server was called; the fix is different arguments (or, for a loop, another tool).
    case 'INVALID_ARGUMENTS':
    case 'SCHEMA_UNAVAILABLE':
    case 'LOOP_DETECTED':
    case 'NOT_APPROVED':
      return EXIT_CODES.invalidArguments;
    case 'TOOL_ERROR':
    case 'INVALID_RESULT':
    case 'PROTOCOL_ERROR':
      return EXIT_CODES.toolError;
    case 'UNKNOWN_TOOL':
      return EXIT_CODES.unknownTool;
    case 'SERVER_UNAVAILABLE':
    case 'SERVER_RESTARTED':
    case 'TIMEOUT':
    case 'CANCELLED':
      return EXIT_CODES.serverUnavailable;
  }
}

export function byteLength(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  } catch {
    return 0;
  }
}
