/** POST /v1/onboard (spec 2.11, 4.5): request and response schemas. */
import { Type, type Static } from '@sinclair/typebox';
import { PAYMENT_METHODS } from './routing.js';
import { Id, Name } from './common.js';
import { RuleEcho } from './rules.js';

export const MAX_ONBOARD_PROCESSORS = 100;
/** Most rules one onboarding request may generate (422 LIMIT_EXCEEDED beyond it). */
export const MAX_ONBOARD_RULES = 10_000;
export const MIN_PRIMARY_WEIGHT = 0.5;
export const MAX_PRIMARY_WEIGHT = 1.0;
export const DEFAULT_ONBOARD_PRIMARY_WEIGHT = 0.9;
export const DEFAULT_PRIORITY = 1;
export const MAX_PRIORITY = 1_000_000;

// Codes are checked against the ISO lists after the schema (to name the unknown value),
// so the schema only bounds their size.
const Code = Type.String({ minLength: 1, maxLength: 8 });

export const OnboardProcessor = Type.Object(
  {
    processor_id: Id('unique processor id within the request'),
    name: Name('display name'),
    countries: Type.Array(Code, { minItems: 1, maxItems: 300, description: 'ISO 3166-1 alpha-2 codes, case-insensitive (stored upper case)' }),
    currencies: Type.Array(Code, { minItems: 1, maxItems: 200, description: 'ISO 4217 codes, case-insensitive (stored upper case)' }),
    payment_methods: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 32 }), {
        minItems: 1,
        maxItems: 16,
        default: ['card'],
        description: `payment methods served, of ${PAYMENT_METHODS.join(', ')}; default ["card"]`,
      }),
    ),
    priority: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_PRIORITY, default: DEFAULT_PRIORITY, description: 'lower number = higher priority; default 1; ties go to the processor listed first' }),
    ),
  },
  { $id: 'OnboardProcessor', additionalProperties: false },
);
export type OnboardProcessor = Static<typeof OnboardProcessor>;

export const OnboardRequest = Type.Object(
  {
    processors: Type.Array(OnboardProcessor, { minItems: 2, maxItems: MAX_ONBOARD_PROCESSORS, description: 'at least 2 processors' }),
    primary_weight: Type.Optional(
      Type.Number({
        minimum: MIN_PRIMARY_WEIGHT,
        maximum: MAX_PRIMARY_WEIGHT,
        default: DEFAULT_ONBOARD_PRIMARY_WEIGHT,
        description: 'traffic weight of the primary in every generated rule, 0.5 to 1.0; default 0.9',
      }),
    ),
  },
  { $id: 'OnboardRequest', additionalProperties: false },
);
export type OnboardRequest = Static<typeof OnboardRequest>;

export const OnboardResponse = Type.Object(
  {
    rules_created: Type.Integer(),
    rules: Type.Array(RuleEcho, { description: 'the created rules, input-shaped, ordered by rule_id' }),
    processors: Type.Array(Type.String(), { description: 'the processor ids of the request, in the order given' }),
  },
  { $id: 'OnboardResponse' },
);
