import { Type, type Static } from '@sinclair/typebox';
import { Id, Name } from './common.js';

export const MAX_ATTRIBUTE_LENGTH = 64;

export const RuleInput = Type.Object(
  {
    rule_id: Id('unique rule identifier (letters, digits, _ . : -)'),
    attributes: Type.Array(Type.String({ minLength: 1, maxLength: MAX_ATTRIBUTE_LENGTH }), {
      maxItems: 6,
      description:
        'country, currency, payment_method, card_type, transaction_type, amount_tier; `*` is the wildcard; shorter lists are padded with `*`',
    }),
    primary_id: Id('primary processor identifier'),
    primary_name: Type.Optional(Name('primary processor display name; defaults to primary_id')),
    secondary_id: Id('secondary (fallback) processor identifier'),
    secondary_name: Type.Optional(Name('secondary processor display name; defaults to secondary_id')),
    primary_weight: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.9, description: 'traffic weight of the primary; default 0.9' })),
  },
  { $id: 'RuleInput', additionalProperties: false },
);
export type RuleInput = Static<typeof RuleInput>;

const ProcessorRef = Type.Object({ processor_id: Type.String(), name: Type.String() });

export const RuleOutput = Type.Object(
  {
    rule_id: Type.String(),
    attributes: Type.Array(Type.String(), { description: 'the six attributes, padded with `*`' }),
    primary: ProcessorRef,
    secondary: ProcessorRef,
    primary_weight: Type.Number(),
    secondary_weight: Type.Number({ description: '1 − primary_weight' }),
    created_at: Type.String({ description: 'ISO 8601, UTC' }),
    updated_at: Type.Optional(Type.String({ description: 'ISO 8601, UTC; time of the last PATCH, absent before' })),
  },
  { $id: 'Rule' },
);

export const RuleEcho = Type.Object(
  {
    rule_id: Type.String(),
    attributes: Type.Array(Type.String()),
    primary_id: Type.String(),
    primary_name: Type.String(),
    secondary_id: Type.String(),
    secondary_name: Type.String(),
    primary_weight: Type.Number(),
  },
  { $id: 'RuleEcho' },
);

/** PATCH /v1/rules/{rule_id}: any of the creation fields but the id; at least one. */
export const RulePatch = Type.Object(
  {
    attributes: Type.Optional(RuleInput.properties.attributes),
    primary_id: Type.Optional(RuleInput.properties.primary_id),
    primary_name: RuleInput.properties.primary_name,
    secondary_id: Type.Optional(RuleInput.properties.secondary_id),
    secondary_name: RuleInput.properties.secondary_name,
    primary_weight: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'traffic weight of the primary' })),
  },
  { $id: 'RulePatch', additionalProperties: false, minProperties: 1 },
);
export type RulePatch = Static<typeof RulePatch>;

export const Deleted = Type.Object({ deleted: Type.String() }, { $id: 'Deleted' });
