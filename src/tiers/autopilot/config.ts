/**
 * Tier 3 (Autopilot) bandit settings. One frozen default object; callers override fields
 * through `resolveBanditConfig`, which validates once (at start or on a config change) so
 * the per-cycle math never has to.
 */
import { tierConfigError } from '../tier-config-error.js';

export interface BanditConfig {
  /** Evidence half-life in ms. Memory is measured in time, not in transactions (see posterior.ts). */
  readonly halfLifeMs: number;
  /** Minimum weight of every arm that is not failed_over, so a losing processor keeps being measured. */
  readonly explorationFloor: number;
  /** Exact weight of a failed_over arm: the recovery probe Tier 1 needs to see it recover. 0 suspends probes. */
  readonly probeShare: number;
  /** Monte Carlo draws per arm per cycle for the probability-of-best estimate. */
  readonly samples: number;
  /** Approval rate assumed for a processor that Tier 2 predicts will fail. */
  readonly failingPrior: number;
  /** Beta prior; evidence decays back towards it. */
  readonly priorAlpha: number;
  readonly priorBeta: number;
}

export const DEFAULT_BANDIT_CONFIG: BanditConfig = Object.freeze({
  halfLifeMs: 600_000,
  explorationFloor: 0.02,
  probeShare: 0.02,
  samples: 256,
  failingPrior: 0.05,
  priorAlpha: 1,
  priorBeta: 1,
});

/**
 * Defaults overlaid with `overrides`, validated. Throws a TierConfigError naming the field.
 * `halfLifeMs: Infinity` is allowed and means "never forget" (a stationary bandit).
 */
export function resolveBanditConfig(overrides: Partial<BanditConfig> = {}): BanditConfig {
  const cfg: BanditConfig = { ...DEFAULT_BANDIT_CONFIG, ...overrides };
  check('halfLifeMs', cfg.halfLifeMs > 0);
  check('explorationFloor', cfg.explorationFloor >= 0 && cfg.explorationFloor <= 0.5);
  check('probeShare', cfg.probeShare >= 0 && cfg.probeShare <= 0.5);
  check('samples', Number.isInteger(cfg.samples) && cfg.samples >= 0 && cfg.samples <= 1_000_000);
  check('failingPrior', cfg.failingPrior >= 0 && cfg.failingPrior <= 1);
  check('priorAlpha', cfg.priorAlpha > 0 && Number.isFinite(cfg.priorAlpha));
  check('priorBeta', cfg.priorBeta > 0 && Number.isFinite(cfg.priorBeta));
  return Object.freeze(cfg);
}

function check(field: keyof BanditConfig, ok: boolean): void {
  // `ok` is false for NaN as well, since every comparison with NaN is false.
  if (!ok) throw tierConfigError('bandit', field);
}

/**
 * The settings a tenant may override, by their API names (the `thresholds` object of
 * POST /v1/config/tiers, beside Tier 1's). The probe share is not among them: it is Tier 1's
 * `probe_share`, so a failed-over processor gets the same recovery trickle at every tier.
 */
export const BANDIT_TENANT_FIELDS: ReadonlyMap<string, 'halfLifeMs' | 'explorationFloor'> = new Map([
  ['bandit_half_life_ms', 'halfLifeMs'],
  ['bandit_exploration_floor', 'explorationFloor'],
]);

/**
 * Bounds for tenant-supplied values, narrower than resolveBanditConfig's: a half-life under
 * two ~5 s cycles forgets before anything is learned, and JSON cannot say Infinity.
 */
export const TENANT_HALF_LIFE_MIN_MS = 10_000;
export const TENANT_HALF_LIFE_MAX_MS = 30 * 86_400_000;

/**
 * Tenant overrides (API name → value) as BanditConfig overrides, validated. Unknown names are
 * ignored (the caller checks names). Throws a TierConfigError whose field is the API name.
 */
export function tenantBanditOverrides(values: Readonly<Record<string, number>>): Partial<BanditConfig> {
  const o: { halfLifeMs?: number; explorationFloor?: number } = {};
  for (const [name, key] of BANDIT_TENANT_FIELDS) {
    const v = values[name];
    if (v === undefined) continue;
    const ok =
      key === 'halfLifeMs'
        ? v >= TENANT_HALF_LIFE_MIN_MS && v <= TENANT_HALF_LIFE_MAX_MS
        : v >= 0 && v <= 0.5;
    if (!ok) throw tierConfigError('bandit', name);
    o[key] = v;
  }
  resolveBanditConfig(o); // the general checks too
  return o;
}
