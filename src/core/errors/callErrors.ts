/**
 * Why a tool call failed, as its envelope reports it. It sits below the router because the connection
 * layer already classifies its own failures into these types.
 */
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
