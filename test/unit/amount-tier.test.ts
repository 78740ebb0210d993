import { describe, expect, it } from 'vitest';
import { AMOUNT_TIERS, AMOUNT_TIER_BOUNDS, deriveAmountTier } from '../../src/routing/amount-tier.js';

describe('deriveAmountTier', () => {
  it('the tiers, in order', () => {
    expect(AMOUNT_TIERS).toEqual(['micro', 'standard', 'high_value', 'premium']);
    expect(AMOUNT_TIER_BOUNDS).toEqual({ micro: 10, standard: 500, high_value: 5000 });
  });

  it.each([
    [0, 'micro'],
    [0.01, 'micro'],
    [9.99, 'micro'],
    [9.999999, 'micro'],
    [10, 'standard'],
    [10.01, 'standard'],
    [499.99, 'standard'],
    [500, 'high_value'],
    [4999.99, 'high_value'],
    [5000, 'premium'],
    [5000.01, 'premium'],
    [1e15, 'premium'],
  ])('%d → %s (lower bounds inclusive)', (amount, tier) => {
    expect(deriveAmountTier(amount)).toBe(tier);
  });

  it('each bound is the first amount of the next tier', () => {
    expect(deriveAmountTier(AMOUNT_TIER_BOUNDS.micro)).toBe('standard');
    expect(deriveAmountTier(AMOUNT_TIER_BOUNDS.standard)).toBe('high_value');
    expect(deriveAmountTier(AMOUNT_TIER_BOUNDS.high_value)).toBe('premium');
    expect(deriveAmountTier(AMOUNT_TIER_BOUNDS.micro - 1e-9)).toBe('micro');
    expect(deriveAmountTier(AMOUNT_TIER_BOUNDS.standard - 1e-9)).toBe('standard');
    expect(deriveAmountTier(AMOUNT_TIER_BOUNDS.high_value - 1e-9)).toBe('high_value');
  });

  it.each([null, undefined, NaN, Infinity, -Infinity])('no tier for %s', (amount) => {
    expect(deriveAmountTier(amount as number | null | undefined)).toBeNull();
  });

  it('is monotonic over a sweep of amounts', () => {
    let last = 0;
    const drops: number[] = [];
    for (let a = 0; a <= 6000; a += 0.25) {
      const i = AMOUNT_TIERS.indexOf(deriveAmountTier(a)!);
      if (i < last) drops.push(a);
      last = i;
    }
    expect(drops).toEqual([]);
    expect(last).toBe(AMOUNT_TIERS.length - 1);
  });
});
