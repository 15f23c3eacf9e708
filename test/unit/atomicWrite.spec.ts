import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomic, writeFileAtomicSync } from '../../src/core/util/atomicWrite';

describe('atomic writes', () => {
  const dir = (): string => mkdtempSync(path.join(os.tmpdir(), 'atomic-write-'));

  it('replaces a file whole and leaves no temporary file behind', async () => {
    const d = dir();
    const file = path.join(d, 'state.json');
    writeFileSync(file, 'old');
    await writeFileAtomic(file, 'new');
    writeFileAtomicSync(path.join(d, 'other.json'), Buffer.from('bytes'));
    assert.equal(readFileSync(file, 'utf8'), 'new');
    assert.equal(readFileSync(path.join(d, 'other.json'), 'utf8'), 'bytes');
    assert.deepEqual(readdirSync(d).sort(), ['other.json', 'state.json']);
  });

  it('lets many writes of one file run at once: each succeeds and the file holds one of them whole', async () => {
    const d = dir();
    const file = path.join(d, 'token.json');
    const values = Array.from({ length: 20 }, (_, i) => JSON.stringify({ token: `t${i}`.repeat(500) }));
    await Promise.all(values.map((v) => writeFileAtomic(file, v, { mode: 0o600 })));
    assert.ok(values.includes(readFileSync(file, 'utf8')));
    assert.deepEqual(readdirSync(d), ['token.json']);
    if (process.platform !== 'win32') assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it('throws when the write fails and cleans up after itself', async () => {
    const d = dir();
    const missing = path.join(d, 'no-such-folder', 'file.json');
    await assert.rejects(writeFileAtomic(missing, 'x'), /ENOENT/);
    assert.throws(() => writeFileAtomicSync(missing, 'x'), /ENOENT/);
    assert.deepEqual(readdirSync(d), []);
  });
});
