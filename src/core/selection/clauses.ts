/**
 * Splits a multi-request prompt into its clauses, so each part can be matched on its own: "find the
 * invoice from march, then email it to Ana, also add a reminder" asks for three tools, and the full
 * prompt's vector is a blur of all three. Splitting is by sentence ends, semicolons, and the words people
 * put between requests ("then", "also", "after that", "plus", ", can you…"). A plain "and" does not split:
 * "weather in Paris and Rome" asks one tool twice. A clause shorter than MIN_CLAUSE_WORDS is glued to its
 * neighbour.
 */

/** Fewer words than this is a fragment ("and Bob"), not a request of its own. */
export const MIN_CLAUSE_WORDS = 3;
/** More clauses than this are not scored separately: a long paste is not a list of requests. */
export const MAX_CLAUSES = 6;

/** Where one request ends and the next begins (no capturing groups: `split` keeps none). */
export const CLAUSE_SPLIT = /(?:[.!?;]+\s+|\n+|,?\s+(?:and then|then|after that|afterwards|also|plus|and also)\s+|,\s+(?=(?:can you|could you|please|pls|i need|i want|let'?s)\b))/i;

/** A joining word left at the start of a clause after a sentence split ("…to Ana. Also add…"). */
export const LEADING_JOINER = /^(?:and then|and also|and|then|also|plus|after that|afterwards)\b[,\s]*/i;

/** The clauses of `prompt`; a single element (the prompt itself) when it is one request. */
export function splitClauses(prompt: string): string[] {
  const parts = prompt
    .split(CLAUSE_SPLIT)
    .map((p) => p.trim().replace(LEADING_JOINER, '').trim())
    .filter((p) => p.length > 0);
  const merged: string[] = [];
  for (const p of parts) {
    const words = p.split(/\s+/).length;
    if (merged.length > 0 && (words < MIN_CLAUSE_WORDS || merged[merged.length - 1]!.split(/\s+/).length < MIN_CLAUSE_WORDS)) {
      merged[merged.length - 1] = `${merged[merged.length - 1]} ${p}`;
    } else merged.push(p);
  }
  if (merged.length < 2 || merged.length > MAX_CLAUSES) return [prompt.trim()];
  return merged;
}
