/**
 * Shared tables and tenants in a varied, seeded state for the per-rule metric families: three
 * tenants (`default` at Tier 3, `acme` at Tier 2, `off` at Tier 1), self-fallback rules, rows
 * never evaluated, NaN fields, every status, counters zero and not, and rules deleted (their
 * slots freed, some reused by later rules), as the engine and the route path leave them.
 */
import {
  OUTCOME_RESULTS,
  PF_BANDIT_WEIGHT,
  PF_ERROR_RATE,
  PF_FAILURE_PROB,
  PF_LAST_EVAL_MS,
  PF_P95_LATENCY,
  PF_SAMPLE_COUNT,
  PF_STATUS,
  PF_SUCCESS_RATE,
  RF_OUTCOMES,
  RF_ROUTED,
  RI_WINDOW_PRIMARY,
  RI_WINDOW_SECONDARY,
} from '../../src/shm/layout.js';
import { processorRowOffset, ruleF64Base, ruleI32Base, ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import { mulberry32 } from '../../src/tiers/autopilot/sampling.js';
import { TenantRegistry } from '../../src/tenants/registry.js';
import { settingsForTier, type Tenant } from '../../src/tenants/tenant.js';

export interface VariedState {
  tables: SharedTables;
  tenants: TenantRegistry;
  /** Adds one rule to `tenant` with random engine state; returns its id. */
  addRule(tenant: Tenant): string;
  /** Deletes rule `id` of `tenant`, freeing its slot as the rule service does. */
  deleteRule(tenant: Tenant, id: string): void;
}

export function variedState(seed: number, rulesPerTenant: number): VariedState {
  const rnd = mulberry32(seed); // seeded, so a failure can be replayed
  const tables = new SharedTables();
  const tenants = new TenantRegistry(['default', 'acme', 'off'], settingsForTier(3, false));
  tenants.get('acme').settings = settingsForTier(2, false);
  tenants.get('off').settings = settingsForTier(1, false);
  let n = 0;
  const maybeNaN = (v: number) => (rnd() < 0.15 ? NaN : v);
  const addRule = (tenant: Tenant): string => {
    const i = n++;
    const same = rnd() < 0.1;
    const primary = `p${i % 7}`;
    const secondary = same ? primary : `s${i % 5}`;
    const slot = tables.allocRule(0.9, same);
    const id = `rule_${i}`;
    tenant.addRule({
      record: { rule_id: id, attributes: ['US', 'USD', `m${i}`, '*', '*', '*'], primary_id: primary, primary_name: primary, secondary_id: secondary, secondary_name: secondary, primary_weight: 0.9, created_at: new Date(0).toISOString() },
      slot,
      runStartedAt: [0, 0],
      override: null,
      cache: null,
    });
    const seg = ruleSegment(tables.ruleSegs, slot);
    const ib = ruleI32Base(slot);
    const fb = ruleF64Base(slot);
    if (rnd() < 0.7) seg.ruleI32[ib + RI_WINDOW_PRIMARY] = tables.allocWindow();
    if (rnd() < 0.5) seg.ruleI32[ib + RI_WINDOW_SECONDARY] = tables.allocWindow();
    for (let k = 0; k < 2; k++) {
      const o = processorRowOffset(slot, k);
      const f = seg.procF64;
      f[o + PF_STATUS] = Math.floor(rnd() * 3);
      f[o + PF_SAMPLE_COUNT] = rnd() < 0.3 ? 0 : Math.floor(rnd() * 500);
      f[o + PF_SUCCESS_RATE] = maybeNaN(rnd());
      f[o + PF_ERROR_RATE] = maybeNaN(rnd() / 3);
      f[o + PF_P95_LATENCY] = maybeNaN(50 + rnd() * 900);
      f[o + PF_LAST_EVAL_MS] = rnd() < 0.3 ? 0 : 1_700_000_000_000 + i;
      f[o + PF_FAILURE_PROB] = maybeNaN(rnd());
      f[o + PF_BANDIT_WEIGHT] = maybeNaN(rnd());
      seg.ruleF64[fb + RF_ROUTED + k] = rnd() < 0.3 ? 0 : Math.floor(rnd() * 10_000);
      for (let r = 0; r < OUTCOME_RESULTS; r++) seg.ruleF64[fb + RF_OUTCOMES + k * OUTCOME_RESULTS + r] = rnd() < 0.4 ? 0 : Math.floor(rnd() * 1000);
    }
    return id;
  };
  const deleteRule = (tenant: Tenant, id: string) => {
    const rule = tenant.removeRule(id);
    if (rule) tables.freeRule(rule.slot);
  };
  for (const t of tenants.all()) for (let i = 0; i < rulesPerTenant; i++) addRule(t);
  return { tables, tenants, addRule, deleteRule };
}
