/**
 * POST /v1/route and POST /v1/outcome against the real server: specificity and wildcard
 * matching with backtracking, amount tiers, weights, outcomes, counters. Tier 1, so the
 * rule weights are not changed by the adaptive tiers while the test runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

let s: TestServer;

const RULES: [string, string[], Record<string, unknown>?][] = [
  // Specificity and wildcards.
  ['us_visa', ['US', 'USD', 'card', 'visa'], { primary_id: 'p_visa' }],
  ['us_card', ['US', 'USD', 'card'], { primary_id: 'p_card' }],
  ['any_usd', ['*', 'USD'], { primary_id: 'p_usd' }],
  // Backtracking from a dead-end exact branch deeper down.
  ['gb_visa_recurring', ['GB', 'GBP', 'card', 'visa', 'recurring']],
  ['gb_card', ['GB', 'GBP', 'card']],
  // Backtracking at the first level.
  ['fr_eur', ['FR', 'EUR']],
  // The earliest position where rules differ decides.
  ['de_card', ['DE', '*', 'card']],
  ['any_chf_visa', ['*', 'CHF', 'card', 'visa']],
  // Amount tiers.
  ['jp_premium', ['JP', 'JPY', 'card', '*', '*', 'premium']],
  ['jp_card', ['JP', 'JPY', 'card']],
  ['ca_micro', ['CA', 'CAD', 'card', '*', '*', 'micro']],
  ['ca_standard', ['CA', 'CAD', 'card', '*', '*', 'standard']],
  ['ca_high_value', ['CA', 'CAD', 'card', '*', '*', 'high_value']],
  ['ca_premium', ['CA', 'CAD', 'card', '*', '*', 'premium']],
  // Transaction type and payment method.
  ['nl_subscription', ['NL', 'EUR', 'card', '*', 'subscription']],
  ['se_wallet', ['SE', 'SEK', 'wallet']],
  // Weights.
  ['w_one', ['XA', 'EUR'], { primary_id: 'prim', secondary_id: 'sec', primary_weight: 1.0 }],
  ['w_zero', ['XB', 'EUR'], { primary_id: 'prim', secondary_id: 'sec', primary_weight: 0.0 }],
  ['w_ninety', ['XC', 'EUR'], { primary_id: 'prim', secondary_id: 'sec', primary_weight: 0.9 }],
  // Outcomes.
  ['o_rule', ['XD', 'EUR'], { primary_id: 'o_prim', secondary_id: 'o_sec' }],
  ['o_self', ['XE', 'EUR'], { primary_id: 'only', secondary_id: 'only' }],
];

beforeAll(async () => {
  s = await startServer({ env: { SERVICE_TIER: '1' } });
  for (const [rule_id, attributes, extra] of RULES) {
    const r = await s.request('POST', '/v1/rules', { rule_id, attributes, primary_id: 'p1', secondary_id: 'p2', ...extra });
    if (r.status !== 201) throw new Error(`creating ${rule_id}: ${r.status} ${r.text}`);
  }
});
afterAll(stopAllServers);

async function routeRule(req: Record<string, unknown>): Promise<string | number> {
  const r = await s.request('POST', '/v1/route', req);
  return r.status === 200 ? r.json.rule_id : r.status;
}

describe('POST /v1/route: decision shape', () => {
  it('answers 200 with the routing decision fields', async () => {
    const r = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', payment_method: 'card', card_type: 'visa' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ rule_id: 'us_visa', decision_source: 'rules', failure_probability: null });
    expect(['p_visa', 'p2']).toContain(r.json.processor_id);
    expect(r.json.fallback_processor_id).toBe(r.json.processor_id === 'p_visa' ? 'p2' : 'p_visa');
    expect(r.json.weight).toBeGreaterThanOrEqual(0);
    expect(r.json.weight).toBeLessThanOrEqual(1);
  });

  it('404 ROUTING_NO_MATCH when no rule matches', async () => {
    const r = await s.request('POST', '/v1/route', { country: 'ZZ', currency: 'XXX' });
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'ROUTING_NO_MATCH', status: 404 });
  });
});

describe('POST /v1/route: specificity and wildcards', () => {
  it('an exact card type beats `*`: visa → US/USD/card/visa, mastercard → US/USD/card', async () => {
    expect(await routeRule({ country: 'US', currency: 'USD', card_type: 'visa' })).toBe('us_visa');
    expect(await routeRule({ country: 'US', currency: 'USD', card_type: 'mastercard' })).toBe('us_card');
  });

  it('a `*` country rule serves other countries', async () => {
    expect(await routeRule({ country: 'BR', currency: 'USD' })).toBe('any_usd');
    expect(await routeRule({ country: 'MX', currency: 'USD', payment_method: 'bank_transfer' })).toBe('any_usd');
  });

  it('no card type (or `*`) only matches `*` at that position', async () => {
    expect(await routeRule({ country: 'US', currency: 'USD' })).toBe('us_card');
    expect(await routeRule({ country: 'US', currency: 'USD', card_type: '*' })).toBe('us_card');
  });

  it('payment_method defaults to card; another method backtracks to the `*` country rule', async () => {
    expect(await routeRule({ country: 'US', currency: 'USD' })).toBe('us_card');
    expect(await routeRule({ country: 'US', currency: 'USD', payment_method: 'wallet' })).toBe('any_usd');
    expect(await routeRule({ country: 'SE', currency: 'SEK', payment_method: 'wallet' })).toBe('se_wallet');
    expect(await routeRule({ country: 'SE', currency: 'SEK' })).toBe(404);
  });

  it('matching is case-insensitive on country, currency and card type', async () => {
    expect(await routeRule({ country: 'us', currency: 'usd', card_type: 'VISA' })).toBe('us_visa');
  });

  it('backtracks when an exact branch has no complete match below it', async () => {
    // GB/GBP/card/visa only holds `recurring`: a one-time visa payment falls back to GB/GBP/card.
    expect(await routeRule({ country: 'GB', currency: 'GBP', card_type: 'visa' })).toBe('gb_card');
    expect(await routeRule({ country: 'GB', currency: 'GBP', card_type: 'visa', transaction_type: 'recurring' })).toBe(
      'gb_visa_recurring',
    );
    // FR only holds EUR: FR/USD backtracks to the `*` country.
    expect(await routeRule({ country: 'FR', currency: 'USD' })).toBe('any_usd');
    expect(await routeRule({ country: 'FR', currency: 'EUR' })).toBe('fr_eur');
  });

  it('the rule most specific at the earliest differing position wins', async () => {
    expect(await routeRule({ country: 'DE', currency: 'CHF', card_type: 'visa' })).toBe('de_card');
    expect(await routeRule({ country: 'IT', currency: 'CHF', card_type: 'visa' })).toBe('any_chf_visa');
    expect(await routeRule({ country: 'IT', currency: 'CHF', card_type: 'mastercard' })).toBe(404);
  });

  it('transaction_type defaults to one_time', async () => {
    expect(await routeRule({ country: 'NL', currency: 'EUR', transaction_type: 'subscription' })).toBe('nl_subscription');
    expect(await routeRule({ country: 'NL', currency: 'EUR' })).toBe(404);
  });
});

describe('POST /v1/route: amount tiers', () => {
  it('amount_tier derived from amount routes to the tier-specific rule', async () => {
    expect(await routeRule({ country: 'JP', currency: 'JPY', amount: 25_000 })).toBe('jp_premium');
    expect(await routeRule({ country: 'JP', currency: 'JPY', amount: 120 })).toBe('jp_card');
    expect(await routeRule({ country: 'JP', currency: 'JPY' })).toBe('jp_card');
    expect(await routeRule({ country: 'JP', currency: 'JPY', amount: null })).toBe('jp_card');
  });

  it('an explicit amount_tier is used as given', async () => {
    expect(await routeRule({ country: 'JP', currency: 'JPY', amount_tier: 'premium' })).toBe('jp_premium');
    expect(await routeRule({ country: 'JP', currency: 'JPY', amount: 25_000, amount_tier: 'micro' })).toBe('jp_card');
  });

  it('tier boundaries (lower bound inclusive): 10, 500, 5000', async () => {
    const cases: [number, string][] = [
      [0, 'ca_micro'],
      [9.99, 'ca_micro'],
      [10, 'ca_standard'],
      [499.99, 'ca_standard'],
      [500, 'ca_high_value'],
      [4999.99, 'ca_high_value'],
      [5000, 'ca_premium'],
      [1e9, 'ca_premium'],
      // One unit in the last place from a boundary, 16-17 significant digits as computed amounts arrive.
      [9.999999999999998, 'ca_micro'],
      [499.99999999999994, 'ca_standard'],
      [500.00000000000006, 'ca_high_value'],
      [4999.999999999999, 'ca_high_value'],
      [5000.000000000001, 'ca_premium'],
    ];
    for (const [amount, expected] of cases) {
      expect({ amount, rule: await routeRule({ country: 'CA', currency: 'CAD', amount }) }).toEqual({ amount, rule: expected });
    }
  });

  it('no amount and no tier only matches `*` at the amount-tier position', async () => {
    expect(await routeRule({ country: 'CA', currency: 'CAD' })).toBe(404);
  });
});

describe('POST /v1/route: weights', () => {
  async function routeMany(country: string, n: number) {
    const out: { processor_id: string; fallback_processor_id: string; weight: number }[] = [];
    for (let i = 0; i < n; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, () => s.request('POST', '/v1/route', { country, currency: 'EUR' })),
      );
      for (const r of batch) {
        expect(r.status).toBe(200);
        out.push(r.json);
      }
    }
    return out;
  }

  it('primary_weight 1.0 always routes to the primary', async () => {
    const all = await routeMany('XA', 100);
    for (const d of all) expect(d).toMatchObject({ processor_id: 'prim', fallback_processor_id: 'sec', weight: 1 });
  });

  it('primary_weight 0.0 always routes to the secondary', async () => {
    const all = await routeMany('XB', 100);
    for (const d of all) expect(d).toMatchObject({ processor_id: 'sec', fallback_processor_id: 'prim', weight: 1 });
  });

  it('primary_weight 0.9 sends about 90% to the primary', async () => {
    const n = 400;
    const all = await routeMany('XC', n);
    const primary = all.filter((d) => d.processor_id === 'prim').length;
    // Binomial(400, 0.9): mean 360, sd 6; these bounds are more than 5 sd away.
    expect(primary).toBeGreaterThanOrEqual(320);
    expect(primary).toBeLessThanOrEqual(392);
    for (const d of all) {
      if (d.processor_id === 'prim') expect(d).toMatchObject({ fallback_processor_id: 'sec', weight: 0.9 });
      else expect(d).toMatchObject({ processor_id: 'sec', fallback_processor_id: 'prim', weight: 0.1 });
    }
  });
});

describe('POST /v1/outcome', () => {
  it('202 for the primary and for the secondary, success or failure', async () => {
    const reports = [
      { rule_id: 'o_rule', processor_id: 'o_prim', success: true, latency_ms: 120 },
      { rule_id: 'o_rule', processor_id: 'o_sec', success: false, latency_ms: 3000, error_code: 'timeout' },
      { rule_id: 'o_rule', processor_id: 'o_prim', success: false, latency_ms: 80, error_code: null },
      { rule_id: 'o_self', processor_id: 'only', success: true, latency_ms: 45.5 },
    ];
    for (const body of reports) {
      const r = await s.request('POST', '/v1/outcome', body);
      expect(r.status).toBe(202);
      expect(r.json.status).toBe('accepted');
    }
  });

  it('422 naming rule_id for an unknown rule, processor_id for a processor not in the rule', async () => {
    const a = await s.request('POST', '/v1/outcome', { rule_id: 'no_such_rule', processor_id: 'o_prim', success: true, latency_ms: 1 });
    expect(a.status).toBe(422);
    expect(a.json.error.fields.map((f: { field: string }) => f.field)).toContain('rule_id');
    const b = await s.request('POST', '/v1/outcome', { rule_id: 'o_rule', processor_id: 'stranger', success: true, latency_ms: 1 });
    expect(b.status).toBe(422);
    expect(b.json.error.fields.map((f: { field: string }) => f.field)).toContain('processor_id');
  });
});

describe('GET /v1/stats', () => {
  it('has the engine statistics shape', async () => {
    const r = await s.request('GET', '/v1/stats');
    expect(r.status).toBe(200);
    const st = r.json;
    for (const k of ['transactions_routed', 'transactions_reported', 'failover_events', 'tier']) expect(Number.isInteger(st[k])).toBe(true);
    expect(typeof st.running).toBe('boolean');
    expect(st.shadow_mode).toBe(false);
    expect(st.tier).toBe(1);
    expect(Number.isInteger(st.trie.total_nodes)).toBe(true);
    expect(st.trie.total_rules).toBe(RULES.length);
    expect(Number.isInteger(st.bandit.rule_count)).toBe(true);
  });

  it('counts each route and each accepted outcome (stats and /metrics/)', async () => {
    const metric = async (name: string) => {
      const text = (await s.request('GET', '/metrics/')).text;
      const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
      return m ? Number(m[1]) : NaN;
    };
    const before = (await s.request('GET', '/v1/stats')).json;
    const mRouted = await metric('service_transactions_routed_total');
    const mReported = await metric('service_transactions_reported_total');

    for (let i = 0; i < 3; i++) expect((await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const r = await s.request('POST', '/v1/outcome', { rule_id: 'us_card', processor_id: 'p_card', success: true, latency_ms: 10 });
      expect(r.status).toBe(202);
    }
    // A rejected outcome is not counted.
    expect((await s.request('POST', '/v1/outcome', { rule_id: 'us_card', processor_id: 'nope', success: true, latency_ms: 10 })).status).toBe(
      422,
    );

    const after = (await s.request('GET', '/v1/stats')).json;
    expect(after.transactions_routed - before.transactions_routed).toBe(3);
    expect(after.transactions_reported - before.transactions_reported).toBe(2);
    expect((await metric('service_transactions_routed_total')) - mRouted).toBe(3);
    expect((await metric('service_transactions_reported_total')) - mReported).toBe(2);
  });
});
