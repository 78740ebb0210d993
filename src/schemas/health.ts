/** Processor and rule health as the API shows them (spec 2.5-2.7), and the failover events. */
import { Type, type Static } from '@sinclair/typebox';
import { STATUS_NAMES } from '../shm/layout.js';
import { Nullable } from './common.js';
import { Override } from './overrides.js';

/** A processor's Tier 1 status; the names are shm/layout.ts's STATUS_NAMES (what PF_STATUS codes mean). */
export const ProcessorStatus = Type.Union(STATUS_NAMES.map((s) => Type.Literal(s)));

export const ProcessorHealth = Type.Object(
  {
    processor_id: Type.String(),
    name: Type.String(),
    status: ProcessorStatus,
    success_rate: Type.Number({ description: 'approved / all outcomes over the last 60 s; 1 before the first outcome' }),
    error_rate: Type.Number({ description: 'technical errors / all outcomes over the last 60 s; 0 before the first outcome' }),
    decline_rate: Type.Number({ description: 'issuer declines / all outcomes' }),
    avg_latency_ms: Type.Number(),
    p95_latency_ms: Type.Number({ description: 'over the last 60 s; 0 before the first outcome; with few samples, the percentile of those there are (see sample_count)' }),
    p99_latency_ms: Type.Number({ description: 'over the last 60 s; 0 before the first outcome; with few samples, the percentile of those there are (see sample_count)' }),
    sample_count: Type.Integer(),
    failure_probability: Nullable(Type.Number({ description: 'Tier 2 prediction, 0 to 1, from the moment the rule exists (the model\'s no-evidence prior before its first evaluation); null only when Tier 2 is off' })),
    bandit_weight: Nullable(Type.Number({ description: 'Tier 3 allocation; null when the bandit is disabled' })),
  },
  { $id: 'ProcessorHealth' },
);
export type ProcessorHealth = Static<typeof ProcessorHealth>;

export const RuleHealth = Type.Object(
  {
    rule_id: Type.String(),
    primary: ProcessorHealth,
    secondary: ProcessorHealth,
    decision: Type.Object({
      processor_id: Type.String({ description: 'the processor receiving most of the traffic' }),
      weight: Type.Number({ description: 'its share of the traffic' }),
      decision_source: Type.String(),
      failure_probability: Nullable(Type.Number()),
      override: Type.Optional(Override),
    }),
  },
  { $id: 'RuleHealth' },
);
export type RuleHealth = Static<typeof RuleHealth>;

export const FailoverEvent = Type.Object(
  {
    event_id: Type.String({ description: 'cursor for `before`' }),
    rule_id: Type.String(),
    from_processor: Type.String(),
    to_processor: Type.String(),
    reason: Type.String(),
    trigger_value: Type.Number(),
    threshold: Type.Number(),
    timestamp: Type.String({ description: 'ISO 8601, UTC' }),
  },
  { $id: 'FailoverEvent' },
);
