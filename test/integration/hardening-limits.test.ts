/** Overload protections: the opt-in per-tenant rate limit (429 + Retry-After) and the slow-body deadline (408). */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

afterAll(stopAllServers);

describe('rate limit per tenant (opt-in)', () => {
  let s: TestServer;
  // 1 request/s, burst 2: refills are slow enough that a loaded machine does not blur the counts.
  beforeAll(async () => {
    s = await startServer({ env: { SERVICE_API_KEYS: 'ka:acme,kb:acme,kg:globex,kz:zeta', SERVICE_RATE_LIMIT_RPS: '1' } });
  });

  it('answers 429 with Retry-After past the burst; all keys of a tenant share one budget; it recovers', async () => {
    const t0 = Date.now();
    const answers: Awaited<ReturnType<TestServer['request']>>[] = [];
    for (let i = 0; i < 12; i++) answers.push(await s.request('GET', '/v1/stats', undefined, { 'x-api-key': i % 2 === 0 ? 'ka' : 'kb' }));
    const elapsedS = (Date.now() - t0) / 1000;
    const ok = answers.filter((r) => r.status === 200).length;
    // One shared bucket: the burst (2) plus what refilled meanwhile; two per-key buckets would allow twice that.
    expect(ok).toBeGreaterThanOrEqual(2);
    expect(ok).toBeLessThanOrEqual(2 + Math.ceil(elapsedS));
    const limited = answers.filter((r) => r.status === 429);
    expect(limited.length).toBe(12 - ok);
    // Both keys were refused: they draw from one budget.
    expect(new Set(answers.map((r, i) => (r.status === 429 ? i % 2 : -1)).filter((k) => k >= 0)).size).toBe(2);
    expect(limited[0].json.error.code).toBe('RATE_LIMITED');
    expect(limited[0].json.error.message).toMatch(/tenant "acme"/);
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another tenant has its own budget.
    expect((await s.request('GET', '/v1/stats', undefined, { 'x-api-key': 'kg' })).status).toBe(200);
    // Public endpoints are not limited.
    expect((await s.request('GET', '/')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await s.request('GET', '/v1/stats', undefined, { 'x-api-key': 'kb' })).status).toBe(200);
  });

  it('a tenant can have its own limit (POST /v1/config/tiers rate_limit_rps), 0 = none, null = the default', async () => {
    const Z = { 'x-api-key': 'kz' };
    const set = await s.request('POST', '/v1/config/tiers', { rate_limit_rps: 0 }, Z);
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ rate_limit_rps: 0, rate_limit_rps_override: 0 });
    const burst = await Promise.all(Array.from({ length: 40 }, () => s.request('GET', '/v1/stats', undefined, Z)));
    expect(burst.map((r) => r.status).filter((x) => x !== 200)).toEqual([]);
    const back = await s.request('POST', '/v1/config/tiers', { rate_limit_rps: null }, Z);
    expect(back.json).toMatchObject({ rate_limit_rps: 1, rate_limit_rps_override: null });
    const after = [];
    for (let i = 0; i < 20; i++) after.push((await s.request('GET', '/v1/stats', undefined, Z)).status);
    expect(after).toContain(429);
    // Bad values are named.
    const bad = await s.request('POST', '/v1/config/tiers', { rate_limit_rps: -1 }, { 'x-api-key': 'kg' });
    expect(bad.status).toBe(422);
    expect(bad.json.error.fields[0].field).toBe('rate_limit_rps');
  });
});

describe('slow request bodies', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ env: { SERVICE_REQUEST_TIMEOUT_MS: '500' } });
  });

  it('a body trickling in past the deadline gets 408 and the connection is closed; the server still answers', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect(s.port, '127.0.0.1');
      let data = '';
      sock.on('data', (d) => (data += d.toString()));
      sock.on('close', () => resolve(data));
      sock.on('error', reject);
      sock.write('POST /v1/route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"country":');
      setTimeout(() => sock.write('"US",'), 100);
      setTimeout(() => sock.destroy(), 5000);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(reply).toMatch(/REQUEST_TIMEOUT/);
    expect((await s.request('GET', '/')).status).toBe(200);
  });
});
