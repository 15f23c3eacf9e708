import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { descendantsOf, parentOf, processesWith } from '../processes';

/** How long the spawned processes may take to appear in /proc, on a busy machine. */
const APPEAR_TIMEOUT_MS = 15_000;

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + APPEAR_TIMEOUT_MS;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function kill(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

describe('test/processes: counting only the descendants of a root', function () {
  // Three real node processes start here; on a loaded two-core machine that takes seconds, not milliseconds.
  this.timeout(30_000);
  const marker = `processes-spec-marker-${process.pid}-${Date.now()}`;
  const keepAlive = `setInterval(() => {}, 1000); // ${marker}`;
  let child: ChildProcess | undefined;
  let grandchild: number | undefined;
  let unrelated: number | undefined;

  before(async function () {
    if (!existsSync('/proc')) this.skip();
    // A child that starts a grandchild and prints its pid, both holding the marker, as a server under a wrapper does.
    const launcher = `const c = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(keepAlive)}], { stdio: 'ignore' }); console.log(c.pid); ${keepAlive}`;
    child = spawn(process.execPath, ['-e', launcher], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    grandchild = await until('the grandchild', () => (/^\d+\n/.test(out) ? Number(out.trim()) : undefined));
    // The same marker in a process outside the tree: started by a shell that exits at once, so it is re-parented.
    const shell = spawn('sh', ['-c', `${JSON.stringify(process.execPath)} -e ${JSON.stringify(keepAlive)} >/dev/null 2>&1 & echo $!`], { stdio: ['ignore', 'pipe', 'ignore'] });
    let shellOut = '';
    shell.stdout?.on('data', (d: Buffer) => (shellOut += d.toString()));
    await new Promise((r) => shell.once('exit', r));
    unrelated = await until('the unrelated process', () => (/^\d+\n/.test(shellOut) ? Number(shellOut.trim()) : undefined));
    await until('all three to be running', () => (processesWith(marker).length === 3 ? true : undefined));
  });

  after(() => {
    kill(grandchild);
    kill(child?.pid);
    kill(unrelated);
  });

  it('reads the parent of a process from /proc/<pid>/stat', () => {
    assert.equal(parentOf(child!.pid!), process.pid);
    assert.equal(parentOf(grandchild!), child!.pid);
    assert.notEqual(parentOf(unrelated!), process.pid, 'the shell is gone, so its child was re-parented');
    assert.equal(parentOf(2 ** 22 + 1), undefined, 'no such process');
  });

  it('finds children and grandchildren, and nothing outside the tree', () => {
    const below = descendantsOf(process.pid);
    assert.ok(below.includes(child!.pid!) && below.includes(grandchild!), JSON.stringify(below));
    assert.ok(!below.includes(unrelated!));
    assert.ok(!below.includes(process.pid), 'the root itself is not its own descendant');
    assert.deepEqual(descendantsOf(child!.pid!), [grandchild]);
  });

  it('counts a fragment only under the given root', () => {
    assert.deepEqual(processesWith(marker, { under: process.pid }).sort(), [child!.pid!, grandchild!].sort());
    assert.deepEqual(processesWith(marker, { under: child!.pid! }), [grandchild]);
    assert.deepEqual(processesWith(marker, { under: grandchild! }), []);
  });

  it('counts every process on the machine without a root, so orphans are still seen', () => {
    assert.deepEqual(processesWith(marker).sort(), [child!.pid!, grandchild!, unrelated!].sort());
  });
});
