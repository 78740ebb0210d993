/**
 * Bad input classes against the real server (SERVICE_MAX_BODY_BYTES=2048). Every error is
 * JSON `{error: {code, message, status}}` with the HTTP status, and the server keeps
 * answering afterwards.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestResponse, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SERVICE_MAX_BODY_BYTES: '2048', SERVICE_TIER: '1' } });
  const r = await s.request('POST', '/v1/rules', { rule_id: 'known', attributes: ['US', 'USD'], primary_id: 'p1', secondary_id: 'p2' });
  if (r.status !== 201) throw new Error(`setup: ${r.status} ${r.text}`);
});
afterAll(stopAllServers);

// After every test: the server still answers.
afterEach(async () => {
  const r = await s.request('GET', '/');
  expect(r.status).toBe(200);
});

function expectError(r: TestResponse, status: number, code?: string): void {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toContain('application/json');
  expect(r.json).toBeTypeOf('object');
  expect(r.json.error).toMatchObject({ status });
  expect(typeof r.json.error.code).toBe('string');
  expect(typeof r.json.error.message).toBe('string');
  expect(r.json.error.message.length).toBeGreaterThan(0);
  if (code) expect(r.json.error.code).toBe(code);
}

function fieldsOf(r: TestResponse): string[] {
  return (r.json?.error?.fields ?? []).map((f: { field: string }) => f.field);
}

const goodRule = { rule_id: 'r_ok', attributes: ['FR', 'EUR'], primary_id: 'p1', secondary_id: 'p2' };

describe('malformed JSON: 400', () => {
  it.each([
    ['/v1/rules', '{"rule_id": '],
    ['/v1/route', '{bad json}'],
    ['/v1/outcome', "{'single': 'quotes'}"],
    ['/v1/route', 'not json at all'],
  ])('POST %s with %s', async (path, body) => {
    expectError(await s.request('POST', path, body), 400, 'MALFORMED_JSON');
  });
});

describe('wrong types: 422 naming the field', () => {
  it.each([
    ['/v1/route', { country: 1, currency: 'USD' }, 'country'],
    ['/v1/route', { country: 'US', currency: 'USD', amount: 'ten' }, 'amount'],
    ['/v1/route', { country: 'US', currency: 'USD', card_type: 7 }, 'card_type'],
    ['/v1/rules', { ...goodRule, primary_weight: 'high' }, 'primary_weight'],
    ['/v1/rules', { ...goodRule, attributes: 'US,USD' }, 'attributes'],
    ['/v1/rules', { ...goodRule, attributes: ['US', 5] }, 'attributes[1]'],
    ['/v1/outcome', { rule_id: 'known', processor_id: 'p1', success: 'yes', latency_ms: 1 }, 'success'],
    ['/v1/outcome', { rule_id: 'known', processor_id: 'p1', success: true, latency_ms: '12ms' }, 'latency_ms'],
  ])('POST %s %j → 422 on %s', async (path, body, field) => {
    const r = await s.request('POST', path, body);
    expectError(r, 422, 'VALIDATION_FAILED');
    expect(fieldsOf(r)).toContain(field);
  });

  it('a body that is not an object is 422', async () => {
    for (const body of ['[]', '"x"', '42', 'null']) {
      const r = await s.request('POST', '/v1/route', body);
      expect({ body, status: r.status }).toEqual({ body, status: 422 });
    }
  });

  it('an empty body is 422 naming body', async () => {
    const r = await s.request('POST', '/v1/rules', '');
    expectError(r, 422);
    expect(fieldsOf(r)).toContain('body');
  });
});

describe('out-of-range and unknown values: 422', () => {
  it.each([
    ['/v1/route', { country: 'US', currency: 'USD', payment_method: 'cash' }, 'payment_method'],
    ['/v1/route', { country: 'US', currency: 'USD', transaction_type: 'weekly' }, 'transaction_type'],
    ['/v1/route', { country: 'US', currency: 'USD', amount_tier: 'huge' }, 'amount_tier'],
    ['/v1/route', { country: 'USA', currency: 'USD' }, 'country'],
    ['/v1/route', { country: 'US', currency: 'DOLLAR' }, 'currency'],
    ['/v1/route', { country: 'US', currency: 'USD', amount: -5 }, 'amount'],
    ['/v1/rules', { ...goodRule, primary_weight: 1.5 }, 'primary_weight'],
    ['/v1/rules', { ...goodRule, primary_weight: -0.1 }, 'primary_weight'],
    ['/v1/rules', { ...goodRule, attributes: ['US', 'USD', 'card', 'visa', 'one_time', 'micro', 'extra'] }, 'attributes'],
    ['/v1/rules', { ...goodRule, rule_id: 'has space' }, 'rule_id'],
    ['/v1/rules', { ...goodRule, rule_id: 'a/b' }, 'rule_id'],
    ['/v1/rules', { ...goodRule, rule_id: '' }, 'rule_id'],
    ['/v1/outcome', { rule_id: 'known', processor_id: 'p1', success: true, latency_ms: -1 }, 'latency_ms'],
  ])('POST %s %j → 422 on %s', async (path, body, field) => {
    const r = await s.request('POST', path, body);
    expectError(r, 422, 'VALIDATION_FAILED');
    expect(fieldsOf(r)).toContain(field);
  });
});

describe('missing required fields: 422 naming each', () => {
  it.each([
    ['/v1/route', {}, ['country', 'currency']],
    ['/v1/route', { country: 'US' }, ['currency']],
    ['/v1/rules', {}, ['rule_id', 'attributes', 'primary_id', 'secondary_id']],
    ['/v1/rules', { rule_id: 'x', attributes: ['US'], primary_id: 'p1' }, ['secondary_id']],
    ['/v1/outcome', {}, ['rule_id', 'processor_id', 'success', 'latency_ms']],
    ['/v1/outcome', { rule_id: 'known', processor_id: 'p1', success: true }, ['latency_ms']],
  ])('POST %s %j', async (path, body, fields) => {
    const r = await s.request('POST', path, body);
    expectError(r, 422, 'VALIDATION_FAILED');
    expect(fieldsOf(r)).toEqual(expect.arrayContaining(fields));
  });
});

describe('oversized body: 413', () => {
  it('a 3 KB body over a 2048-byte limit (Content-Length) is 413', async () => {
    const body = JSON.stringify({ ...goodRule, primary_name: 'x'.repeat(3000) });
    expectError(await s.request('POST', '/v1/rules', body), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a body of exactly the limit is accepted; one byte more is 413', async () => {
    const base = JSON.stringify({ ...goodRule, rule_id: 'r_limit' });
    const exact = base + ' '.repeat(2048 - Buffer.byteLength(base));
    expect(Buffer.byteLength(exact)).toBe(2048);
    expect((await s.request('POST', '/v1/rules', exact + ' ')).status).toBe(413);
    expect((await s.request('POST', '/v1/rules', exact)).status).toBe(201);
  });

  /** POST with Transfer-Encoding: chunked (no Content-Length), one write per chunk. */
  function postChunked(path: string, chunks: string[]): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        `${s.baseUrl}${path}`,
        { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } },
        (res) => {
          let t = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (t += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: t }));
        },
      );
      req.on('error', reject);
      for (const c of chunks) req.write(c);
      req.end();
    });
  }

  it('a chunked body (no Content-Length) over the limit is 413', async () => {
    const { status, text } = await postChunked('/v1/rules', ['{"rule_id":"chunked","pad":"', 'y'.repeat(1024), 'y'.repeat(1024), 'y'.repeat(1024), '"}']);
    expect(status).toBe(413);
    expect(JSON.parse(text).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
  });

  it('a chunked body under the limit is read whole', async () => {
    const body = JSON.stringify({ ...goodRule, rule_id: 'r_chunked', attributes: ['DE', 'EUR'] });
    const { status, text } = await postChunked('/v1/rules', [body.slice(0, 10), body.slice(10, 40), body.slice(40)]);
    expect(status).toBe(201);
    expect(JSON.parse(text).rule_id).toBe('r_chunked');
  });
});

describe('conflicts and unknown resources', () => {
  it('duplicate rule id: 409', async () => {
    expectError(await s.request('POST', '/v1/rules', { ...goodRule, rule_id: 'known' }), 409, 'RULE_ALREADY_EXISTS');
  });

  it('deleting an unknown rule: 404', async () => {
    expectError(await s.request('DELETE', '/v1/rules/no_such_rule'), 404, 'RULE_NOT_FOUND');
  });

  it('deleting with an invalid id in the path: 4xx JSON', async () => {
    const r = await s.request('DELETE', '/v1/rules/bad%20id');
    expect([404, 422]).toContain(r.status);
    expect(r.json.error.status).toBe(r.status);
  });

  it('outcome for an unknown rule: 422 naming rule_id', async () => {
    const r = await s.request('POST', '/v1/outcome', { rule_id: 'ghost', processor_id: 'p1', success: true, latency_ms: 3 });
    expectError(r, 422);
    expect(fieldsOf(r)).toContain('rule_id');
  });

  it('outcome with a processor not in the rule: 422 naming processor_id', async () => {
    const r = await s.request('POST', '/v1/outcome', { rule_id: 'known', processor_id: 'p9', success: true, latency_ms: 3 });
    expectError(r, 422);
    expect(fieldsOf(r)).toContain('processor_id');
  });

  it('routing with no matching rule: 404', async () => {
    expectError(await s.request('POST', '/v1/route', { country: 'JP', currency: 'JPY' }), 404, 'ROUTING_NO_MATCH');
  });
});

describe('wrong method and unknown path', () => {
  it.each([
    ['PUT', '/v1/rules', ['GET', 'POST']],
    ['PUT', '/v1/rules/known', ['DELETE', 'GET', 'PATCH']],
    ['GET', '/v1/route', ['POST']],
    ['DELETE', '/v1/outcome', ['POST']],
    ['POST', '/v1/stats', ['GET']],
    ['POST', '/', ['GET']],
  ])('%s %s: 405 with Allow', async (method, path, allowed) => {
    const r = await s.request(method, path, method === 'GET' ? undefined : {});
    expectError(r, 405, 'METHOD_NOT_ALLOWED');
    const allow = (r.headers.get('allow') ?? '').split(',').map((x) => x.trim());
    expect(allow).toEqual(expect.arrayContaining(allowed));
    expect(allow).not.toContain(method);
  });

  it.each(['/nope', '/v1/nope', '/v2/rules', '/v1/rules/known/extra'])('GET %s: 404', async (path) => {
    expectError(await s.request('GET', path), 404);
  });
});

describe('configuration errors', () => {
  it.each([
    ['SERVICE_TIER', '7'],
    ['SERVICE_MAX_BODY_BYTES', 'lots'],
    ['SERVICE_API_KEYS', 'k1:acme:root'],
    ['SERVICE_CORS_ORIGINS', 'shop.example'],
  ])('%s=%s stops the start with exit code 2 and names the variable', async (name, value) => {
    const err = await startServer({ env: { [name]: value }, readyTimeoutMs: 15_000 }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).not.toBeNull();
    expect(err!.message).toContain('exited with code 2');
    expect(err!.message).toContain(name);
  });
});
