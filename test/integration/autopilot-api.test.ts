/**
 * Tier 3 (Autopilot) end to end through the real server: outcomes where the secondary approves
 * more move routing to it with decision_source `mab`; /v1/stats counts the rule, /metrics/
 * carries service_bandit_weight; the learned allocation survives a restart; the bandit's
 * settings are validated; switching the bandit off returns decisions to the lower tier.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

afterAll(stopAllServers);

const ENV = { SERVICE_TIER: '3', SERVICE_EVAL_INTERVAL_MS: '1000' };
const RULE = {
  rule_id: 'us_card',
  attributes: ['US', 'USD', 'card'],
  primary_id: 'stripe',
  primary_name: 'Stripe',
  secondary_id: 'adyen',
  secondary_name: 'Adyen',
  primary_weight: 0.9,
};


async function outcomes(s: TestServer, processor: string, approved: number, declined: number): Promise<void> {
  for (let i = 0; i < approved + declined; i++) {
    const ok = i < approved;
    const r = await s.request('POST', '/v1/outcome', {
      rule_id: RULE.rule_id,
      processor_id: processor,
      success: ok,
      latency_ms: 120,
      error_code: ok ? null : 'insufficient_funds', // an issuer decline: not a processor error for Tier 1
    });
    expect(r.status).toBe(202);
  }
}

async function routes(s: TestServer, n: number): Promise<Array<{ processor_id: string; decision_source: string; weight: number }>> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' });
    expect(r.status).toBe(200);
    out.push(r.json);
  }
  return out;
}

const banditLines = (metrics: string) => metrics.split('\n').filter((l) => l.startsWith('service_bandit_weight{'));

describe('Tier 3 through the API', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ env: ENV });
    expect((await s.request('POST', '/v1/rules', RULE)).status).toBe(201);
  });

  it('routes shift toward the processor that approves more, with decision_source mab', async () => {
    await outcomes(s, 'stripe', 60, 40); // approves 0.60
    await outcomes(s, 'adyen', 100, 0); // approves 1.00
    const h = await until('the bandit to take over', async () => {
      const r = await s.request('GET', '/v1/health/us_card');
      return r.json.decision.decision_source === 'mab' && r.json.secondary.bandit_weight >= 0.9 && r.json;
    });
    expect(h.decision.processor_id).toBe('adyen');
    expect(h.primary.bandit_weight).toBeGreaterThanOrEqual(0.02); // the exploration floor
    expect(h.primary.status).toBe('healthy'); // declines are not processor errors: this is the bandit, not a failover

    const rs = await routes(s, 100);
    expect(rs.every((r) => r.decision_source === 'mab')).toBe(true);
    expect(rs.filter((r) => r.processor_id === 'adyen').length).toBeGreaterThanOrEqual(80);
  });

  it('/v1/stats counts the rule and /metrics/ has service_bandit_weight', async () => {
    const st = await s.request('GET', '/v1/stats');
    expect(st.json.tier).toBe(3);
    expect(st.json.bandit.rule_count).toBeGreaterThanOrEqual(1);
    const lines = banditLines((await s.request('GET', '/metrics/')).text);
    expect(lines.some((l) => /rule_id="us_card"/.test(l) && /processor_id="adyen"/.test(l))).toBe(true);
    const w = Number(lines.find((l) => /processor_id="adyen"/.test(l))!.split(' ').pop());
    expect(w).toBeGreaterThanOrEqual(0.9);
  });

  it('keeps the learned allocation across a restart (posteriors checkpointed and restored)', async () => {
    await s.stop();
    s = await startServer({ dataDir: s.dataDir, env: ENV });
    // No outcome since the restart: fresh posteriors would give 50/50 at the first evaluations.
    await new Promise((r) => setTimeout(r, 3000));
    const h = (await s.request('GET', '/v1/health/us_card')).json;
    expect(h.decision.decision_source).toBe('mab');
    expect(h.secondary.bandit_weight).toBeGreaterThanOrEqual(0.9);
    expect((await s.request('GET', '/v1/stats')).json.bandit.rule_count).toBe(1);
  });

  it('validates the bandit settings (422 naming the field) and shows them in force', async () => {
    const before = (await s.request('GET', '/v1/config/tiers')).json;
    expect(before.thresholds).toMatchObject({ bandit_half_life_ms: 600_000, bandit_exploration_floor: 0.02 });
    for (const [body, field] of [
      [{ thresholds: { bandit_half_life_ms: 5 } }, 'thresholds.bandit_half_life_ms'],
      [{ thresholds: { bandit_exploration_floor: 0.7 } }, 'thresholds.bandit_exploration_floor'],
      [{ thresholds: { bandit_exploration_floor: -1, failover_threshold: 0.4 } }, 'thresholds.bandit_exploration_floor'],
    ] as const) {
      const r = await s.request('POST', '/v1/config/tiers', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.error.fields[0].field).toBe(field);
    }
    expect((await s.request('GET', '/v1/config/tiers')).json).toEqual(before);

    const r = await s.request('POST', '/v1/config/tiers', { thresholds: { bandit_exploration_floor: 0.05 } });
    expect(r.status).toBe(200);
    expect(r.json.threshold_overrides).toEqual({ bandit_exploration_floor: 0.05 });
    expect(r.json.thresholds.bandit_exploration_floor).toBe(0.05);
    await until('the new floor in force', async () => {
      const h = (await s.request('GET', '/v1/health/us_card')).json;
      return h.primary.bandit_weight === 0.05 && h;
    });
  });

  it('bandit_enabled false: decisions are no longer mab, the weights are gone', async () => {
    const r = await s.request('POST', '/v1/config/tiers', { bandit_enabled: false });
    expect(r.status).toBe(200);
    expect(r.json.tier).toBe(2);
    await until('the bandit to let go', async () => {
      const h = (await s.request('GET', '/v1/health/us_card')).json;
      return h.decision.decision_source !== 'mab' && h.primary.bandit_weight === null && h;
    });
    const rs = await routes(s, 50);
    expect(rs.some((x) => x.decision_source === 'mab')).toBe(false);
    expect((await s.request('GET', '/v1/stats')).json.bandit.rule_count).toBe(0);
    expect(banditLines((await s.request('GET', '/metrics/')).text)).toEqual([]);

    // And back on: it resumes from what it learned.
    await s.request('POST', '/v1/config/tiers', { bandit_enabled: true });
    const h = await until('the bandit to resume', async () => {
      const x = (await s.request('GET', '/v1/health/us_card')).json;
      return x.decision.decision_source === 'mab' && x;
    });
    expect(h.decision.processor_id).toBe('adyen');
  });
});
