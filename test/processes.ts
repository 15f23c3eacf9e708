import { existsSync, readdirSync, readFileSync } from 'node:fs';

/**
 * Pids of live processes whose command line holds `fragment` (Linux /proc; none where there is no /proc).
 * Tests use it to count a server's processes: each configured server must run once.
 */
export function processesWith(fragment: string): number[] {
  if (!existsSync('/proc')) return [];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(fragment)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}
