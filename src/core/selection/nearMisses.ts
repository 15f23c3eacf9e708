import type { Scores } from './catalogueScorer';
import type { DroppedTool, NearMiss, Selection } from './selectionTypes';

/**
 * Near misses: the best-ranked tools a selection did not send, each with why, so a person who expected a
 * tool can see where it stood: fewer tools were wanted, it scored under the cutoff, the cap was full, or a
 * policy (allowed tools, destructive tools, quarantine) keeps it out; and the ranking itself, with its scores.
 * Pure: it only reads the ranking.
 */

/** How many near misses a selection lists: enough to find the tool one expected, few enough to read. */
export const NEAR_MISS_COUNT = 10;

export interface NearMissInput {
  /** Catalogue positions, best first (the Selection's ranking). */
  readonly ranked: readonly number[];
  readonly fused: ArrayLike<number>;
  readonly cosine?: ArrayLike<number>;
  /** Where `cosine` holds a value (a tool not embedded yet has none). */
  readonly hasCosine?: ArrayLike<number>;
  readonly lexical?: ArrayLike<number>;
  /** Exposed names, in catalogue order. */
  readonly names: readonly string[];
  /** Names of the tools sent. */
  readonly sent: ReadonlySet<string>;
  /** What the selection dropped (the first entry for a name counts). */
  readonly dropped: readonly DroppedTool[];
  /** Why a policy would keep a tool out, if one would (checked only for the few tools listed). */
  readonly policy: (name: string) => DroppedTool | undefined;
  /** The score a ranked tool needed to be counted in, beyond the first `minTools`. */
  readonly cutoff: number;
  /** The count rule sends the best this many tools a policy allows, whatever their scores. */
  readonly minTools: number;
  /** How many ranked tools the count rule sends at most (the cap). */
  readonly cap: number;
  readonly limit?: number;
}

/** The best `limit` ranked tools that were not sent, best first, each with why and a line for people. */
export function nearMissesOf(input: NearMissInput): NearMiss[] {
  const limit = input.limit ?? NEAR_MISS_COUNT;
  const droppedBy = new Map<string, DroppedTool>();
  for (const d of input.dropped) if (!droppedBy.has(d.name)) droppedBy.set(d.name, d);
  const out: NearMiss[] = [];
  /** Ranked tools so far that a policy allows: the first minTools of them are sent whatever their scores. */
  let allowed = 0;
  for (let rank = 0; rank < input.ranked.length && out.length < limit; rank++) {
    const i = input.ranked[rank]!;
    const name = input.names[i]!;
    if (input.sent.has(name)) {
      allowed++;
      continue;
    }
    const score = input.fused[i]!;
    const place = `ranked ${ordinal(rank + 1)}`;
    const dropped = droppedBy.get(name) ?? input.policy(name);
    let why: NearMiss['why'];
    let reason: string;
    if (dropped?.by === 'cap') {
      why = 'over-cap';
      reason = `${place}; ${dropped.reason}`;
    } else if (dropped) {
      why = 'policy';
      reason = `${place}; ${dropped.reason}`;
    } else if (score >= input.cutoff || allowed < input.minTools) {
      // Its score would do, or minTools covers it: the count stopped before it (the cap was reached).
      why = 'below-count';
      const sent = input.sent.size;
      reason = `${place}; ${sent} tool${sent === 1 ? ' was' : 's were'} sent${sent >= input.cap ? ', the cap' : ''}`;
    } else {
      why = 'below-cutoff';
      reason = `score ${score.toFixed(2)} under the cutoff ${input.cutoff.toFixed(2)}; ${place}`;
    }
    if (!dropped || dropped.by === 'cap') allowed++;
    out.push({
      name,
      score,
      ...(input.cosine && input.hasCosine?.[i] ? { cosine: input.cosine[i]! } : {}),
      ...(input.lexical ? { lexical: input.lexical[i]! } : {}),
      why,
      reason,
    });
  }
  return out;
}

/** 1st, 2nd, 3rd, 4th … 11th, 12th, 13th … 21st. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** The Selection's ranking: every ranked tool with its scores, best first (`names` in catalogue order). */
export function rankingOf(names: readonly string[], ranked: readonly number[], scores: Scores): Selection['ranking'] {
  const { fused, cosine, hasCosine, lexical } = scores;
  const out = new Array<Selection['ranking'][number]>(ranked.length);
  for (let r = 0; r < ranked.length; r++) {
    const i = ranked[r]!;
    // Built in one shape per case, in the key order a spread of the optional scores would give.
    const withCosine = hasCosine?.[i] ? cosine![i]! : undefined;
    if (withCosine !== undefined && lexical) out[r] = { name: names[i]!, score: fused[i]!, cosine: withCosine, lexical: lexical[i]! };
    else if (withCosine !== undefined) out[r] = { name: names[i]!, score: fused[i]!, cosine: withCosine };
    else if (lexical) out[r] = { name: names[i]!, score: fused[i]!, lexical: lexical[i]! };
    else out[r] = { name: names[i]!, score: fused[i]! };
  }
  return out;
}
