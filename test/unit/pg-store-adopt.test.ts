/**
 * Taking over a gone replica's replica-scoped entries (its webhook retry queue) in the
 * PostgreSQL store: listed by owner, moved in one statement, each entry to one adopter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { PostgresStore } from '../../src/store/postgres/pg-store.js';
import { dropSchema, newSchema, testPostgres } from '../helpers/postgres.js';

const pg = await testPostgres();

describe.skipIf(!pg.ok)('PostgreSQL store: adopting a replica-scoped collection', () => {
  const schema = newSchema('adopt');
  const dirs: string[] = [];
  const stores: PostgresStore[] = [];
  const open = async (replicaId: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'adopt-'));
    dirs.push(dir);
    const s = await PostgresStore.open({ url: pg.url, schema, replicaId, local: new LmdbStore(dir), pollMs: 300 });
    stores.push(s);
    return s;
  };
  let gone: PostgresStore;
  let b: PostgresStore;
  let c: PostgresStore;
  beforeAll(async () => {
    gone = await open('gone');
    [b, c] = await Promise.all([open('b'), open('c')]);
  });
  afterAll(async () => {
    for (const s of stores) await s.close().catch(() => {});
    await dropSchema(schema);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('moves every entry to exactly one adopter, which then reads them as its own', async () => {
    const q = gone.collection<{ webhook_id: string }>('webhook_pending', { scope: 'replica' });
    for (let i = 0; i < 20; i++) await q.put(i % 2 === 0 ? 'acme' : 'beta', `d${String(i).padStart(2, '0')}`, { webhook_id: `wh${i % 3}` });
    expect(await b.replicasWithEntries('webhook_pending')).toEqual(['gone']);
    const bq = b.collection<{ webhook_id: string }>('webhook_pending', { scope: 'replica' });
    expect([...bq.listAll()]).toHaveLength(0);
    // Two adopters at once: every entry goes to one of them.
    const [got1, got2] = await Promise.all([b.adoptReplicaEntries<{ webhook_id: string }>('webhook_pending', 'gone'), c.adoptReplicaEntries<{ webhook_id: string }>('webhook_pending', 'gone')]);
    const all = [...got1, ...got2].map((e) => e.id).sort();
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => `d${String(i).padStart(2, '0')}`));
    expect(got1.length === 20 || got2.length === 20).toBe(true);
    const winner = got1.length === 20 ? b : c;
    const wq = winner.collection<{ webhook_id: string }>('webhook_pending', { scope: 'replica' });
    expect([...wq.listAll()]).toHaveLength(20);
    expect(wq.get('beta', 'd03')).toEqual({ webhook_id: 'wh0' });
    expect((await b.replicasWithEntries('webhook_pending')).sort()).toEqual([winner === b ? 'b' : 'c']);
    // Nothing left to adopt; one's own queue is never adopted.
    expect(await b.adoptReplicaEntries('webhook_pending', 'gone')).toEqual([]);
    expect(await winner.adoptReplicaEntries('webhook_pending', winner === b ? 'b' : 'c')).toEqual([]);
  });
});
