/**
 * The front thread's JIT warm-up of the checkpoint path (src/engine/checkpoint-warm-up.ts) and
 * the front thread's warm-up as a whole (src/front-warm-up.ts), on a real LMDB store: the
 * simulated checkpoints go through the real writer and LMDB code into two scratch collections,
 * which are empty again afterwards, the rest of the store is untouched, and the table slots
 * it took are free again; when the store refuses writes, the warm-up is skipped with a warning
 * and the service starts anyway.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WARM_UP_COLLECTIONS, WARM_UP_ROUNDS, WARM_UP_RULES, warmUpCheckpoints } from '../../src/engine/checkpoint-warm-up.js';
import { warmUpFrontThread } from '../../src/front-warm-up.js';
import { log } from '../../src/log.js';
import { Metrics } from '../../src/metrics/registry.js';
import { SharedTables } from '../../src/shm/tables.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { settingsForTier } from '../../src/tenants/tenant.js';

let dir: string;
let store: LmdbStore;
const settings = settingsForTier(3, false);
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cp-warm-up-test-'));
  store = new LmdbStore(dir);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

const scratchEntries = () => WARM_UP_COLLECTIONS.map((name) => [...store.collection<unknown>(name).listAll()].length);

describe('checkpoint path warm-up', () => {
  it('checkpoints every rule with outcomes each round, writing those that changed, then leaves the scratch collections empty, the rest untouched and its slots free', async () => {
    const real = store.collection<number[]>('engine_state', { announce: false });
    await real.put('acme', 'r1', [1, 2, 3]);
    const tables = new SharedTables();
    const before = tables.allocRule(0.9, false);
    // The store hands out one collection per name: the warm-up writes through this one.
    const puts = vi.spyOn(store.collection<unknown>(WARM_UP_COLLECTIONS[0]), 'put');
    const r = await warmUpCheckpoints(store, tables, settings);
    // Every branch of the writer ran many times: written, unchanged, changed but not yet due.
    expect(r.writes).toBeGreaterThan(2 * WARM_UP_ROUNDS);
    expect(r.unchanged).toBeGreaterThan(2 * WARM_UP_ROUNDS);
    expect(r.deferred).toBeGreaterThan(2 * WARM_UP_ROUNDS);
    // Every fourth simulated rule has no outcomes: passed over as real ones are.
    expect(r.writes + r.unchanged + r.deferred).toBe(WARM_UP_ROUNDS * (WARM_UP_RULES - WARM_UP_RULES / 4));
    expect(puts).toHaveBeenCalledTimes(r.writes);
    expect(r.ms).toBeGreaterThan(0);
    expect(scratchEntries()).toEqual([0, 0]);
    expect([...real.listAll()]).toEqual([{ tenantId: 'acme', id: 'r1', value: [1, 2, 3] }]);
    // Every slot it took is free again: the next rules get them (the free list first), no new ones.
    const next = Array.from({ length: WARM_UP_RULES }, () => tables.allocRule(0.9, false));
    expect(new Set(next).size).toBe(WARM_UP_RULES);
    expect(Math.max(...next)).toBe(before + WARM_UP_RULES);
  });

  it('empties what a start killed during it left behind', async () => {
    await store.collection<number>(WARM_UP_COLLECTIONS[0]).put('warm-up', 'left-over', 1);
    await warmUpCheckpoints(store, new SharedTables(), settings);
    expect(scratchEntries()).toEqual([0, 0]);
  });

  it('throws when the store refuses the writes, and gives its slots back', async () => {
    const tables = new SharedTables();
    await store.close();
    await expect(warmUpCheckpoints(store, tables, settings)).rejects.toThrow();
    // No slot is lost: the next rules fill slots 0 to WARM_UP_RULES - 1.
    const next = Array.from({ length: WARM_UP_RULES }, () => tables.allocRule(0.9, false));
    expect(Math.max(...next)).toBe(WARM_UP_RULES - 1);
  });
});

describe('front thread warm-up', () => {
  it('renders the registry and checkpoints, and logs what it did', async () => {
    const info = vi.spyOn(log, 'info').mockImplementation(() => {});
    await warmUpFrontThread({ registry: new Metrics().registry, tables: new SharedTables(), settings, embeddedStore: store, hotTargets: [], maxBodyBytes: 65536 });
    const call = info.mock.calls.find(([msg]) => msg === 'front thread warmed up');
    expect(call?.[1]).toMatchObject({ registry_ms: expect.any(Number), checkpoint_ms: expect.any(Number), checkpoint_writes: expect.any(Number) });
  });

  it('leaves the checkpoint path alone in cluster mode (checkpoints do not go to LMDB there)', async () => {
    const info = vi.spyOn(log, 'info').mockImplementation(() => {});
    await warmUpFrontThread({ registry: new Metrics().registry, tables: new SharedTables(), settings, embeddedStore: null, hotTargets: [], maxBodyBytes: 65536 });
    const call = info.mock.calls.find(([msg]) => msg === 'front thread warmed up');
    expect(call?.[1]).toEqual({ registry_ms: expect.any(Number), body_decode_ms: expect.any(Number), body_decodes: 0 });
  });

  it('a failure is a warning, not a failed start', async () => {
    const warn = vi.spyOn(log, 'warn').mockImplementation(() => {});
    await store.close();
    await expect(warmUpFrontThread({ registry: new Metrics().registry, tables: new SharedTables(), settings, embeddedStore: store, hotTargets: [], maxBodyBytes: 65536 })).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith('front thread warm-up failed; the first cycles, scrapes and outcomes compile instead', expect.objectContaining({ registry_ms: expect.any(Number), error: expect.any(String) }));
  });
});
