import { CHARS_PER_TOKEN } from '../util/tokens';
import type { SpellingFix } from './spelling';
/**
 * What selection works on and what it returns. A {@link Selection} carries the whole story: every chosen
 * tool with its scores, the stages that chose it and a one-line reason, and every tool left out and why.
 */

/** The part of a tool that selection reads. The router's RoutedTool satisfies it. */
export interface SelectableTool {
  /** The exposed name (unique). */
  readonly name: string;
  readonly server: string;
  readonly description: string;
  /** The tool's name on its server, when `name` is a prefixed or synthetic id. */
  readonly originalName?: string;
  /** The server's description, when `description` carries the router's `[server]` tag. */
  readonly originalDescription?: string;
  readonly inputSchema?: unknown;
  readonly annotations?: { readonly destructiveHint?: boolean; readonly readOnlyHint?: boolean };
}

/** Why a tool is in the selection: `embedding`, `keyword:<route>`, `sticky:<turn>`, `required`, `core`. */
export type SelectionStage = string;

export interface ChosenTool {
  readonly name: string;
  /** Fused relevance used for ranking (undefined when no scorer ran, e.g. keyword-only). */
  readonly score?: number;
  /** Cosine similarity to the prompt, when the embedder ran. */
  readonly cosine?: number;
  /** Lexical (BM25F) score, when it ran. */
  readonly lexical?: number;
  readonly stages: readonly SelectionStage[];
  /** 1 core/pinned/sticky, 2 scored, 3 keyword-only: the cap keeps lower tiers first. */
  readonly tier: 1 | 2 | 3;
  readonly reason: string;
  /** The tool is marked destructive and the policy is `confirm`: it is offered, and asks before it runs. */
  readonly confirm?: boolean;
}


export interface DroppedTool {
  readonly name: string;
  readonly score?: number;
  readonly stages: readonly SelectionStage[];
  readonly reason: string;
  readonly by: 'cap' | 'whitelist' | 'destructive' | 'quarantine';
}

/** Why a ranked tool was not sent: fewer tools were wanted, it scored under the cutoff, the cap was full, or a policy kept it out. */
export type NearMissWhy = 'below-count' | 'below-cutoff' | 'over-cap' | 'policy';

/** One of the best tools that was not sent, so a person can see why an expected tool is missing. */
export interface NearMiss {
  readonly name: string;
  readonly score: number;
  readonly cosine?: number;
  readonly lexical?: number;
  readonly why: NearMissWhy;
  /** One line for people: "ranked 17th; 15 tools were sent". */
  readonly reason: string;
}

export type SelectionMethod = 'embedding+keyword' | 'keyword-only' | 'required_tools';

export interface Selection {
  readonly prompt: string;
  readonly method: SelectionMethod;
  /** Why the method is what it is, e.g. "the embedder is still loading". */
  readonly methodNote?: string;
  readonly tools: readonly ChosenTool[];
  readonly dropped: readonly DroppedTool[];
  /** The best ranked tools that were not sent, best first (nearMisses.ts): the next 10 when that many were ranked; empty when nothing was ranked. */
  readonly nearMisses: readonly NearMiss[];
  /** Every tool's fused score, best first (for the panel's score bars); empty when nothing was scored. */
  readonly ranking: ReadonlyArray<{ readonly name: string; readonly score: number; readonly cosine?: number; readonly lexical?: number }>;
  /** The fused score a ranked tool needed to be sent (the best score minus the margin; 0 when nothing was scored). */
  readonly threshold: number;
  readonly timingsMs: Readonly<Record<string, number>>;
  /** chars / 4 of the tools' definitions (name, description, schema), the usual rough token estimate. */
  readonly tokens: { readonly selected: number; readonly catalogue: number };
  /** Words of the prompt read as another because they looked like typos ("hirng" as "hiring"); absent when none. */
  readonly readAs?: readonly SpellingFix[];
  readonly issues: readonly string[];
}

/** How the prompt was read, for people: `read "hirng" as "hiring", "ordres" as "orders"`; '' when as typed. */
export function readAsText(selection: Pick<Selection, 'readAs'>): string {
  const fixes = selection.readAs ?? [];
  return fixes.length ? `read ${fixes.map((f) => `"${f.from}" as "${f.to}"`).join(', ')}` : '';
}

export function estimateToolTokens(tool: SelectableTool): number {
  let chars = tool.name.length + tool.description.length;
  try {
    chars += JSON.stringify(tool.inputSchema ?? {}).length;
  } catch {
    // An unserialisable schema is counted as empty.
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
