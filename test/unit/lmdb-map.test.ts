/**
 * The LMDB store maps its data file once (src/store/lmdb-store.ts, LMDB_MAP_BYTES): lmdb-js
 * grows a small map by remapping and never unmaps the old maps, whose touched pages then stay
 * in the process's RSS. A store that grows to several MB must still have one map of its file,
 * and the file must hold what was written, not the map's size.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LMDB_MAP_BYTES, LmdbStore } from '../../src/store/lmdb-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The mappings of `file` in this process. */
function mapsOf(file: string): number {
  return readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((l) => l.endsWith(file)).length;
}

describe('the LMDB map', () => {
  it('stays one map of the data file while the store grows, and the file only as large as its data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lmdb-map-'));
    dirs.push(dir);
    const store = new LmdbStore(dir);
    const rules = store.collection<{ rule_id: string; note: string }>('rules');
    const note = 'x'.repeat(400);
    // ~8 MB in batches: lmdb-js's own map would have started at 128 KB and doubled six times.
    for (let batch = 0; batch < 20; batch++) {
      await store.atomic((b) => {
        for (let i = 0; i < 1000; i++) b.put(rules, 't', `r${batch}-${i}`, { rule_id: `r${batch}-${i}`, note });
      });
    }
    expect(rules.get('t', 'r19-999')?.note).toBe(note);
    const file = join(dir, 'data.mdb');
    expect(mapsOf(file)).toBe(1);
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(8_000_000);
    expect(size).toBeLessThan(LMDB_MAP_BYTES / 1000);
    await store.close();
  });
});
