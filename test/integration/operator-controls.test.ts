/**
 * Operator controls against the real server: rule overrides (pin / drain) with expiry,
 * tenant-wide processor drains, manual failover and recovery (events, webhooks, counters),
 * precedence over the tiers, persistence across a restart, errors and tenant isolation.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const A = { 'X-API-Key': 'ka-ops' };
const B = { 'X-API-Key': 'kb-ops' };
const ENV = { SERVICE_API_KEYS: 'ka-ops:acme,kb-ops:globex', SERVICE_TIER: '3', SERVICE_RATE_LIMIT_RPS: '0', SERVICE_WEBHOOK_ALLOW_PRIVATE: '1' };
let s: TestServer;
let hooks: Server;
const received: { event_type: string; data: Record<string, unknown> }[] = [];

beforeAll(async () => {
  hooks = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
  s = await startServer({ env: ENV });
  const port = (hooks.address() as { port: number }).port;
  const hook = await s.request('POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/hook`, event_types: ['failover.triggered', 'failover.recovered'], secret: 'ops-secret-1' }, A);
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  await stopAllServers();
  hooks.close();
});

const create = async (rule_id: string, attributes: string[], extra: Record<string, unknown> = {}) => {
  const r = await s.request('POST', '/v1/rules', { rule_id, attributes, primary_id: 'stripe', secondary_id: 'adyen', ...extra }, A);
  expect(r.status).toBe(201);
};
/** Processors chosen by `n` routes of the transaction. */
const routeMany = async (tx: Record<string, unknown>, n = 40) => {
  const seen = new Map<string, number>();
  let last: any;
  for (let i = 0; i < n; i++) {
    const r = await s.request('POST', '/v1/route', tx, A);
    expect(r.status).toBe(200);
    last = r.json;
    seen.set(r.json.processor_id, (seen.get(r.json.processor_id) ?? 0) + 1);
  }
  return { seen, last };
};

describe('rule overrides', () => {
  it('pin sends all traffic to the processor, reported as `rules` with weight 1, shown in health and the list; DELETE ends it', async () => {
    await create('o_pin', ['GB', 'GBP'], { primary_weight: 0.5 });
    const r = await s.request('POST', '/v1/rules/o_pin/override', { mode: 'pin', processor_id: 'adyen', expires_in_s: 600, reason: 'stripe incident' }, A);
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ scope: 'rule', rule_id: 'o_pin', mode: 'pin', processor_id: 'adyen', reason: 'stripe incident' });
    expect(Date.parse(r.json.expires_at) - Date.parse(r.json.created_at)).toBe(600_000);
    const { seen, last } = await routeMany({ country: 'GB', currency: 'GBP' });
    expect([...seen.keys()]).toEqual(['adyen']);
    expect(last).toMatchObject({ decision_source: 'rules', weight: 1, fallback_processor_id: 'stripe' });
    const h = await s.request('GET', '/v1/health/o_pin', undefined, A);
    expect(h.json.decision).toMatchObject({ processor_id: 'adyen', weight: 1, decision_source: 'rules', override: { mode: 'pin', processor_id: 'adyen' } });
    expect((await s.request('GET', '/v1/overrides', undefined, A)).json).toContainEqual(r.json);
    expect((await s.request('GET', '/v1/overrides', undefined, B)).json).toEqual([]);

    const del = await s.request('DELETE', '/v1/rules/o_pin/override', undefined, A);
    expect(del.status).toBe(200);
    expect(del.json.deleted).toEqual(r.json);
    const after = await routeMany({ country: 'GB', currency: 'GBP' });
    expect(after.seen.size).toBe(2);
    expect((await s.request('GET', '/v1/health/o_pin', undefined, A)).json.decision.override).toBeUndefined();
    expect((await s.request('DELETE', '/v1/rules/o_pin/override', undefined, A)).json.error.code).toBe('OVERRIDE_NOT_FOUND');
  });

  it('drain sends nothing to the processor', async () => {
    await create('o_drain', ['IE', 'EUR'], { primary_weight: 1 });
    expect((await s.request('POST', '/v1/rules/o_drain/override', { mode: 'drain', processor_id: 'stripe', expires_in_s: 600 }, A)).status).toBe(201);
    const { seen } = await routeMany({ country: 'IE', currency: 'EUR' });
    expect([...seen.keys()]).toEqual(['adyen']);
  });

  it('expires by itself', async () => {
    await create('o_exp', ['PT', 'EUR'], { primary_weight: 1 });
    expect((await s.request('POST', '/v1/rules/o_exp/override', { mode: 'pin', processor_id: 'adyen', expires_in_s: 1 }, A)).status).toBe(201);
    expect((await s.request('POST', '/v1/route', { country: 'PT', currency: 'EUR' }, A)).json.processor_id).toBe('adyen');
    await until('override expiry', async () => (await s.request('GET', '/v1/health/o_exp', undefined, A)).json.decision.override === undefined, 5000);
    expect((await s.request('POST', '/v1/route', { country: 'PT', currency: 'EUR' }, A)).json.processor_id).toBe('stripe');
    expect((await s.request('GET', '/v1/overrides', undefined, A)).json.some((o: { rule_id?: string }) => o.rule_id === 'o_exp')).toBe(false);
  });

  it('422 naming the field, 404 for unknown or other tenant\'s rules', async () => {
    await create('o_err', ['BE', 'EUR']);
    const notIn = await s.request('POST', '/v1/rules/o_err/override', { mode: 'pin', processor_id: 'worldpay' }, A);
    expect(notIn.status).toBe(422);
    expect(notIn.json.error.fields[0].field).toBe('processor_id');
    const mode = await s.request('POST', '/v1/rules/o_err/override', { mode: 'halt', processor_id: 'stripe' }, A);
    expect(mode.status).toBe(422);
    expect(mode.json.error.fields[0].field).toBe('mode');
    const ttl = await s.request('POST', '/v1/rules/o_err/override', { mode: 'pin', processor_id: 'stripe', expires_in_s: 0 }, A);
    expect(ttl.json.error.fields[0].field).toBe('expires_in_s');
    expect((await s.request('POST', '/v1/rules/o_err/override', { mode: 'pin', processor_id: 'stripe' }, B)).status).toBe(404);
    expect((await s.request('POST', '/v1/rules/nope/override', { mode: 'pin', processor_id: 'stripe' }, A)).status).toBe(404);
    expect((await s.request('DELETE', '/v1/rules/o_err/override', undefined, B)).status).toBe(404);
    await create('o_self', ['LU', 'EUR'], { secondary_id: 'stripe' });
    const self = await s.request('POST', '/v1/rules/o_self/override', { mode: 'drain', processor_id: 'stripe' }, A);
    expect(self.status).toBe(422);
    expect(self.json.error.fields[0].field).toBe('mode');
  });
});

describe('processor drain', () => {
  it('drains the processor from every rule of the tenant that has it; a rule override wins; DELETE ends it; other tenants unaffected', async () => {
    await create('d_one', ['PL', 'PLN']);
    await create('d_two', ['CZ', 'CZK'], { primary_id: 'checkout', secondary_id: 'stripe', primary_weight: 0.5 });
    await create('d_pin', ['HU', 'HUF']);
    expect((await s.request('POST', '/v1/rules/d_pin/override', { mode: 'pin', processor_id: 'stripe' }, A)).status).toBe(201);
    const other = await s.request('POST', '/v1/rules', { rule_id: 'd_one', attributes: ['PL', 'PLN'], primary_id: 'stripe', secondary_id: 'adyen', primary_weight: 1 }, B);
    expect(other.status).toBe(201);

    const d = await s.request('POST', '/v1/processors/stripe/drain', { expires_in_s: 600, reason: 'maintenance' }, A);
    expect(d.status).toBe(201);
    expect(d.json.override).toMatchObject({ scope: 'processor', mode: 'drain', processor_id: 'stripe', reason: 'maintenance' });
    expect(d.json.rules).toEqual(expect.arrayContaining(['d_one', 'd_two', 'd_pin']));
    expect([...(await routeMany({ country: 'PL', currency: 'PLN' })).seen.keys()]).toEqual(['adyen']);
    expect([...(await routeMany({ country: 'CZ', currency: 'CZK' })).seen.keys()]).toEqual(['checkout']);
    expect([...(await routeMany({ country: 'HU', currency: 'HUF' }, 10)).seen.keys()]).toEqual(['stripe']);
    expect((await s.request('GET', '/v1/health/d_two', undefined, A)).json.decision.override).toMatchObject({ scope: 'processor', processor_id: 'stripe' });
    expect((await s.request('POST', '/v1/route', { country: 'PL', currency: 'PLN' }, B)).json.processor_id).toBe('stripe');

    expect((await s.request('POST', '/v1/processors/nobody/drain', {}, A)).json.error.code).toBe('PROCESSOR_NOT_FOUND');
    expect((await s.request('DELETE', '/v1/processors/stripe/drain', undefined, B)).status).toBe(404);
    expect((await s.request('DELETE', '/v1/processors/stripe/drain', undefined, A)).status).toBe(200);
    expect((await routeMany({ country: 'CZ', currency: 'CZK' })).seen.size).toBe(2);
  });
});

describe('manual failover and recovery', () => {
  it('failover moves traffic now with a failover event (reason "manual"), webhook and counter; an override still wins; recover hands the configured weight back', async () => {
    await create('m_rule', ['SE', 'SEK'], { primary_weight: 1 });
    const before = (await s.request('GET', '/v1/stats', undefined, A)).json.failover_events;
    const f = await s.request('POST', '/v1/rules/m_rule/failover', undefined, A);
    expect(f.status).toBe(200);
    expect(f.json.primary.status).toBe('failed_over');
    expect(f.json.decision).toMatchObject({ processor_id: 'adyen', decision_source: 'rules' });
    expect((await s.request('POST', '/v1/route', { country: 'SE', currency: 'SEK' }, A)).json.processor_id).toBe('adyen');
    const events = (await s.request('GET', '/v1/failover-events', undefined, A)).json;
    expect(events[0]).toMatchObject({ rule_id: 'm_rule', from_processor: 'stripe', to_processor: 'adyen', reason: 'manual' });
    expect((await s.request('GET', '/v1/stats', undefined, A)).json.failover_events).toBe(before + 1);
    await until('failover webhook', () => received.find((e) => e.event_type === 'failover.triggered' && e.data.rule_id === 'm_rule'));
    expect(received.find((e) => e.event_type === 'failover.triggered')!.data.reason).toBe('manual');
    expect((await s.request('POST', '/v1/rules/m_rule/failover', undefined, A)).json.error.code).toBe('ENGINE_STATE_CONFLICT');

    // An operator pin beats Tier 1's failover.
    expect((await s.request('POST', '/v1/rules/m_rule/override', { mode: 'pin', processor_id: 'stripe' }, A)).status).toBe(201);
    expect([...(await routeMany({ country: 'SE', currency: 'SEK' }, 10)).seen.keys()]).toEqual(['stripe']);
    expect((await s.request('DELETE', '/v1/rules/m_rule/override', undefined, A)).status).toBe(200);

    const r = await s.request('POST', '/v1/rules/m_rule/recover', undefined, A);
    expect(r.status).toBe(200);
    expect(r.json.primary.status).toBe('healthy');
    expect(r.json.decision.processor_id).toBe('stripe'); // the configured weight (1) at once, as at the end of a slow start
    await until('recovery webhook', () => received.find((e) => e.event_type === 'failover.recovered' && e.data.rule_id === 'm_rule'));
    expect((await s.request('POST', '/v1/rules/m_rule/recover', undefined, A)).json.error.code).toBe('ENGINE_STATE_CONFLICT');
    expect((await s.request('POST', '/v1/rules/m_rule/failover', undefined, B)).status).toBe(404);
    await create('m_self', ['NO', 'NOK'], { secondary_id: 'stripe' });
    expect((await s.request('POST', '/v1/rules/m_self/failover', undefined, A)).status).toBe(409);
  });
});

describe('persistence', () => {
  it('overrides survive a restart; a rule deletion removes its override', async () => {
    await create('r_keep', ['DK', 'DKK'], { primary_weight: 1 });
    await create('r_gone', ['FI', 'EUR'], { primary_weight: 1 });
    expect((await s.request('POST', '/v1/rules/r_keep/override', { mode: 'pin', processor_id: 'adyen', expires_in_s: 3600 }, A)).status).toBe(201);
    expect((await s.request('POST', '/v1/rules/r_gone/override', { mode: 'pin', processor_id: 'adyen' }, A)).status).toBe(201);
    expect((await s.request('DELETE', '/v1/rules/r_gone', undefined, A)).status).toBe(200);
    expect((await s.request('POST', '/v1/rules', { rule_id: 'r_gone', attributes: ['FI', 'EUR'], primary_id: 'stripe', secondary_id: 'adyen', primary_weight: 1 }, A)).status).toBe(201);
    await s.stop();
    s = await startServer({ dataDir: s.dataDir, env: ENV });
    expect((await s.request('POST', '/v1/route', { country: 'DK', currency: 'DKK' }, A)).json.processor_id).toBe('adyen');
    expect((await s.request('GET', '/v1/health/r_keep', undefined, A)).json.decision.override).toMatchObject({ mode: 'pin', processor_id: 'adyen' });
    expect((await s.request('POST', '/v1/route', { country: 'FI', currency: 'EUR' }, A)).json.processor_id).toBe('stripe');
  });
});
