import { precheckSchema, type CompiledSchema, type SchemaCompiler, type SchemaProblem } from '../schema/argumentValidator';

/**
 * Every tool's argument validator, compiled when it is first needed instead of when the catalogue is
 * built (compiling a large catalogue's schemas with Ajv took most of the time from a server's tool list
 * to a usable catalogue). A tool's first call or argument check compiles its schema there and then; the
 * rest compile in the background, in short slices, so a schema that does not compile is reported soon
 * after it was listed. The refusals that need no compiler (precheckSchema) are known at once.
 */

/**
 * The background pass waits this long after a catalogue change, so as not to compete with selection
 * building its index and embedding the new tools (docs/MEASUREMENTS.md, "Round four: speed").
 */
export const BACKGROUND_DELAY_MS = 3000;
/** A background slice stops compiling after this long, so a call or selection queued behind it waits little. */
export const SLICE_MS = 8;

/** A tool's schema as the router holds it. */
export interface ToolSchema {
  /** Why the schema cannot check arguments, once known: at once for the cheap refusals, else after compiling. */
  readonly problem: string | undefined;
  /** The validator, compiled now if it was not yet; the outcome is kept. */
  validator(): CompiledSchema | SchemaProblem;
}

class Slot implements ToolSchema {
  constructor(
    readonly server: string,
    readonly schema: unknown,
    public outcome: CompiledSchema | SchemaProblem | undefined,
    private readonly compile: (slot: Slot) => CompiledSchema | SchemaProblem,
  ) {}

  get problem(): string | undefined {
    return this.outcome && !this.outcome.ok ? this.outcome.reason : undefined;
  }

  validator(): CompiledSchema | SchemaProblem {
    return this.outcome ?? this.compile(this);
  }
}

export class ToolValidators {
  /** By server and schema text, so a tool-list refresh or a restart compiles no unchanged schema again. */
  private readonly slots = new Map<string, Slot>();
  private readonly pending = new Set<Slot>();
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private waiters: Array<() => void> = [];
  /** A compilation failed since `onProblems` was last called. */
  private unreported = false;

  /**
   * @param onProblems called when compiling found schemas that do not compile (the router then marks
   *   their tools), after a background pass or just after a call compiled one
   * @param delayMs how long the background pass waits (tests pass 0)
   */
  constructor(
    private readonly compiler: SchemaCompiler,
    private readonly onProblems: () => void,
    private readonly delayMs = BACKGROUND_DELAY_MS,
  ) {}

  /** The schema of a tool of `server`; `text` is the schema serialised (the catalogue has it already). */
  forTool(server: string, schema: unknown, text: string): ToolSchema {
    const key = `${server}\u0000${text}`;
    let slot = this.slots.get(key);
    if (!slot) {
      slot = new Slot(server, schema, precheckSchema(schema), (s) => this.compile(s, true));
      this.slots.set(key, slot);
      if (!slot.outcome) this.pending.add(slot);
    }
    return slot;
  }

  forgetServer(server: string): void {
    for (const [key, slot] of this.slots) {
      if (slot.server !== server) continue;
      this.slots.delete(key);
      this.pending.delete(slot);
    }
  }

  /** Compiles every pending schema in the background, after `delayMs`, unless a pass is under way. */
  schedule(): void {
    if (this.pending.size === 0 || this.timer || this.immediate) return;
    this.timer = setTimeout(this.runSlice, this.delayMs);
    // Waiting to compile never keeps a process alive; whenChecked() compiles at once when someone needs it.
    this.timer.unref();
  }

  /** Resolves once every schema handed out so far has been compiled; starts at once instead of after the delay. */
  whenChecked(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    if (!this.immediate) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.immediate = setImmediate(this.runSlice);
    }
    return done;
  }

  /** How many schemas still wait to be compiled. */
  get pendingCount(): number {
    return this.pending.size;
  }

  dispose(): void {
    clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    this.pending.clear();
    this.unreported = false;
    this.finishPass();
  }

  private readonly runSlice = (): void => {
    this.timer = undefined;
    this.immediate = undefined;
    const started = performance.now();
    for (const slot of this.pending) {
      this.compile(slot, false);
      if (performance.now() - started >= SLICE_MS) break;
    }
    if (this.pending.size > 0) this.immediate = setImmediate(this.runSlice);
    else this.finishPass();
  };

  private compile(slot: Slot, onDemand: boolean): CompiledSchema | SchemaProblem {
    this.pending.delete(slot);
    const outcome = this.compiler.compile(slot.schema);
    slot.outcome = outcome;
    if (!outcome.ok) {
      this.unreported = true;
      // A call found it: the listing is marked after the call's own work, not in the middle of it.
      if (onDemand) queueMicrotask(() => this.report());
    }
    return outcome;
  }

  private finishPass(): void {
    this.report();
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((resolve) => resolve());
  }

  private report(): void {
    if (!this.unreported) return;
    this.unreported = false;
    this.onProblems();
  }
}
