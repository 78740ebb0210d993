/** GET /v1/tenants and /v1/tenants/{id}: visibility with admin, normal and legacy keys, and dev mode. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

afterAll(stopAllServers);

const KEYS = 'a1:acme:admin,b1:globex,legacy';
const A = { 'X-API-Key': 'a1' };
const B = { 'X-API-Key': 'b1' };
const L = { 'X-API-Key': 'legacy' };

const onboardBody = {
  processors: [
    { processor_id: 'stripe', name: 'Stripe', countries: ['US', 'CA'], currencies: ['USD'] },
    { processor_id: 'adyen', name: 'Adyen', countries: ['US'], currencies: ['USD'] },
  ],
};

describe('with API keys', () => {
  let s: TestServer;
  let dev: TestServer;
  beforeAll(async () => {
    [s, dev] = await Promise.all([startServer({ env: { SERVICE_API_KEYS: KEYS, SERVICE_TIER: '2' } }), startServer()]);
    expect((await s.request('POST', '/v1/onboard', onboardBody, B)).status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, B)).status).toBe(200);
    expect((await s.request('POST', '/v1/outcome', { rule_id: 'us_usd_card', processor_id: 'stripe', success: true, latency_ms: 80 }, B)).status).toBe(202);
  });

  it('an admin key lists every tenant, ordered by id', async () => {
    const r = await s.request('GET', '/v1/tenants', undefined, A);
    expect(r.status).toBe(200);
    expect(r.json.total).toBe(3);
    expect(r.json.tenants).toEqual([
      { tenant_id: 'acme', active: true, rules_count: 0, engine_running: true },
      { tenant_id: 'default', active: true, rules_count: 0, engine_running: true },
      { tenant_id: 'globex', active: true, rules_count: 2, engine_running: true },
    ]);
  });

  it('a normal key lists only its own tenant; a legacy key is tenant default', async () => {
    const b = await s.request('GET', '/v1/tenants', undefined, B);
    expect(b.json).toEqual({ tenants: [{ tenant_id: 'globex', active: true, rules_count: 2, engine_running: true }], total: 1 });
    const l = await s.request('GET', '/v1/tenants', undefined, L);
    expect(l.json).toEqual({ tenants: [{ tenant_id: 'default', active: true, rules_count: 0, engine_running: true }], total: 1 });
  });

  it('detail of the own tenant carries tier and counters', async () => {
    const r = await s.request('GET', '/v1/tenants/globex', undefined, B);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      tenant_id: 'globex',
      active: true,
      rules_count: 2,
      engine_running: true,
      tier: 2,
      shadow_mode: false,
      transactions_routed: 3,
      transactions_reported: 1,
      failover_events: 0,
    });
  });

  it('an admin reads any tenant\'s detail', async () => {
    const r = await s.request('GET', '/v1/tenants/globex', undefined, A);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ tenant_id: 'globex', transactions_routed: 3 });
    expect((await s.request('GET', '/v1/tenants/default', undefined, A)).json).toMatchObject({ tenant_id: 'default', transactions_routed: 0 });
  });

  it('another tenant is 404 for a non-admin, exactly like an unknown one (never 403)', async () => {
    const other = await s.request('GET', '/v1/tenants/acme', undefined, B);
    const unknown = await s.request('GET', '/v1/tenants/nope', undefined, B);
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(other.json.error.code).toBe('TENANT_NOT_FOUND');
    expect(other.json.error.message.replace('acme', 'X')).toBe(unknown.json.error.message.replace('nope', 'X'));
    expect((await s.request('GET', '/v1/tenants/globex', undefined, L)).status).toBe(404);
  });

  it('unknown tenant is 404 for an admin too; a malformed id is 422', async () => {
    const r = await s.request('GET', '/v1/tenants/nope', undefined, A);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('TENANT_NOT_FOUND');
    const bad = await s.request('GET', `/v1/tenants/${encodeURIComponent('a b')}`, undefined, A);
    expect(bad.status).toBe(422);
    expect(bad.json.error.fields[0].field).toBe('tenant_id');
  });

  it('needs a key', async () => {
    expect((await s.request('GET', '/v1/tenants')).status).toBe(401);
    expect((await s.request('GET', '/v1/tenants/acme', undefined, { 'X-API-Key': 'nope' })).status).toBe(401);
  });

  it('development mode (no keys): only `default` exists', async () => {
    const r = await dev.request('GET', '/v1/tenants');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ tenants: [{ tenant_id: 'default', active: true, rules_count: 0, engine_running: true }], total: 1 });
    const d = await dev.request('GET', '/v1/tenants/default');
    expect(d.status).toBe(200);
    expect(d.json).toMatchObject({ tenant_id: 'default', tier: 3, transactions_routed: 0 });
    expect((await dev.request('GET', '/v1/tenants/acme')).status).toBe(404);
  });

  it('a tenant whose key was removed but whose data is stored is listed to admins as inactive', async () => {
    await s.stop();
    const s2 = await startServer({ dataDir: s.dataDir, env: { SERVICE_API_KEYS: 'a1:acme:admin' } });
    const r = await s2.request('GET', '/v1/tenants', undefined, A);
    expect(r.json.tenants).toEqual([
      { tenant_id: 'acme', active: true, rules_count: 0, engine_running: true },
      { tenant_id: 'globex', active: false, rules_count: 2, engine_running: true },
    ]);
    const g = await s2.request('GET', '/v1/tenants/globex', undefined, A);
    expect(g.json).toMatchObject({ active: false, transactions_routed: 3, transactions_reported: 1 });
  });
});
