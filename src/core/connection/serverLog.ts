/**
 * A server's recent log lines (stderr and the router's own lifecycle notes), bounded in memory.
 */

/** 2,000 lines is a few screens of context for a crash, and bounded against a server that floods stderr. */
export const SERVER_LOG_LINES = 2000;
/** Single lines are cut here so one giant line cannot hold the whole budget. */
const MAX_LINE_CHARS = 4000;

export class ServerLog {
  private readonly lines: string[] = [];
  private dropped = 0;

  append(line: string): void {
    const stamped = `${new Date().toISOString()} ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`;
    this.lines.push(stamped);
    if (this.lines.length > SERVER_LOG_LINES) {
      this.lines.shift();
      this.dropped++;
    }
  }

  /** The kept lines, oldest first, with a note when older lines were dropped. */
  text(): string {
    const head = this.dropped > 0 ? [`… ${this.dropped} older lines dropped`] : [];
    return [...head, ...this.lines].join('\n');
  }

  get size(): number {
    return this.lines.length;
  }
}
