/**
 * Tiers 2 and 3 through the real server: once a rule has traffic, Foresight publishes failure
 * probabilities (health, route decisions, metrics) and Autopilot allocates; switching them off
 * at runtime returns null probabilities, no bandit weights, and `rules` decisions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

afterAll(stopAllServers);


describe('tiers 2 and 3 at runtime', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ env: { SERVICE_TIER: '3', SERVICE_EVAL_INTERVAL_MS: '500' } });
    expect(
      (await s.request('POST', '/v1/rules', { rule_id: 'de', attributes: ['DE', 'EUR', 'card'], primary_id: 'p1', secondary_id: 'p2', primary_weight: 0.9 }))
        .status,
    ).toBe(201);
    for (let i = 0; i < 60; i++) {
      for (const p of ['p1', 'p2']) {
        await s.request('POST', '/v1/outcome', { rule_id: 'de', processor_id: p, success: i % 10 !== 0, latency_ms: 120, error_code: i % 10 === 0 ? 'do_not_honor' : null });
      }
    }
  });

  it('tier 3 publishes failure probabilities and bandit weights', async () => {
    // The pool thread writes the primary's weight, then the secondary's (two rows, no lock
    // between them): a read in between, which a loaded machine can stretch, pairs a new weight
    // with an old one (or with null before the first evaluation). Wait for a read of both.
    const h = await until('prediction and allocation', async () => {
      const r = await s.request('GET', '/v1/health/de');
      const { primary, secondary } = r.json;
      const both = typeof primary.bandit_weight === 'number' && typeof secondary.bandit_weight === 'number';
      return typeof primary.failure_probability === 'number' && both && Math.abs(primary.bandit_weight + secondary.bandit_weight - 1) <= 1e-4 + 1e-12 && r.json;
    });
    expect(h.primary.failure_probability).toBeGreaterThanOrEqual(0);
    expect(h.primary.failure_probability).toBeLessThanOrEqual(1);
    // Each weight is reported rounded to 4 decimals, so their sum is within 1e-4 of 1.
    expect(Math.abs(h.primary.bandit_weight + h.secondary.bandit_weight - 1)).toBeLessThanOrEqual(1e-4 + 1e-12);
    const route = await s.request('POST', '/v1/route', { country: 'DE', currency: 'EUR' });
    expect(typeof route.json.failure_probability).toBe('number');
    const m = await s.request('GET', '/metrics/');
    expect(m.text).toMatch(/service_processor_failure_probability\{rule_id="de",processor_id="p1"\} [0-9.e-]+/);
    expect(m.text).toMatch(/service_bandit_weight\{rule_id="de",processor_id="p1"\} [0-9.e-]+/);
  });

  it('prediction off: tier 1, null probabilities, no bandit weights, rules decisions', async () => {
    const c = await s.request('POST', '/v1/config/tiers', { prediction_enabled: false });
    expect(c.json.tier).toBe(1);
    // Failure probabilities go at once (the tenant's tiers are read when health is shown);
    // the decision is the engine's and changes at the tenant's next evaluation (configChanged),
    // which on a loaded machine may come after the first read.
    const h = await until('tier 1 decisions', async () => {
      const r = await s.request('GET', '/v1/health/de');
      return r.json.primary.failure_probability === null && r.json.primary.bandit_weight === null && r.json.decision.decision_source === 'rules' && r.json;
    });
    expect(h.decision.decision_source).toBe('rules');
    expect(h.decision.weight).toBe(0.9);
    for (let i = 0; i < 20; i++) {
      const r = await s.request('POST', '/v1/route', { country: 'DE', currency: 'EUR' });
      expect(r.json.decision_source).toBe('rules');
      expect(r.json.failure_probability).toBeNull();
    }
    const m = await s.request('GET', '/metrics/');
    expect(m.text).not.toMatch(/service_processor_failure_probability\{rule_id="de"/);
    expect(m.text).not.toMatch(/service_bandit_weight\{rule_id="de"/);
  });

  it('prediction back on without the bandit: tier 2, probabilities again, no bandit', async () => {
    const c = await s.request('POST', '/v1/config/tiers', { prediction_enabled: true, bandit_enabled: false });
    expect(c.json.tier).toBe(2);
    const h = await until('tier 2 probabilities', async () => {
      const r = await s.request('GET', '/v1/health/de');
      return typeof r.json.primary.failure_probability === 'number' && r.json;
    });
    expect(h.primary.bandit_weight).toBeNull();
    expect(['rules', 'prediction']).toContain(h.decision.decision_source);
    expect((await s.request('GET', '/v1/stats')).json.bandit.rule_count).toBe(0);
  });
});
