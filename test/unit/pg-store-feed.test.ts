/**
 * The PostgreSQL store's change feed, with two stores on one schema standing for two
 * replicas: a change made on one reaches the other's reads and handlers (by NOTIFY, and by
 * the poll when the listener's connection is killed), conflicting writes are decided by the
 * database, and the change cursor waits for changes that commit out of order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { ChangeCursor, GAP_WAIT_MS } from '../../src/store/postgres/change-cursor.js';
import { PostgresStore } from '../../src/store/postgres/pg-store.js';
import { StoreConflict } from '../../src/store/store.js';
import { dropSchema, newSchema, pgQuery, testPostgres } from '../helpers/postgres.js';

const pg = await testPostgres();

/** Resolves once `fn` is true (checked every 10 ms); fails after `ms`. */
async function soon(fn: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('change cursor', () => {
  it('applies each change once and waits for a gap until it shows up or times out', () => {
    const c = new ChangeCursor(10);
    expect(c.take(11)).toBe(true);
    expect(c.take(13)).toBe(true);
    expect(c.take(13)).toBe(false);
    c.advance(0);
    expect(c.from()).toBe(11); // 12 is missing: read again from 11
    expect(c.gapCount()).toBe(1);
    expect(c.take(12)).toBe(true);
    c.advance(1);
    expect(c.from()).toBe(13);
    expect(c.take(15)).toBe(true);
    c.advance(100);
    expect(c.from()).toBe(13);
    c.advance(100 + GAP_WAIT_MS);
    expect(c.from()).toBe(15); // 14 rolled back
    expect(c.take(9)).toBe(false);
  });
});

describe.skipIf(!pg.ok)('PostgreSQL change feed between two replicas', () => {
  const schema = newSchema('feed');
  const dirs: string[] = [];
  let a: PostgresStore;
  let b: PostgresStore;
  const open = (replicaId: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'feed-'));
    dirs.push(dir);
    return PostgresStore.open({ url: pg.url, schema, replicaId, local: new LmdbStore(dir), pollMs: 300 });
  };
  beforeAll(async () => {
    // Both at once: the migration lock makes one wait for the other.
    [a, b] = await Promise.all([open('a'), open('b')]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dropSchema(schema);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a put and a remove on one replica reach the other replica and its handlers', async () => {
    const seen: [string, string, unknown][] = [];
    b.onRemoteChange<{ v: number }>('rules', (t, id, v) => seen.push([t, id, v]));
    const ca = a.collection<{ v: number }>('rules');
    const cb = b.collection<{ v: number }>('rules');
    await ca.put('acme', 'r1', { v: 1 });
    await soon(() => cb.get('acme', 'r1')?.v === 1, 2000);
    expect(seen).toEqual([['acme', 'r1', { v: 1 }]]);
    await ca.put('acme', 'r1', { v: 2 });
    await soon(() => cb.get('acme', 'r1')?.v === 2, 2000);
    await ca.remove('acme', 'r1');
    await soon(() => cb.get('acme', 'r1') === undefined, 2000);
    expect(seen.map((s) => s[2])).toEqual([{ v: 1 }, { v: 2 }, undefined]);
  });

  it('log appends and prunes reach the other replica', async () => {
    const la = a.log<{ n: number }>('failover_events');
    const lb = b.log<{ n: number }>('failover_events');
    for (let n = 0; n < 3; n++) await la.append('acme', 1000 + n, { n });
    await soon(() => lb.count('acme') === 3, 2000);
    expect(lb.newest('acme', 10).map((e) => e.value.n)).toEqual([2, 1, 0]);
    await la.pruneBeyond('acme', 1);
    await soon(() => lb.count('acme') === 1, 2000);
  });

  it('the same id inserted on both replicas at once: exactly one wins, both end with the winner', async () => {
    const ca = a.collection<{ by: string }>('rules');
    const cb = b.collection<{ by: string }>('rules');
    const r = await Promise.allSettled([ca.insert('acme', 'dup', { by: 'a' }), cb.insert('acme', 'dup', { by: 'b' })]);
    expect(r.filter((x) => x.status === 'fulfilled')).toHaveLength(1);
    expect((r.find((x) => x.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(StoreConflict);
    const winner = r[0].status === 'fulfilled' ? 'a' : 'b';
    await soon(() => ca.get('acme', 'dup')?.by === winner && cb.get('acme', 'dup')?.by === winner, 2000);
  });

  it('the same unique key written on both replicas at once: exactly one wins', async () => {
    const ca = a.collection<{ attrs: string }>('rules_u', { uniqueBy: (v) => v.attrs });
    const cb = b.collection<{ attrs: string }>('rules_u', { uniqueBy: (v) => v.attrs });
    const r = await Promise.allSettled([ca.insert('acme', 'x', { attrs: 'US' }), cb.insert('acme', 'y', { attrs: 'US' })]);
    expect(r.filter((x) => x.status === 'fulfilled')).toHaveLength(1);
    expect((r.find((x) => x.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ on: 'unique' });
  });

  it('with the listener connection killed, a change still arrives (by the poll, then the listener is back)', async () => {
    const killed = await pgQuery<{ pid: number }>(
      `SELECT pg_terminate_backend(pid) AS killed, pid FROM pg_stat_activity WHERE application_name = 'routing-listener:b'`,
    );
    expect(killed.length).toBe(1);
    await a.collection<{ v: number }>('rules').put('acme', 'after-kill', { v: 7 });
    await soon(() => b.collection<{ v: number }>('rules').get('acme', 'after-kill')?.v === 7, 3000);
    await soon(() => b.listening(), 5000);
  });

  it('a second running store with the same replica id is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'feed-'));
    dirs.push(dir);
    await expect(PostgresStore.open({ url: pg.url, schema, replicaId: 'a', local: new LmdbStore(dir), replicaIdWaitMs: 0 })).rejects.toThrow(/replica id "a" is in use/);
  });

  it('announce: false writes are stored but not announced', async () => {
    await a.collection<number[]>('engine_state', { announce: false }).put('acme', 'r1', [1, 2]);
    const rows = await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".changes WHERE collection = 'engine_state'`);
    expect(Number(rows[0].n)).toBe(0);
    const stored = await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".entries WHERE collection = 'engine_state'`);
    expect(Number(stored[0].n)).toBe(1);
  });
});
