/**
 * A value event for the core (no `vscode` here): listeners subscribe with `on`, which returns the
 * unsubscribe, and `fire` calls each one; a listener that throws is skipped, so one faulty subscriber can
 * neither stop the others nor break whoever fired.
 */
export class Emitter<T> {
  private readonly listeners = new Set<(value: T) => void>();

  readonly on = (listener: (value: T) => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch {
        // A subscriber's own failure is its own; the event goes on to the rest.
      }
    }
  }
}
