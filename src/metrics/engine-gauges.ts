/**
 * `service_engine_tier`. The per-rule gauges and counters (spec 4.9) are not in the registry:
 * they are written straight from the shared tables at scrape time (rule-families.ts).
 */
import type { TenantRegistry } from '../tenants/registry.js';
import { tierOf } from '../tenants/tenant.js';
import type { Metrics } from './registry.js';

export function registerEngineGauges(metrics: Metrics, tenants: TenantRegistry, defaultTier: number): void {
  // One deployment-wide tier: the default tenant's when it exists, else the start-up tier.
  // Per-tenant tiers are in /v1/stats and /v1/config/tiers.
  metrics.gauge('service_engine_tier', 'current engine tier, 1, 2 or 3', [], (g) => {
    const d = tenants.find('default');
    g.set(d ? tierOf(d.settings) : defaultTier);
  });
}
