import { mkdir, readFile, rm, chmod } from 'node:fs/promises';
import * as path from 'node:path';
import type { AuthStore, StoredAuth } from './oauthProvider';
import { writeFileAtomic } from '../util/atomicWrite';

/**
 * The CLI's sign-ins: one JSON file per server under the cache folder, readable by the user only (the
 * folder 0700, each file 0600), written through a temporary file so a crash never leaves half a token.
 */
export class FileAuthStore implements AuthStore {
  constructor(private readonly dir: string) {}

  async load(key: string): Promise<StoredAuth | undefined> {
    try {
      return JSON.parse(await readFile(this.file(key), 'utf8')) as StoredAuth;
    } catch {
      return undefined;
    }
  }

  async save(key: string, value: StoredAuth): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700).catch(() => undefined);
    await writeFileAtomic(this.file(key), JSON.stringify(value), { mode: 0o600 });
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  private file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }
}
