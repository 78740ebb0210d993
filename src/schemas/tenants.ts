/** /v1/tenants (spec 2.13, 4.7). */
import { Type } from '@sinclair/typebox';

const summaryFields = {
  tenant_id: Type.String(),
  active: Type.Boolean({ description: 'an API key is configured for the tenant (in development mode: `default`)' }),
  rules_count: Type.Integer(),
  engine_running: Type.Boolean({ description: 'the health engine is running' }),
};

export const TenantSummary = Type.Object(summaryFields, { $id: 'TenantSummary' });

export const TenantDetail = Type.Object(
  {
    ...summaryFields,
    tier: Type.Integer({ minimum: 1, maximum: 3 }),
    shadow_mode: Type.Boolean(),
    transactions_routed: Type.Integer(),
    transactions_reported: Type.Integer(),
    failover_events: Type.Integer(),
  },
  { $id: 'TenantDetail' },
);

export const TenantList = Type.Object(
  { tenants: Type.Array(TenantSummary, { description: 'ordered by tenant_id' }), total: Type.Integer() },
  { $id: 'TenantList' },
);
