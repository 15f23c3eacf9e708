import { existsSync, readdirSync, readFileSync } from 'node:fs';

/**
 * Pids of live processes whose command line holds `fragment` (Linux /proc; none where there is no /proc).
 * Tests use it to count a server's processes: each configured server must run once.
 *
 * With `under`, only descendants of that pid count, so a demo or another test run on the same machine
 * does not change the count. Without it every process counts: use that for a marker unique to the test,
 * where an orphan (re-parented away from the test) is exactly what the count must still see.
 */
export function processesWith(fragment: string, options: { readonly under?: number } = {}): number[] {
  if (!existsSync('/proc')) return [];
  const within = options.under === undefined ? undefined : descendantsOf(options.under);
  const pids: number[] = [];
  for (const pid of within ?? livePids()) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(fragment)) pids.push(pid);
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/**
 * Every live process below `root` (not `root` itself), found by following the parent links in
 * /proc/<pid>/stat down from it. A process whose parent already exited has been re-parented and is not found.
 */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of livePids()) {
    const parent = parentOf(pid);
    if (parent === undefined) continue;
    const siblings = children.get(parent);
    if (siblings) siblings.push(pid);
    else children.set(parent, [pid]);
  }
  const found: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** The parent pid from /proc/<pid>/stat, or undefined if the process is gone. */
export function parentOf(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ppid = Number(fields[1]);
  return Number.isInteger(ppid) ? ppid : undefined;
}

function livePids(): number[] {
  if (!existsSync('/proc')) return [];
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
}
