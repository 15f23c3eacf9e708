import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { describeError } from '../errors/describeError';

/**
 * The gateway's bearer token, read from the file `serve --http --token-file FILE` names. The file must hold
 * the token alone and be readable by its owner only, as ssh asks of a private key: a token others can read
 * is no secret, and refusing is the only way the user learns that it leaked.
 */

/** Shorter than this, a token can be guessed; HttpGateway enforces the same floor. */
export const MIN_TOKEN_LENGTH = 16;
/** A token is a line; a file larger than this is the wrong file (a key, a log, a device), so it is not read whole. */
export const MAX_TOKEN_FILE_BYTES = 4096;

/**
 * The token in `file`, without surrounding whitespace. Throws an Error saying what is wrong and how to fix it
 * when the file cannot be read, group or others may read or change it (POSIX only; `platform` is for tests),
 * or it does not hold exactly one long token of visible ASCII.
 */
export function readGatewayToken(file: string, platform: NodeJS.Platform = process.platform): string {
  // The umask makes the file private from its first byte; a chmod after would leave a moment it is not.
  const create = platform === 'win32' ? `openssl rand -hex 32 > ${file}` : `(umask 077; openssl rand -hex 32 > ${file})`;
  let fd: number | undefined;
  let bytes: Buffer;
  try {
    fd = openSync(file, 'r');
    // The mode of the file as opened (fstat, not stat): a swap between the check and the read changes nothing.
    const mode = fstatSync(fd).mode & 0o777;
    if (platform !== 'win32' && (mode & 0o077) !== 0) {
      throw new TokenFileError(
        `Permissions ${mode.toString(8).padStart(4, '0')} for the token file ${file} are too open: group or others can read or change it, so the token is no secret. Run \`chmod 600 ${file}\`, and make a new token if others may have read it.`,
      );
    }
    bytes = readAtMost(fd, MAX_TOKEN_FILE_BYTES + 1);
  } catch (error) {
    if (error instanceof TokenFileError) throw error;
    throw new Error(`Cannot read the token file ${file}: ${describeError(error)}`, { cause: error });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (bytes.length > MAX_TOKEN_FILE_BYTES) throw new Error(`The token file ${file} is larger than ${MAX_TOKEN_FILE_BYTES} bytes; it should hold the token alone. Is it the right file?`);
  const token = bytes.toString('utf8').trim();
  if (token === '') throw new Error(`The token file ${file} is empty; put a random secret in it (for example \`${create}\`).`);
  const lines = token.split(/\r\n|\r|\n/).length;
  if (lines > 1) throw new Error(`The token file ${file} holds ${lines} lines; it must hold the token alone, on one line.`);
  if (/\s/.test(token)) throw new Error(`The token in ${file} has whitespace inside it; clients send it in an HTTP header, so use a secret without spaces (for example \`${create}\`).`);
  if (/[^\x21-\x7e]/.test(token)) throw new Error(`The token in ${file} has a character an HTTP header cannot carry (only visible ASCII can); use a secret such as \`${create}\` makes.`);
  if (token.length < MIN_TOKEN_LENGTH) throw new Error(`The token in ${file} is ${token.length} characters long; use a random secret of at least ${MIN_TOKEN_LENGTH} (for example \`${create}\`).`);
  return token;
}

/** A refusal about the file itself, passed on as it is rather than as a read failure. */
class TokenFileError extends Error {}

/** Up to `limit` bytes of the file; reads in a loop since a pipe answers in pieces. */
function readAtMost(fd: number, limit: number): Buffer {
  const buffer = Buffer.alloc(limit);
  let length = 0;
  while (length < limit) {
    const n = readSync(fd, buffer, length, limit - length, null);
    if (n === 0) break;
    length += n;
  }
  return buffer.subarray(0, length);
}
