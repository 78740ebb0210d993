/** GET and DELETE /v1/shadow-report (spec 2.9, 4.3). */
import { tenantOf, type AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import { ErrorSchema } from '../../schemas/common.js';
import { ShadowReport } from '../../schemas/shadow.js';
import { DEFAULT_AVERAGE_ORDER_VALUE, type ShadowService } from '../../shadow/shadow-service.js';
import { endpoint, type Ctx, type Endpoint } from '../endpoint.js';

export const MAX_AVERAGE_ORDER_VALUE = 1e12;
const DECIMAL = /^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** `average_order_value`: a finite decimal number in (0, 1e12]; default 50.0. */
export function parseAverageOrderValue(raw: string | null): number {
  if (raw === null) return DEFAULT_AVERAGE_ORDER_VALUE;
  const v = DECIMAL.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isFinite(v) || v <= 0 || v > MAX_AVERAGE_ORDER_VALUE) {
    const shown = raw.length > 40 ? `${raw.slice(0, 40)}...` : raw;
    throw errors.field('average_order_value', `must be a number greater than 0 (at most ${MAX_AVERAGE_ORDER_VALUE}), got "${shown}"`);
  }
  return v;
}

const aovParam = (ctx: Ctx) => parseAverageOrderValue(ctx.query.get('average_order_value'));

const query = [
  {
    name: 'average_order_value',
    description: 'average order value used for estimated_revenue_impact; default 50.0; must be > 0',
    schema: { type: 'number', exclusiveMinimum: 0, default: 50.0 },
  },
];

export function shadowEndpoints(app: AppContext, shadow: ShadowService): Endpoint[] {
  return [
    endpoint({
      method: 'GET',
      path: '/v1/shadow-report',
      auth: true,
      handler: (ctx) => {
        const aov = aovParam(ctx);
        return { status: 200, body: shadow.report(tenantOf(app, ctx), aov) };
      },
      doc: {
        summary: 'What the engine would have done, compared with what the client did (shadow mode)',
        tag: 'Monitoring',
        description:
          'Counts the current shadow period (shadow mode is switched with `POST /v1/config/tiers {"shadow_mode": true}` or `SERVICE_SHADOW_MODE`). ' +
          'Answers also when shadow mode is off: the last period\'s figures, or zeros. Switching shadow mode on starts a new period. Survives restarts.',
        query,
        responses: { 200: { description: 'the shadow report', schema: ShadowReport }, 422: { description: 'bad average_order_value', schema: ErrorSchema } },
      },
    }),
    endpoint({
      method: 'DELETE',
      path: '/v1/shadow-report',
      auth: true,
      handler: async (ctx) => {
        const aov = aovParam(ctx);
        const t = tenantOf(app, ctx);
        const before = shadow.report(t, aov);
        await shadow.reset(t);
        const after = shadow.report(t, aov);
        await app.audit.record(ctx, { action: 'shadow_report.reset', target_type: 'shadow_report', target_id: null, before, after });
        return { status: 200, body: after };
      },
      doc: {
        summary: 'Reset the shadow report',
        tag: 'Monitoring',
        description: 'Clears the counters. With shadow mode on, a new period starts now; with it off, the report is empty until shadow mode is switched on. Answers the (empty) report.',
        query,
        responses: { 200: { description: 'the report after the reset', schema: ShadowReport }, 422: { description: 'bad average_order_value', schema: ErrorSchema } },
      },
    }),
  ];
}
