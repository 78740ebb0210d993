/** GET /, /docs, /redoc, /openapi.json and /metrics/ against the real server. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startServer, stopAllServers, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(stopAllServers);

describe('GET /', () => {
  it('answers the liveness object with the package version', async () => {
    const r = await s.request('GET', '/');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/json');
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(r.json).toEqual({ service: expect.any(String), version: pkg.version, replica_id: `127.0.0.1:${s.port}`, store: 'lmdb' });
    expect(r.json.service.length).toBeGreaterThan(0);
  });
});

describe('documentation', () => {
  it('GET /docs serves the Swagger UI page pointing at /openapi.json', async () => {
    for (const path of ['/docs', '/docs/']) {
      const r = await s.request('GET', path);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain('text/html');
      expect(r.text).toContain('swagger-ui');
      expect(r.text).toContain('/openapi.json');
    }
  });

  it('GET /redoc serves the ReDoc page pointing at /openapi.json', async () => {
    for (const path of ['/redoc', '/redoc/']) {
      const r = await s.request('GET', path);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain('text/html');
      expect(r.text).toContain('redoc');
      expect(r.text).toContain('/openapi.json');
    }
  });

  it('the scripts and styles those pages load are served locally', async () => {
    for (const [path, type] of [
      ['/docs/swagger-ui-bundle.js', 'javascript'],
      ['/docs/swagger-ui.css', 'text/css'],
      ['/redoc/redoc.standalone.js', 'javascript'],
    ]) {
      const r = await s.request('GET', path);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      expect(r.headers.get('content-type')).toContain(type);
      expect(r.text.length).toBeGreaterThan(1000);
    }
  });

  it('only the listed assets are served (no path traversal)', async () => {
    for (const path of ['/docs/package.json', '/docs/..%2F..%2Fpackage.json', '/redoc/..%2Fpackage.json', '/docs/%2e%2e%2fpackage.json']) {
      const r = await s.request('GET', path);
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(r.json.error.status).toBe(404);
    }
  });

  it('GET /openapi.json is an OpenAPI 3 document covering the /v1 endpoints', async () => {
    const r = await s.request('GET', '/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.json;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.version).toBe((await s.request('GET', '/')).json.version);
    expect(doc.paths['/v1/rules']).toHaveProperty('get');
    expect(doc.paths['/v1/rules']).toHaveProperty('post');
    expect(doc.paths['/v1/rules/{rule_id}']).toHaveProperty('delete');
    expect(doc.paths['/v1/route']).toHaveProperty('post');
    expect(doc.paths['/v1/outcome']).toHaveProperty('post');
    expect(doc.paths['/v1/stats']).toHaveProperty('get');
    expect(doc.paths['/']).toHaveProperty('get');
    expect(doc.paths['/v1/route'].post.requestBody.content['application/json'].schema).toBeTypeOf('object');
    expect(Object.keys(doc.paths['/v1/rules'].post.responses)).toEqual(expect.arrayContaining(['201', '409', '422']));
  });
});

describe('GET /metrics/', () => {
  it('serves the text exposition format with the service metrics', async () => {
    await s.request('GET', '/');
    const r = await s.request('GET', '/metrics/');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/plain');
    for (const name of [
      'service_requests_total',
      'service_request_duration_seconds',
      'service_transactions_routed_total',
      'service_transactions_reported_total',
      'service_store_connected',
    ]) {
      expect(r.text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    }
    expect(r.text).toMatch(/^service_store_connected 1$/m);
  });

  it('labels requests by path template, not raw path', async () => {
    await s.request('DELETE', '/v1/rules/some_unknown_rule');
    const text = (await s.request('GET', '/metrics/')).text;
    expect(text).toMatch(/service_requests_total\{[^}]*path="\/v1\/rules\/\{rule_id\}"[^}]*status_code="404"[^}]*\}/);
    expect(text).not.toContain('some_unknown_rule');
  });
});
