/**
 * GET /v1/tenants and /v1/tenants/{tenant_id} (spec 2.13, 4.7).
 *
 * Visibility: a caller sees its own tenant only, unless its key is an admin key
 * (`key:tenant:admin` in SERVICE_API_KEYS), which sees every tenant this deployment knows
 * (those with a key, and those with stored data). Another tenant's id is 404 for a non-admin,
 * exactly like an unknown one, so a caller cannot learn which tenants exist. In development
 * mode (no keys) there is only `default`.
 */
import type { AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import { TENANT_ID_PATTERN } from '../api-keys.js';
import { ErrorSchema } from '../../schemas/common.js';
import { TenantDetail, TenantList } from '../../schemas/tenants.js';
import { tierOf, type Tenant } from '../../tenants/tenant.js';
import { endpoint, jsonBody, type Ctx, type Endpoint } from '../endpoint.js';

export function tenantEndpoints(app: AppContext): Endpoint[] {
  const devMode = () => app.config.apiKeys === null;

  /** The tenants the caller may see, ordered by id. */
  const visible = (ctx: Ctx): Tenant[] => {
    if (devMode()) return [app.tenants.get('default')];
    if (!ctx.grant.admin) return [app.tenants.get(ctx.grant.tenantId)];
    return [...app.tenants.all()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  };

  const summary = (t: Tenant) => ({
    tenant_id: t.id,
    active: devMode() ? t.id === 'default' : app.tenants.isActive(t.id),
    rules_count: t.rules.size,
    engine_running: app.engine.running(),
  });

  const detail = (t: Tenant) => ({
    ...summary(t),
    tier: tierOf(t.settings),
    shadow_mode: t.settings.shadowMode,
    transactions_routed: t.counters.routed,
    transactions_reported: t.counters.reported,
    failover_events: t.counters.failovers,
  });

  return [
    endpoint({
      method: 'GET',
      path: '/v1/tenants',
      auth: true,
      handler: (ctx) => {
        const list = visible(ctx).map(summary);
        return { status: 200, body: { tenants: list, total: list.length } };
      },
      doc: {
        summary: 'Tenants the caller may see',
        tag: 'Tenants',
        operationId: 'listTenants',
        description: 'The caller\'s own tenant; every tenant for an admin key (`key:tenant:admin`). Development mode: `default` only.',
        responses: {
          200: jsonBody('tenants', TenantList, { tenants: [{ tenant_id: 'acme', active: true, rules_count: 1, engine_running: true }], total: 1 }),
        },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/v1/tenants/{tenant_id}',
      auth: true,
      handler: (ctx) => {
        const id = ctx.params.tenant_id;
        if (!TENANT_ID_PATTERN.test(id)) throw errors.field('tenant_id', "must be 1-64 characters of letters, digits, '_', '.', '-'");
        const t = visible(ctx).find((v) => v.id === id);
        if (!t) throw errors.tenantNotFound(id);
        return { status: 200, body: detail(t) };
      },
      doc: {
        summary: 'One tenant, with its counters',
        tag: 'Tenants',
        operationId: 'getTenant',
        pathExamples: { tenant_id: 'acme' },
        description: 'A tenant the caller may not see answers 404, the same as an unknown one.',
        responses: {
          200: jsonBody('tenant detail', TenantDetail, {
            tenant_id: 'acme',
            active: true,
            rules_count: 1,
            engine_running: true,
            tier: 1,
            shadow_mode: false,
            transactions_routed: 15230,
            transactions_reported: 15102,
            failover_events: 1,
          }),
          404: { description: 'no such tenant (or not visible to this key)', schema: ErrorSchema, error: 'TENANT_NOT_FOUND' },
          422: { description: 'malformed tenant id', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
  ];
}
