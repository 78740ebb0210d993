/** GET and PATCH /v1/rules/{rule_id} against the real server: shapes, errors, isolation, atomic swap, engine state kept. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const A = { 'X-API-Key': 'ka-patch' };
const B = { 'X-API-Key': 'kb-patch' };
let s: TestServer;

beforeAll(async () => {
  s = await startServer({ env: { SERVICE_API_KEYS: 'ka-patch:acme,kb-patch:globex', SERVICE_TIER: '1', SERVICE_RATE_LIMIT_RPS: '0' } });
});
afterAll(stopAllServers);

const create = async (rule_id: string, attributes: string[], extra: Record<string, unknown> = {}, h = A) => {
  const r = await s.request('POST', '/v1/rules', { rule_id, attributes, primary_id: 'stripe', secondary_id: 'adyen', ...extra }, h);
  expect(r.status).toBe(201);
  return r.json;
};

describe('GET /v1/rules/{rule_id}', () => {
  it('returns the rule in the output shape; 404 for an unknown id and for another tenant\'s rule; 422 for a malformed id', async () => {
    const made = await create('g_one', ['GB', 'GBP'], { primary_weight: 0.8 });
    const r = await s.request('GET', '/v1/rules/g_one', undefined, A);
    expect(r.status).toBe(200);
    expect(r.json).toEqual(made);
    expect((await s.request('GET', '/v1/rules/nope', undefined, A)).json.error.code).toBe('RULE_NOT_FOUND');
    const other = await s.request('GET', '/v1/rules/g_one', undefined, B);
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('RULE_NOT_FOUND');
    const bad = await s.request('GET', '/v1/rules/bad%20id', undefined, A);
    expect(bad.status).toBe(422);
    expect(bad.json.error.fields[0].field).toBe('rule_id');
  });
});

describe('PATCH /v1/rules/{rule_id}', () => {
  it('changes weight, names, processors and attributes; answers the rule with updated_at; routing follows', async () => {
    await create('p_shape', ['FR', 'EUR'], { primary_name: 'Stripe' });
    const w = await s.request('PATCH', '/v1/rules/p_shape', { primary_weight: 1 }, A);
    expect(w.status).toBe(200);
    expect(w.json).toMatchObject({ rule_id: 'p_shape', primary_weight: 1, secondary_weight: 0, primary: { processor_id: 'stripe', name: 'Stripe' } });
    expect(typeof w.json.updated_at).toBe('string');
    const route = await s.request('POST', '/v1/route', { country: 'FR', currency: 'EUR' }, A);
    expect(route.json).toMatchObject({ rule_id: 'p_shape', processor_id: 'stripe', weight: 1 });

    const p = await s.request('PATCH', '/v1/rules/p_shape', { primary_id: 'checkout', attributes: ['FR', 'EUR', 'wallet'] }, A);
    expect(p.status).toBe(200);
    expect(p.json.primary).toEqual({ processor_id: 'checkout', name: 'checkout' });
    expect(p.json.attributes).toEqual(['FR', 'EUR', 'wallet', '*', '*', '*']);
    expect((await s.request('POST', '/v1/route', { country: 'FR', currency: 'EUR' }, A)).status).toBe(404);
    const r2 = await s.request('POST', '/v1/route', { country: 'FR', currency: 'EUR', payment_method: 'wallet' }, A);
    expect(r2.json).toMatchObject({ rule_id: 'p_shape', processor_id: 'checkout' });
    expect((await s.request('GET', '/v1/rules/p_shape', undefined, A)).json).toEqual(p.json);
  });

  it('outcomes follow the rule in force: a PATCH that changes a processor, then a DELETE and a new rule under the id', async () => {
    await create('p_out', ['IE', 'EUR']);
    const outcome = (processor_id: string) => s.request('POST', '/v1/outcome', { rule_id: 'p_out', processor_id, success: true, latency_ms: 90 }, A);
    // Outcomes of both processors first: the rule's cache now knows their strings.
    expect((await outcome('stripe')).status).toBe(202);
    expect((await outcome('adyen')).status).toBe(202);
    expect((await s.request('PATCH', '/v1/rules/p_out', { primary_id: 'checkout' }, A)).status).toBe(200);
    const old = await outcome('stripe');
    expect(old.status).toBe(422);
    expect(old.json.error.fields[0].field).toBe('processor_id');
    expect((await outcome('checkout')).status).toBe(202);
    expect((await outcome('adyen')).status).toBe(202);
    expect((await s.request('DELETE', '/v1/rules/p_out', undefined, A)).status).toBe(200);
    const gone = await outcome('checkout');
    expect(gone.status).toBe(422);
    expect(gone.json.error.fields[0].field).toBe('rule_id');
    await create('p_out', ['IE', 'EUR'], { primary_id: 'worldpay', secondary_id: 'checkout' });
    expect((await outcome('worldpay')).status).toBe(202);
    expect((await outcome('adyen')).status).toBe(422);
    // Each accepted outcome counted once, on the rule in force at the time (the new rule's row starts at zero).
    const scrape = await s.request('GET', '/metrics/');
    const counted = (p: string) => scrape.text.match(new RegExp(`^service_processor_outcomes_total\\{rule_id="p_out",processor_id="${p}",tenant_id="acme",result="success"\\} (\\d+)$`, 'm'))?.[1];
    expect([counted('worldpay'), counted('checkout'), counted('stripe'), counted('adyen')]).toEqual(['1', undefined, undefined, undefined]);
  });

  it('422 naming the field for bad values, unknown fields (rule_id cannot change) and an empty body; 404 unknown or other tenant; 409 attribute conflict', async () => {
    await create('p_err', ['DE', 'EUR']);
    await create('p_err2', ['AT', 'EUR']);
    const weight = await s.request('PATCH', '/v1/rules/p_err', { primary_weight: 2 }, A);
    expect(weight.status).toBe(422);
    expect(weight.json.error.fields.map((f: { field: string }) => f.field)).toContain('primary_weight');
    const rename = await s.request('PATCH', '/v1/rules/p_err', { rule_id: 'x' }, A);
    expect(rename.status).toBe(422);
    const empty = await s.request('PATCH', '/v1/rules/p_err', {}, A);
    expect(empty.status).toBe(422);
    const attrs = await s.request('PATCH', '/v1/rules/p_err', { attributes: ['DE', 'EUR', 'card', '*', '*', '*', '*'] }, A);
    expect(attrs.status).toBe(422);
    expect(attrs.json.error.fields[0].field).toBe('attributes');
    const conflict = await s.request('PATCH', '/v1/rules/p_err', { attributes: ['at', 'eur'] }, A);
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.fields[0].field).toBe('attributes');
    expect((await s.request('PATCH', '/v1/rules/nope', { primary_weight: 0.5 }, A)).status).toBe(404);
    expect((await s.request('PATCH', '/v1/rules/p_err', { primary_weight: 0.5 }, B)).status).toBe(404);
    // Nothing changed by the refused requests.
    const now = await s.request('GET', '/v1/rules/p_err', undefined, A);
    expect(now.json.primary_weight).toBe(0.9);
    expect(now.json.updated_at).toBeUndefined();
  });

  it('routing never sees the rule missing while it is patched under concurrent routing', async () => {
    await create('p_race', ['NL', 'EUR']);
    let stop = false;
    const statuses = new Map<number, number>();
    const router = async () => {
      while (!stop) {
        const r = await s.request('POST', '/v1/route', { country: 'NL', currency: 'EUR' }, A);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    };
    const routers = [router(), router()];
    for (let i = 0; i < 30; i++) {
      const r = await s.request('PATCH', '/v1/rules/p_race', { primary_weight: i % 2 === 0 ? 0.6 : 0.7, secondary_id: i % 2 === 0 ? 'adyen' : 'worldpay' }, A);
      expect(r.status).toBe(200);
    }
    stop = true;
    await Promise.all(routers);
    expect([...statuses.keys()]).toEqual([200]);
    expect(statuses.get(200)).toBeGreaterThan(10);
  });

  it('keeps the engine state of a processor that stays; a new processor starts fresh; survives a restart', async () => {
    await create('p_state', ['ES', 'EUR']);
    for (let i = 0; i < 12; i++) {
      await s.request('POST', '/v1/outcome', { rule_id: 'p_state', processor_id: 'stripe', success: false, latency_ms: 50, error_code: 'processor_unavailable' }, A);
    }
    for (let i = 0; i < 5; i++) {
      await s.request('POST', '/v1/outcome', { rule_id: 'p_state', processor_id: 'adyen', success: true, latency_ms: 50 }, A);
    }
    // The run of 10 triggers an early evaluation that may publish before the last 2 outcomes
    // arrive: wait for the evaluation that has seen all 12.
    await until('failover with all 12 outcomes published', async () => {
      const primary = (await s.request('GET', '/v1/health/p_state', undefined, A)).json.primary;
      return primary.status === 'failed_over' && primary.sample_count === 12;
    });
    const p = await s.request('PATCH', '/v1/rules/p_state', { primary_weight: 0.7, secondary_id: 'worldpay', secondary_name: 'Worldpay' }, A);
    expect(p.status).toBe(200);
    const h = await s.request('GET', '/v1/health/p_state', undefined, A);
    expect(h.json.primary).toMatchObject({ processor_id: 'stripe', status: 'failed_over', sample_count: 12 });
    expect(h.json.secondary).toMatchObject({ processor_id: 'worldpay', name: 'Worldpay', status: 'healthy', sample_count: 0 });
    expect(h.json.decision.processor_id).toBe('worldpay');
    // Outcomes keep flowing into the kept window.
    const o = await s.request('POST', '/v1/outcome', { rule_id: 'p_state', processor_id: 'worldpay', success: true, latency_ms: 40 }, A);
    expect(o.status).toBe(202);
    const old = await s.request('POST', '/v1/outcome', { rule_id: 'p_state', processor_id: 'adyen', success: true, latency_ms: 40 }, A);
    expect(old.status).toBe(422);

    await s.stop();
    s = await startServer({ dataDir: s.dataDir, env: { SERVICE_API_KEYS: 'ka-patch:acme,kb-patch:globex', SERVICE_TIER: '1', SERVICE_RATE_LIMIT_RPS: '0' } });
    const after = await s.request('GET', '/v1/rules/p_state', undefined, A);
    expect(after.json).toEqual(p.json);
    const h2 = await s.request('GET', '/v1/health/p_state', undefined, A);
    expect(h2.json.primary.status).toBe('failed_over');
    expect(h2.json.secondary).toMatchObject({ processor_id: 'worldpay', status: 'healthy' });
  });
});
