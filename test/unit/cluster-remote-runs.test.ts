/** Other replicas' technical-failure runs: summed into the rule row, tripping the fast path, expiring. */
import { describe, expect, it } from 'vitest';
import { RemoteRuns, REMOTE_RUN_TTL_MS } from '../../src/cluster/remote-runs.js';
import { RI_REMOTE_RUN_PRIMARY, RI_REMOTE_RUN_SECONDARY, RI_RUN_PRIMARY } from '../../src/shm/layout.js';
import { ruleI32Base, ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import type { LiveRule } from '../../src/tenants/tenant.js';

function setup(sameProcessor = false) {
  const tables = new SharedTables();
  const slot = tables.allocRule(0.9, sameProcessor);
  const rule = { slot, record: { rule_id: 'r', primary_id: 'stripe', secondary_id: sameProcessor ? 'stripe' : 'adyen' } } as unknown as LiveRule;
  const ref = { tenantId: 't', rule, k: 0 as const };
  const runs = new RemoteRuns(tables, () => ref);
  const row = ruleSegment(tables.ruleSegs, slot).ruleI32;
  const ib = ruleI32Base(slot);
  return { runs, ref, row, ib };
}

describe('remote runs', () => {
  it('sums the other replicas\' runs into the row and reports when local + remote reaches the fast path', () => {
    const { runs, ref, row, ib } = setup();
    const t = 1_800_000_000_000;
    expect(runs.note(1, ref, 'b', 4, t)).toBe(false);
    expect(row[ib + RI_REMOTE_RUN_PRIMARY]).toBe(4);
    Atomics.store(row, ib + RI_RUN_PRIMARY, 3); // our own run
    expect(runs.note(1, ref, 'c', 3, t)).toBe(true); // 3 + 4 + 3 = 10
    expect(row[ib + RI_REMOTE_RUN_PRIMARY]).toBe(7);
    expect(row[ib + RI_REMOTE_RUN_SECONDARY]).toBe(0);
    // A success on "b" ends its run.
    expect(runs.note(1, ref, 'b', 0, t + 10)).toBe(false);
    expect(row[ib + RI_REMOTE_RUN_PRIMARY]).toBe(3);
  });

  it('a replica that stops reporting stops counting after the TTL', () => {
    const { runs, ref, row, ib } = setup();
    const t = 1_800_000_000_000;
    runs.note(1, ref, 'b', 6, t);
    runs.expire(t + REMOTE_RUN_TTL_MS - 1);
    expect(row[ib + RI_REMOTE_RUN_PRIMARY]).toBe(6);
    runs.expire(t + REMOTE_RUN_TTL_MS + 1);
    expect(row[ib + RI_REMOTE_RUN_PRIMARY]).toBe(0);
  });

  it('a self-fallback rule counts the run on both sides', () => {
    const { runs, ref, row, ib } = setup(true);
    runs.note(1, ref, 'b', 5, 1_800_000_000_000);
    expect([row[ib + RI_REMOTE_RUN_PRIMARY], row[ib + RI_REMOTE_RUN_SECONDARY]]).toEqual([5, 5]);
  });
});
