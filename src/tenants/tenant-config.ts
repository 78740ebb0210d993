/**
 * A tenant's configuration: the tier switches (prediction, bandit, shadow mode), threshold
 * overrides, and additions to the error-code classification. Stored in the store, applied
 * to the live tenant at once (the next evaluation uses it), restored at start.
 */
import { errors, type FieldIssue } from '../errors.js';
import { DEFAULT_BANDIT_CONFIG, tenantBanditOverrides } from '../tiers/autopilot/config.js';
import { apiNameOf, fieldsOf, isTierConfigError, TENANT_FIELDS } from '../tiers/config.js';
import { DEFAULT_FORESIGHT_CONFIG, resolveForesightConfig, type ForesightConfig } from '../tiers/foresight/policy.js';
import { resolveTier1Config, type Tier1Config } from '../tiers/tier1/config.js';
import type { Collection, Store } from '../store/store.js';
import type { TenantRegistry } from './registry.js';
import { settingsForTier, type Tenant } from './tenant.js';

export interface StoredTenantConfig {
  prediction_enabled: boolean;
  bandit_enabled: boolean;
  shadow_mode: boolean;
  /** Tier 1 and Tier 3 (`bandit_*`) overrides, keyed by the API's snake_case names. */
  thresholds: Record<string, number>;
  error_codes: { decline: string[]; technical: string[] };
  /** Requests per second for all keys of the tenant together; 0 = none; null (or absent in records written before it existed) = the SERVICE_RATE_LIMIT_RPS default. */
  rate_limit_rps: number | null;
  updated_at: string;
}

export interface ConfigPatch {
  tier?: 1 | 2 | 3;
  rate_limit_rps?: number | null;
  prediction_enabled?: boolean;
  bandit_enabled?: boolean;
  shadow_mode?: boolean;
  thresholds?: Record<string, number>;
  error_codes?: { decline?: string[]; technical?: string[] };
}

/** Tier 1 numeric settings exposed in the API: snake_case name → Tier1Config key. */
export const TIER1_FIELDS = fieldsOf('tier1');
/** Tier 2 (Foresight) settings exposed in the API: snake_case name → ForesightConfig key. */
export const FORESIGHT_FIELDS = fieldsOf('foresight');
/** Tier 3 (Autopilot) settings exposed in the API: `bandit_*` name → BanditConfig key. */
export const BANDIT_FIELDS = fieldsOf('bandit');

function foresightOverrides(thresholds: Record<string, number>): Partial<ForesightConfig> {
  const o: Record<string, number> = {};
  for (const [name, key] of FORESIGHT_FIELDS) if (name in thresholds) o[key] = thresholds[name];
  return o as Partial<ForesightConfig>;
}

/** Called when a tenant's engine-relevant configuration changed. */
export type ConfigListener = (tenant: Tenant) => void;

export class TenantConfigService {
  private readonly records: Collection<StoredTenantConfig>;
  private listener: ConfigListener = () => {};

  constructor(
    store: Store,
    private readonly tenants: TenantRegistry,
  ) {
    this.records = store.collection<StoredTenantConfig>('tenant_config');
    // Set on another replica: applied here the same way (the listener updates engine, shadow and rate limits).
    store.onRemoteChange<StoredTenantConfig>('tenant_config', (tenantId, _id, value) => {
      if (value !== undefined) this.apply(this.tenants.get(tenantId), value);
    });
  }

  onChange(l: ConfigListener): void {
    this.listener = l;
  }

  /** Start-up: stored configurations override the SERVICE_TIER / SERVICE_SHADOW_MODE defaults. */
  load(): void {
    for (const { tenantId, value } of this.records.listAll()) this.apply(this.tenants.get(tenantId), value);
  }

  current(t: Tenant): StoredTenantConfig {
    const thresholds: Record<string, number> = {};
    for (const [name, key] of TIER1_FIELDS) {
      if (key in t.tier1Overrides) thresholds[name] = t.tier1Overrides[key] as number;
    }
    for (const [name, key] of BANDIT_FIELDS) {
      if (key in t.banditOverrides) thresholds[name] = t.banditOverrides[key];
    }
    for (const [name, key] of FORESIGHT_FIELDS) {
      if (key in t.foresightOverrides) thresholds[name] = t.foresightOverrides[key] as number;
    }
    return {
      prediction_enabled: t.settings.predictionEnabled,
      bandit_enabled: t.settings.banditEnabled,
      shadow_mode: t.settings.shadowMode,
      thresholds,
      error_codes: { decline: [...t.errorCodes.decline], technical: [...t.errorCodes.technical] },
      rate_limit_rps: t.rateLimitRps,
      updated_at: this.records.get(t.id, 'config')?.updated_at ?? '',
    };
  }

  /** The Tier 1 settings in force (defaults with overrides), in API names. */
  thresholdsInForce(t: Tenant): Record<string, number> {
    const c = resolveTier1Config(t.tier1Overrides);
    const out: Record<string, number> = {};
    for (const [name, key] of TIER1_FIELDS) out[name] = c[key] as number;
    for (const [name, key] of BANDIT_FIELDS) out[name] = t.banditOverrides[key] ?? DEFAULT_BANDIT_CONFIG[key];
    for (const [name, key] of FORESIGHT_FIELDS) out[name] = t.foresightOverrides[key] ?? DEFAULT_FORESIGHT_CONFIG[key];
    return out;
  }

  /** Validates the whole patch, persists, then applies: a rejected patch changes nothing. */
  async update(t: Tenant, patch: ConfigPatch): Promise<StoredTenantConfig> {
    const next = this.current(t);
    if (patch.tier !== undefined) {
      const wanted = settingsForTier(patch.tier, next.shadow_mode);
      const clash =
        (patch.prediction_enabled !== undefined && patch.prediction_enabled !== wanted.predictionEnabled) ||
        (patch.bandit_enabled !== undefined && patch.bandit_enabled !== wanted.banditEnabled);
      if (clash) throw errors.field('tier', `tier ${patch.tier} means prediction_enabled ${wanted.predictionEnabled} and bandit_enabled ${wanted.banditEnabled}; the toggles sent with it disagree`);
      next.prediction_enabled = wanted.predictionEnabled;
      next.bandit_enabled = wanted.banditEnabled;
    }
    if (patch.prediction_enabled !== undefined) next.prediction_enabled = patch.prediction_enabled;
    if (patch.bandit_enabled !== undefined) next.bandit_enabled = patch.bandit_enabled;
    if (patch.rate_limit_rps !== undefined) next.rate_limit_rps = patch.rate_limit_rps;
    if (patch.shadow_mode !== undefined) next.shadow_mode = patch.shadow_mode;
    if (patch.thresholds) {
      const issues: FieldIssue[] = [];
      for (const [name, v] of Object.entries(patch.thresholds)) {
        if (!TENANT_FIELDS.has(name)) {
          issues.push({ field: `thresholds.${name}`, message: `unknown threshold; known: ${[...TENANT_FIELDS.keys()].join(', ')}` });
        } else next.thresholds[name] = v;
      }
      if (issues.length > 0) throw errors.validation(issues);
      try {
        resolveTier1Config(toOverrides(next.thresholds));
        resolveForesightConfig(foresightOverrides(next.thresholds));
        tenantBanditOverrides(next.thresholds);
      } catch (e) {
        if (!isTierConfigError(e)) throw e;
        const name = apiNameOf(e.tier, e.field);
        throw errors.field(`thresholds.${name}`, TENANT_FIELDS.get(name)?.range ?? 'out of range (see /docs)');
      }
    }
    if (patch.error_codes?.decline) next.error_codes.decline = normalizeCodes(patch.error_codes.decline);
    if (patch.error_codes?.technical) next.error_codes.technical = normalizeCodes(patch.error_codes.technical);
    const overlap = next.error_codes.decline.filter((c) => next.error_codes.technical.includes(c));
    if (overlap.length > 0) throw errors.field('error_codes', `codes in both lists: ${overlap.join(', ')}`);
    // A patch that changes nothing (e.g. `{}`) is answered without a write: updated_at stays.
    if (JSON.stringify({ ...next, updated_at: '' }) === JSON.stringify({ ...this.current(t), updated_at: '' })) return next;
    next.updated_at = new Date().toISOString();
    await this.records.put(t.id, 'config', next);
    this.apply(t, next);
    return next;
  }

  private apply(t: Tenant, c: StoredTenantConfig): void {
    t.settings = { predictionEnabled: c.prediction_enabled, banditEnabled: c.bandit_enabled, shadowMode: c.shadow_mode };
    t.tier1Overrides = toOverrides(c.thresholds);
    t.banditOverrides = tenantBanditOverridesOrDefaults(c.thresholds);
    t.foresightOverrides = foresightOverrides(c.thresholds);
    t.errorCodes = { decline: new Set(c.error_codes.decline), technical: new Set(c.error_codes.technical) };
    t.rateLimitRps = c.rate_limit_rps ?? null;
    this.listener(t);
  }
}

function toOverrides(thresholds: Record<string, number>): Partial<Tier1Config> {
  const o: Record<string, number> = {};
  for (const [name, v] of Object.entries(thresholds)) {
    const key = TIER1_FIELDS.get(name);
    if (key) o[key] = v;
  }
  return o as Partial<Tier1Config>;
}

/** Stored values were validated when set; a record that no longer validates falls back to the defaults. */
function tenantBanditOverridesOrDefaults(thresholds: Record<string, number>): Record<string, number> {
  try {
    return tenantBanditOverrides(thresholds) as Record<string, number>;
  } catch {
    return {};
  }
}

function normalizeCodes(codes: string[]): string[] {
  return [...new Set(codes.map((c) => c.trim().toLowerCase()).filter((c) => c.length > 0))];
}
