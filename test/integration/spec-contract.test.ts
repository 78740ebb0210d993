/**
 * The spec's types as a typed client (pydantic, Jackson, zod) reads them, through HTTP:
 * failure_probability is a number whenever Tier 2 is on (route, health, metric) from the
 * moment a rule exists, null only when it is off; p95/p99 are numbers with 0 and with a few
 * outcomes; `tier` in the tier configuration sets both toggles; unknown fields are a 422 on
 * every endpoint; enum errors list the allowed values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const KEY = 'kspec-5e21c0';
const H = { 'x-api-key': KEY };
let s: TestServer;

beforeAll(async () => {
  s = await startServer({ env: { SERVICE_API_KEYS: `${KEY}:spec`, SERVICE_TIER: '2', SERVICE_EVAL_INTERVAL_MS: '500', SERVICE_LOG_LEVEL: 'warn' } });
  for (const [rule_id, country] of [['fresh', 'US'], ['ten', 'DE'], ['none', 'FR']]) {
    const r = await s.request('POST', '/v1/rules', { rule_id, attributes: [country], primary_id: 'stripe', secondary_id: 'adyen' }, H);
    expect(r.status).toBe(201);
  }
});
afterAll(stopAllServers);

const route = (country: string) => s.request('POST', '/v1/route', { country, currency: 'EUR' }, H);
const setTier = (tier: number) => s.request('POST', '/v1/config/tiers', { tier }, H);
const isProbability = (v: unknown) => typeof v === 'number' && v >= 0 && v <= 1;

function metricValue(text: string, name: string, rule: string, processor: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{rule_id="${rule}",processor_id="${processor}",tenant_id="spec"}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('failure_probability is a number whenever Tier 2 is on', () => {
  for (const tier of [2, 3]) {
    it(`tier ${tier}: a brand-new rule's route, health and metric carry a probability`, async () => {
      expect((await setTier(tier)).json.tier).toBe(tier);
      const r = await route('US');
      expect(r.status).toBe(200);
      expect(isProbability(r.json.failure_probability), JSON.stringify(r.json)).toBe(true);
      const h = (await s.request('GET', '/v1/health/fresh', undefined, H)).json;
      for (const p of [h.primary, h.secondary]) expect(isProbability(p.failure_probability), JSON.stringify(p)).toBe(true);
      expect(isProbability(h.decision.failure_probability)).toBe(true);
      const all = (await s.request('GET', '/v1/health', undefined, H)).json;
      expect(isProbability(all.rules.fresh.primary.failure_probability)).toBe(true);
      const m = (await s.request('GET', '/metrics/')).text;
      expect(isProbability(metricValue(m, 'service_processor_failure_probability', 'fresh', 'stripe'))).toBe(true);
      expect(isProbability(metricValue(m, 'service_processor_failure_probability', 'none', 'adyen'))).toBe(true);
    });
  }

  it('the prior is the same for every processor without evidence, and moves once outcomes are evaluated', async () => {
    await setTier(2);
    const prior = (await route('US')).json.failure_probability;
    expect((await route('FR')).json.failure_probability).toBe(prior);
    for (let i = 0; i < 30; i++) {
      await s.request('POST', '/v1/outcome', { rule_id: 'ten', processor_id: 'stripe', success: false, latency_ms: 900, error_code: 'timeout' }, H);
    }
    // Once evaluated, the value is the model's for this processor: still a probability.
    const h = await until('ten evaluated', async () => {
      const j = (await s.request('GET', '/v1/health/ten', undefined, H)).json;
      return j.primary.sample_count >= 30 && j;
    });
    expect(isProbability(h.primary.failure_probability)).toBe(true);
  });

  it('tier 1: null in route, health and absent from the metric', async () => {
    expect((await setTier(1)).json).toMatchObject({ tier: 1, prediction_enabled: false, bandit_enabled: false });
    expect((await route('US')).json.failure_probability).toBeNull();
    const h = (await s.request('GET', '/v1/health/fresh', undefined, H)).json;
    expect([h.primary.failure_probability, h.secondary.failure_probability, h.decision.failure_probability]).toEqual([null, null, null]);
    const m = (await s.request('GET', '/metrics/')).text;
    expect(metricValue(m, 'service_processor_failure_probability', 'fresh', 'stripe')).toBeUndefined();
  });
});

describe('latency percentiles are numbers', () => {
  it('0 outcomes: p95 and p99 are 0, like avg_latency_ms', async () => {
    const h = (await s.request('GET', '/v1/health/none', undefined, H)).json;
    expect(h.primary).toMatchObject({ sample_count: 0, avg_latency_ms: 0, p95_latency_ms: 0, p99_latency_ms: 0 });
  });

  it('10 outcomes: the percentiles of the samples there are, and the p95 gauge exists', async () => {
    for (let i = 1; i <= 10; i++) {
      const r = await s.request('POST', '/v1/outcome', { rule_id: 'ten', processor_id: 'adyen', success: true, latency_ms: i * 10 }, H);
      expect(r.status).toBe(202);
    }
    const h = await until('adyen evaluated', async () => {
      const j = (await s.request('GET', '/v1/health/ten', undefined, H)).json;
      return j.secondary.sample_count === 10 && j;
    });
    expect(typeof h.secondary.p95_latency_ms).toBe('number');
    expect(typeof h.secondary.p99_latency_ms).toBe('number');
    // Within the sketch's 4% bins of the largest sample (100 ms).
    expect(h.secondary.p95_latency_ms).toBeGreaterThan(85);
    expect(h.secondary.p95_latency_ms).toBeLessThan(110);
    expect(h.secondary.p99_latency_ms).toBeGreaterThanOrEqual(h.secondary.p95_latency_ms);
    const m = (await s.request('GET', '/metrics/')).text;
    expect(metricValue(m, 'service_processor_latency_p95', 'ten', 'adyen')).toBeGreaterThan(85);
  });
});

describe('tier configuration', () => {
  it('`tier` sets both toggles; toggles sent with it must agree (422 naming tier)', async () => {
    expect((await setTier(3)).json).toMatchObject({ tier: 3, prediction_enabled: true, bandit_enabled: true });
    expect((await setTier(2)).json).toMatchObject({ tier: 2, prediction_enabled: true, bandit_enabled: false });
    const agree = await s.request('POST', '/v1/config/tiers', { tier: 3, bandit_enabled: true }, H);
    expect(agree.json.tier).toBe(3);
    const clash = await s.request('POST', '/v1/config/tiers', { tier: 1, prediction_enabled: true }, H);
    expect(clash.status).toBe(422);
    expect(clash.json.error.fields[0].field).toBe('tier');
    expect((await s.request('GET', '/v1/config/tiers', undefined, H)).json.tier).toBe(3); // unchanged
    const bad = await s.request('POST', '/v1/config/tiers', { tier: 4 }, H);
    expect(bad.status).toBe(422);
    expect(bad.json.error.fields[0]).toEqual({ field: 'tier', message: 'must be one of 1, 2, 3' });
  });
});

describe('unknown fields and enum errors', () => {
  const bodies: [string, string, Record<string, unknown>][] = [
    ['POST', '/v1/route', { country: 'US', currency: 'USD', merchant_id: 'm1' }],
    ['POST', '/v1/outcome', { rule_id: 'ten', processor_id: 'stripe', success: true, latency_ms: 5, merchant_id: 'm1' }],
    ['POST', '/v1/rules', { rule_id: 'x1', attributes: ['IT'], primary_id: 'a', secondary_id: 'b', merchant_id: 'm1' }],
    ['POST', '/v1/onboard', { processors: [{ processor_id: 'a', name: 'A', countries: ['IT'], currencies: ['EUR'] }, { processor_id: 'b', name: 'B', countries: ['IT'], currencies: ['EUR'] }], merchant_id: 'm1' }],
    ['POST', '/v1/webhooks', { url: 'https://hooks.example.com/x', merchant_id: 'm1' }],
    ['POST', '/v1/config/tiers', { prediction_enabled: true, merchant_id: 'm1' }],
  ];
  it.each(bodies)('%s %s: 422 naming the unknown field, nothing changed', async (method, path, body) => {
    const rulesBefore = (await s.request('GET', '/v1/rules', undefined, H)).json;
    const r = await s.request(method, path, body, H);
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    expect(r.json.error.fields).toContainEqual({ field: 'merchant_id', message: expect.stringMatching(/not a known field/) });
    expect((await s.request('GET', '/v1/rules', undefined, H)).json).toEqual(rulesBefore);
  });

  it('nested objects too (an onboarding processor)', async () => {
    const p = (id: string) => ({ processor_id: id, name: id, countries: ['IT'], currencies: ['EUR'], color: 'red' });
    const r = await s.request('POST', '/v1/onboard', { processors: [p('a'), p('b')] }, H);
    expect(r.status).toBe(422);
    expect(r.json.error.fields.map((f: { field: string }) => f.field)).toContain('processors[0].color');
  });

  it('enum errors list the allowed values', async () => {
    const r = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', payment_method: 'cash', transaction_type: 'gift', amount_tier: 'huge' }, H);
    expect(r.status).toBe(422);
    expect(r.json.error.fields).toEqual(
      expect.arrayContaining([
        { field: 'payment_method', message: 'must be one of card, bank_transfer, wallet, bnpl' },
        { field: 'transaction_type', message: 'must be one of one_time, recurring, subscription' },
        { field: 'amount_tier', message: 'must be one of micro, standard, high_value, premium or null' },
      ]),
    );
    const one = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', payment_method: 'cash' }, H);
    expect(one.json.error.message).toBe('invalid field "payment_method": must be one of card, bank_transfer, wallet, bnpl');
    // A value of the right kind outside its bounds is told the bound.
    const neg = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', amount: -5 }, H);
    expect(neg.json.error.fields[0]).toMatchObject({ field: 'amount' });
    expect(neg.json.error.fields[0].message).toMatch(/greater or equal to 0/);
    expect(r.text).not.toMatch(/Expected union value/);
  });
});
