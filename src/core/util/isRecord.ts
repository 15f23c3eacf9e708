/** A plain JSON object: not null, not an array. The one check every parser of untrusted input uses. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
