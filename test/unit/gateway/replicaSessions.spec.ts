import assert from 'node:assert/strict';
import { parseReplicaPlace, replicaOfSession, sessionIdFor } from '../../../src/core/gateway/replicaSessions';

/** Session ids that nginx's `hash` sends back to the replica that made them. */

describe('replica session ids', () => {
  it('makes ids that land on this replica, for every place in lists of 1 to 5', () => {
    for (let count = 1; count <= 5; count++) {
      for (let index = 0; index < count; index++) {
        for (let k = 0; k < 50; k++) assert.equal(replicaOfSession(sessionIdFor({ index, count }), count), index);
      }
    }
  });

  it('computes nginx\'s peer: ((crc32 >> 16) & 0x7fff) mod N', () => {
    // crc32("a") = 0xe8b7be43: (0xe8b7 & 0x7fff) = 26807; mod 2 = 1, mod 3 = 2, mod 5 = 2.
    assert.deepEqual([2, 3, 5].map((n) => replicaOfSession('a', n)), [1, 2, 2]);
  });

  it('makes random UUIDs without a place', () => {
    const ids = new Set(Array.from({ length: 100 }, () => sessionIdFor(undefined)));
    assert.equal(ids.size, 100);
    for (const id of ids) assert.match(id, /^[0-9a-f-]{36}$/);
  });

  it('reads --replica I/N and refuses anything else by name', () => {
    assert.deepEqual(parseReplicaPlace('1/3'), { index: 1, count: 3 });
    for (const bad of ['3/3', '0/0', 'a/b', '1', '-1/2', '0/65']) assert.throws(() => parseReplicaPlace(bad), /--replica needs I\/N/);
  });
});
