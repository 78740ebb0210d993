/** transaction_id on route and outcome, GET /v1/decisions/{transaction_id}, duplicates, isolation, restart. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const A = { 'X-API-Key': 'ka-dec' };
const B = { 'X-API-Key': 'kb-dec' };
const ENV = { SERVICE_API_KEYS: 'ka-dec:acme,kb-dec:globex', SERVICE_TIER: '1', SERVICE_RATE_LIMIT_RPS: '0', SERVICE_EVAL_INTERVAL_MS: '200' };
let s: TestServer;

beforeAll(async () => {
  s = await startServer({ env: ENV });
  const r = await s.request('POST', '/v1/rules', { rule_id: 'dec_rule', attributes: ['US', 'USD'], primary_id: 'stripe', secondary_id: 'adyen', primary_weight: 1 }, A);
  expect(r.status).toBe(201);
});
afterAll(stopAllServers);

describe('decision lookup', () => {
  it('returns the decision with the processor statuses at that moment, then the outcome once reported', async () => {
    const route = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', transaction_id: 'pay_001' }, A);
    expect(route.status).toBe(200);
    const d = await s.request('GET', '/v1/decisions/pay_001', undefined, A);
    expect(d.status).toBe(200);
    expect(d.json).toEqual({
      transaction_id: 'pay_001',
      decision: {
        rule_id: 'dec_rule',
        processor_id: 'stripe',
        fallback_processor_id: 'adyen',
        weight: 1,
        decision_source: 'rules',
        failure_probability: null,
        processors: [
          { processor_id: 'stripe', status: 'healthy' },
          { processor_id: 'adyen', status: 'healthy' },
        ],
        decided_at: expect.any(String),
      },
      outcome: null,
    });
    const o = await s.request('POST', '/v1/outcome', { rule_id: 'dec_rule', processor_id: 'stripe', success: false, latency_ms: 80, error_code: 'insufficient_funds', transaction_id: 'pay_001' }, A);
    expect(o.status).toBe(202);
    expect(o.json.duplicate).toBeUndefined();
    const d2 = await s.request('GET', '/v1/decisions/pay_001', undefined, A);
    expect(d2.json.outcome).toEqual({
      rule_id: 'dec_rule',
      processor_id: 'stripe',
      success: false,
      latency_ms: 80,
      error_code: 'insufficient_funds',
      classification: 'decline',
      reported_at: expect.any(String),
    });
  });

  it('records the statuses of the moment: after a manual failover the decision shows the primary failed_over', async () => {
    expect((await s.request('POST', '/v1/rules', { rule_id: 'dec_fo', attributes: ['CA', 'CAD'], primary_id: 'stripe', secondary_id: 'adyen' }, A)).status).toBe(201);
    expect((await s.request('POST', '/v1/rules/dec_fo/failover', undefined, A)).status).toBe(200);
    expect((await s.request('POST', '/v1/route', { country: 'CA', currency: 'CAD', transaction_id: 'pay_fo' }, A)).json.processor_id).toBe('adyen');
    const d = await s.request('GET', '/v1/decisions/pay_fo', undefined, A);
    expect(d.json.decision.processors).toEqual([
      { processor_id: 'stripe', status: 'failed_over' },
      { processor_id: 'adyen', status: 'healthy' },
    ]);
  });

  it('an outcome reported twice with the same transaction_id counts once', async () => {
    const before = (await s.request('GET', '/v1/stats', undefined, A)).json.transactions_reported;
    const samples = (await s.request('GET', '/v1/health/dec_rule', undefined, A)).json.primary.sample_count;
    const body = { rule_id: 'dec_rule', processor_id: 'stripe', success: true, latency_ms: 50, transaction_id: 'pay_dup' };
    const first = await s.request('POST', '/v1/outcome', body, A);
    const second = await s.request('POST', '/v1/outcome', { ...body, success: false }, A);
    expect(first.json).toEqual({ status: 'accepted', classification: 'success' });
    expect(second.status).toBe(202);
    expect(second.json.duplicate).toBe(true);
    expect((await s.request('GET', '/v1/stats', undefined, A)).json.transactions_reported).toBe(before + 1);
    expect((await s.request('GET', '/v1/decisions/pay_dup', undefined, A)).json).toMatchObject({ decision: null, outcome: { success: true } });
    // The same id in another tenant is another transaction.
    await s.request('POST', '/v1/rules', { rule_id: 'dec_rule', attributes: ['US', 'USD'], primary_id: 'stripe', secondary_id: 'adyen' }, B);
    expect((await s.request('POST', '/v1/outcome', body, B)).json.duplicate).toBeUndefined();
    // Health counted it once: the window grows by one, and stays there over later evaluations.
    const health = async () => (await s.request('GET', '/v1/health/dec_rule', undefined, A)).json.primary.sample_count as number;
    await until('the outcome in health', async () => (await health()) > samples);
    await new Promise((r) => setTimeout(r, 500)); // two more evaluation cycles (200 ms)
    expect(await health()).toBe(samples + 1);
  });

  it('404 for unknown and other tenants\' transactions; 422 naming transaction_id when malformed', async () => {
    expect((await s.request('GET', '/v1/decisions/nope', undefined, A)).json.error.code).toBe('DECISION_NOT_FOUND');
    expect((await s.request('GET', '/v1/decisions/pay_001', undefined, B)).status).toBe(404);
    const long = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', transaction_id: 'x'.repeat(129) }, A);
    expect(long.status).toBe(422);
    expect(long.json.error.fields[0].field).toBe('transaction_id');
    const bad = await s.request('POST', '/v1/outcome', { rule_id: 'dec_rule', processor_id: 'stripe', success: true, latency_ms: 1, transaction_id: 'has space' }, A);
    expect(bad.status).toBe(422);
    expect(bad.json.error.fields[0].field).toBe('transaction_id');
    expect((await s.request('GET', '/v1/decisions/has%20space', undefined, A)).json.error.fields[0].field).toBe('transaction_id');
  });

  it('decisions survive a restart', async () => {
    expect((await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', transaction_id: 'pay_keep' }, A)).status).toBe(200);
    await s.stop();
    s = await startServer({ dataDir: s.dataDir, env: ENV });
    expect((await s.request('GET', '/v1/decisions/pay_keep', undefined, A)).json.decision.processor_id).toBe('stripe');
    expect((await s.request('GET', '/v1/decisions/pay_001', undefined, A)).json.outcome.classification).toBe('decline');
  });
});
