/** GET /v1/audit: the tenant's change audit, newest first, paginated. */
import { Type } from '@sinclair/typebox';
import { tenantOf, type AppContext } from '../../app-context.js';
import { ErrorSchema, Nullable } from '../../schemas/common.js';
import { isLogCursor } from '../../store/log-cursor.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';
import { RULE_ID, rule as ruleExample } from '../../schemas/examples.js';
import { nextLink, pageRequest } from '../pagination.js';

export const MAX_AUDIT_PAGE = 1000;

const AuditEntry = Type.Object(
  {
    audit_id: Type.String({ description: 'cursor for `after`' }),
    timestamp: Type.String({ description: 'ISO 8601, UTC' }),
    tenant_id: Type.String(),
    actor: Nullable(Type.String({ description: 'fingerprint of the API key that made the change (`sha256:` + 12 hex digits), never the key; null in development mode and for expiries' })),
    action: Type.String({ description: 'e.g. rule.created, rule.updated, override.set, processor.drained, rule.failover, config.updated, webhook.deleted, override.expired' }),
    target_type: Type.String(),
    target_id: Nullable(Type.String()),
    before: Type.Unknown({ description: 'the resource before the change (null when created)' }),
    after: Type.Unknown({ description: 'the resource after the change (null when deleted)' }),
  },
  { $id: 'AuditEntry' },
);

export function auditEndpoints(app: AppContext): Endpoint[] {
  return [
    endpoint({
      method: 'GET',
      path: '/v1/audit',
      auth: true,
      handler: (ctx) => {
        const page = pageRequest(ctx, MAX_AUDIT_PAGE, 100, isLogCursor);
        const rows = app.audit.entries.newest(tenantOf(app, ctx).id, page.limit, page.after);
        const body = rows.map(({ key, value }) => ({ audit_id: key, ...value }));
        return { status: 200, body, headers: nextLink('/v1/audit', page, body.length, body[body.length - 1]?.audit_id) };
      },
      doc: {
        summary: 'The change audit of the caller\'s tenant, newest first',
        tag: 'Monitoring',
        operationId: 'listAudit',
        description:
          'Every write through the API and every override expiry. Paginated: `limit` (1-1000, default 100) and `after` (the `audit_id` of the last entry of the previous page); a full page carries `Link: <…>; rel="next"`. Kept like the failover audit trail: the newest 10,000 entries per tenant, none older than 90 days.',
        query: [
          { name: 'limit', description: 'page size, 1-1000, default 100', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
          { name: 'after', description: 'continue after this audit_id', schema: { type: 'string' } },
        ],
        responses: {
          200: jsonBody('audit entries', Type.Array(AuditEntry), [
            {
              audit_id: '1777896000000-0',
              timestamp: '2026-05-04T12:00:00.000Z',
              tenant_id: 'acme',
              actor: 'sha256:3f9a1c7e5b2d',
              action: 'rule.updated',
              target_type: 'rule',
              target_id: RULE_ID,
              before: ruleExample,
              after: { ...ruleExample, primary_weight: 0.7, secondary_weight: 0.3 },
            },
          ]),
          422: { description: 'bad query parameter', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
  ];
}
