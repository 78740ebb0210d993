/**
 * Authentication and tenant isolation (spec section 5) and CORS (SERVICE_CORS_ORIGINS)
 * against the real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

afterAll(stopAllServers);

const ORIGIN = 'https://shop.example';
const K = {
  acme1: { 'X-API-Key': 'k1' },
  acme2: { 'X-API-Key': 'k2' },
  globex: { 'X-API-Key': 'k3' },
  legacy: { 'X-API-Key': 'legacy' },
};
const rule = (rule_id: string, attributes: string[]) => ({ rule_id, attributes, primary_id: 'p1', secondary_id: 'p2' });
const ids = (list: { rule_id: string }[]) => list.map((r) => r.rule_id);

describe('development mode (no SERVICE_API_KEYS)', () => {
  let dev: TestServer;
  beforeAll(async () => {
    dev = await startServer();
  });

  it('serves /v1/ without a key, and ignores a key that is sent', async () => {
    expect((await dev.request('GET', '/v1/rules')).status).toBe(200);
    expect((await dev.request('POST', '/v1/rules', rule('dev_rule', ['US', 'USD'])))).toMatchObject({ status: 201 });
    const withKey = await dev.request('GET', '/v1/rules', undefined, { 'X-API-Key': 'anything' });
    expect(withKey.status).toBe(200);
    expect(ids(withKey.json)).toContain('dev_rule');
  });

  it('without SERVICE_CORS_ORIGINS, no CORS headers are sent to any origin', async () => {
    const pre = await dev.request('OPTIONS', '/v1/rules', undefined, { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST' });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(pre.headers.get('access-control-allow-methods')).toBeNull();
    const get = await dev.request('GET', '/v1/rules', undefined, { Origin: 'https://shop.example' });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('acts as tenant `default`: after a restart with keys, the legacy key (tenant default) sees the rules', async () => {
    expect(await dev.stop()).toBe(0);
    const keyed = await startServer({ dataDir: dev.dataDir, env: { SERVICE_API_KEYS: 'k1:acme,legacy' } });
    const legacy = await keyed.request('GET', '/v1/rules', undefined, K.legacy);
    expect(legacy.status).toBe(200);
    expect(ids(legacy.json)).toContain('dev_rule');
    const acme = await keyed.request('GET', '/v1/rules', undefined, K.acme1);
    expect(acme.status).toBe(200);
    expect(ids(acme.json)).not.toContain('dev_rule');
    await keyed.stop();
  });
});

describe('SERVICE_API_KEYS=k1:acme,k2:acme,k3:globex,legacy', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ env: { SERVICE_API_KEYS: 'k1:acme,k2:acme,k3:globex,legacy', SERVICE_CORS_ORIGINS: ORIGIN } });
  });

  it('a missing key is 401 with a JSON error body, on every /v1/ endpoint', async () => {
    const calls: [string, string, unknown?][] = [
      ['GET', '/v1/rules'],
      ['POST', '/v1/rules', rule('x', ['US'])],
      ['DELETE', '/v1/rules/x'],
      ['POST', '/v1/route', { country: 'US', currency: 'USD' }],
      ['POST', '/v1/outcome', { rule_id: 'x', processor_id: 'p1', success: true, latency_ms: 1 }],
      ['GET', '/v1/stats'],
    ];
    for (const [method, path, body] of calls) {
      const r = await s.request(method, path, body);
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 401 });
      expect(r.headers.get('content-type')).toContain('application/json');
      expect(r.json.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      expect(typeof r.json.error.message).toBe('string');
    }
  });

  it('a wrong key is 401 (also an empty one, and a configured key with different case)', async () => {
    for (const key of ['wrong', '', 'K1', 'k1:acme', 'acme', 'k']) {
      const r = await s.request('GET', '/v1/rules', undefined, { 'X-API-Key': key });
      expect({ key, status: r.status }).toEqual({ key, status: 401 });
      expect(r.json.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('GET /, /metrics/, /openapi.json, /docs and /redoc are public', async () => {
    for (const path of ['/', '/metrics/', '/openapi.json', '/docs', '/redoc']) {
      const r = await s.request('GET', path);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
    }
  });

  it('the OpenAPI document declares the X-API-Key scheme', async () => {
    const doc = (await s.request('GET', '/openapi.json')).json;
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it('two keys of one tenant see the same rules', async () => {
    expect((await s.request('POST', '/v1/rules', rule('acme_us', ['US', 'USD']), K.acme1)).status).toBe(201);
    const r = await s.request('GET', '/v1/rules', undefined, K.acme2);
    expect(r.status).toBe(200);
    expect(ids(r.json)).toContain('acme_us');
    const route = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, K.acme2);
    expect(route.status).toBe(200);
    expect(route.json.rule_id).toBe('acme_us');
  });

  it('another tenant does not see, route on, report on, or delete them', async () => {
    const list = await s.request('GET', '/v1/rules', undefined, K.globex);
    expect(list.status).toBe(200);
    expect(ids(list.json)).not.toContain('acme_us');

    const route = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, K.globex);
    expect(route.status).toBe(404);

    const outcome = await s.request('POST', '/v1/outcome', { rule_id: 'acme_us', processor_id: 'p1', success: true, latency_ms: 5 }, K.globex);
    expect(outcome.status).toBe(422);
    expect(outcome.json.error.fields.map((f: { field: string }) => f.field)).toContain('rule_id');

    const del = await s.request('DELETE', '/v1/rules/acme_us', undefined, K.globex);
    expect(del.status).toBe(404);
    const still = await s.request('GET', '/v1/rules', undefined, K.acme1);
    expect(ids(still.json)).toContain('acme_us');
  });

  it('rule ids are per tenant: globex can create its own `acme_us`, and each routes on its own', async () => {
    const r = await s.request('POST', '/v1/rules', { ...rule('acme_us', ['US', 'USD']), primary_id: 'g1', secondary_id: 'g2' }, K.globex);
    expect(r.status).toBe(201);
    const g = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, K.globex);
    expect(['g1', 'g2']).toContain(g.json.processor_id);
    const a = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, K.acme1);
    expect(['p1', 'p2']).toContain(a.json.processor_id);
    expect((await s.request('DELETE', '/v1/rules/acme_us', undefined, K.globex)).status).toBe(200);
    expect(ids((await s.request('GET', '/v1/rules', undefined, K.acme2)).json)).toContain('acme_us');
  });

  it('stats are per tenant', async () => {
    const acme = (await s.request('GET', '/v1/stats', undefined, K.acme1)).json;
    const globex = (await s.request('GET', '/v1/stats', undefined, K.globex)).json;
    expect(acme.trie.total_rules).toBe(1);
    expect(globex.trie.total_rules).toBe(0);
    expect(acme.transactions_routed).toBeGreaterThan(0);
    const before = globex.transactions_routed;
    await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, K.acme1);
    expect((await s.request('GET', '/v1/stats', undefined, K.globex)).json.transactions_routed).toBe(before);
  });

  it('the legacy bare key is tenant default: its rules are not acme\'s', async () => {
    expect((await s.request('POST', '/v1/rules', rule('legacy_rule', ['GB', 'GBP']), K.legacy)).status).toBe(201);
    expect(ids((await s.request('GET', '/v1/rules', undefined, K.legacy)).json)).toEqual(['legacy_rule']);
    expect(ids((await s.request('GET', '/v1/rules', undefined, K.acme1)).json)).not.toContain('legacy_rule');
    expect((await s.request('POST', '/v1/route', { country: 'GB', currency: 'GBP' }, K.legacy)).status).toBe(200);
  });

  describe('CORS (SERVICE_CORS_ORIGINS=https://shop.example)', () => {
    const preflight = (origin: string, path = '/v1/rules') =>
      s.request('OPTIONS', path, undefined, {
        Origin: origin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type, x-api-key',
      });

    it('a preflight from the allowed origin gets allow-origin, -methods and -headers (no key needed)', async () => {
      const r = await preflight(ORIGIN);
      expect(r.status).toBeGreaterThanOrEqual(200);
      expect(r.status).toBeLessThan(300);
      expect(r.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(r.headers.get('access-control-allow-methods')).toMatch(/POST/);
      expect(r.headers.get('access-control-allow-methods')).toMatch(/GET/);
      const allowHeaders = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      expect(allowHeaders).toContain('x-api-key');
      expect(allowHeaders).toContain('content-type');
      expect((r.headers.get('vary') ?? '').toLowerCase()).toContain('origin');
    });

    it('a preflight on a path with a parameter works too', async () => {
      const r = await s.request('OPTIONS', '/v1/rules/some_rule', undefined, { Origin: ORIGIN, 'Access-Control-Request-Method': 'DELETE' });
      expect(r.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(r.headers.get('access-control-allow-methods')).toMatch(/DELETE/);
    });

    it('another origin gets no CORS headers', async () => {
      const r = await preflight('https://evil.example');
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
      expect(r.headers.get('access-control-allow-methods')).toBeNull();
      expect(r.headers.get('access-control-allow-headers')).toBeNull();
      const get = await s.request('GET', '/v1/rules', undefined, { ...K.acme1, Origin: 'https://evil.example' });
      expect(get.status).toBe(200);
      expect(get.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('actual responses to the allowed origin carry allow-origin, errors included', async () => {
      const ok = await s.request('GET', '/v1/rules', undefined, { ...K.acme1, Origin: ORIGIN });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      const denied = await s.request('GET', '/v1/rules', undefined, { Origin: ORIGIN });
      expect(denied.status).toBe(401);
      expect(denied.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    });
  });
});
