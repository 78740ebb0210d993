/**
 * An engine workload for the cycle benchmark, built with the service's own front-thread code:
 * tenants holding the seeded rule set in SharedTables, and outcomes recorded through
 * `recordReportedOutcome` (classification, windows, run counters) at chosen virtual times.
 */
import { recordReportedOutcome } from '../../src/routing/outcome.js';
import type { SharedTables } from '../../src/shm/tables.js';
import { settingsForTier, Tenant, type RuleRecord } from '../../src/tenants/tenant.js';
import { Rng } from '../sim/rng.js';

/** `tenants` tenants, each holding every rule of `rules` (as seed.ts stores them). */
export function loadTenants(tables: SharedTables, rules: readonly RuleRecord[], tenants: number, nowMs: number): Tenant[] {
  return Array.from({ length: tenants }, (_, t) => {
    const tenant = new Tenant(`t${t}`, settingsForTier(1, false));
    for (const record of rules) {
      const slot = tables.allocRule(record.primary_weight, record.primary_id === record.secondary_id);
      tenant.addRule({ record, slot, runStartedAt: [0, 0], override: null, cache: null });
    }
    return tenant;
  });
}

/**
 * Records outcomes for the first `activeShare` of each tenant's rules, `perRuleRate` per second
 * each, over (fromMs, toMs]: 90% on the primary, 2% technical errors, 8% declines, lognormal
 * latency around 200 ms. Rule by rule, so each window sees its outcomes in time order.
 * Returns the number of outcomes recorded.
 */
export function feedOutcomes(
  tables: SharedTables,
  tenants: readonly Tenant[],
  fromMs: number,
  toMs: number,
  perRuleRate: number,
  rng: Rng,
  activeShare = 1,
): number {
  const gap = 1000 / perRuleRate;
  let n = 0;
  for (const tenant of tenants) {
    const active = Math.round(tenant.rules.size * activeShare);
    let i = 0;
    for (const { record } of tenant.rules.values()) {
      if (i++ >= active) break;
      // Random phase per rule so that rules do not all report in the same millisecond.
      for (let t = fromMs + rng.next() * gap; t <= toMs; t += gap) {
        const u = rng.next();
        const tech = u < 0.02;
        const decline = !tech && u < 0.1;
        const report = {
          rule_id: record.rule_id,
          processor_id: rng.next() < 0.9 ? record.primary_id : record.secondary_id,
          success: !tech && !decline,
          latency_ms: rng.lognormal(Math.log(200), 0.6),
          error_code: tech ? 'http_503' : decline ? 'do_not_honor' : null,
        };
        recordReportedOutcome(tables, tenant, report, Math.floor(t));
        n++;
      }
    }
  }
  return n;
}
