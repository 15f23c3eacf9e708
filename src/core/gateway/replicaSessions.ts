import { randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Session ids for `serve --http` replicas behind a proxy that hashes the Mcp-Session-Id header (nginx's
 * `hash $key;`, see examples/nginx-replicas.conf). nginx picks peer ((crc32(key) >> 16) & 0x7fff) mod N
 * of N equal peers, so a replica that makes only ids landing on itself keeps each session where it lives,
 * with no shared state and no cookie.
 */

export interface ReplicaPlace {
  /** This replica's position in the proxy's upstream list, from 0. */
  readonly index: number;
  readonly count: number;
}

/** Which of `count` replicas nginx sends a request with this session id to. */
export function replicaOfSession(sessionId: string, count: number): number {
  return ((crc32(sessionId) >>> 16) & 0x7fff) % count;
}

/** A fresh random session id that lands on this replica (N tries on average, each a UUID). */
export function sessionIdFor(place: ReplicaPlace | undefined): string {
  for (;;) {
    const id = randomUUID();
    if (!place || replicaOfSession(id, place.count) === place.index) return id;
  }
}

/** `--replica I/N`, checked. */
export function parseReplicaPlace(text: string): ReplicaPlace {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || count > MAX_REPLICAS || index >= count) throw new Error(`--replica needs I/N with 0 <= I < N <= ${MAX_REPLICAS} (this replica's place in the proxy's upstream list), got "${text}".`);
  return { index, count };
}

/** More replicas than this is a different deployment (a shared session store), not one proxy's list. */
export const MAX_REPLICAS = 64;
