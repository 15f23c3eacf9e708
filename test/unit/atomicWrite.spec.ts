import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomic, writeFileAtomicSync } from '../../src/core/util/atomicWrite';

/** Windows has no POSIX permission bits (only read-only) and needs a privilege to make symbolic links. */
const POSIX = process.platform !== 'win32';
/** In octal, as `ls -l` and chmod say it, so a failure reads `644 !== 600`. */
const modeOf = (file: string): string => (statSync(file).mode & 0o777).toString(8);

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
    if (POSIX) assert.equal(modeOf(file), '600');
  });

  it('throws when the write fails and cleans up after itself', async () => {
    const d = dir();
    const missing = path.join(d, 'no-such-folder', 'file.json');
    await assert.rejects(writeFileAtomic(missing, 'x'), /ENOENT/);
    assert.throws(() => writeFileAtomicSync(missing, 'x'), /ENOENT/);
    assert.deepEqual(readdirSync(d), []);
  });

  (POSIX ? describe : describe.skip)('file modes (POSIX only)', () => {
    it('keeps the mode of the file it replaces when asked, and gives a new file the mode asked for', async () => {
      const d = dir();
      const secret = path.join(d, 'secret.json');
      const shared = path.join(d, 'shared.json');
      writeFileSync(secret, 'old');
      chmodSync(secret, 0o600);
      writeFileSync(shared, 'old');
      chmodSync(shared, 0o640);
      writeFileAtomicSync(secret, 'new', { keepMode: true });
      await writeFileAtomic(shared, 'new', { keepMode: true, mode: 0o600 });
      assert.equal(modeOf(secret), '600');
      assert.equal(modeOf(shared), '640', 'keepMode wins over mode for a file that exists');
      writeFileAtomicSync(path.join(d, 'new-sync.json'), 'x', { keepMode: true, mode: 0o600 });
      await writeFileAtomic(path.join(d, 'new-async.json'), 'x', { keepMode: true, mode: 0o600 });
      assert.equal(modeOf(path.join(d, 'new-sync.json')), '600');
      assert.equal(modeOf(path.join(d, 'new-async.json')), '600');
    });

    it('sets the mode asked for exactly, whatever the umask', async () => {
      const d = dir();
      // The umask is process-wide; mocha runs one test at a time, and it is put back before the test ends.
      const before = process.umask(0o077);
      try {
        writeFileAtomicSync(path.join(d, 'sync.json'), 'x', { mode: 0o640 });
        await writeFileAtomic(path.join(d, 'async.json'), 'x', { mode: 0o640 });
      } finally {
        process.umask(before);
      }
      assert.equal(modeOf(path.join(d, 'sync.json')), '640');
      assert.equal(modeOf(path.join(d, 'async.json')), '640');
    });

    it('without options, replaces the file with one of the default mode (as before)', () => {
      const d = dir();
      const file = path.join(d, 'plain.json');
      writeFileSync(file, 'old');
      chmodSync(file, 0o600);
      writeFileAtomicSync(file, 'new');
      const fresh = path.join(d, 'fresh.json');
      writeFileSync(fresh, 'x');
      assert.equal(modeOf(file), modeOf(fresh));
    });
  });

  (POSIX ? describe : describe.skip)('symbolic links (POSIX only)', () => {
    function linked(): { link: string; target: string; d: string } {
      const d = dir();
      mkdirSync(path.join(d, 'real'));
      mkdirSync(path.join(d, 'work'));
      const target = path.join(d, 'real', 'config.json');
      writeFileSync(target, 'old');
      const link = path.join(d, 'work', 'config.json');
      symlinkSync(path.join('..', 'real', 'config.json'), link);
      return { link, target, d };
    }

    it('writes through a link to its target when asked, and the link stays a link', async () => {
      const sync = linked();
      writeFileAtomicSync(sync.link, 'new', { throughSymlink: true });
      assert.ok(lstatSync(sync.link).isSymbolicLink());
      assert.equal(readFileSync(sync.target, 'utf8'), 'new');
      assert.deepEqual(readdirSync(path.join(sync.d, 'real')), ['config.json'], 'the temporary file was in the target folder and is gone');
      assert.deepEqual(readdirSync(path.join(sync.d, 'work')), ['config.json']);
      const async = linked();
      await writeFileAtomic(async.link, 'new', { throughSymlink: true });
      assert.ok(lstatSync(async.link).isSymbolicLink());
      assert.equal(readFileSync(async.target, 'utf8'), 'new');
    });

    it('follows a chain of links, and creates the target of a link that points at no file yet', async () => {
      const { link, target, d } = linked();
      const second = path.join(d, 'second.json');
      symlinkSync(link, second);
      writeFileAtomicSync(second, 'via two links', { throughSymlink: true });
      assert.ok(lstatSync(second).isSymbolicLink() && lstatSync(link).isSymbolicLink());
      assert.equal(readFileSync(target, 'utf8'), 'via two links');
      const dangling = path.join(d, 'dangling.json');
      symlinkSync(path.join(d, 'real', 'later.json'), dangling);
      await writeFileAtomic(dangling, 'created', { throughSymlink: true });
      assert.ok(lstatSync(dangling).isSymbolicLink());
      assert.equal(readFileSync(path.join(d, 'real', 'later.json'), 'utf8'), 'created');
    });

    it('keeps the target\'s mode through a link', () => {
      const { link, target } = linked();
      chmodSync(target, 0o600);
      writeFileAtomicSync(link, 'new', { throughSymlink: true, keepMode: true });
      assert.equal(modeOf(target), '600');
    });

    it('refuses a loop of links, saying so', () => {
      const d = dir();
      symlinkSync(path.join(d, 'b'), path.join(d, 'a'));
      symlinkSync(path.join(d, 'a'), path.join(d, 'b'));
      assert.throws(() => writeFileAtomicSync(path.join(d, 'a'), 'x', { throughSymlink: true }), /symbolic links/);
    });

    it('without the option, replaces the link itself (as before)', () => {
      const { link, target } = linked();
      writeFileAtomicSync(link, 'new');
      assert.ok(!lstatSync(link).isSymbolicLink());
      assert.equal(readFileSync(target, 'utf8'), 'old');
    });
  });
});
