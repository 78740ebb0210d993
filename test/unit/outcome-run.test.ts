/**
 * The run of consecutive technical failures a reported outcome keeps in the rule's row
 * (routing/outcome.ts), which the pool reads to fail over at once: a technical failure adds
 * one, a later success ends it, a success that started before the run's first failure does
 * not, and a success on a run already at 0 leaves it at 0 (without a store: the front thread
 * is the field's only writer).
 */
import { describe, expect, it } from 'vitest';
import { recordReportedOutcome } from '../../src/routing/outcome.js';
import { RI_RUN_PRIMARY, RI_RUN_SECONDARY } from '../../src/shm/layout.js';
import { ruleI32Base, ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import { TenantRegistry } from '../../src/tenants/registry.js';
import { settingsForTier } from '../../src/tenants/tenant.js';
import type { OutcomeReport } from '../../src/schemas/routing.js';

function setUp() {
  const tables = new SharedTables();
  const tenant = new TenantRegistry(['t'], settingsForTier(1, false)).get('t');
  const slot = tables.allocRule(0.9, false);
  tenant.addRule({
    record: { rule_id: 'r1', attributes: ['US', 'USD', 'card', '*', '*', '*'], primary_id: 'p', primary_name: 'p', secondary_id: 's', secondary_name: 's', primary_weight: 0.9, created_at: new Date(0).toISOString() },
    slot,
    runStartedAt: null,
    override: null,
    cache: null,
  });
  const seg = ruleSegment(tables.ruleSegs, slot);
  const ib = ruleI32Base(slot);
  const runs = () => [Atomics.load(seg.ruleI32, ib + RI_RUN_PRIMARY), Atomics.load(seg.ruleI32, ib + RI_RUN_SECONDARY)];
  const report = (processor: string, success: boolean, at: number, latency = 100) =>
    recordReportedOutcome(tables, tenant, { rule_id: 'r1', processor_id: processor, success, latency_ms: latency, error_code: success ? undefined : 'timeout_upstream' } as OutcomeReport, at);
  return { runs, report };
}

describe('the run of technical failures', () => {
  it('counts failures per processor, and a later success ends the run', () => {
    const { runs, report } = setUp();
    expect(report('p', true, 1_000).run).toBe(0);
    expect(runs()).toEqual([0, 0]);
    expect(report('p', false, 2_000).run).toBe(1);
    expect(report('p', false, 2_100).run).toBe(2);
    expect(report('s', false, 2_200).run).toBe(1);
    expect(runs()).toEqual([2, 1]);
    expect(report('p', true, 3_000, 50).run).toBe(0); // started at 2,950: after the run began
    expect(runs()).toEqual([0, 1]);
    expect(report('p', true, 3_100).run).toBe(0); // a run already at 0 stays there
    expect(runs()).toEqual([0, 1]);
  });

  it('is not ended by a success that started before its first failure', () => {
    const { runs, report } = setUp();
    report('p', false, 10_000, 200); // the run's first failure started at 9,800
    report('p', false, 10_050, 200);
    expect(report('p', true, 10_100, 1_000).run).toBe(2); // started at 9,100: from before the outage
    expect(runs()[0]).toBe(2);
    expect(report('p', true, 10_200, 100).run).toBe(0); // started at 10,100: the processor answers again
    expect(runs()[0]).toBe(0);
  });
});
