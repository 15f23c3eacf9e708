import { describeError } from '../errors/describeError';

/** Small helpers for turning a failed fetch into the details an EmbeddingError message quotes. */

/**
 * The socket error code behind a failed fetch: undici throws `TypeError: fetch failed` with the code on
 * its `cause` (sometimes inside an AggregateError, one per address tried).
 */
export function networkErrorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = e instanceof AggregateError && e.errors.length > 0 ? e.errors[0] : (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What to quote about a failed fetch: the socket code, else the innermost cause ("bad port"), not "fetch failed". */
export function networkErrorDetail(error: unknown): string {
  const code = networkErrorCode(error);
  if (code) return code;
  let innermost: unknown = error;
  for (let depth = 0; depth < 5 && innermost instanceof Error && innermost.cause instanceof Error; depth++) innermost = innermost.cause;
  return describeError(innermost);
}
