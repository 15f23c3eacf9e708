/**
 * The gateway's list cursors. A list through the gateway (resources, templates, prompts) walks the
 * servers in configuration order, one server page per gateway page; its cursor says which server comes
 * next and that server's own cursor, if any. To a client it is opaque text, as the spec wants.
 */

export interface ListPosition {
  /** The server whose page comes next. */
  readonly server: string;
  /** That server's own cursor; absent for its first page. */
  readonly cursor?: string;
}

/** Tells the gateway's cursors from anything else a client may send back. */
const CURSOR_VERSION = 1;
/** A cursor longer than this was not made here: server cursors are short tokens, and this bounds the parse. */
export const MAX_CURSOR_LENGTH = 8_192;

export function encodeCursor(position: ListPosition): string {
  const payload = { v: CURSOR_VERSION, s: position.server, ...(position.cursor !== undefined ? { c: position.cursor } : {}) };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** The position a cursor encodes; undefined when it was not made by {@link encodeCursor}. */
export function decodeCursor(text: string): ListPosition | undefined {
  if (text.length === 0 || text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { v, s, c } = payload as Record<string, unknown>;
  if (v !== CURSOR_VERSION || typeof s !== 'string' || s.length === 0 || (c !== undefined && typeof c !== 'string')) return undefined;
  return { server: s, ...(c !== undefined ? { cursor: c } : {}) };
}
