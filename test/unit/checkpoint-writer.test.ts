/**
 * The engine's checkpoints are written in slices (src/engine/checkpoint-writer.ts): the front
 * thread gets a turn between slices, each rule's snapshot is the one taken when the
 * checkpoint was asked for, a rule deleted meanwhile is not written, and a tenant is
 * checkpointed at most once per gap.
 */
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_LENGTH, checkpointValues, snapshotRule, type StoredCheckpoint } from '../../src/engine/checkpoint.js';
import { CheckpointWriter, SLICE_MS } from '../../src/engine/checkpoint-writer.js';
import { PF_STATUS, PF_SUCCESS_RATE, RI_WINDOW_PRIMARY } from '../../src/shm/layout.js';
import { processorRowOffset, ruleI32Base, ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import type { Collection } from '../../src/store/store.js';
import { Tenant, settingsForTier } from '../../src/tenants/tenant.js';
import { toRecord } from '../../src/rules/rule-service.js';

/** A collection whose put costs ~20 µs of this thread, as encoding a snapshot does. */
function slowCollection() {
  const puts: { tenant: string; id: string; value: StoredCheckpoint; turn: number }[] = [];
  let turn = 0;
  const tick = () => {
    turn++;
    setImmediate(tick).unref();
  };
  tick();
  const c = {
    put(tenant: string, id: string, value: StoredCheckpoint) {
      const until = performance.now() + 0.02;
      while (performance.now() < until);
      puts.push({ tenant, id, value, turn });
      return Promise.resolve();
    },
  } as unknown as Collection<StoredCheckpoint>;
  return { c, puts };
}

function tenantWith(tables: SharedTables, n: number, active: (i: number) => boolean, id = 't'): Tenant {
  const t = new Tenant(id, settingsForTier(1, false));
  for (let i = 0; i < n; i++) {
    const record = toRecord({ rule_id: `r${i}`, attributes: [`C${i}`, 'USD', 'card'], primary_id: 'a', secondary_id: 'b' }, new Date());
    const slot = tables.allocRule(0.9, false);
    if (active(i)) {
      ruleSegment(tables.ruleSegs, slot).ruleI32[ruleI32Base(slot) + RI_WINDOW_PRIMARY] = 0;
      ruleSegment(tables.ruleSegs, slot).procF64[processorRowOffset(slot, 0) + PF_SUCCESS_RATE] = i / n;
    }
    t.addRule({ record, slot, runStartedAt: [0, 0], override: null, routeCache: null });
  }
  return t;
}

const settle = async (w: CheckpointWriter, ...ids: string[]) => {
  while ((ids.length === 0 ? ['t'] : ids).some((id) => w.writing(id))) await new Promise((r) => setImmediate(r));
};

describe('CheckpointWriter', () => {
  it('writes a large tenant over many turns of the event loop, only the rules with traffic', async () => {
    const tables = new SharedTables();
    const tenant = tenantWith(tables, 3000, (i) => i % 3 !== 2);
    const { c, puts } = slowCollection();
    const w = new CheckpointWriter({ tables, checkpoints: c, track: () => {}, minGapMs: 1000 });
    expect(w.request(tenant)).toBe(true);
    // The call returned without writing (~40 ms of work): the first slice, too, comes in a later
    // turn, not in the one that delivered the evaluation.
    expect(puts.length).toBe(0);
    expect(w.writing('t')).toBe(true);
    await settle(w);
    expect(puts.length).toBe(2000);
    expect(new Set(puts.map((p) => p.turn)).size).toBeGreaterThan(5);
    expect(w.stats.slices).toBeGreaterThan(5);
    const r4 = puts.find((p) => p.id === 'r4')!;
    // The snapshot's bytes (storedCheckpoint), not a plain array of numbers.
    expect(r4.value).toBeInstanceOf(Uint8Array);
    expect((r4.value as Uint8Array).byteLength).toBe(CHECKPOINT_LENGTH * 8);
    expect(Array.from(checkpointValues(r4.value)!)).toEqual(Array.from(snapshotRule(tables, tenant.rules.get('r4')!.slot)));
  });

  it('keeps each slice within SLICE_MS of work', async () => {
    const tables = new SharedTables();
    const tenant = tenantWith(tables, 3000, () => true);
    const { c, puts } = slowCollection(); // ~20 µs a put
    const w = new CheckpointWriter({ tables, checkpoints: c, track: () => {}, minGapMs: 1000 });
    w.request(tenant);
    await settle(w);
    const perTurn = new Map<number, number>();
    for (const p of puts) perTurn.set(p.turn, (perTurn.get(p.turn) ?? 0) + 1);
    const counts = [...perTurn.values()].sort((a, b) => a - b);
    // The median slice (robust to the odd preemption on a busy machine): SLICE_MS of puts, plus the one that crossed it.
    expect(counts[counts.length >> 1]).toBeLessThanOrEqual(Math.ceil(SLICE_MS / 0.02) + 1);
    expect(counts[counts.length >> 1]).toBeGreaterThanOrEqual(Math.floor(SLICE_MS / 0.02 / 5)); // not a turn per put
  });

  it("takes turns with other tenants' checkpoints: never two slices in one turn of the event loop", async () => {
    const tables = new SharedTables();
    const tenants = ['a', 'b', 'c'].map((id) => tenantWith(tables, 600, () => true, id));
    const { c, puts } = slowCollection();
    const w = new CheckpointWriter({ tables, checkpoints: c, track: () => {}, minGapMs: 1000 });
    // Three tenants evaluated back to back, as a cycle delivers them.
    for (const t of tenants) expect(w.request(t)).toBe(true);
    await settle(w, 'a', 'b', 'c');
    expect(puts).toHaveLength(1800);
    const tenantsPerTurn = new Map<number, Set<string>>();
    for (const p of puts) tenantsPerTurn.set(p.turn, (tenantsPerTurn.get(p.turn) ?? new Set()).add(p.tenant));
    expect([...tenantsPerTurn.values()].every((s) => s.size === 1)).toBe(true);
    // ...and they do take turns rather than one after the other.
    expect(puts.findIndex((p) => p.tenant === 'c')).toBeLessThan(puts.findLastIndex((p) => p.tenant === 'a'));
  });

  it('writes the snapshot taken when asked, skips a rule deleted meanwhile, and keeps the gap', async () => {
    let now = 0;
    const tables = new SharedTables();
    const tenant = tenantWith(tables, 3000, () => true);
    const { c, puts } = slowCollection();
    const w = new CheckpointWriter({ tables, checkpoints: c, track: () => {}, minGapMs: 1000, now: () => now });
    w.request(tenant);
    const last = tenant.rules.get('r2999')!;
    ruleSegment(tables.ruleSegs, last.slot).procF64[processorRowOffset(last.slot, 0) + PF_STATUS] = 2; // changed after the request
    tenant.removeRule('r2998');
    now = 500;
    expect(w.request(tenant)).toBe(false); // one running, and within the gap
    await settle(w);
    expect(puts.find((p) => p.id === 'r2998')).toBeUndefined();
    expect(puts.find((p) => p.id === 'r2999')!.value[5 + PF_STATUS]).toBe(0);
    expect(puts).toHaveLength(2999);
    now = 999;
    expect(w.request(tenant)).toBe(false);
    now = 1000;
    expect(w.request(tenant)).toBe(true);
    await settle(w);
    expect(puts).toHaveLength(2 * 2999);
  });

  it('writeNow writes everything at once and cancels a running checkpoint', async () => {
    const tables = new SharedTables();
    const tenant = tenantWith(tables, 3000, () => true);
    const { c, puts } = slowCollection();
    const w = new CheckpointWriter({ tables, checkpoints: c, track: () => {}, minGapMs: 0 });
    w.request(tenant);
    const first = puts.length;
    w.writeNow(tenant);
    expect(puts.length).toBe(first + 3000);
    expect(w.writing('t')).toBe(false);
    await new Promise((r) => setTimeout(r, 20));
    expect(puts.length).toBe(first + 3000);
  });
});
