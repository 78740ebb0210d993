/** Health, failover audit trail (spec 2.5-2.7, 4.3). Reads come from cached state. */
import { Type } from '@sinclair/typebox';
import { tenantOf, type AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import type { EngineService } from '../../engine/engine-service.js';
import { ruleHealth } from '../../engine/health-view.js';
import { isLogCursor } from '../../store/log-cursor.js';
import { ErrorSchema } from '../../schemas/common.js';
import { tierOf } from '../../tenants/tenant.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';
import { failoverEvent, RULE_ID, ruleHealth as ruleHealthExample } from '../../schemas/examples.js';
import { checkPathId, isRuleId, PAGE_QUERY } from './rules.js';
import { idPageRequest, nextLink } from '../pagination.js';
import { chunked } from '../stream-reply.js';
import { FailoverEvent, RuleHealth } from '../../schemas/health.js';

export const MAX_EVENTS_PAGE = 1000;

export function healthEndpoints(app: AppContext, engine: EngineService): Endpoint[] {
  return [
    endpoint({
      method: 'GET',
      path: '/v1/health',
      auth: true,
      handler: (ctx) => {
        const t = tenantOf(app, ctx);
        const page = idPageRequest(ctx, isRuleId);
        const rules = app.rules.page(t, page.limit, page.after);
        // Health is read from shared memory as each chunk is produced, so a slow reader sees
        // values as fresh as the bytes it is sent; `rules` stays an object keyed by rule id.
        const head = `{"status":"ok","engine_running":${engine.running()},"tier":${tierOf(t.settings)},"rules":{`;
        const stream = chunked(
          (function* () {
            yield head;
            let first = true;
            for (const r of rules) {
              const entry = JSON.stringify(r.record.rule_id) + ':' + JSON.stringify(ruleHealth(app.tables, r, t.settings.predictionEnabled));
              yield first ? entry : ',' + entry;
              first = false;
            }
            yield '}}';
          })(),
        );
        return { status: 200, stream, headers: nextLink('/v1/health', page, rules.length, rules[rules.length - 1]?.record.rule_id) };
      },
      doc: {
        summary: 'Health of the rules of the caller\'s tenant',
        tag: 'Monitoring',
        operationId: 'getHealth',
        description:
          '`rules` holds one page of the tenant\'s rules in `rule_id` order: `limit` (1-10000, default 1000) and `after` (the last `rule_id` of the previous page); a full page carries `Link: </v1/health?limit=…&after=…>; rel="next"`.',
        query: PAGE_QUERY,
        responses: {
          200: jsonBody(
            'health',
            Type.Object(
              { status: Type.String(), engine_running: Type.Boolean(), tier: Type.Integer(), rules: Type.Record(Type.String(), RuleHealth) },
              { $id: 'HealthOverview' },
            ),
            { status: 'ok', engine_running: true, tier: 1, rules: { [RULE_ID]: ruleHealthExample } },
          ),
        },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/v1/health/{rule_id}',
      auth: true,
      handler: (ctx) => {
        const id = checkPathId('rule_id', ctx.params.rule_id);
        const t = tenantOf(app, ctx);
        const rule = t.rules.get(id);
        if (!rule) throw errors.ruleNotFound(id);
        return { status: 200, body: ruleHealth(app.tables, rule, t.settings.predictionEnabled) };
      },
      doc: {
        summary: 'Health of one rule',
        tag: 'Monitoring',
        operationId: 'getRuleHealth',
        pathExamples: { rule_id: RULE_ID },
        responses: {
          200: jsonBody('rule health', RuleHealth, ruleHealthExample),
          404: { description: 'no such rule', schema: ErrorSchema, error: 'RULE_NOT_FOUND' },
          422: { description: 'malformed rule id', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/v1/failover-events',
      auth: true,
      handler: (ctx) => {
        const limitRaw = ctx.query.get('limit');
        let limit = 100;
        if (limitRaw !== null) {
          if (!/^\d{1,7}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > MAX_EVENTS_PAGE) {
            throw errors.field('limit', `must be an integer from 1 to ${MAX_EVENTS_PAGE}`);
          }
          limit = Number(limitRaw);
        }
        const before = ctx.query.get('before') ?? undefined;
        if (before !== undefined && !isLogCursor(before)) throw errors.field('before', 'must be an event_id from an earlier page');
        const page = engine.events.newest(tenantOf(app, ctx).id, limit, before);
        const last = page[page.length - 1]?.key;
        const link = page.length === limit && last ? { Link: `</v1/failover-events?limit=${limit}&before=${encodeURIComponent(last)}>; rel="next"` } : undefined;
        return { status: 200, body: page.map(({ key, value }) => ({ event_id: key, ...value })), headers: link };
      },
      doc: {
        summary: 'The failover audit trail, newest first',
        tag: 'Monitoring',
        operationId: 'listFailoverEvents',
        description: 'Paginated: `limit` (1-1000, default 100) and `before` (an `event_id` from the previous page); a full page carries `Link: <…>; rel="next"`. Kept across restarts.',
        query: [
          { name: 'limit', description: 'page size, 1-1000, default 100', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
          { name: 'before', description: 'return events older than this event_id', schema: { type: 'string' } },
        ],
        responses: {
          200: jsonBody('failover events', Type.Array(FailoverEvent), [failoverEvent]),
          422: { description: 'bad query parameter', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
  ];
}
