/** transactionValues skips toUpperCase / toLowerCase for a value already in its case: the result must be the same as with them. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { transactionValues } from '../../src/routing/decide.js';

describe('transactionValues', () => {
  it('normalizes country, currency and card type exactly as toUpperCase / toLowerCase', () => {
    const text = fc.oneof(fc.string({ minLength: 1, maxLength: 6 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }), fc.constantFrom('us', 'US', 'Us', 'VISA', 'visa', 'İ', 'ß', 'Σ', '*'));
    fc.assert(
      fc.property(text, text, text, (country, currency, card) => {
        const v = transactionValues({ country, currency, card_type: card });
        expect(v[0]).toBe(country.toUpperCase());
        expect(v[1]).toBe(currency.toUpperCase());
        const lower = card.toLowerCase();
        expect(v[3]).toBe(lower !== '*' ? lower : null);
      }),
      { numRuns: 2000 },
    );
  });

  it('defaults and the amount tier', () => {
    expect(transactionValues({ country: 'us', currency: 'usd', amount: 42 })).toEqual(['US', 'USD', 'card', null, 'one_time', 'standard']);
    expect(transactionValues({ country: 'US', currency: 'USD', payment_method: 'wallet', transaction_type: 'recurring', amount_tier: 'premium' })).toEqual([
      'US',
      'USD',
      'wallet',
      null,
      'recurring',
      'premium',
    ]);
  });
});
