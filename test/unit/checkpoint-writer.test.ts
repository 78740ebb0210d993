/**
 * The engine's checkpoints are written in slices (src/engine/checkpoint-writer.ts): the front
 * thread gets a turn between slices and at least SLICE_GAP_MS between two, each rule's snapshot
 * is taken in its slice while no evaluation task runs on the shard, a rule deleted meanwhile is
 * not written, a rule whose snapshot is the one last stored is not written again (unless that
 * write was refused), and a tenant is checkpointed at most once per gap.
 */
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_LENGTH, checkpointValues, snapshotRule, type StoredCheckpoint } from '../../src/engine/checkpoint.js';
import { CheckpointWriter, MAX_AGE_MS, SLICE_GAP_MS, SLICE_MS } from '../../src/engine/checkpoint-writer.js';
import { PF_LAST_EVAL_MS, PF_STATUS, PF_SUCCESS_RATE, RI_WINDOW_PRIMARY } from '../../src/shm/layout.js';
import { processorRowOffset, ruleI32Base, ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import type { Collection } from '../../src/store/store.js';
import { Tenant, settingsForTier } from '../../src/tenants/tenant.js';
import { toRecord } from '../../src/rules/rule-service.js';
import { markRowsInUse } from '../../src/shm/processor-rows.js';

/** A collection whose put costs ~20 µs of this thread, as encoding a snapshot does. */
function slowCollection(refuse: (id: string) => boolean = () => false) {
  const puts: { tenant: string; id: string; value: StoredCheckpoint; turn: number; atMs: number }[] = [];
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
      if (refuse(id)) return Promise.reject(new Error('MDB_MAP_FULL'));
      puts.push({ tenant, id, value, turn, atMs: performance.now() });
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
      markRowsInUse(ruleSegment(tables.ruleSegs, slot), slot); // as the evaluation that wrote them would
      ruleSegment(tables.ruleSegs, slot).procF64[processorRowOffset(slot, 0) + PF_SUCCESS_RATE] = i / n;
    }
    t.addRule({ record, slot, runStartedAt: [0, 0], override: null, cache: null });
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

  it('takes each snapshot in its slice, skips a rule deleted meanwhile, and keeps the gap', async () => {
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
    // The rule as it was when its slice came, not when the checkpoint was asked for.
    expect(checkpointValues(puts.find((p) => p.id === 'r2999')!.value)![5 + PF_STATUS]).toBe(2);
    expect(puts).toHaveLength(2999);
    now = 999;
    expect(w.request(tenant)).toBe(false);
    now = 1000;
    ruleSegment(tables.ruleSegs, last.slot).procF64[processorRowOffset(last.slot, 0) + PF_STATUS] = 1;
    expect(w.request(tenant)).toBe(true);
    await settle(w);
    // Only the rule that changed since.
    expect(puts.slice(2999).map((p) => p.id)).toEqual(['r2999']);
    expect(w.stats.unchanged).toBe(2998);
  });

  it('writes a rule again at once when a status changed, after MAX_AGE_MS when only its model state did, never for the evaluation time alone', async () => {
    let now = 0;
    const tables = new SharedTables();
    const tenant = tenantWith(tables, 10, () => true);
    const { c, puts } = slowCollection();
    const w = new CheckpointWriter({ tables, checkpoints: c, track: () => {}, minGapMs: 0, now: () => now });
    const row = (id: string) => {
      const slot = tenant.rules.get(id)!.slot;
      return { f: ruleSegment(tables.ruleSegs, slot).procF64, o: processorRowOffset(slot, 1) };
    };
    const checkpoint = async (atMs: number) => {
      const before = puts.length;
      now = atMs;
      expect(w.request(tenant)).toBe(true);
      await settle(w);
      await Promise.resolve(); // what was stored counts once the writes have succeeded
      return puts.slice(before).map((p) => p.id);
    };
    expect(await checkpoint(0)).toHaveLength(10);
    // Each evaluation stamps its time on every row: that alone is not a change.
    for (const id of tenant.rules.keys()) row(id).f[row(id).o + PF_LAST_EVAL_MS] = 1_700_000_000_000;
    row('r3').f[row('r3').o + PF_SUCCESS_RATE] = 0.5; // model state
    row('r4').f[row('r4').o + PF_STATUS] = 2; // failed over
    expect(await checkpoint(1000)).toEqual(['r4']);
    expect(w.stats.deferred).toBe(1);
    expect(w.stats.unchanged).toBe(8);
    expect(await checkpoint(MAX_AGE_MS - 1)).toEqual([]);
    expect(await checkpoint(MAX_AGE_MS)).toEqual(['r3']);
    // A rule replaced (PATCH: a new object in the same slot) is written again.
    const old = tenant.rules.get('r5')!;
    tenant.removeRule('r5');
    tenant.addRule({ ...old, cache: null });
    expect(await checkpoint(MAX_AGE_MS + 1000)).toEqual(['r5']);
    // A stop writes every change, whatever its age.
    row('r6').f[row('r6').o + PF_SUCCESS_RATE] = 0.25;
    const before = puts.length;
    w.writeNow(tenant);
    expect(puts.slice(before).map((p) => p.id)).toEqual(['r6']);
  });

  it('writes again at the next checkpoint a snapshot the store refused', async () => {
    let now = 0;
    let full = true;
    const tables = new SharedTables();
    const tenant = tenantWith(tables, 20, () => true);
    const { c, puts } = slowCollection((id) => full && id === 'r7');
    const failed: unknown[] = [];
    const w = new CheckpointWriter({ tables, checkpoints: c, track: (p) => void p.catch((e) => failed.push(e)), minGapMs: 1000, now: () => now });
    w.request(tenant);
    await settle(w);
    await new Promise((r) => setImmediate(r));
    expect(failed).toHaveLength(1);
    expect(puts).toHaveLength(19);
    full = false;
    now = 1000;
    w.request(tenant);
    await settle(w);
    await new Promise((r) => setImmediate(r));
    // The slice with r7 was refused as a whole (one promise per slice), so all of it is written again.
    expect(puts.slice(19).map((p) => p.id)).toContain('r7');
    const stored = puts.length;
    now = 2000;
    w.request(tenant);
    await settle(w);
    expect(puts.length).toBe(stored); // nothing changed since: nothing written
  });

  it('writes no snapshot while an evaluation task runs on the shard, and resumes when it ends', async () => {
    const tables = new SharedTables();
    const tenant = tenantWith(tables, 50, () => true);
    const { c, puts } = slowCollection();
    let endTask: () => void = () => {};
    let task: Promise<void> | null = new Promise<void>((r) => (endTask = r));
    const w = new CheckpointWriter({ tables, checkpoints: c, track: () => {}, minGapMs: 0, whenIdle: () => task });
    w.request(tenant);
    await new Promise((r) => setTimeout(r, 30));
    expect(puts).toHaveLength(0);
    expect(w.stats.waitedForTask).toBeGreaterThan(0);
    // The task rewrites a rule's row; the checkpoint then takes the new value.
    const slot = tenant.rules.get('r0')!.slot;
    ruleSegment(tables.ruleSegs, slot).procF64[processorRowOffset(slot, 0) + PF_STATUS] = 3;
    task = null;
    endTask();
    await settle(w);
    expect(puts).toHaveLength(50);
    expect(checkpointValues(puts.find((p) => p.id === 'r0')!.value)![5 + PF_STATUS]).toBe(3);
  });

  it('leaves at least SLICE_GAP_MS between two slices, of one tenant or of several', async () => {
    const tables = new SharedTables();
    const tenants = ['a', 'b'].map((id) => tenantWith(tables, 400, () => true, id));
    const { c, puts } = slowCollection();
    const w = new CheckpointWriter({ tables, checkpoints: c, track: () => {}, minGapMs: 0 });
    for (const t of tenants) w.request(t);
    await settle(w, 'a', 'b');
    expect(puts).toHaveLength(800);
    const byTurn = new Map<number, { first: number; last: number }>();
    for (const p of puts) {
      const t = byTurn.get(p.turn);
      if (t === undefined) byTurn.set(p.turn, { first: p.atMs, last: p.atMs });
      else t.last = p.atMs;
    }
    const slices = [...byTurn.values()].sort((x, y) => x.first - y.first);
    expect(slices.length).toBeGreaterThan(10);
    for (let i = 1; i < slices.length; i++) expect(slices[i].first - slices[i - 1].last).toBeGreaterThanOrEqual(SLICE_GAP_MS - 0.05);
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
