/**
 * A caught value in words, for messages that quote what went wrong: the message of an Error, and for
 * anything else thrown (a string, a plain object from a library, null) the best text it offers: never
 * `undefined`, and an object's JSON rather than `[object Object]` where it has one.
 */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    // An error from another realm, or an error-like object: its message is what a reader wants.
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string') return message;
    const json = safeJson(error);
    if (json !== undefined) return json;
  }
  try {
    return String(error);
  } catch {
    // An object without a prototype has no toString.
    return Object.prototype.toString.call(error);
  }
}

function safeJson(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    // A cycle or a BigInt inside.
    return undefined;
  }
}
