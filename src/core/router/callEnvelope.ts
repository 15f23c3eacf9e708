import type { CallErrorType } from '../errors/callErrors';

/**
 * Every tool call ends in exactly one envelope, whatever went wrong:
 * `{ok: true, content, meta}` or `{ok: false, error: {type, message, retryable}, meta}`.
 * The CLI maps error types to exit codes; the chat feeds `error.message` to the model, so messages say
 * what happened and what to try.
 */

/** MCP content blocks are passed through as the server sent them (text, image, audio, resource, …). */
export type ContentBlock = { type: string } & Record<string, unknown>;

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

/** A call the router did not make: the policy refused it or the user declined it. */
export function notApproved(tool: { readonly name: string; readonly server: string; readonly originalName: string }, message: string): CallEnvelope {
  return { ok: false, error: { type: 'NOT_APPROVED', message, retryable: false }, meta: { latencyMs: 0, bytes: 0, server: tool.server, tool: tool.originalName, exposedName: tool.name } };
}

/** CLI exit codes, documented in docs/cli-and-gateway.md. */
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
