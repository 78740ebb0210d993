/** /v1/config/tiers: the tier switches, shadow mode, thresholds and error-code classes (spec 2.10, 4.4). */
import { Type } from '@sinclair/typebox';
import { tenantOf, type AppContext } from '../../app-context.js';
import { compile, ErrorSchema } from '../../schemas/common.js';
import { TIER1_FIELDS, type TenantConfigService } from '../../tenants/tenant-config.js';
import { BANDIT_TENANT_FIELDS } from '../../engine/bandit/config.js';
import { tierOf, type Tenant } from '../../tenants/tenant.js';
import { endpoint, type Endpoint } from '../endpoint.js';

const Codes = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 200 });

const TierConfigPatch = Type.Object(
  {
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
      }, { description: 'codes added to the default classification (replacing earlier additions); a tenant\'s additions win' }),
    ),
  },
  { $id: 'TierConfigPatch' },
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
    updated_at: Type.String({ description: 'ISO 8601, UTC; empty when never changed' }),
  },
  { $id: 'TierConfig' },
);

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
      updated_at: c.updated_at,
    };
  };
  return [
    endpoint({
      method: 'GET',
      path: '/v1/config/tiers',
      auth: true,
      handler: (ctx) => ({ status: 200, body: view(tenantOf(app, ctx)) }),
      doc: { summary: 'The caller\'s tier configuration', tag: 'Configuration', responses: { 200: { description: 'configuration', schema: TierConfig } } },
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
        description: 'Both toggles may be sent together. The change is stored and survives restarts. Answers the new configuration.',
        responses: { 200: { description: 'the new configuration', schema: TierConfig }, 422: { description: 'invalid fields', schema: ErrorSchema } },
      },
    }),
  ];
}
