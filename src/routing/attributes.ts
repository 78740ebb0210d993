/**
 * Rule attributes: six positions, in this order —
 *   0 country (ISO 3166-1 alpha-2)   1 currency (ISO 4217)   2 payment method
 *   3 card type                      4 transaction type      5 amount tier
 * A shorter list is padded with `*` (spec 2.4 rule 1). Country and currency compare
 * case-insensitively (stored upper case); the other positions are stored lower case.
 */
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
