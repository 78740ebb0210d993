/**
 * The tiers' settings as one unit: what a tenant's evaluation reads (TierConfig, resolved and
 * validated once on the front thread, every field filled), and one table of the settings a
 * tenant may override by API name (the `thresholds` object of POST /v1/config/tiers).
 */
import { BANDIT_TENANT_FIELDS, DEFAULT_BANDIT_CONFIG, TENANT_HALF_LIFE_MAX_MS, TENANT_HALF_LIFE_MIN_MS, type BanditConfig } from './autopilot/config.js';
import { DEFAULT_FORESIGHT_CONFIG, type ForesightConfig } from './foresight/policy.js';
import { DEFAULT_TIER1_CONFIG, type Tier1Config } from './tier1/config.js';

export { tierConfigError, isTierConfigError, type TierConfigError } from './tier-config-error.js';

/** A tenant's tier settings as every stage receives them; no field is optional. */
export interface TierConfig {
  /** Tier 1 (health failover), from `resolveTier1Config(overrides)`. */
  tier1: Tier1Config;
  predictionEnabled: boolean;
  banditEnabled: boolean;
  /** Tier 2 (Foresight), from `resolveForesightConfig(overrides)`. */
  foresight: ForesightConfig;
  /** Tier 3 (Autopilot), from `resolveBanditConfig` (defaults, overrides, Tier 1's probe share). */
  bandit: BanditConfig;
}

/**
 * Tier 2's and Tier 3's settings with nothing overridden, for configs built outside a tenant
 * (tests, benchmarks): `{ tier1, predictionEnabled, banditEnabled, ...DEFAULT_LATER_TIERS }`.
 */
export const DEFAULT_LATER_TIERS: Pick<TierConfig, 'foresight' | 'bandit'> = Object.freeze({
  foresight: DEFAULT_FORESIGHT_CONFIG,
  bandit: DEFAULT_BANDIT_CONFIG,
});

/** Which tier a tenant setting belongs to, and its key in that tier's config. */
export type TenantField =
  | { readonly tier: 'tier1'; readonly key: keyof Tier1Config; readonly range: string }
  | { readonly tier: 'foresight'; readonly key: keyof ForesightConfig; readonly range: string }
  | { readonly tier: 'bandit'; readonly key: 'halfLifeMs' | 'explorationFloor'; readonly range: string };

const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

const TIER1_RANGE = 'out of range or inconsistent with the other thresholds (see /docs)';
const FORESIGHT_RANGE = 'out of range (action threshold in (0,1), min share in [0,1], confirm steps 1-4)';

/**
 * Every setting a tenant may override, API name → tier and key, in the order the API lists
 * them: Tier 1's numeric settings (their snake_case names), then Tier 3's (`bandit_*`),
 * then Tier 2's (`prediction_*`). Tier 3's probe share is not among them: it is Tier 1's
 * `probe_share`, so a failed-over processor gets the same recovery trickle at every tier.
 */
export const TENANT_FIELDS: ReadonlyMap<string, TenantField> = new Map<string, TenantField>([
  ...(Object.keys(DEFAULT_TIER1_CONFIG) as (keyof Tier1Config)[])
    .filter((k) => typeof DEFAULT_TIER1_CONFIG[k] === 'number')
    .map((k): [string, TenantField] => [snake(k), { tier: 'tier1', key: k, range: TIER1_RANGE }]),
  ...[...BANDIT_TENANT_FIELDS].map(([name, key]): [string, TenantField] => [
    name,
    { tier: 'bandit', key, range: key === 'halfLifeMs' ? `must be between ${TENANT_HALF_LIFE_MIN_MS} and ${TENANT_HALF_LIFE_MAX_MS} (ms)` : 'must be between 0 and 0.5' },
  ]),
  ['prediction_action_threshold', { tier: 'foresight', key: 'actionThreshold', range: FORESIGHT_RANGE }],
  ['prediction_shift_gain', { tier: 'foresight', key: 'shiftGain', range: FORESIGHT_RANGE }],
  ['prediction_min_primary_share', { tier: 'foresight', key: 'minPrimaryShare', range: FORESIGHT_RANGE }],
  ['prediction_confirm_steps', { tier: 'foresight', key: 'confirmSteps', range: FORESIGHT_RANGE }],
]);

interface TierKeys {
  tier1: keyof Tier1Config;
  foresight: keyof ForesightConfig;
  bandit: 'halfLifeMs' | 'explorationFloor';
}

/** The fields of one tier, API name → key. */
export function fieldsOf<T extends keyof TierKeys>(tier: T): ReadonlyMap<string, TierKeys[T]> {
  const m = new Map<string, TierKeys[T]>();
  for (const [name, f] of TENANT_FIELDS) if (f.tier === tier) m.set(name, f.key as TierKeys[T]);
  return m;
}

/** The API name of `tier`'s config key `key` (as a TierConfigError carries it); the key itself if no tenant field maps to it. */
export function apiNameOf(tier: TenantField['tier'], key: string): string {
  for (const [name, f] of TENANT_FIELDS) if (f.tier === tier && (f.key === key || name === key)) return name;
  return key;
}

