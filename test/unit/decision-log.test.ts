/** DecisionLog: bounded rings, duplicate memory, retention on an injected clock. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DecisionLog, FLUSH_SLICE_RECORDS } from '../../src/decisions/decision-log.js';
import { OutcomeDedup } from '../../src/decisions/outcome-dedup.js';
import type { RouteDecision } from '../../src/routing/decide.js';
import { SharedTables } from '../../src/shm/tables.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import type { WriteBatch } from '../../src/store/store.js';
import { TenantRegistry } from '../../src/tenants/registry.js';
import type { LiveRule } from '../../src/tenants/tenant.js';

const dir = mkdtempSync(join(tmpdir(), 'declog-'));
const store = new LmdbStore(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function setup(ringCapacity = 1024) {
  let now = Date.parse('2026-03-01T00:00:00Z');
  const tables = new SharedTables();
  const tenants = new TenantRegistry(['t'], { predictionEnabled: false, banditEnabled: false, shadowMode: false });
  const t = tenants.get('t');
  const record = { rule_id: 'r', attributes: ['*', '*', '*', '*', '*', '*'], primary_id: 'p', primary_name: 'p', secondary_id: 's', secondary_name: 's', primary_weight: 0.9, created_at: '' };
  const rule: LiveRule = { record, slot: tables.allocRule(0.9, false), runStartedAt: [0, 0], override: null, cache: null };
  const log = new DecisionLog({ store, tables, tenants, now: () => now, ringCapacity });
  const decision = (): RouteDecision => ({ processor_id: 'p', weight: 0.9, fallback_processor_id: 's', decision_source: 'rules', failure_probability: null, rule_id: 'r' });
  return { log, t, rule, decision, advance: (ms: number) => (now += ms), now: () => now };
}

describe('DecisionLog', () => {
  it('keeps decisions at least 24 h and at most 36 h (rotating generations), without an index write per record', async () => {
    const { log, t, rule, decision, advance, now } = setup();
    log.routed(t, rule, 'old_tx', decision(), now());
    await log.flush();
    advance(24 * 3600_000);
    log.routed(t, rule, 'new_tx', decision(), now());
    await log.flush(); // a later period: the old record's generation is not reused yet
    expect((await log.lookup(t, 'old_tx')).decision?.processor_id).toBe('p');
    advance(12 * 3600_000 + 1);
    log.routed(t, rule, 'newer_tx', decision(), now());
    await log.flush(); // this period reuses the oldest generation: cleared first
    expect((await log.lookup(t, 'old_tx')).decision).toBeUndefined();
    expect((await log.lookup(t, 'new_tx')).decision).toBeDefined();
    expect((await log.lookup(t, 'newer_tx')).decision).toBeDefined();
    // Without any write, a lookup still ignores generations past retention.
    advance(36 * 3600_000);
    expect((await log.lookup(t, 'new_tx')).decision).toBeUndefined();
  });

  it('never blocks or grows past its ring: a full ring drops and counts', async () => {
    const { log, t, rule, decision, now } = setup(4);
    for (let i = 0; i < 6; i++) log.routed(t, rule, `tx_${i}`, decision(), now());
    expect(log.lost).toBe(2);
    await log.flush();
    expect((await log.lookup(t, 'tx_3')).decision).toBeDefined();
    expect((await log.lookup(t, 'tx_5')).decision).toBeUndefined();
  });

  it('writes a flush in transactions of at most FLUSH_SLICE_RECORDS records, so answers go out between them', async () => {
    const { log, t, rule, decision, now } = setup(4 * FLUSH_SLICE_RECORDS);
    const n = 2 * FLUSH_SLICE_RECORDS + 10;
    for (let i = 0; i < n; i++) log.routed(t, rule, `slice_tx_${i}`, decision(), now());
    const puts: number[] = [];
    const atomic = store.atomic.bind(store);
    const spy = vi.spyOn(store, 'atomic').mockImplementation((fn) =>
      atomic((b: WriteBatch) => {
        let count = 0;
        fn({ ...b, put: (c, tenantId, id, value) => (count++, b.put(c, tenantId, id, value)) });
        puts.push(count);
      }),
    );
    // An event-loop turn between two transactions: a setImmediate queued now runs before the flush ends.
    let turns = 0;
    const counting = () => {
      turns++;
      if (!done) setImmediate(counting);
    };
    let done = false;
    setImmediate(counting);
    try {
      await log.flush();
    } finally {
      done = true;
      spy.mockRestore();
    }
    expect(puts).toEqual([FLUSH_SLICE_RECORDS, FLUSH_SLICE_RECORDS, 10]);
    expect(turns).toBeGreaterThanOrEqual(3);
    for (const i of [0, FLUSH_SLICE_RECORDS, n - 1]) expect((await log.lookup(t, `slice_tx_${i}`)).decision?.rule_id).toBe('r');
  });

  it('loses only the records of a transaction the store refuses, and writes the others', async () => {
    const { log, t, rule, decision, now } = setup(4 * FLUSH_SLICE_RECORDS);
    const n = 2 * FLUSH_SLICE_RECORDS;
    for (let i = 0; i < n; i++) log.routed(t, rule, `refused_tx_${i}`, decision(), now());
    const atomic = store.atomic.bind(store);
    let calls = 0;
    const spy = vi.spyOn(store, 'atomic').mockImplementation((fn) => (++calls === 1 ? Promise.reject(new Error('MDB_MAP_FULL')) : atomic(fn)));
    try {
      await log.flush();
    } finally {
      spy.mockRestore();
    }
    expect(log.lost).toBe(FLUSH_SLICE_RECORDS);
    expect((await log.lookup(t, 'refused_tx_0')).decision).toBeUndefined();
    expect((await log.lookup(t, `refused_tx_${n - 1}`)).decision?.rule_id).toBe('r');
  });

  it('remembers the last N outcome ids across tenants, forgetting the oldest', () => {
    const tenants = new TenantRegistry(['a', 'b'], { predictionEnabled: false, banditEnabled: false, shadowMode: false });
    const a = tenants.get('a');
    const b = tenants.get('b');
    const d = new OutcomeDedup(3);
    d.add(a, 'x');
    d.add(b, 'x');
    d.add(a, 'y');
    expect(d.has(a, 'x') && d.has(b, 'x') && d.has(a, 'y')).toBe(true);
    expect(d.has(b, 'y')).toBe(false);
    d.add(a, 'z');
    expect(d.has(a, 'x')).toBe(false);
    expect(d.size()).toBe(3);
  });
});
