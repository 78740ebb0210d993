/** /v1/config/tiers: the tier switches, shadow mode, thresholds and error-code classes (spec 2.10, 4.4). */
import { Type } from '@sinclair/typebox';
import { tenantOf, type AppContext } from '../../app-context.js';
import { compile, ErrorSchema, Nullable } from '../../schemas/common.js';
import { MAX_RATE_LIMIT_RPS } from '../rate-limit.js';
import { TIER1_FIELDS, type TenantConfigService } from '../../tenants/tenant-config.js';
import { BANDIT_TENANT_FIELDS } from '../../tiers/autopilot/config.js';
import { tierOf, type Tenant } from '../../tenants/tenant.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';

const Codes = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 200 });

const TierConfigPatch = Type.Object(
  {
    tier: Type.Optional(
      Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)], {
        description: 'sets both toggles: 1 = both off, 2 = prediction on and bandit off, 3 = both on; toggles sent with it must agree',
      }),
    ),
    prediction_enabled: Type.Optional(Type.Boolean({ description: 'Tier 2 on/off; off drops the engine to tier 1' })),
    bandit_enabled: Type.Optional(Type.Boolean({ description: 'Tier 3 on/off; off (with prediction on) is tier 2. On with prediction off is still tier 1: the bandit does not act (it keeps its learned state)' })),
    shadow_mode: Type.Optional(Type.Boolean({ description: 'observe and compare only (see /v1/shadow-report)' })),
    thresholds: Type.Optional(
      Type.Record(Type.String(), Type.Number(), {
        description:
          `Tier 1 overrides by name: ${[...TIER1_FIELDS.keys()].join(', ')}; ` +
          `Tier 3 (bandit) overrides: ${[...BANDIT_TENANT_FIELDS.keys()].join(', ')} ` +
          '(evidence half-life in ms, 10000 to 2592000000, default 600000; minimum weight of every processor that is not failed over, 0 to 0.5, default 0.02)',
      }),
    ),
    error_codes: Type.Optional(
      Type.Object({
        decline: Type.Optional(Codes),
        technical: Type.Optional(Codes),
      }, { description: 'codes added to the default classification (replacing earlier additions); a tenant\'s additions win', additionalProperties: false }),
    ),
    rate_limit_rps: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 0,
          maximum: MAX_RATE_LIMIT_RPS,
          description: 'requests per second for all API keys of this tenant together (burst: twice that); 0 = no limit; null = the SERVICE_RATE_LIMIT_RPS default',
        }),
      ),
    ),
  },
  { $id: 'TierConfigPatch', additionalProperties: false },
);

const TierConfig = Type.Object(
  {
    prediction_enabled: Type.Boolean(),
    bandit_enabled: Type.Boolean(),
    shadow_mode: Type.Boolean(),
    tier: Type.Integer({ minimum: 1, maximum: 3, description: '1 when prediction is off, 2 when prediction is on and the bandit off, 3 when both are on' }),
    thresholds: Type.Record(Type.String(), Type.Number(), { description: 'every Tier 1 and Tier 3 (bandit_*) setting in force (defaults with overrides)' }),
    threshold_overrides: Type.Record(Type.String(), Type.Number()),
    error_codes: Type.Object({ decline: Type.Array(Type.String()), technical: Type.Array(Type.String()) }),
    rate_limit_rps: Type.Integer({ description: 'the request rate limit in force for this tenant (all its keys together); 0 = no limit' }),
    rate_limit_rps_override: Nullable(Type.Integer({ description: 'the tenant\'s own setting; null = the SERVICE_RATE_LIMIT_RPS default applies' })),
    updated_at: Type.String({ description: 'ISO 8601, UTC; empty when never changed' }),
  },
  { $id: 'TierConfig' },
);

const tierConfigExample = {
  prediction_enabled: true,
  bandit_enabled: false,
  shadow_mode: false,
  tier: 2,
  thresholds: { degrade_threshold: 0.15, failover_threshold: 0.3, recovery_threshold: 0.05, run_length: 5, bandit_half_life_ms: 600000, bandit_exploration_floor: 0.02 },
  threshold_overrides: { failover_threshold: 0.3 },
  error_codes: { decline: ['do_not_honor'], technical: ['gateway_busy'] },
  rate_limit_rps: 0,
  rate_limit_rps_override: null,
  updated_at: '2026-05-04T12:00:00.000Z',
};

export function configEndpoints(app: AppContext, configs: TenantConfigService): Endpoint[] {
  const view = (t: Tenant) => {
    const c = configs.current(t);
    return {
      prediction_enabled: c.prediction_enabled,
      bandit_enabled: c.bandit_enabled,
      shadow_mode: c.shadow_mode,
      tier: tierOf(t.settings),
      thresholds: configs.thresholdsInForce(t),
      threshold_overrides: c.thresholds,
      error_codes: c.error_codes,
      rate_limit_rps: c.rate_limit_rps ?? app.config.rateLimitRps,
      rate_limit_rps_override: c.rate_limit_rps,
      updated_at: c.updated_at,
    };
  };
  return [
    endpoint({
      method: 'GET',
      path: '/v1/config/tiers',
      auth: true,
      handler: (ctx) => ({ status: 200, body: view(tenantOf(app, ctx)) }),
      doc: {
        summary: 'The caller\'s tier configuration',
        tag: 'Configuration',
        operationId: 'getTierConfig',
        responses: { 200: jsonBody('configuration', TierConfig, tierConfigExample) },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/config/tiers',
      auth: true,
      body: compile(TierConfigPatch),
      handler: async (ctx, body) => {
        const t = tenantOf(app, ctx);
        const before = view(t);
        await configs.update(t, body);
        const after = view(t);
        await app.audit.record(ctx, { action: 'config.updated', target_type: 'config', target_id: 'tiers', before, after });
        return { status: 200, body: after };
      },
      doc: {
        summary: 'Change the tier configuration (any subset of fields), at once, without restart',
        tag: 'Configuration',
        operationId: 'updateTierConfig',
        requestExample: { prediction_enabled: true, thresholds: { failover_threshold: 0.3 }, error_codes: { technical: ['gateway_busy'] } },
        description: 'Both toggles may be sent together. The change is stored and survives restarts. Answers the new configuration.',
        responses: { 200: jsonBody('the new configuration', TierConfig, tierConfigExample), 422: { description: 'invalid fields', schema: ErrorSchema, error: 'VALIDATION_FAILED' } },
      },
    }),
  ];
}
