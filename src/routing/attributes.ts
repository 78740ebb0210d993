/**
 * Rule attributes: six positions, in this order —
 *   0 country (ISO 3166-1 alpha-2)   1 currency (ISO 4217)   2 payment method
 *   3 card type                      4 transaction type      5 amount tier
 * A shorter list is padded with `*` (spec 2.4 rule 1). Country and currency compare
 * case-insensitively (stored upper case); the other positions are stored lower case.
 */
import { AMOUNT_TIERS } from './amount-tier.js';
import { PAYMENT_METHODS, TRANSACTION_TYPES } from '../schemas/routing.js';

export const ATTRIBUTE_COUNT = 6;
export const WILDCARD = '*';
export const ATTRIBUTE_NAMES = ['country', 'currency', 'payment_method', 'card_type', 'transaction_type', 'amount_tier'] as const;

export function normalizeAttribute(position: number, value: string): string {
  if (value === WILDCARD) return value;
  return position < 2 ? value.toUpperCase() : value.toLowerCase();
}

export function padAttributes(attrs: readonly string[]): string[] {
  const out = attrs.map((v, i) => normalizeAttribute(i, v));
  while (out.length < ATTRIBUTE_COUNT) out.push(WILDCARD);
  return out;
}

const POSITION_RULES: { name: string; test: (v: string) => boolean; expect: string }[] = [
  { name: 'country', test: (v) => /^[A-Za-z]{2}$/.test(v), expect: 'an ISO 3166-1 alpha-2 code or *' },
  { name: 'currency', test: (v) => /^[A-Za-z]{3}$/.test(v), expect: 'an ISO 4217 code or *' },
  { name: 'payment_method', test: (v) => PAYMENT_METHODS.includes(v.toLowerCase() as never), expect: `one of ${PAYMENT_METHODS.join(', ')} or *` },
  { name: 'card_type', test: () => true, expect: '' },
  { name: 'transaction_type', test: (v) => TRANSACTION_TYPES.includes(v.toLowerCase() as never), expect: `one of ${TRANSACTION_TYPES.join(', ')} or *` },
  { name: 'amount_tier', test: (v) => AMOUNT_TIERS.includes(v.toLowerCase() as never), expect: `one of ${AMOUNT_TIERS.join(', ')} or *` },
];

/** A rule attribute that no transaction could ever carry is a mistake: report it (422). */
export function attributeIssues(attrs: readonly string[]): { field: string; message: string }[] {
  const issues: { field: string; message: string }[] = [];
  attrs.forEach((v, i) => {
    const rule = POSITION_RULES[i];
    if (rule && v !== WILDCARD && !rule.test(v)) issues.push({ field: `attributes[${i}]`, message: `${rule.name} must be ${rule.expect}` });
  });
  return issues;
}
