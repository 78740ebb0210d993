/**
 * Every LMDB database the store opens, and its msgpack encoder, keep one hidden class whatever
 * was done with it first (src/store/lmdb-shapes.ts): lmdb-js adds `lastSize` to a database at
 * its first read and msgpackr `lastNamedStructuresLength` to an encoder at its first write, and
 * a database read at start but written only later (the engine checkpoints) then deoptimised the
 * write path all databases share at its first write under load. An upgrade of either library
 * that adds another lazy property fails here.
 *
 * V8 only tells through its natives syntax, switched on in a child process; the probe loads
 * the built modules (npm test builds first).
 */
import { describe, expect, it } from 'vitest';
import { builtModule, runV8ProbeInDir } from '../helpers/v8-probe.js';

const PROBE = (dir: string) => `
import v8 from 'node:v8';
v8.setFlagsFromString('--allow-natives-syntax');
const { LmdbStore } = await import(${builtModule('store', 'lmdb-store.js')});
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
const store = new LmdbStore(${JSON.stringify(dir)});
const readFirst = store.collection('read_first', { announce: false });
const writtenFirst = store.collection('written_first', { announce: false });
const untouched = store.collection('untouched', { announce: false });
const bytes = store.collection('bytes', { announce: false, bytes: true });
readFirst.get('t', 'x');
[...readFirst.list('t')];
await writtenFirst.put('t', 'r', { rule_id: 'r', weight: 0.5 });
await bytes.put('t', 'c', Buffer.alloc(64, 1));
await readFirst.put('t', 'r', { rule_id: 'r', weight: 0.5 });
const all = [readFirst, writtenFirst, untouched, bytes];
console.log(JSON.stringify({
  dbs: all.map((c) => sameMap(c.db, writtenFirst.db)),
  encoders: all.map((c) => sameMap(c.db.encoder, writtenFirst.db.encoder)),
}));
await store.close();
`;

describe('LMDB database shapes', () => {
  it('databases and their encoders keep one hidden class whether read or written first', () => {
    const out = runV8ProbeInDir<{ dbs: boolean[]; encoders: boolean[] }>(PROBE);
    expect(out.dbs).toEqual([true, true, true, true]);
    expect(out.encoders).toEqual([true, true, true, true]);
  });
});
