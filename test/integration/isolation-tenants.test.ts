/**
 * Tenant isolation through the real server: tenant A (acme) gets rules, onboarding rules, a
 * webhook with a secret and a real delivery, a failover in its audit trail, configuration
 * changes and shadow-mode data. Then tenant B (globex) tries every /v1/ endpoint with A's ids
 * and must get 404 (or its own empty/default data), never A's; C (initech) sees nothing
 * either; A's data is intact afterwards. /metrics/ carries no API key or webhook secret.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestResponse, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const KA = 'ka-7d41c0f9e2b8';
const KB = 'kb-3a9e66d1045c';
const KC = 'kc-b2f07e1c9d33';
const SECRET_A = 'acme-webhook-secret-9f31c2';
const A = { 'x-api-key': KA };
const B = { 'x-api-key': KB };
const C = { 'x-api-key': KC };

let s: TestServer;
let receiver: Server;
const received: string[] = [];
let hookA = '';
let deliveryA = '';
let eventA = '';


const rule = (id: string, country: string) => ({ rule_id: id, attributes: [country, 'USD', 'card'], primary_id: 'stripe', primary_name: 'Stripe', secondary_id: 'adyen', secondary_name: 'Adyen' });
const onboarding = {
  processors: [
    { processor_id: 'acme_psp1', name: 'Acme PSP 1', countries: ['FR'], currencies: ['EUR'], priority: 1 },
    { processor_id: 'acme_psp2', name: 'Acme PSP 2', countries: ['FR', 'BE'], currencies: ['EUR'], priority: 2 },
  ],
};

/** A's state as A sees it: compared before and after B's and C's attempts. */
async function stateOfA(): Promise<unknown> {
  const get = async (p: string) => (await s.request('GET', p, undefined, A)).json;
  const hook = await get(`/v1/webhooks/${hookA}`);
  const deliveries = await get(`/v1/webhooks/${hookA}/deliveries`);
  const stats = await get('/v1/stats');
  const shadow = await get('/v1/shadow-report');
  return {
    rules: await get('/v1/rules'),
    hooks: await get('/v1/webhooks'),
    hook,
    deliveries: deliveries.deliveries.map((d: { id: string; status: string }) => [d.id, d.status]),
    events: await get('/v1/failover-events'),
    config: await get('/v1/config/tiers'),
    counters: [stats.transactions_routed, stats.transactions_reported, stats.failover_events],
    shadow: [shadow.total_transactions, shadow.total_outcomes, Object.keys(shadow.rules)],
    tenant: await get('/v1/tenants/acme'),
  };
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as { port: number }).port;
  s = await startServer({
    env: {
      SERVICE_API_KEYS: `${KA}:acme,${KB}:globex,${KC}:initech`,
      SERVICE_RATE_LIMIT_RPS: '0',
      SERVICE_WEBHOOK_ALLOW_PRIVATE: '1',
      SERVICE_EVAL_INTERVAL_MS: '1000',
    },
  });
  // Tenant A: rules, onboarding, shadow mode, traffic, a webhook, a failover (→ delivery), config.
  for (const r of [rule('a_rule1', 'US'), rule('a_rule2', 'CA')]) expect((await s.request('POST', '/v1/rules', r, A)).status).toBe(201);
  expect((await s.request('POST', '/v1/onboard', onboarding, A)).status).toBe(201);
  expect((await s.request('POST', '/v1/config/tiers', { shadow_mode: true }, A)).status).toBe(200);
  const hook = await s.request('POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/acme`, secret: SECRET_A }, A);
  expect(hook.status).toBe(201);
  hookA = hook.json.id;
  for (let i = 0; i < 5; i++) expect((await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, A)).status).toBe(200);
  for (let i = 0; i < 12; i++) {
    const r = await s.request('POST', '/v1/outcome', { rule_id: 'a_rule1', processor_id: 'stripe', success: false, latency_ms: 40, error_code: 'timeout' }, A);
    expect(r.status).toBe(202);
  }
  const events = await until('a failover event in A', async () => {
    const r = await s.request('GET', '/v1/failover-events', undefined, A);
    return r.json.length > 0 && r.json;
  });
  eventA = events[0].event_id;
  const delivered = await until('a delivery of A', async () => {
    const r = await s.request('GET', `/v1/webhooks/${hookA}/deliveries?status=delivered`, undefined, A);
    return r.json.deliveries.length > 0 && r.json.deliveries;
  });
  deliveryA = delivered[0].id;
  const cfg = await s.request('POST', '/v1/config/tiers', { thresholds: { run_length: 12 }, error_codes: { decline: ['acme_decline'] } }, A);
  expect(cfg.status).toBe(200);
});

afterAll(async () => {
  await stopAllServers();
  await new Promise((r) => receiver?.close(r));
});

describe('tenant B with tenant A ids', () => {
  let before: unknown;
  const seenByOthers: TestResponse[] = [];
  const as = async (h: Record<string, string>, method: string, path: string, body?: unknown) => {
    const r = await s.request(method, path, body, h);
    seenByOthers.push(r);
    return r;
  };

  beforeAll(async () => {
    before = await stateOfA();
  });

  it('A has what the test needs', () => {
    const a = before as { rules: { rule_id: string }[]; events: unknown[]; shadow: [number, number, string[]] };
    expect(a.rules.map((r) => r.rule_id)).toEqual(expect.arrayContaining(['a_rule1', 'a_rule2', 'fr_eur_card', 'be_eur_card']));
    expect(a.events.length).toBeGreaterThan(0);
    expect(a.shadow[2]).toContain('a_rule1');
    expect(received.some((b) => b.includes('a_rule1'))).toBe(true);
  });

  it('rules: B cannot see, delete, route on or report outcomes for A rules', async () => {
    for (const id of ['a_rule1', 'a_rule2', 'fr_eur_card']) {
      const del = await as(B, 'DELETE', `/v1/rules/${id}`);
      expect(del.status).toBe(404);
      expect(del.json.error.code).toBe('RULE_NOT_FOUND');
      const h = await as(B, 'GET', `/v1/health/${id}`);
      expect(h.status).toBe(404);
    }
    const out = await as(B, 'POST', '/v1/outcome', { rule_id: 'a_rule1', processor_id: 'stripe', success: false, latency_ms: 5, error_code: 'timeout' });
    expect(out.status).toBe(422); // an unknown rule_id in B's tenant
    expect(out.json.error.fields[0].field).toBe('rule_id');
    const route = await as(B, 'POST', '/v1/route', { country: 'US', currency: 'USD' });
    expect(route.status).toBe(404);
    expect(route.json.error.code).toBe('ROUTING_NO_MATCH');
    expect((await as(B, 'GET', '/v1/rules')).json).toEqual([]);
    expect((await as(B, 'GET', '/v1/health')).json.rules).toEqual({});
  });

  it('webhooks and deliveries: 404 for every A id', async () => {
    const paths: [string, string, unknown?][] = [
      ['GET', `/v1/webhooks/${hookA}`],
      ['PATCH', `/v1/webhooks/${hookA}`, { active: false, url: 'http://127.0.0.1:1/stolen' }],
      ['DELETE', `/v1/webhooks/${hookA}`],
      ['GET', `/v1/webhooks/${hookA}/deliveries`],
      ['GET', `/v1/webhooks/${hookA}/deliveries/${deliveryA}`],
      ['POST', `/v1/webhooks/${hookA}/deliveries/${deliveryA}/redeliver`],
    ];
    for (const [method, path, body] of paths) {
      const r = await as(B, method, path, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.json.error.code).toBe('WEBHOOK_NOT_FOUND');
    }
    expect((await as(B, 'GET', '/v1/webhooks')).json).toEqual({ webhooks: [], total: 0 });
  });

  it('tenants: A is invisible (404, like an unknown tenant); the list holds B only', async () => {
    const r = await as(B, 'GET', '/v1/tenants/acme');
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('TENANT_NOT_FOUND');
    const unknown = await as(B, 'GET', '/v1/tenants/no-such-tenant');
    expect(unknown.status).toBe(404);
    expect(r.json.error.message.replace('acme', 'X')).toBe(unknown.json.error.message.replace('no-such-tenant', 'X'));
    const list = await as(B, 'GET', '/v1/tenants');
    expect(list.json).toEqual({ tenants: [expect.objectContaining({ tenant_id: 'globex', rules_count: 0 })], total: 1 });
  });

  it("audit trail, stats, shadow report and configuration are B's own (empty/default)", async () => {
    expect((await as(B, 'GET', '/v1/failover-events')).json).toEqual([]);
    // A's event id as a cursor reads B's trail only.
    expect((await as(B, 'GET', `/v1/failover-events?before=${eventA}`)).json).toEqual([]);
    const st = (await as(B, 'GET', '/v1/stats')).json;
    expect(st).toMatchObject({ transactions_routed: 0, transactions_reported: 0, failover_events: 0, shadow_mode: false, trie: { total_rules: 0 } });
    const sh = (await as(B, 'GET', '/v1/shadow-report')).json;
    expect(sh).toMatchObject({ shadow_mode_active: false, total_transactions: 0, total_outcomes: 0, rules: {} });
    const cfg = (await as(B, 'GET', '/v1/config/tiers')).json;
    expect(cfg).toMatchObject({ shadow_mode: false, threshold_overrides: {}, error_codes: { decline: [], technical: [] } });
    // B's writes stay in B.
    expect((await as(B, 'DELETE', '/v1/shadow-report')).status).toBe(200);
    expect((await as(B, 'POST', '/v1/config/tiers', { shadow_mode: false, thresholds: { run_length: 20 } })).status).toBe(200);
    const onb = await as(B, 'POST', '/v1/onboard', onboarding); // the same generated ids, in B's namespace
    expect(onb.status).toBe(201);
    expect(onb.json.rules.map((r: { rule_id: string }) => r.rule_id)).toEqual(['be_eur_card', 'fr_eur_card']);
  });

  it('tenant C sees none of it either', async () => {
    expect((await as(C, 'GET', '/v1/rules')).json).toEqual([]);
    expect((await as(C, 'GET', `/v1/health/a_rule1`)).status).toBe(404);
    expect((await as(C, 'GET', `/v1/webhooks/${hookA}`)).status).toBe(404);
    expect((await as(C, 'GET', `/v1/webhooks/${hookA}/deliveries/${deliveryA}`)).status).toBe(404);
    expect((await as(C, 'GET', '/v1/tenants/acme')).status).toBe(404);
    expect((await as(C, 'GET', '/v1/tenants/globex')).status).toBe(404);
    expect((await as(C, 'GET', '/v1/failover-events')).json).toEqual([]);
    expect((await as(C, 'GET', '/v1/stats')).json.failover_events).toBe(0);
  });

  it('no answer to B or C carried any A id or secret, and A is intact', async () => {
    const text = seenByOthers.map((r) => r.text).join('\n');
    // Never: A's secret, key, configuration, webhook URL, event ids.
    for (const needle of [SECRET_A, KA, 'acme_decline', '127.0.0.1', eventA, '"acme"']) expect(text).not.toContain(needle);
    // A's ids appear only in errors about the id B itself asked for (404/422 messages echo it).
    for (const r of seenByOthers) {
      if ([hookA, deliveryA, 'a_rule1', 'a_rule2'].some((id) => r.text.includes(id))) expect(r.status).toBeGreaterThanOrEqual(400);
    }
    const after = await stateOfA();
    expect(after).toEqual(before);
  });
});

describe('metrics', () => {
  it('/metrics/ carries no API key and no webhook secret', async () => {
    const m = await s.request('GET', '/metrics/');
    expect(m.status).toBe(200);
    expect(m.text).toContain('service_requests_total');
    for (const secret of [KA, KB, KC, SECRET_A]) expect(m.text).not.toContain(secret);
    for (const part of [KA, KB, KC, SECRET_A].map((k) => k.slice(3))) expect(m.text).not.toContain(part);
    // Per-rule series of tenants other than `default` are labelled with their tenant.
    expect(m.text).toMatch(/tenant_id="acme"/);
  });
});
