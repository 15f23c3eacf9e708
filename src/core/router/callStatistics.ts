/**
 * Per-tool latency and result-size percentiles over a bounded window of recent calls.
 */

/** The last 1,000 calls per tool: enough for a stable p99 (ten calls beyond it), small enough to keep in memory. */
export const STATS_WINDOW = 1000;
/** Tools with statistics kept at most; the least recently called go first: servers can invent tool names without end. */
export const MAX_TRACKED_TOOLS = 2000;

export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}

export interface ToolCallStats {
  readonly calls: number;
  readonly errors: number;
  readonly latencyMs: Percentiles;
  readonly bytes: Percentiles;
}

class Ring {
  private readonly values: number[] = [];
  private next = 0;
  constructor(private readonly size: number) {}
  push(v: number): void {
    if (this.values.length < this.size) this.values.push(v);
    else this.values[this.next] = v;
    this.next = (this.next + 1) % this.size;
  }
  snapshot(): number[] {
    return [...this.values];
  }
}

/** Nearest-rank percentile of an unsorted sample; 0 for an empty one. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function percentiles(values: readonly number[]): Percentiles {
  return { p50: percentile(values, 50), p95: percentile(values, 95), p99: percentile(values, 99) };
}

export class CallStatistics {
  private readonly tools = new Map<string, { latency: Ring; bytes: Ring; calls: number; errors: number }>();

  record(tool: string, latencyMs: number, bytes: number, ok: boolean): void {
    let entry = this.tools.get(tool);
    if (entry) {
      // Re-insert so the Map's order is least recently called first.
      this.tools.delete(tool);
    } else {
      entry = { latency: new Ring(STATS_WINDOW), bytes: new Ring(STATS_WINDOW), calls: 0, errors: 0 };
      if (this.tools.size >= MAX_TRACKED_TOOLS) this.tools.delete(this.tools.keys().next().value!);
    }
    this.tools.set(tool, entry);
    entry.latency.push(latencyMs);
    entry.bytes.push(bytes);
    entry.calls++;
    if (!ok) entry.errors++;
  }

  get(tool: string): ToolCallStats | undefined {
    const e = this.tools.get(tool);
    if (!e) return undefined;
    return { calls: e.calls, errors: e.errors, latencyMs: percentiles(e.latency.snapshot()), bytes: percentiles(e.bytes.snapshot()) };
  }

  all(): Record<string, ToolCallStats> {
    const out: Record<string, ToolCallStats> = {};
    for (const name of [...this.tools.keys()].sort()) out[name] = this.get(name)!;
    return out;
  }
}
