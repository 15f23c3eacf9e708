import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { MAX_TOKEN_FILE_BYTES, readGatewayToken } from '../../../src/core/gateway/tokenFile';

/** The gateway's token file, on real files in a temporary folder: what is accepted, and each refusal's advice. */

const TOKEN = 'c0ffee'.repeat(8);
const posix = process.platform !== 'win32';

describe('readGatewayToken', () => {
  let dir: string;
  /** Writes `text` to a fresh file with exactly `mode` (chmod after writing, so the umask plays no part). */
  const tokenFile = (text: string | Buffer, mode = 0o600): string => {
    const file = path.join(dir, `token-${Math.random().toString(36).slice(2)}`);
    writeFileSync(file, text);
    chmodSync(file, mode);
    return file;
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mcp-router-token-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a token alone in a file only its owner can read, with or without a trailing newline', () => {
    assert.equal(readGatewayToken(tokenFile(TOKEN)), TOKEN);
    assert.equal(readGatewayToken(tokenFile(`${TOKEN}\n`)), TOKEN);
    assert.equal(readGatewayToken(tokenFile(`  ${TOKEN}\r\n`, 0o400)), TOKEN);
  });

  it('refuses, on POSIX, a file group or others can read or change, like ssh a private key, and says to chmod 600', function () {
    if (!posix) this.skip();
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o602, 0o660]) {
      const file = tokenFile(`${TOKEN}\n`, mode);
      assert.throws(() => readGatewayToken(file), (error: Error) => {
        assert.match(error.message, new RegExp(`Permissions 0${mode.toString(8)} for the token file .* are too open`));
        assert.ok(error.message.includes(`chmod 600 ${file}`), error.message);
        assert.match(error.message, /make a new token/);
        return true;
      });
    }
  });

  it('skips the mode check on Windows, where modes do not say who can read a file', () => {
    assert.equal(readGatewayToken(tokenFile(`${TOKEN}\n`, 0o644), 'win32'), TOKEN);
  });

  it('refuses an empty file, or one of whitespace only', () => {
    assert.throws(() => readGatewayToken(tokenFile('')), /is empty; put a random secret in it/);
    assert.throws(() => readGatewayToken(tokenFile(' \n\n')), /is empty/);
  });

  it('refuses a token with several lines, or whitespace inside it', () => {
    assert.throws(() => readGatewayToken(tokenFile(`${TOKEN}\n${TOKEN}\n`)), /holds 2 lines; it must hold the token alone, on one line/);
    assert.throws(() => readGatewayToken(tokenFile(`TOKEN=${TOKEN}\r\nOTHER=x\r\n`)), /holds 2 lines/);
    assert.throws(() => readGatewayToken(tokenFile(`${TOKEN} ${TOKEN}\n`)), /has whitespace inside it/);
    assert.throws(() => readGatewayToken(tokenFile(`${TOKEN}\t${TOKEN}`)), /has whitespace inside it/);
  });

  it('refuses a character an HTTP header cannot carry', () => {
    assert.throws(() => readGatewayToken(tokenFile(`${TOKEN}é`)), /character an HTTP header cannot carry/);
    assert.throws(() => readGatewayToken(tokenFile(`${TOKEN}\u0000`)), /character an HTTP header cannot carry/);
  });

  it('refuses a short token with the advice to make a long one', () => {
    const file = tokenFile('abc\n');
    assert.throws(() => readGatewayToken(file), (error: Error) => {
      assert.match(error.message, /is 3 characters long; use a random secret of at least 16/);
      assert.ok(error.message.includes(`openssl rand -hex 32 > ${file}`), error.message);
      return true;
    });
  });

  it('refuses a file far larger than a token without reading it whole', () => {
    assert.throws(() => readGatewayToken(tokenFile('x'.repeat(MAX_TOKEN_FILE_BYTES + 1))), /larger than 4096 bytes; it should hold the token alone/);
  });

  it('says it cannot read a file that is missing, or a folder', () => {
    assert.throws(() => readGatewayToken(path.join(dir, 'missing')), /Cannot read the token file .*missing: ENOENT/);
    assert.throws(() => readGatewayToken(dir), /Cannot read the token file/);
  });
});
