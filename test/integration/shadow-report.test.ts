/**
 * Shadow mode through the real server: a scripted outcome stream with a failover in the
 * middle, the report's arithmetic (revenue included), average_order_value validation,
 * toggling, restart persistence and reset.
 *
 * Determinism: tier 1 (no bandit moving shares), a 60 s evaluation cycle (so only the fast
 * path evaluates: it fails the primary over after exactly 10 consecutive technical errors).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

afterAll(stopAllServers);

const ENV = { SERVICE_TIER: '1', SERVICE_EVAL_INTERVAL_MS: '60000' };
const ISO_OFFSET = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$/;


let s: TestServer;

async function outcome(rule_id: string, processor_id: string, n: number, success: boolean, error_code: string | null = null) {
  for (let i = 0; i < n; i++) {
    const r = await s.request('POST', '/v1/outcome', { rule_id, processor_id, success, latency_ms: 100, error_code });
    expect(r.status).toBe(202);
  }
}
async function routes(n: number) {
  for (let i = 0; i < n; i++) expect((await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' })).status).toBe(200);
}
const report = async (q = '') => {
  const r = await s.request('GET', `/v1/shadow-report${q}`);
  expect(r.status).toBe(200);
  return r.json;
};
const setShadow = async (on: boolean) => {
  const r = await s.request('POST', '/v1/config/tiers', { shadow_mode: on });
  expect(r.status).toBe(200);
  expect(r.json.shadow_mode).toBe(on);
};

// The scripted stream below, counted by hand.
const EXPECTED = {
  total_transactions: 5,
  total_outcomes: 27,
  routing_overrides: 8,
  failover_events_detected: 1,
  transactions_on_degraded_processor: 6,
  total_failures: 18,
  failures_on_degraded: 3,
  estimated_saved_transactions: 3,
};

beforeAll(async () => {
  s = await startServer({ env: ENV });
  const r = await s.request('POST', '/v1/onboard', {
    processors: [
      { processor_id: 'stripe', name: 'Stripe', countries: ['US'], currencies: ['USD'] },
      { processor_id: 'adyen', name: 'Adyen', countries: ['US'], currencies: ['USD'], priority: 2 },
      { processor_id: 'solo', name: 'Solo', countries: ['GB'], currencies: ['GBP'] },
    ],
  });
  expect(r.status).toBe(201);
});

describe('shadow report', () => {
  it('answers with zeros before shadow mode was ever on', async () => {
    const r = await report();
    expect(r).toMatchObject({
      shadow_mode_active: false,
      observation_period_seconds: 0,
      total_transactions: 0,
      total_outcomes: 0,
      routing_overrides: 0,
      estimated_saved_transactions: 0,
      estimated_revenue_impact: 0,
      average_order_value: 50,
      rules: {},
    });
    // Spec 2.9 types them as date-time strings: an untouched report has both (the time of the report).
    expect(r.earliest_observation).toMatch(ISO_OFFSET);
    expect(r.latest_observation).toBe(r.earliest_observation);
    expect(Math.abs(Date.parse(r.earliest_observation) - Date.now())).toBeLessThan(60_000);
  });

  it('validates average_order_value: a finite number > 0, else 422 naming it', async () => {
    for (const v of ['0', '-5', 'abc', 'NaN', 'Infinity', '', '1e400', '0x10', '5abc']) {
      const r = await s.request('GET', `/v1/shadow-report?average_order_value=${encodeURIComponent(v)}`);
      expect({ v, status: r.status }).toEqual({ v, status: 422 });
      expect(r.json.error.fields[0].field).toBe('average_order_value');
      expect(r.json.error.message).toContain('average_order_value');
    }
    expect((await report('?average_order_value=12.5')).average_order_value).toBe(12.5);
    expect((await s.request('DELETE', '/v1/shadow-report?average_order_value=0')).status).toBe(422);
  });

  it('counts nothing while shadow mode is off', async () => {
    await routes(2);
    await outcome('us_usd_card', 'stripe', 1, true);
    expect((await report()).total_transactions).toBe(0);
  });

  it('records a scripted stream with a failover in the middle', async () => {
    await setShadow(true);
    expect((await s.request('GET', '/v1/stats')).json.shadow_mode).toBe(true);
    await routes(5);
    // stripe healthy: the engine recommends stripe (share 0.9)
    await outcome('us_usd_card', 'stripe', 4, true); //                 4 outcomes
    await outcome('us_usd_card', 'adyen', 2, true); //                  2 overrides
    await outcome('us_usd_card', 'stripe', 1, false, 'insufficient_funds'); // 1 failure (decline)
    await outcome('us_usd_card', 'stripe', 10, false, 'timeout'); //    10 failures; the 10th fails stripe over
    await until('stripe failed over', async () => {
      const h = await s.request('GET', '/v1/health/us_usd_card');
      return h.json.primary.status === 'failed_over' && h.json.decision.processor_id === 'adyen';
    });
    // stripe failed over, the engine recommends adyen; the client keeps using stripe
    await outcome('us_usd_card', 'stripe', 3, false, 'timeout'); //     flagged, technical, override: 3 saved
    await outcome('us_usd_card', 'stripe', 2, false, 'do_not_honor'); // flagged, overrides, declines: not saved
    await outcome('us_usd_card', 'stripe', 1, true); //                 flagged, override
    await outcome('us_usd_card', 'adyen', 2, true); //                  what the engine would do
    // self-fallback rule: failures but never an override
    await outcome('gb_gbp_card', 'solo', 2, false, 'processor_unavailable');

    const r = await report('?average_order_value=49.99');
    expect(r).toMatchObject({ shadow_mode_active: true, ...EXPECTED, average_order_value: 49.99, estimated_revenue_impact: 149.97 });
    expect(r.rules).toEqual({
      gb_gbp_card: { total_outcomes: 2, failures: 2, overrides: 0, failures_on_degraded: 0, recommended_processor: 'solo' },
      us_usd_card: { total_outcomes: 25, failures: 16, overrides: 8, failures_on_degraded: 3, recommended_processor: 'adyen' },
    });
    expect(r.earliest_observation).toMatch(ISO_OFFSET);
    expect(r.latest_observation).toMatch(ISO_OFFSET);
    expect(Date.parse(r.latest_observation)).toBeGreaterThanOrEqual(Date.parse(r.earliest_observation));
    expect(r.observation_period_seconds).toBeGreaterThan(0);
    expect(r.observation_period_seconds).toBeLessThan(60);
    // default average order value: 50.0
    expect((await report()).estimated_revenue_impact).toBe(150);
    expect((await report('?average_order_value=1000')).estimated_revenue_impact).toBe(3000);
  });

  it('survives a restart (the period goes on)', async () => {
    expect(await s.stop()).toBe(0);
    s = await startServer({ dataDir: s.dataDir, env: ENV });
    const r = await report();
    expect(r).toMatchObject({ shadow_mode_active: true, ...EXPECTED, estimated_revenue_impact: 150 });
    expect(r.rules.us_usd_card).toMatchObject({ total_outcomes: 25, failures: 16, overrides: 8, failures_on_degraded: 3 });
    await routes(1);
    expect((await report()).total_transactions).toBe(6);
  });

  it('switching shadow mode off freezes the report; switching it on starts a new period', async () => {
    await setShadow(false);
    const frozen = await report();
    expect(frozen).toMatchObject({ shadow_mode_active: false, total_transactions: 6, total_outcomes: 27 });
    expect(frozen.period_ended_at).toMatch(ISO_OFFSET);
    await routes(2);
    await outcome('us_usd_card', 'stripe', 1, false, 'timeout');
    const still = await report();
    expect(still).toMatchObject({ total_transactions: 6, total_outcomes: 27 });
    expect(still.observation_period_seconds).toBe(frozen.observation_period_seconds);

    await setShadow(true);
    const fresh = await report();
    expect(fresh).toMatchObject({ shadow_mode_active: true, total_transactions: 0, total_outcomes: 0, failover_events_detected: 0, rules: {}, period_ended_at: null });
    expect(fresh.period_started_at).toMatch(ISO_OFFSET);
    await routes(2);
    expect((await report()).total_transactions).toBe(2);
  });

  it('DELETE resets the report, durably', async () => {
    const d = await s.request('DELETE', '/v1/shadow-report');
    expect(d.status).toBe(200);
    expect(d.json).toMatchObject({ shadow_mode_active: true, total_transactions: 0, total_outcomes: 0 });
    // Nothing observed yet in the new period: both timestamps are its start.
    expect(d.json.earliest_observation).toBe(d.json.period_started_at);
    expect(d.json.latest_observation).toBe(d.json.period_started_at);
    await routes(1);
    await s.kill9(); // no graceful stop: the reset must already be stored
    s = await startServer({ dataDir: s.dataDir, env: ENV });
    expect((await report()).total_transactions).toBeLessThanOrEqual(1);

    await setShadow(false);
    const off = await s.request('DELETE', '/v1/shadow-report');
    expect(off.json).toMatchObject({ shadow_mode_active: false, total_transactions: 0, period_started_at: null, observation_period_seconds: 0 });
  });
});

describe('SERVICE_SHADOW_MODE', () => {
  it('sets the start-up default; the periodic checkpoint keeps counts through a crash', async () => {
    const t = await startServer({ env: { ...ENV, SERVICE_SHADOW_MODE: 'true' } });
    expect((await t.request('GET', '/v1/config/tiers')).json.shadow_mode).toBe(true);
    expect((await t.request('POST', '/v1/rules', { rule_id: 'r', attributes: ['US', 'USD'], primary_id: 'a', secondary_id: 'b' })).status).toBe(201);
    for (let i = 0; i < 3; i++) await t.request('POST', '/v1/route', { country: 'US', currency: 'USD' });
    const r = (await t.request('GET', '/v1/shadow-report')).json;
    expect(r).toMatchObject({ shadow_mode_active: true, total_transactions: 3 });
    await new Promise((res) => setTimeout(res, 5_600)); // one checkpoint (every 5 s)
    await t.kill9();
    const t2 = await startServer({ dataDir: t.dataDir, env: { ...ENV, SERVICE_SHADOW_MODE: 'true' } });
    expect((await t2.request('GET', '/v1/shadow-report')).json).toMatchObject({ shadow_mode_active: true, total_transactions: 3 });
  });
});
