import type { Selection } from '../selection/selectionTypes';

/**
 * The routed tools offered to the model during one `@router` turn: the selection's tools at first, then
 * tools the model finds with the search tool, from the next step on. The set never grows past the
 * selection cap: when it is full, a found tool takes the place of the lowest-ranked selected tool the
 * model has not called (core, pinned and sticky tools, and tools found earlier, keep their places).
 * Generic over the definition: only its name matters here (the turn offers ChatToolDefinitions).
 */
export class OfferedTools<T extends { readonly name: string }> {
  private list: T[];
  private readonly tierOf: ReadonlyMap<string, number>;
  private readonly called = new Set<string>();
  private readonly found = new Set<string>();
  /** Selected tools that gave their places to found ones: a later search does not bring them back (no churn). */
  private readonly replaced = new Set<string>();
  /** Bumped on every change, so the turn knows when to count the definitions' tokens again. */
  version = 0;

  constructor(
    initial: readonly T[],
    selection: Selection,
    private readonly cap: number,
  ) {
    this.list = [...initial];
    this.tierOf = new Map(selection.tools.map((t) => [t.name, t.tier]));
  }

  get definitions(): readonly T[] {
    return this.list;
  }

  has(name: string): boolean {
    return this.list.some((t) => t.name === name);
  }

  /** The tool was in the selection, offered up front (whether or not it still is). */
  wasSelected(name: string): boolean {
    return this.tierOf.has(name);
  }

  /** A called tool keeps its place: the model may call it again. */
  markCalled(name: string): void {
    this.called.add(name);
  }

  /** Offers a found tool from the next step on; says whether it fit and which tool gave it its place. */
  add(definition: T): { readonly offered: boolean; readonly replaced?: string } {
    if (this.has(definition.name)) return { offered: true };
    if (this.replaced.has(definition.name)) return { offered: false };
    if (this.list.length < this.cap) {
      this.push(definition);
      return { offered: true };
    }
    // The selection lists tools best first within each tier, so the last evictable one is the weakest.
    for (let i = this.list.length - 1; i >= 0; i--) {
      const name = this.list[i]!.name;
      if (this.called.has(name) || this.found.has(name) || (this.tierOf.get(name) ?? 1) === 1) continue;
      this.list.splice(i, 1);
      this.replaced.add(name);
      this.push(definition);
      return { offered: true, replaced: name };
    }
    return { offered: false };
  }

  private push(definition: T): void {
    this.list.push(definition);
    this.found.add(definition.name);
    this.version++;
  }
}
