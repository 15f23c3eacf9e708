import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileAuthStore } from '../../../src/core/auth/fileAuthStore';

describe('CLI sign-in store', () => {
  it('keeps each server\'s sign-in in a file only the user can read, and survives saves racing each other', async () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'auth-store-')), 'oauth');
    const store = new FileAuthStore(dir);
    // A token refresh and a new sign-in can save the same server at once; both saves must succeed.
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.save('remote', { verifier: `v${i}`, redirectPort: 40000 + i })));
    const saved = await store.load('remote');
    assert.match(saved?.verifier ?? '', /^v\d$/);
    assert.deepEqual(readdirSync(dir), ['remote.json']);
    if (process.platform !== 'win32') {
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.equal(statSync(path.join(dir, 'remote.json')).mode & 0o777, 0o600);
    }
    await store.delete('remote');
    assert.equal(await store.load('remote'), undefined);
  });
});
