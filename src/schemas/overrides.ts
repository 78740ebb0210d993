import { Type, type Static } from '@sinclair/typebox';
import { Id, Nullable } from './common.js';

/** Longest an override may last (seconds). */
export const MAX_OVERRIDE_TTL_S = 7 * 24 * 3600;

const OVERRIDE_MODES = ['pin', 'drain'] as const;
const OVERRIDE_SCOPES = ['rule', 'processor'] as const;

const ExpiresIn = Type.Optional(
  Type.Number({ minimum: 1, maximum: MAX_OVERRIDE_TTL_S, description: `seconds until the override ends by itself, 1-${MAX_OVERRIDE_TTL_S}; default 3600` }),
);
const Reason = Type.Optional(Nullable(Type.String({ maxLength: 512, description: 'why (shown in health and the audit)' })));

export const RuleOverrideInput = Type.Object(
  {
    mode: Type.Union(OVERRIDE_MODES.map((m) => Type.Literal(m)), { description: 'pin: all traffic to processor_id; drain: none to it' }),
    processor_id: Id('one of the rule\'s two processors'),
    expires_in_s: ExpiresIn,
    reason: Reason,
  },
  { $id: 'RuleOverrideInput', additionalProperties: false },
);
export type RuleOverrideInput = Static<typeof RuleOverrideInput>;

export const DrainInput = Type.Object({ expires_in_s: ExpiresIn, reason: Reason }, { $id: 'DrainInput', additionalProperties: false });
export type DrainInput = Static<typeof DrainInput>;

export const Override = Type.Object(
  {
    scope: Type.Union(OVERRIDE_SCOPES.map((s) => Type.Literal(s))),
    rule_id: Type.Optional(Type.String({ description: 'present for a rule override' })),
    mode: Type.Union(OVERRIDE_MODES.map((m) => Type.Literal(m))),
    processor_id: Type.String(),
    reason: Nullable(Type.String()),
    created_at: Type.String({ description: 'ISO 8601, UTC' }),
    expires_at: Type.String({ description: 'ISO 8601, UTC' }),
  },
  { $id: 'Override' },
);
/** An override as stored and shown (`decision.override`, `GET /v1/overrides`); `rule_id` is set for a rule override only. */
export type Override = Static<typeof Override>;

export const ProcessorDrain = Type.Object(
  { override: Override, rules: Type.Array(Type.String(), { description: 'rules of the tenant that have the processor' }) },
  { $id: 'ProcessorDrain' },
);
