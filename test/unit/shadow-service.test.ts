/** Shadow report arithmetic and persistence, on real shared tables and a temporary LMDB store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processorRowOffset } from '../../src/shm/slots.js';
import { markRowsInUse } from '../../src/shm/processor-rows.js';
import type { RecordedOutcome } from '../../src/routing/outcome.js';
import { publishDecision } from '../../src/shm/decision.js';
import { PF_STATUS, RULE_MASK, RULE_SHIFT } from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { OutcomeKind } from '../../src/shm/window.js';
import { isoWithOffset, ShadowService } from '../../src/shadow/shadow-service.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { TenantRegistry } from '../../src/tenants/registry.js';
import type { LiveRule, Tenant } from '../../src/tenants/tenant.js';

const dirs: string[] = [];
const stores: LmdbStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function world(shadowMode = true, dir?: string) {
  const path = dir ?? mkdtempSync(join(tmpdir(), 'shadow-unit-'));
  if (!dir) dirs.push(path);
  const store = new LmdbStore(path);
  stores.push(store);
  const tables = new SharedTables();
  const tenants = new TenantRegistry(['default'], { predictionEnabled: false, banditEnabled: false, shadowMode });
  const tenant = tenants.get('default');
  let clock = 1_700_000_000_000;
  const shadow = new ShadowService({ store, tables, tenants, checkpointMs: 60_000, now: () => clock });
  const addRule = (id: string, primary: string, secondary: string): LiveRule => {
    const slot = tables.allocRule(0.9, primary === secondary);
    const rule: LiveRule = {
      slot,
      record: { rule_id: id, attributes: [id.toUpperCase(), 'USD', 'card', '*', '*', '*'], primary_id: primary, primary_name: primary, secondary_id: secondary, secondary_name: secondary, primary_weight: 0.9, created_at: '' },
    };
    tenant.addRule(rule);
    return rule;
  };
  return {
    path, store, tables, tenants, tenant, shadow, addRule,
    advance: (ms: number) => (clock += ms),
    now: () => clock,
  };
}

function setStatus(tables: SharedTables, rule: LiveRule, k: 0 | 1, status: 0 | 1 | 2) {
  const seg = tables.ruleSegs[rule.slot >> RULE_SHIFT];
  markRowsInUse(seg, rule.slot); // as the evaluation that wrote them would
  seg.procF64[processorRowOffset(rule.slot, k) + PF_STATUS] = status;
}
function setShare(tables: SharedTables, rule: LiveRule, primaryShare: number) {
  publishDecision(tables.ruleSegs[rule.slot >> RULE_SHIFT], rule.slot & RULE_MASK, { primaryShare, source: 0, failProbPrimary: NaN, failProbSecondary: NaN });
}
const out = (rule: LiveRule, kind: OutcomeKind): RecordedOutcome => ({ rule, kind, run: 0 });

function send(w: ReturnType<typeof world>, t: Tenant, rule: LiveRule, processor: string, kind: OutcomeKind, n = 1) {
  for (let i = 0; i < n; i++) w.shadow.outcome(t, out(rule, kind), processor, w.now());
}

describe('ShadowService arithmetic', () => {
  it('counts transactions, outcomes, overrides, flagged-processor traffic and savings', () => {
    const w = world();
    w.shadow.start();
    const us = w.addRule('us', 'stripe', 'adyen');
    const gb = w.addRule('gb', 'solo', 'solo');
    for (let i = 0; i < 7; i++) w.shadow.routed(w.tenant, w.now());

    // healthy phase: engine recommends stripe (share 0.9)
    send(w, w.tenant, us, 'stripe', OutcomeKind.Success, 4);
    send(w, w.tenant, us, 'adyen', OutcomeKind.Success, 2); // client used the other one: override
    send(w, w.tenant, us, 'stripe', OutcomeKind.TechError, 1); // failure on a healthy processor
    w.advance(1000);

    // stripe fails over: engine now recommends adyen; the client keeps sending stripe
    setStatus(w.tables, us, 0, 2);
    setShare(w.tables, us, 0.02);
    send(w, w.tenant, us, 'stripe', OutcomeKind.Timeout, 3); // saved: technical, flagged, override
    send(w, w.tenant, us, 'stripe', OutcomeKind.Decline, 2); // flagged but a decline: not saved
    send(w, w.tenant, us, 'stripe', OutcomeKind.Success, 1); // flagged, success
    send(w, w.tenant, us, 'adyen', OutcomeKind.Success, 2);

    // self-fallback rule, degraded: technical failures are on a flagged processor but the
    // engine has nowhere else to send them: not saved
    setStatus(w.tables, gb, 0, 1);
    send(w, w.tenant, gb, 'solo', OutcomeKind.TechError, 2);
    w.advance(500);

    const r = w.shadow.report(w.tenant, 49.99);
    expect(r).toMatchObject({
      shadow_mode_active: true,
      total_transactions: 7,
      total_outcomes: 17,
      routing_overrides: 2 + 3 + 2 + 1,
      transactions_on_degraded_processor: 3 + 2 + 1 + 2,
      total_failures: 1 + 3 + 2 + 2,
      failures_on_degraded: 3 + 2,
      estimated_saved_transactions: 3,
      average_order_value: 49.99,
      estimated_revenue_impact: 149.97,
      failover_events_detected: 0,
      observation_period_seconds: 1.5,
    });
    expect(r.rules).toEqual({
      gb: { total_outcomes: 2, failures: 2, overrides: 0, failures_on_degraded: 2, recommended_processor: 'solo' },
      us: { total_outcomes: 15, failures: 6, overrides: 8, failures_on_degraded: 3, recommended_processor: 'adyen' },
    });
    expect(r.earliest_observation).toBe(isoWithOffset(w.now() - 1500));
    expect(r.latest_observation).toBe(isoWithOffset(w.now() - 500));
    expect(r.earliest_observation).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
  });

  it('counts failovers of the tenant during the period only', () => {
    const w = world();
    w.tenant.counters.failovers = 4; // before shadow mode
    w.shadow.start();
    w.tenant.counters.failovers += 2;
    expect(w.shadow.report(w.tenant).failover_events_detected).toBe(2);
    w.shadow.checkpoint(); // folds
    w.tenant.counters.failovers += 1;
    expect(w.shadow.report(w.tenant).failover_events_detected).toBe(3);
    w.tenant.settings = { ...w.tenant.settings, shadowMode: false };
    w.shadow.settingsChanged(w.tenant);
    w.tenant.counters.failovers += 5; // after shadow mode: not counted
    expect(w.shadow.report(w.tenant)).toMatchObject({ shadow_mode_active: false, failover_events_detected: 3 });
  });

  it('switching off freezes the period; switching on starts a new one; reset clears', async () => {
    const w = world();
    w.shadow.start();
    const us = w.addRule('us', 'stripe', 'adyen');
    send(w, w.tenant, us, 'adyen', OutcomeKind.Success, 3);
    w.advance(2000);
    w.tenant.settings = { ...w.tenant.settings, shadowMode: false };
    w.shadow.settingsChanged(w.tenant);
    w.advance(10_000);
    const frozen = w.shadow.report(w.tenant);
    expect(frozen).toMatchObject({ shadow_mode_active: false, total_outcomes: 3, routing_overrides: 3, observation_period_seconds: 2 });
    expect(frozen.period_ended_at).not.toBeNull();

    w.tenant.settings = { ...w.tenant.settings, shadowMode: true };
    w.shadow.settingsChanged(w.tenant);
    expect(w.shadow.report(w.tenant)).toMatchObject({ shadow_mode_active: true, total_outcomes: 0, rules: {}, period_ended_at: null });

    send(w, w.tenant, us, 'stripe', OutcomeKind.Success, 2);
    await w.shadow.reset(w.tenant);
    const cleared = w.shadow.report(w.tenant);
    expect(cleared).toMatchObject({ total_outcomes: 0, observation_period_seconds: 0 });
    expect(cleared.earliest_observation).toBe(cleared.period_started_at);
    expect(cleared.latest_observation).toBe(cleared.period_started_at);
    await w.shadow.stop();
  });

  it('persists across a restart and keeps the period going', async () => {
    const w = world();
    w.shadow.start();
    const us = w.addRule('us', 'stripe', 'adyen');
    w.shadow.routed(w.tenant, w.now());
    send(w, w.tenant, us, 'adyen', OutcomeKind.TechError, 2);
    w.tenant.counters.failovers = 1;
    const before = w.shadow.report(w.tenant, 10);
    await w.shadow.stop();
    await w.store.close();

    const w2 = world(true, w.path);
    w2.tenant.counters.failovers = 1; // as the engine restores it from the audit trail
    w2.shadow.start();
    const after = w2.shadow.report(w2.tenant, 10);
    // the rule is not live in this world: the recommendation stored with the period is shown
    expect({ ...after, observation_period_seconds: 0 }).toEqual({ ...before, observation_period_seconds: 0 });
    expect(after.failover_events_detected).toBe(1);
    await w2.shadow.stop();
  });

  it('a restart with shadow mode now off ends the stored period', async () => {
    const w = world();
    w.shadow.start();
    w.shadow.routed(w.tenant, w.now());
    await w.shadow.stop();
    await w.store.close();
    const w2 = world(false, w.path);
    w2.shadow.start();
    expect(w2.shadow.report(w2.tenant)).toMatchObject({ shadow_mode_active: false, total_transactions: 1 });
    expect(w2.shadow.report(w2.tenant).period_ended_at).not.toBeNull();
    await w2.shadow.stop();
  });
});

describe('shadow helpers', () => {
  it('average_order_value: default 50, finite decimal > 0, else a 422 naming it', async () => {
    const { parseAverageOrderValue } = await import('../../src/http/resources/shadow.js');
    expect(parseAverageOrderValue(null)).toBe(50);
    expect(parseAverageOrderValue('49.99')).toBe(49.99);
    expect(parseAverageOrderValue('1e3')).toBe(1000);
    expect(parseAverageOrderValue('.5')).toBe(0.5);
    for (const bad of ['', ' ', '0', '-1', 'abc', 'NaN', 'Infinity', '1e400', '0x10', '1,5', '2e12']) {
      expect(() => parseAverageOrderValue(bad), bad).toThrow(/average_order_value/);
    }
  });

  it('flagged() agrees with the health view', async () => {
    const { statusOf } = await import('../../src/engine/health-view.js');
    const { flagged } = await import('../../src/shadow/shadow-service.js');
    const w = world();
    const r = w.addRule('us', 'a', 'b');
    for (const st of [0, 1, 2] as const) {
      setStatus(w.tables, r, 1, st);
      expect(flagged(w.tables, r, 1)).toBe(statusOf(w.tables, r.slot, 1) !== 'healthy');
      expect(flagged(w.tables, r, 0)).toBe(false);
    }
  });
});
