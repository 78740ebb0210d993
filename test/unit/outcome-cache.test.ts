/**
 * An outcome finds its rule through the tenant's map of rule caches (Tenant.outcomeCache,
 * routing/rule-cache.ts) and counts itself in the cache until a flush adds the counts to the
 * rule's row (shm/rule-counts.ts). What it must keep: the rule in force answers (never the rule
 * a PATCH replaced or a DELETE removed), a processor of that rule and no other is accepted, and
 * every outcome reaches the row's counters exactly once, unless its rule's slot went to another
 * rule before the flush.
 */
import { describe, expect, it } from 'vitest';
import { recordReportedOutcome } from '../../src/routing/outcome.js';
import { OUTCOME_RESULTS, RF_OUTCOMES, RI_RUN_PRIMARY, RI_RUN_SECONDARY, RULE_F64_STRIDE } from '../../src/shm/layout.js';
import { ruleI32Base, ruleIndex, ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import { TenantRegistry } from '../../src/tenants/registry.js';
import { cacheOf, settingsForTier, type LiveRule, type RuleRecord, type Tenant } from '../../src/tenants/tenant.js';
import type { OutcomeReport } from '../../src/schemas/routing.js';
import { ServiceError } from '../../src/errors.js';

function record(id: string, primary: string, secondary: string, country = 'US'): RuleRecord {
  return { rule_id: id, attributes: [country, 'USD', 'card', '*', '*', '*'], primary_id: primary, primary_name: primary, secondary_id: secondary, secondary_name: secondary, primary_weight: 0.9, created_at: new Date(0).toISOString() };
}

function setUp() {
  const tables = new SharedTables();
  const tenant = new TenantRegistry(['t'], settingsForTier(1, false)).get('t');
  const add = (rec: RuleRecord): LiveRule => {
    const rule: LiveRule = { record: rec, slot: tables.allocRule(0.9, false), runStartedAt: null, override: null, cache: null };
    tenant.addRule(rule);
    return rule;
  };
  const report = (ruleId: string, processorId: string, success: boolean, errorCode?: string) =>
    recordReportedOutcome(tables, tenant, { rule_id: ruleId, processor_id: processorId, success, latency_ms: 100, error_code: errorCode } as OutcomeReport, 1_000);
  /** The row's outcome counters of `rule`: [primary success, decline, technical, secondary success, decline, technical]. */
  const counters = (rule: LiveRule) => {
    const seg = ruleSegment(tables.ruleSegs, rule.slot);
    const base = ruleIndex(rule.slot) * RULE_F64_STRIDE + RF_OUTCOMES;
    return Array.from(seg.ruleF64.subarray(base, base + 2 * OUTCOME_RESULTS));
  };
  return { tables, tenant, add, report, counters };
}

function fieldOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof ServiceError) return JSON.stringify(e.fields ?? e.message);
    throw e;
  }
  return undefined;
}

/** Replaces `old` by a rule of the same id, as a PATCH does (rules/rule-service.ts). */
function replace(tenant: Tenant, tables: SharedTables, old: LiveRule, rec: RuleRecord): LiveRule {
  tenant.removeRule(old.record.rule_id);
  const next: LiveRule = { record: rec, slot: tables.allocRule(0.9, false), runStartedAt: null, override: null, cache: null };
  tenant.addRule(next);
  return next;
}

describe('an outcome through the rule cache', () => {
  it('answers the rule\'s cache, the one its routes use', () => {
    const { tenant, add, report } = setUp();
    const rule = add(record('r1', 'p', 's'));
    expect(report('r1', 'p', true).rule).toBe(rule);
    expect(tenant.outcomeCache('r1')).toBe(cacheOf(rule));
    expect(tenant.outcomeCache('nope')).toBeUndefined();
  });

  it('accepts the rule\'s processors only, by their characters, whichever string object names them', () => {
    const { add, report } = setUp();
    add(record('r1', 'stripe_us', 'adyen_us'));
    // Strings made at run time: equal characters, other objects than the record's.
    const p = ['stripe', 'us'].join('_');
    const s = ['adyen', 'us'].join('_');
    expect(report('r1', p, true).processor).toBe(0);
    expect(report('r1', s, true).processor).toBe(1);
    expect(report('r1', 'stripe_us', true).processor).toBe(0); // after the cache adopted `p`
    expect(report('r1', 'adyen_us', false, 'do_not_honor').processor).toBe(1);
    expect(fieldOf(() => report('r1', 'stripe_eu', true))).toMatch(/processor_id/);
    expect(fieldOf(() => report('r1', 'stripe_u', true))).toMatch(/processor_id/);
  });

  it('follows a PATCH that changed the processors, and a DELETE', () => {
    const { tenant, tables, add, report, counters } = setUp();
    const old = add(record('r1', 'p', 's'));
    report('r1', 'p', true);
    const next = replace(tenant, tables, old, record('r1', 'q', 's'));
    expect(fieldOf(() => report('r1', 'p', true))).toMatch(/processor_id/); // the old primary is no longer part of it
    expect(report('r1', 'q', true).rule).toBe(next);
    tables.ruleCounts.flush();
    expect(counters(next)).toEqual([1, 0, 0, 0, 0, 0]);
    tenant.removeRule('r1');
    expect(fieldOf(() => report('r1', 'q', true))).toMatch(/rule_id/);
    // A rule created again under the id is found.
    const again = add(record('r1', 'x', 'y'));
    expect(report('r1', 'y', true).rule).toBe(again);
  });

  it('adds its counts to the row at each flush, each outcome once, by processor and class', () => {
    const { tables, add, report, counters } = setUp();
    const rule = add(record('r1', 'p', 's'));
    report('r1', 'p', true);
    report('r1', 'p', true);
    report('r1', 'p', false, 'do_not_honor');
    report('r1', 's', false, 'timeout_upstream');
    report('r1', 's', false);
    expect(counters(rule)).toEqual([0, 0, 0, 0, 0, 0]); // in the cache until a flush
    tables.ruleCounts.flush();
    expect(counters(rule)).toEqual([2, 1, 0, 0, 0, 2]);
    tables.ruleCounts.flush(); // nothing pending: nothing added twice
    report('r1', 's', true);
    tables.ruleCounts.flush();
    expect(counters(rule)).toEqual([2, 1, 0, 1, 0, 2]);
  });

  it('drops the counts of a rule whose slot went to another rule before the flush', () => {
    const { tenant, tables, add, report, counters } = setUp();
    const gone = add(record('gone', 'p', 's'));
    report('gone', 'p', true);
    tenant.removeRule('gone');
    tables.freeRule(gone.slot);
    const heir = add(record('heir', 'p', 's', 'GB'));
    expect(heir.slot).toBe(gone.slot); // the slot is reused
    report('heir', 's', true);
    tables.ruleCounts.flush();
    expect(counters(heir)).toEqual([0, 0, 0, 1, 0, 0]);
  });

  it('keeps the run of technical failures in the row right while a success reads nothing there', () => {
    const { tables, add, report } = setUp();
    const rule = add(record('r1', 'p', 's'));
    const seg = ruleSegment(tables.ruleSegs, rule.slot);
    const runs = () => [Atomics.load(seg.ruleI32, ruleI32Base(rule.slot) + RI_RUN_PRIMARY), Atomics.load(seg.ruleI32, ruleI32Base(rule.slot) + RI_RUN_SECONDARY)];
    // A run already in the row before the rule's first outcome (a PATCH carries one into the new slot).
    Atomics.store(seg.ruleI32, ruleI32Base(rule.slot) + RI_RUN_PRIMARY, 3);
    expect(report('r1', 'p', true).run).toBe(0);
    expect(runs()).toEqual([0, 0]);
    expect(report('r1', 'p', true).run).toBe(0); // known to be at 0 now
    expect(report('r1', 'p', false, 'timeout_upstream').run).toBe(1);
    expect(report('r1', 'p', false).run).toBe(2);
    expect(runs()).toEqual([2, 0]);
    // The recover command sets the row to 0 behind the cache's back: the next failure starts at 1.
    Atomics.store(seg.ruleI32, ruleI32Base(rule.slot) + RI_RUN_PRIMARY, 0);
    expect(report('r1', 'p', false).run).toBe(1);
    expect(report('r1', 'p', true).run).toBe(0);
    expect(runs()).toEqual([0, 0]);
    expect(report('r1', 's', false).run).toBe(1);
    expect(report('r1', 'p', true).run).toBe(0);
    expect(runs()).toEqual([0, 1]);
  });

  it('records into the windows the tables gave the rule', () => {
    const { tables, add, report } = setUp();
    const rule = add(record('r1', 'p', 's'));
    const wp = report('r1', 'p', true).window;
    const ws = report('r1', 's', true).window;
    expect(wp).not.toBe(ws);
    expect([report('r1', 'p', true).window, report('r1', 's', true).window]).toEqual([wp, ws]);
    expect([tables.windowOf(rule.slot, 0, false), tables.windowOf(rule.slot, 1, false)]).toEqual([wp, ws]);
  });

  it('counts a rule whose processors are one on its primary, in one window', () => {
    const { tables, add, report, counters } = setUp();
    const rule = add(record('solo', 'p', 'p'));
    expect(report('solo', 'p', true).processor).toBe(0);
    const w = report('solo', 'p', true).window;
    tables.ruleCounts.flush();
    expect(counters(rule)).toEqual([2, 0, 0, 0, 0, 0]);
    expect(tables.windowOf(rule.slot, 1, true)).toBe(w);
  });
});
