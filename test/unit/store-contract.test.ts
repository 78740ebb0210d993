/**
 * One contract, every store: the same suite runs against LMDB (the embedded default) and
 * PostgreSQL (cluster mode), so the service code can rely on the interface alone. The
 * PostgreSQL part uses a fresh schema per store factory, dropped afterwards; it is skipped
 * with the reason when PostgreSQL cannot be reached (failed when CI is set).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { PostgresStore } from '../../src/store/postgres/pg-store.js';
import { StoreConflict, type Store } from '../../src/store/store.js';
import { dropSchema, newSchema, testPostgres } from '../helpers/postgres.js';

const pg = await testPostgres();

interface Factory {
  name: string;
  available: boolean;
  /** A fresh, empty store. */
  open(): Promise<Store>;
  /** The same data again, after the previous store was closed. */
  reopen(): Promise<Store>;
  cleanup(): Promise<void>;
}

function lmdbFactory(): Factory {
  let dir = '';
  return {
    name: 'LMDB',
    available: true,
    async open() {
      dir = mkdtempSync(join(tmpdir(), 'store-contract-'));
      return new LmdbStore(dir);
    },
    async reopen() {
      return new LmdbStore(dir);
    },
    async cleanup() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresFactory(): Factory {
  let schema = '';
  let dir = '';
  const open = () => PostgresStore.open({ url: pg.url, schema, replicaId: 'contract', local: new LmdbStore(dir), pollMs: 200 });
  return {
    name: 'PostgreSQL',
    available: pg.ok,
    async open() {
      schema = newSchema('contract');
      dir = mkdtempSync(join(tmpdir(), 'store-contract-local-'));
      return open();
    },
    reopen: open,
    async cleanup() {
      if (schema) await dropSchema(schema);
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Rule {
  name: string;
  attrs: string[];
  weight?: number;
}

const factories = [lmdbFactory(), postgresFactory()];
afterAll(async () => {
  for (const f of factories) await f.cleanup();
});

describe.each(factories)('store contract: $name', (f) => {
  describe.skipIf(!f.available)(f.name, () => {
    let store: Store;
    it('opens empty', async () => {
      store = await f.open();
      expect([...store.collection('rules').listAll()]).toEqual([]);
      expect(store.connected()).toBe(true);
    });

    it('puts, gets, lists in key order, pages ids, removes', async () => {
      const c = store.collection<Rule>('things');
      for (const id of ['b', 'a', 'c', 'a2']) await c.put('t1', id, { name: id, attrs: [id] });
      await c.put('t2', 'z', { name: 'z', attrs: [] });
      expect(c.get('t1', 'a')).toEqual({ name: 'a', attrs: ['a'] });
      expect(c.get('t1', 'z')).toBeUndefined();
      expect([...c.list('t1')].map((e) => e.id)).toEqual(['a', 'a2', 'b', 'c']);
      expect(c.ids('t1', 2)).toEqual(['a', 'a2']);
      expect(c.ids('t1', 2, 'a2')).toEqual(['b', 'c']);
      expect(c.ids('t1', 10, 'c')).toEqual([]);
      expect([...c.listAll()].map((e) => `${e.tenantId}/${e.id}`)).toEqual(['t1/a', 't1/a2', 't1/b', 't1/c', 't2/z']);
      await c.put('t1', 'a', { name: 'A', attrs: ['a'] });
      expect(c.get('t1', 'a')?.name).toBe('A');
      expect(await c.remove('t1', 'a')).toBe(true);
      expect(await c.remove('t1', 'a')).toBe(false);
      expect(c.get('t1', 'a')).toBeUndefined();
      expect(c.ids('t1', 10)).toEqual(['a2', 'b', 'c']);
    });

    it('keeps values exactly (NaN, infinities, nested objects, unicode)', async () => {
      const c = store.collection<unknown>('values');
      const v = { n: [NaN, Infinity, -Infinity, 0.1, 2 ** 53], s: 'ünï\u0000cödé ✓', nested: { a: [null, true, { b: 'x' }] }, nothing: null };
      await c.put('t', 'id ✓/1', v);
      const back = c.get('t', 'id ✓/1') as typeof v;
      expect(back.n[0]).toBeNaN();
      expect(back.n.slice(1)).toEqual([Infinity, -Infinity, 0.1, 2 ** 53]);
      expect(back).toEqual(v);
    });

    it('insert refuses an id that exists, and of two concurrent inserts exactly one wins', async () => {
      const c = store.collection<Rule>('inserts');
      await c.insert('t', 'r1', { name: 'one', attrs: [] });
      await expect(c.insert('t', 'r1', { name: 'two', attrs: [] })).rejects.toMatchObject({ name: 'StoreConflict', on: 'id' });
      expect(c.get('t', 'r1')?.name).toBe('one');
      const results = await Promise.allSettled([c.insert('t', 'r2', { name: 'x', attrs: [] }), c.insert('t', 'r2', { name: 'y', attrs: [] })]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(StoreConflict);
      expect(['x', 'y']).toContain(c.get('t', 'r2')?.name);
    });

    it('uniqueBy: two entries of a tenant cannot share the key; other tenants and the entry itself can', async () => {
      const c = store.collection<Rule>('unique', { uniqueBy: (r) => r.attrs.join('\u0000') });
      await c.put('t', 'a', { name: 'a', attrs: ['US', 'USD'] });
      await expect(c.put('t', 'b', { name: 'b', attrs: ['US', 'USD'] })).rejects.toMatchObject({ on: 'unique', holder: 'a' });
      await expect(c.insert('t', 'b', { name: 'b', attrs: ['US', 'USD'] })).rejects.toMatchObject({ on: 'unique' });
      expect(c.get('t', 'b')).toBeUndefined();
      await c.put('t2', 'b', { name: 'b', attrs: ['US', 'USD'] });
      await c.put('t', 'a', { name: 'a2', attrs: ['US', 'USD'] });
      // Moving a's key frees the old one.
      await c.put('t', 'a', { name: 'a3', attrs: ['FR', 'EUR'] });
      await c.put('t', 'b', { name: 'b', attrs: ['US', 'USD'] });
      await c.remove('t', 'a');
      await c.put('t', 'c', { name: 'c', attrs: ['FR', 'EUR'] });
      const both = await Promise.allSettled([c.insert('t', 'd', { name: 'd', attrs: ['DE'] }), c.insert('t', 'e', { name: 'e', attrs: ['DE'] })]);
      expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    });

    it('atomic: all or nothing', async () => {
      const c = store.collection<Rule>('atomic', { uniqueBy: (r) => r.attrs.join('\u0000') });
      await c.put('t', 'x', { name: 'x', attrs: ['X'] });
      await store.atomic((b) => {
        b.insert(c, 't', 'p', { name: 'p', attrs: ['P'] });
        b.put(c, 't', 'q', { name: 'q', attrs: ['Q'] });
        b.remove(c, 't', 'x');
      });
      expect(c.ids('t', 10)).toEqual(['p', 'q']);
      await expect(
        store.atomic((b) => {
          b.insert(c, 't', 'r', { name: 'r', attrs: ['R'] });
          b.insert(c, 't', 'p', { name: 'p again', attrs: ['P2'] });
        }),
      ).rejects.toMatchObject({ name: 'StoreConflict', on: 'id' });
      await expect(
        store.atomic((b) => {
          b.insert(c, 't', 's', { name: 's', attrs: ['S'] });
          b.insert(c, 't', 'u', { name: 'u', attrs: ['Q'] });
        }),
      ).rejects.toMatchObject({ name: 'StoreConflict', on: 'unique' });
      expect(c.ids('t', 10)).toEqual(['p', 'q']);
      expect(c.get('t', 'p')?.name).toBe('p');
      // The keys a failed batch claimed are free again.
      await c.put('t', 's', { name: 's', attrs: ['S'] });
    });

    it('logs: newest first, pages by key, counts, prunes by age and by number', async () => {
      const l = store.log<{ n: number }>('events');
      const keys: string[] = [];
      for (let n = 0; n < 6; n++) keys.push(await l.append('t', 1000 + Math.floor(n / 2), { n }));
      await l.append('other', 1000, { n: 99 });
      expect(new Set(keys).size).toBe(6);
      expect(l.count('t')).toBe(6);
      const first = l.newest('t', 4);
      expect(first.map((e) => e.value.n)).toEqual([5, 4, 3, 2]);
      const next = l.newest('t', 4, first[first.length - 1].key);
      expect(next.map((e) => e.value.n)).toEqual([1, 0]);
      expect(await l.prune('t', 1001)).toBe(2);
      expect(l.newest('t', 10).map((e) => e.value.n)).toEqual([5, 4, 3, 2]);
      expect(await l.pruneBeyond('t', 3)).toBe(1);
      expect(l.newest('t', 10).map((e) => e.value.n)).toEqual([5, 4, 3]);
      expect(l.count('other')).toBe(1);
    });

    it('clear empties a collection of every tenant', async () => {
      const c = store.collection<number>('gen_0');
      await c.put('a', '1', 1);
      await c.put('b', '2', 2);
      await c.clear();
      expect([...c.listAll()]).toEqual([]);
      const quiet = store.collection<number>('gen_1', { announce: false });
      await quiet.put('a', '1', 1);
      await quiet.clear();
      expect([...quiet.listAll()]).toEqual([]);
      await quiet.put('a', '2', 2);
      expect(quiet.get('a', '2')).toBe(2);
    });

    it('announce: false collections read back like any other (many puts at once, the last wins)', async () => {
      const c = store.collection<number[]>('checkpoints', { announce: false });
      await Promise.all(Array.from({ length: 50 }, (_, i) => c.put('t', `r${i % 10}`, [i, NaN])));
      expect(c.ids('t', 100)).toHaveLength(10);
      expect(c.get('t', 'r3')?.[0]).toBe(43);
      expect(c.get('t', 'r3')?.[1]).toBeNaN();
    });

    it('replica- and local-scoped collections work like the others', async () => {
      const c = store.collection<string>('decisions_test', { scope: 'local' });
      await c.put('t', 'tx1', 'd1');
      await store.atomic((b) => b.put(c, 't', 'tx2', 'd2'));
      expect(c.ids('t', 10)).toEqual(['tx1', 'tx2']);
      const own = store.collection<string>('retry_queue', { scope: 'replica' });
      const shared = store.collection<string>('shared_records');
      await store.atomic((b) => {
        b.put(own, 't', 'q1', 'mine');
        b.put(shared, 't', 'q1', 'everyone');
      });
      expect(own.get('t', 'q1')).toBe('mine');
      expect(shared.get('t', 'q1')).toBe('everyone');
    });

    it('checkWritable resolves; everything survives a close and reopen', async () => {
      await store.checkWritable();
      expect(store.status().writable).toBe(true);
      await store.close();
      expect(store.connected()).toBe(false);
      store = await f.reopen();
      expect(store.collection<Rule>('things').ids('t1', 10)).toEqual(['a2', 'b', 'c']);
      expect(store.collection<number[]>('checkpoints', { announce: false }).get('t', 'r3')?.[0]).toBe(43);
      expect(store.log<{ n: number }>('events').newest('t', 10).map((e) => e.value.n)).toEqual([5, 4, 3]);
      expect(store.collection<string>('decisions_test', { scope: 'local' }).get('t', 'tx2')).toBe('d2');
      expect(store.collection<string>('retry_queue', { scope: 'replica' }).get('t', 'q1')).toBe('mine');
      const c = store.collection<Rule>('unique', { uniqueBy: (r) => r.attrs.join('\u0000') });
      await expect(c.put('t', 'z', { name: 'z', attrs: ['US', 'USD'] })).rejects.toMatchObject({ on: 'unique' });
      await store.close();
    });
  });
});
