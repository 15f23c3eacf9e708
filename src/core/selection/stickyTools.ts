/**
 * Sticky tools: tools the model called in the last few turns come back in the next selection, so a
 * follow-up ("now do the same for the other file") keeps the tools it needs even when its words do not
 * point to them. Core tools are always present anyway and are not recorded.
 */

/** Tools called in the last 3 turns: a follow-up rarely reaches further back. */
export const DEFAULT_STICKY_LOOKBACK_TURNS = 3;
/** At most 8 sticky tools, newest first, so a long session cannot fill the cap with old tools. */
export const DEFAULT_STICKY_MAX = 8;

export interface StickyEntry {
  readonly name: string;
  /** The turn in which the tool was last called. */
  readonly turn: number;
}

export class StickyWindow {
  /** Turn number → tool names called in it, in call order. */
  private readonly turns = new Map<number, string[]>();

  constructor(readonly lookback = DEFAULT_STICKY_LOOKBACK_TURNS, readonly max = DEFAULT_STICKY_MAX) {}

  record(turn: number, toolNames: readonly string[]): void {
    const list = this.turns.get(turn) ?? [];
    for (const name of toolNames) {
      const at = list.indexOf(name);
      if (at >= 0) list.splice(at, 1);
      list.push(name);
    }
    this.turns.set(turn, list);
    // Keep only what a future lookback could still reach.
    for (const t of [...this.turns.keys()]) if (t <= turn - this.lookback) this.turns.delete(t);
  }

  /**
   * Tools called in the `lookback` turns before `currentTurn`, newest call first, without core tools,
   * at most `max`.
   */
  get(currentTurn: number, isCore: (name: string) => boolean = () => false): StickyEntry[] {
    const out: StickyEntry[] = [];
    const seen = new Set<string>();
    for (let turn = currentTurn - 1; turn >= currentTurn - this.lookback && out.length < this.max; turn--) {
      const names = this.turns.get(turn) ?? [];
      for (let i = names.length - 1; i >= 0 && out.length < this.max; i--) {
        const name = names[i]!;
        if (seen.has(name) || isCore(name)) continue;
        seen.add(name);
        out.push({ name, turn });
      }
    }
    return out;
  }

  clear(): void {
    this.turns.clear();
  }
}
