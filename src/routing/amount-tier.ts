/**
 * Amount tiers (spec 2.1: derived from `amount` when `amount_tier` is omitted). Boundaries,
 * in the transaction's currency units, lower bound inclusive:
 *   micro       0 ≤ amount < 10
 *   standard   10 ≤ amount < 500
 *   high_value 500 ≤ amount < 5,000
 *   premium    5,000 ≤ amount
 * No amount and no tier: the transaction only matches rules with `*` as amount tier.
 */
export const AMOUNT_TIERS = ['micro', 'standard', 'high_value', 'premium'] as const;
export type AmountTier = (typeof AMOUNT_TIERS)[number];

export const AMOUNT_TIER_BOUNDS = { micro: 10, standard: 500, high_value: 5000 } as const;

export function deriveAmountTier(amount: number | null | undefined): AmountTier | null {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return null;
  if (amount < AMOUNT_TIER_BOUNDS.micro) return 'micro';
  if (amount < AMOUNT_TIER_BOUNDS.standard) return 'standard';
  if (amount < AMOUNT_TIER_BOUNDS.high_value) return 'high_value';
  return 'premium';
}
