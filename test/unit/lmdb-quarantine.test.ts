import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { open } from 'lmdb';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function storeWith(bad: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'quarantine-'));
  dirs.push(dir);
  const root = open({ path: dir, maxDbs: 64 });
  const db = root.openDB({ name: 'things' });
  const raw = root.openDB({ name: 'things', encoding: 'binary' });
  for (const id of ['a', 'b', 'c', 'd', 'e']) {
    if (bad.includes(id)) await raw.put(['t', id], Buffer.from([0xc1, 0xff]));
    else await db.put(['t', id], { id });
  }
  await root.close();
  return dir;
}

describe('undecodable records', () => {
  it.each([[['a']], [['e']], [['b', 'c']], [['a', 'b', 'c', 'd', 'e']], [[]]])('are skipped and set aside: %j', async (bad) => {
    const store = new LmdbStore(await storeWith(bad));
    const c = store.collection<{ id: string }>('things');
    const good = ['a', 'b', 'c', 'd', 'e'].filter((x) => !bad.includes(x));
    expect([...c.listAll()].map((e) => e.id)).toEqual(good);
    expect([...c.list('t')].map((e) => e.id)).toEqual(good);
    expect(store.status().quarantined).toBe(bad.length);
    await store.close();
  });
});
