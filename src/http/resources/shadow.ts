/** GET and DELETE /v1/shadow-report (spec 2.9, 4.3). */
import { tenantOf, type AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import { ErrorSchema } from '../../schemas/common.js';
import { ShadowReport } from '../../schemas/shadow.js';
import { DEFAULT_AVERAGE_ORDER_VALUE, type ShadowService } from '../../shadow/shadow-service.js';
import { endpoint, jsonBody, type Ctx, type Endpoint } from '../endpoint.js';
import { RULE_ID } from '../../schemas/examples.js';

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

const reportExample = {
  shadow_mode_active: true,
  observation_period_seconds: 86400,
  total_transactions: 15230,
  total_outcomes: 15102,
  routing_overrides: 310,
  failover_events_detected: 1,
  transactions_on_degraded_processor: 420,
  total_failures: 690,
  failures_on_degraded: 250,
  estimated_saved_transactions: 250,
  average_order_value: 50,
  estimated_revenue_impact: 12500,
  rules: { [RULE_ID]: { total_outcomes: 15102, failures: 690, overrides: 310, failures_on_degraded: 250, recommended_processor: 'adyen_us' } },
  earliest_observation: '2026-05-03T12:00:00.000+00:00',
  latest_observation: '2026-05-04T12:00:00.000+00:00',
  period_started_at: '2026-05-03T12:00:00.000+00:00',
  period_ended_at: null,
};

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
        operationId: 'getShadowReport',
        description:
          'Counts the current shadow period (shadow mode is switched with `POST /v1/config/tiers {"shadow_mode": true}` or `SERVICE_SHADOW_MODE`). ' +
          'Answers also when shadow mode is off: the last period\'s figures, or zeros. Switching shadow mode on starts a new period. Survives restarts.',
        query,
        responses: {
          200: jsonBody('the shadow report', ShadowReport, reportExample),
          422: { description: 'bad average_order_value', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
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
        operationId: 'resetShadowReport',
        description: 'Clears the counters. With shadow mode on, a new period starts now; with it off, the report is empty until shadow mode is switched on. Answers the (empty) report.',
        query,
        responses: {
          200: jsonBody('the report after the reset', ShadowReport, {
            ...reportExample,
            observation_period_seconds: 0,
            total_transactions: 0,
            total_outcomes: 0,
            routing_overrides: 0,
            failover_events_detected: 0,
            transactions_on_degraded_processor: 0,
            total_failures: 0,
            failures_on_degraded: 0,
            estimated_saved_transactions: 0,
            estimated_revenue_impact: 0,
            rules: {},
            earliest_observation: '2026-05-04T12:00:00.000+00:00', // nothing observed yet: the period start
            latest_observation: '2026-05-04T12:00:00.000+00:00',
            period_started_at: '2026-05-04T12:00:00.000+00:00',
          }),
          422: { description: 'bad average_order_value', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
  ];
}
