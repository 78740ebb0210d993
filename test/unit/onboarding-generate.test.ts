/** Onboarding rule generation and validation, without a server. */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/errors.js';
import { generateRules, onboardingRuleId, validateOnboarding } from '../../src/onboarding/generate.js';
import { ISO_3166_1_ALPHA2 } from '../../src/data/iso-3166-1-alpha2.js';
import { ISO_4217 } from '../../src/data/iso-4217.js';
import type { OnboardRequest } from '../../src/schemas/onboarding.js';

const p = (processor_id: string, countries: string[], currencies: string[], extra: Record<string, unknown> = {}) => ({
  processor_id,
  name: processor_id.toUpperCase(),
  countries,
  currencies,
  ...extra,
});

function fieldsOf(fn: () => unknown): { field: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return (e as ServiceError).fields ?? [];
  }
  throw new Error('expected a ServiceError');
}

describe('ISO code lists', () => {
  it('hold the real code lists', () => {
    expect(ISO_3166_1_ALPHA2.length).toBeGreaterThanOrEqual(249);
    expect(ISO_4217.length).toBeGreaterThanOrEqual(170);
    for (const c of ['US', 'GB', 'DE', 'BR', 'JP', 'XK']) expect(ISO_3166_1_ALPHA2).toContain(c);
    for (const c of ['USD', 'EUR', 'GBP', 'JPY', 'BRL', 'CHF']) expect(ISO_4217).toContain(c);
    for (const c of ['UK', 'EU', 'ZZ']) expect(ISO_3166_1_ALPHA2).not.toContain(c);
    for (const c of ['ABC', 'HRK', 'BTC']) expect(ISO_4217).not.toContain(c);
    expect(new Set(ISO_3166_1_ALPHA2).size).toBe(ISO_3166_1_ALPHA2.length);
    expect([...ISO_4217]).toEqual([...ISO_4217].sort());
  });
});

describe('validateOnboarding', () => {
  it('applies defaults and normalizes codes (upper case countries/currencies, lower case methods, deduplicated)', () => {
    const [a, b] = validateOnboarding({
      processors: [p('a', ['us', 'US', 'gb'], ['usd']), p('b', ['US'], ['USD'], { payment_methods: ['Wallet', 'card'], priority: 0 })],
    } as OnboardRequest);
    expect(a).toMatchObject({ countries: ['US', 'GB'], currencies: ['USD'], payment_methods: ['card'], priority: 1, index: 0 });
    expect(b).toMatchObject({ payment_methods: ['wallet', 'card'], priority: 0, index: 1 });
  });

  it('names every unknown code, duplicate id and bad payment method by JSON path and value', () => {
    const fields = fieldsOf(() =>
      validateOnboarding({
        processors: [p('a', ['US', 'ZZ'], ['USD', 'ABC']), p('a', ['GB'], ['GBP'], { payment_methods: ['card', 'crypto'] })],
      } as OnboardRequest),
    );
    expect(fields).toEqual([
      { field: 'processors[0].countries[1]', message: expect.stringContaining('"ZZ"') },
      { field: 'processors[0].currencies[1]', message: expect.stringContaining('"ABC"') },
      { field: 'processors[1].processor_id', message: expect.stringContaining('duplicate') },
      { field: 'processors[1].payment_methods[1]', message: expect.stringContaining('"crypto"') },
    ]);
  });
});

describe('generateRules', () => {
  const gen = (req: OnboardRequest, max?: number) => generateRules(validateOnboarding(req), req.primary_weight, new Date(0), max);

  it('one rule per combination, ordered by id, with lower-case ids and 3 normalized attributes', () => {
    const rules = gen({ processors: [p('a', ['US', 'GB'], ['USD', 'EUR'], { payment_methods: ['card', 'bank_transfer'] }), p('b', ['US'], ['USD'])] });
    expect(rules.map((r) => r.rule_id)).toEqual([
      'gb_eur_bank_transfer', 'gb_eur_card', 'gb_usd_bank_transfer', 'gb_usd_card',
      'us_eur_bank_transfer', 'us_eur_card', 'us_usd_bank_transfer', 'us_usd_card',
    ]);
    const us = rules.find((r) => r.rule_id === 'us_usd_card')!;
    expect(us.attributes).toEqual(['US', 'USD', 'card', '*', '*', '*']);
    expect(us).toMatchObject({ primary_id: 'a', primary_name: 'A', secondary_id: 'b', secondary_name: 'B', primary_weight: 0.9 });
    expect(onboardingRuleId('US', 'USD', 'bank_transfer')).toBe('us_usd_bank_transfer');
  });

  it('a combination served by one processor falls back to itself', () => {
    const rules = gen({ processors: [p('a', ['US'], ['USD']), p('b', ['GB'], ['GBP'])] });
    expect(rules.map((r) => [r.rule_id, r.primary_id, r.secondary_id])).toEqual([
      ['gb_gbp_card', 'b', 'b'],
      ['us_usd_card', 'a', 'a'],
    ]);
  });

  it('primary = lowest priority number, secondary = next; ties go to the processor listed first', () => {
    const three = (prios: number[]) =>
      gen({ processors: prios.map((priority, i) => p(`p${i}`, ['US'], ['USD'], { priority })), primary_weight: 0.7 })[0];
    expect(three([3, 1, 2])).toMatchObject({ primary_id: 'p1', secondary_id: 'p2', primary_weight: 0.7 });
    expect(three([1, 1, 1])).toMatchObject({ primary_id: 'p0', secondary_id: 'p1' });
    expect(three([2, 1, 1])).toMatchObject({ primary_id: 'p1', secondary_id: 'p2' });
    expect(three([0, 5, 0])).toMatchObject({ primary_id: 'p0', secondary_id: 'p2' });
    expect(three([5, 5, 0])).toMatchObject({ primary_id: 'p2', secondary_id: 'p0' });
  });

  it('refuses more rules than the limit before building them all', () => {
    const req = { processors: [p('a', ['US', 'GB', 'DE'], ['USD', 'EUR']), p('b', ['US'], ['USD'])] };
    expect(gen(req, 6)).toHaveLength(6);
    const fields = fieldsOf(() => gen(req, 5));
    expect(fields[0].field).toBe('processors');
    expect(fields[0].message).toMatch(/more than 5 rules/);
  });
});
