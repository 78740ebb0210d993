/** GET/DELETE /v1/shadow-report (spec 2.9). */
import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

export const ShadowRuleReport = Type.Object(
  {
    total_outcomes: Type.Integer(),
    failures: Type.Integer({ description: 'failed outcomes (technical errors and issuer declines)' }),
    overrides: Type.Integer({ description: 'outcomes on a processor other than the one the engine recommended' }),
    failures_on_degraded: Type.Integer({ description: 'technical errors on a processor the engine had flagged degraded or failed over' }),
    recommended_processor: Type.String({ description: 'the processor the engine recommends now (the larger share)' }),
  },
  { $id: 'ShadowRuleReport' },
);

const Timestamp = (description: string) => Nullable(Type.String({ description: `${description}; ISO 8601 with UTC offset (+00:00); null when none` }));

export const ShadowReport = Type.Object(
  {
    shadow_mode_active: Type.Boolean(),
    observation_period_seconds: Type.Number({ description: 'from the period start to now (or to when shadow mode was switched off)' }),
    total_transactions: Type.Integer({ description: 'routing decisions served in shadow mode' }),
    total_outcomes: Type.Integer({ description: 'outcomes reported in shadow mode' }),
    routing_overrides: Type.Integer({ description: 'outcomes whose processor differs from the one the engine would have chosen' }),
    failover_events_detected: Type.Integer({ description: 'failovers the engine triggered during the period' }),
    transactions_on_degraded_processor: Type.Integer({ description: 'outcomes on a processor flagged degraded or failed over' }),
    total_failures: Type.Integer({ description: 'failed outcomes (technical errors and declines)' }),
    failures_on_degraded: Type.Integer({ description: 'technical errors on a flagged processor' }),
    estimated_saved_transactions: Type.Integer({ description: 'technical errors on a flagged processor that the engine would have routed elsewhere' }),
    average_order_value: Type.Number(),
    estimated_revenue_impact: Type.Number({ description: 'estimated_saved_transactions × average_order_value' }),
    rules: Type.Record(Type.String(), ShadowRuleReport, { description: 'rules with at least one outcome in the period' }),
    earliest_observation: Type.String({
      description: 'first route or outcome of the period; ISO 8601 with UTC offset (+00:00); the period start before anything was observed, the time of the report when there is no period',
    }),
    latest_observation: Type.String({
      description: 'last route or outcome of the period; ISO 8601 with UTC offset (+00:00); the period start before anything was observed, the time of the report when there is no period',
    }),
    period_started_at: Timestamp('when the period started (shadow mode switched on, or the report reset)'),
    period_ended_at: Timestamp('when shadow mode was switched off; null while it is on'),
  },
  { $id: 'ShadowReport' },
);
