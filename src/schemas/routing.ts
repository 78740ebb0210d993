import { Type, type Static } from '@sinclair/typebox';
import { AMOUNT_TIERS } from '../routing/amount-tier.js';
import { DECISION_SOURCE_NAMES } from '../shm/layout.js';
import { Id, Name, Nullable, MAX_ID_LENGTH } from './common.js';

export const PAYMENT_METHODS = ['card', 'bank_transfer', 'wallet', 'bnpl'] as const;
export const TRANSACTION_TYPES = ['one_time', 'recurring', 'subscription'] as const;

/** The client's payment id: makes the decision retrievable (GET /v1/decisions/{transaction_id}) and a repeated outcome count once. */
export const TransactionId = Id('your payment\'s id (1-128 of letters, digits, _ . : -); optional');

export const RouteRequest = Type.Object(
  {
    country: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2, case-insensitive' }),
    currency: Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217, case-insensitive' }),
    payment_method: Type.Optional(Type.Union(PAYMENT_METHODS.map((m) => Type.Literal(m)), { default: 'card' })),
    card_type: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: '*', description: 'e.g. visa, mastercard, amex' })),
    transaction_type: Type.Optional(Type.Union(TRANSACTION_TYPES.map((m) => Type.Literal(m)), { default: 'one_time' })),
    amount: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1e15, description: 'transaction amount' }))),
    amount_tier: Type.Optional(
      Nullable(Type.Union(AMOUNT_TIERS.map((t) => Type.Literal(t)), { description: 'derived from amount when omitted' })),
    ),
    transaction_id: Type.Optional(TransactionId),
  },
  { $id: 'RoutingRequest', additionalProperties: false },
);
export type RouteRequest = Static<typeof RouteRequest>;

export const RouteDecision = Type.Object(
  {
    processor_id: Type.String(),
    weight: Type.Number({ minimum: 0, maximum: 1, description: 'share of this rule\'s traffic the chosen processor currently receives' }),
    fallback_processor_id: Type.String(),
    decision_source: Type.Union(DECISION_SOURCE_NAMES.map((s) => Type.Literal(s))),
    failure_probability: Nullable(
      Type.Number({ minimum: 0, maximum: 1, description: 'Tier 2 prediction for the chosen processor; a number whenever Tier 2 is on (the model\'s no-evidence prior before the rule\'s first evaluation); null only when Tier 2 is off' }),
    ),
    rule_id: Type.String({ description: 'the matched rule; report it back with the outcome' }),
  },
  { $id: 'RoutingDecision' },
);
/** What decide() returns and POST /v1/route answers (written by json-writers.ts on the hot path). */
export type RouteDecision = Static<typeof RouteDecision>;

export const OutcomeReport = Type.Object(
  {
    rule_id: Id('rule that was used'),
    processor_id: Id('processor that handled the transaction'),
    success: Type.Boolean(),
    latency_ms: Type.Number({ minimum: 0, maximum: 3_600_000, description: 'end-to-end latency in milliseconds' }),
    error_code: Type.Optional(Nullable(Type.String({ maxLength: MAX_ID_LENGTH, description: 'processor error code, when failed' }))),
    transaction_id: Type.Optional(TransactionId),
  },
  { $id: 'OutcomeReport', additionalProperties: false },
);
export type OutcomeReport = Static<typeof OutcomeReport>;

export const OutcomeAccepted = Type.Object(
  {
    status: Type.Literal('accepted'),
    classification: Type.Union([Type.Literal('success'), Type.Literal('decline'), Type.Literal('technical_error')]),
    duplicate: Type.Optional(Type.Boolean({ description: 'true when this transaction_id\'s outcome was already reported: not counted again' })),
  },
  { $id: 'OutcomeAccepted' },
);

export { Name };
