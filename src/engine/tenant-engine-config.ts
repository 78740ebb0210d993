/** A tenant's engine configuration as the workers receive it, resolved and validated once, every field filled. */
import type { Tenant } from '../tenants/tenant.js';
import { resolveBanditConfig, type BanditConfig } from '../tiers/autopilot/config.js';
import type { TenantEngineConfig } from './protocol.js';
import { resolveTier1Config } from '../tiers/tier1/config.js';
import { resolveForesightConfig } from '../tiers/foresight/policy.js';

/**
 * Takes only a tenant's overrides and settings, so that the evaluation threads' JIT warm-up
 * builds its config here too, without a tenant: one builder, so every config has the same shape
 * (the same properties in the same order), which optimised code in the threads relies on.
 */
export function engineConfigFor(t: Pick<Tenant, 'tier1Overrides' | 'banditOverrides' | 'foresightOverrides'> & { settings: Pick<Tenant['settings'], 'predictionEnabled' | 'banditEnabled'> }): TenantEngineConfig {
  const tier1 = resolveTier1Config(t.tier1Overrides);
  // The bandit's recovery probe is Tier 1's, so a failed-over processor gets the same trickle at every tier.
  const bandit = resolveBanditConfig({ ...(t.banditOverrides as Partial<BanditConfig>), probeShare: tier1.probeShare });
  const foresight = resolveForesightConfig(t.foresightOverrides);
  return { tier1, predictionEnabled: t.settings.predictionEnabled, banditEnabled: t.settings.banditEnabled, bandit, foresight };
}
