/**
 * The decision rings and the outcome dedup ring hold memory for what was written, not for
 * their capacity (src/decisions/decision-ring.ts, outcome-dedup.ts); full rings still drop.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DEDUP_CAPACITY, RING_CAPACITY } from '../../src/decisions/decision-log.js';
import { OutcomeRing, RouteRing } from '../../src/decisions/decision-ring.js';
import { OutcomeDedup } from '../../src/decisions/outcome-dedup.js';
import { Tenant, settingsForTier, type LiveRule } from '../../src/tenants/tenant.js';
import type { RouteDecision } from '../../src/schemas/routing.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('decision rings', () => {
  it('cost under 1 MB of heap before anything is written (the four rings and the dedup ring held ~12 MB)', () => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const kept = [new RouteRing(RING_CAPACITY), new RouteRing(RING_CAPACITY), new OutcomeRing(RING_CAPACITY), new OutcomeRing(RING_CAPACITY), new OutcomeDedup(DEDUP_CAPACITY)];
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(1 << 20);
    expect(kept).toHaveLength(5);
  });

  it('still take entries up to their capacity, drop beyond it, and start again after clear', () => {
    const t = new Tenant('t', settingsForTier(1, false));
    const rule = { record: { primary_id: 'a' }, slot: 0 } as unknown as LiveRule;
    const d = { processor_id: 'a', weight: 0.9, decision_source: 'rules', failure_probability: null } as unknown as RouteDecision;
    const ring = new RouteRing(3);
    for (let i = 0; i < 4; i++) ring.push(t, rule, `tx${i}`, d, 0, 0, i);
    expect(ring.length).toBe(3);
    expect(ring.dropped).toBe(1);
    expect(ring.txIds.slice(0, 3)).toEqual(['tx0', 'tx1', 'tx2']);
    ring.clear();
    expect(ring.length).toBe(0);
    expect(ring.txIds[0]).toBeUndefined();
    expect(ring.push(t, rule, 'tx9', d, 0, 0, 9)).toBe(true);

    const dedup = new OutcomeDedup(2);
    dedup.add(t, 'x');
    dedup.add(t, 'y');
    dedup.add(t, 'z'); // forgets x
    expect([dedup.has(t, 'x'), dedup.has(t, 'y'), dedup.has(t, 'z')]).toEqual([false, true, true]);
  });
});
