/**
 * Property-based fuzzing (fast-check) of path parameters, query parameters, the API-key
 * header and methods of every endpoint, plus fixed structural bodies (deep nesting, over the
 * size limit, empty, BOM, UTF-16, NUL) on every body endpoint, against the real server.
 * Asserts: never a 5xx; a 4xx is the catalogued JSON error; an id that does not exist is a 4xx
 * (never someone's data); query values are accepted exactly when the documented rule says so;
 * a refused request changes no stored state; the server still answers.
 */
import { createServer, type Server } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRun, expectWellFormed, FUZZ_RUNS, FUZZ_TIMEOUT_MS, hostileQuery, hostileSegment, printRuns, send, snapshot } from '../helpers/fuzz.js';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

const KEY = 'kfp-58d2e0aa';
const OTHER_KEY = 'kfp-other-1c';
const H = { 'x-api-key': KEY };
const JSON_CT = { ...H, 'content-type': 'application/json' };

let s: TestServer;
let receiver: Server;
let hookId = '';
let deliveryId = '';
const opts = () => ({ numRuns: FUZZ_RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined });

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as { port: number }).port;
  s = await startServer({
    env: {
      SERVICE_API_KEYS: `${KEY}:fuzzp,${OTHER_KEY}:otherp`,
      SERVICE_RATE_LIMIT_RPS: '0',
      SERVICE_WEBHOOK_ALLOW_PRIVATE: '1',
      SERVICE_EVAL_INTERVAL_MS: '600000',
      SERVICE_LOG_LEVEL: 'warn',
    },
  });
  const rule = { rule_id: 'fp_rule', attributes: ['US', 'USD', 'card'], primary_id: 'stripe', secondary_id: 'adyen' };
  expect((await s.request('POST', '/v1/rules', rule, H)).status).toBe(201);
  const hook = await s.request('POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/hook`, secret: 'fp-secret-xyz' }, H);
  expect(hook.status).toBe(201);
  hookId = hook.json.id;
  // A failover gives the webhook a real delivery (and the tenant an audit-trail entry).
  for (let i = 0; i < 12; i++) {
    const r = await s.request('POST', '/v1/outcome', { rule_id: 'fp_rule', processor_id: 'stripe', success: false, latency_ms: 30, error_code: 'timeout' }, H);
    expect(r.status).toBe(202);
  }
  const end = Date.now() + 20_000;
  for (;;) {
    const d = await s.request('GET', `/v1/webhooks/${hookId}/deliveries?status=delivered`, undefined, H);
    if (d.json?.deliveries?.length > 0) {
      deliveryId = d.json.deliveries[0].id;
      break;
    }
    if (Date.now() > end) throw new Error('no delivery within 20 s');
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  printRuns('fuzz-params');
  await stopAllServers();
  await new Promise((r) => receiver?.close(r));
});

async function alive(): Promise<void> {
  expect((await send(s, 'GET', '/')).status).toBe(200);
  expect(s.proc.exitCode).toBeNull();
}

describe('path parameters', () => {
  const templates: { name: string; method: string; path: (seg: string) => string; body?: Buffer }[] = [
    { name: 'DELETE /v1/rules/{rule_id}', method: 'DELETE', path: (x) => `/v1/rules/${x}` },
    { name: 'GET /v1/health/{rule_id}', method: 'GET', path: (x) => `/v1/health/${x}` },
    { name: 'GET /v1/tenants/{tenant_id}', method: 'GET', path: (x) => `/v1/tenants/${x}` },
    { name: 'GET /v1/webhooks/{webhook_id}', method: 'GET', path: (x) => `/v1/webhooks/${x}` },
    { name: 'PATCH /v1/webhooks/{webhook_id}', method: 'PATCH', path: (x) => `/v1/webhooks/${x}`, body: Buffer.from('{"active":false}') },
    { name: 'DELETE /v1/webhooks/{webhook_id}', method: 'DELETE', path: (x) => `/v1/webhooks/${x}` },
    { name: 'GET /v1/webhooks/{webhook_id}/deliveries', method: 'GET', path: (x) => `/v1/webhooks/${x}/deliveries` },
    { name: 'GET /v1/webhooks/{webhook_id}/deliveries/{delivery_id} (webhook_id)', method: 'GET', path: (x) => `/v1/webhooks/${x}/deliveries/${deliveryId}` },
    { name: 'GET /v1/webhooks/{webhook_id}/deliveries/{delivery_id} (delivery_id)', method: 'GET', path: (x) => `/v1/webhooks/${hookId}/deliveries/${x}` },
    { name: 'POST .../deliveries/{delivery_id}/redeliver (webhook_id)', method: 'POST', path: (x) => `/v1/webhooks/${x}/deliveries/${deliveryId}/redeliver` },
    { name: 'POST .../deliveries/{delivery_id}/redeliver (delivery_id)', method: 'POST', path: (x) => `/v1/webhooks/${hookId}/deliveries/${x}/redeliver` },
  ];

  for (const t of templates) {
    it(t.name, async () => {
      const baseline = await snapshot(s, KEY);
      await fc.assert(
        fc.asyncProperty(hostileSegment, async (seg) => {
          countRun(t.name);
          const path = t.path(seg);
          const r = await send(s, t.method, path, t.body, t.body ? JSON_CT : H);
          const ctx = `${t.method} ${path.slice(0, 300)}`;
          expectWellFormed(r, ctx);
          // No generated id exists: always refused (404 unknown, 422 malformed, 405 when `..` resolved elsewhere).
          if (r.status < 400) throw new Error(`${ctx}: ${r.status} ${r.text.slice(0, 200)}`);
          if (t.method !== 'GET' && (await snapshot(s, KEY)) !== baseline) throw new Error(`${ctx}: refused but the stored state changed`);
        }),
        opts(),
      );
      expect(await snapshot(s, KEY)).toBe(baseline);
      await alive();
    }, FUZZ_TIMEOUT_MS);
  }
});

describe('query parameters', () => {
  const EVENT_ID = /^\d{1,16}-\d{1,7}$/;
  const limitOk = (raw: string | null, max: number, digits: number) =>
    raw === null || (new RegExp(`^\\d{1,${digits}}$`).test(raw) && Number(raw) >= 1 && Number(raw) <= max);
  const aovOk = (raw: string | null) => {
    if (raw === null) return true;
    const t = raw.trim();
    const v = /^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) ? Number(t) : NaN;
    return Number.isFinite(v) && v > 0 && v <= 1e12;
  };
  const cases: { name: string; method: string; path: string; names: string[]; valid?: (q: URLSearchParams) => boolean }[] = [
    {
      name: 'GET /v1/failover-events?limit&before',
      method: 'GET',
      path: '/v1/failover-events',
      names: ['limit', 'before'],
      valid: (q) => limitOk(q.get('limit'), 1000, 7) && (q.get('before') === null || EVENT_ID.test(q.get('before')!)),
    },
    { name: 'GET /v1/shadow-report?average_order_value', method: 'GET', path: '/v1/shadow-report', names: ['average_order_value'], valid: (q) => aovOk(q.get('average_order_value')) },
    { name: 'DELETE /v1/shadow-report?average_order_value', method: 'DELETE', path: '/v1/shadow-report', names: ['average_order_value'], valid: (q) => aovOk(q.get('average_order_value')) },
    {
      name: 'GET /v1/webhooks/{id}/deliveries?limit&status&before',
      method: 'GET',
      path: '', // set once the webhook exists
      names: ['limit', 'status', 'before'],
      valid: (q) =>
        limitOk(q.get('limit'), 100, 4) &&
        (q.get('status') === null || ['pending', 'delivered', 'failed'].includes(q.get('status')!)) &&
        (q.get('before') === null || /^dlv_[0-9a-z]{13}[0-9a-f]{10}$/.test(q.get('before')!)),
    },
    ...['/v1/rules', '/v1/health'].map((p) => ({
      name: `GET ${p}?limit&after`,
      method: 'GET',
      path: p,
      names: ['limit', 'after', 'rule_id'],
      valid: (q: URLSearchParams) => limitOk(q.get('limit'), 10_000, 7) && (q.get('after') === null || /^[A-Za-z0-9_.:-]{1,128}$/.test(q.get('after')!)),
    })),
    ...['/v1/webhooks', '/v1/stats', '/v1/tenants', '/v1/config/tiers', '/v1/health/fp_rule', '/v1/tenants/fuzzp'].map((p) => ({
      name: `GET ${p}?<ignored>`,
      method: 'GET',
      path: p,
      names: ['limit', 'tenant_id', 'rule_id'],
      valid: () => true,
    })),
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const base = c.path || `/v1/webhooks/${hookId}/deliveries`;
      const baseline = await snapshot(s, KEY);
      await fc.assert(
        fc.asyncProperty(hostileQuery(c.names), async (q) => {
          countRun(c.name);
          const r = await send(s, c.method, `${base}?${q}`, undefined, H);
          const ctx = `${c.method} ${base}?${q.slice(0, 300)}`;
          expectWellFormed(r, ctx);
          // The documented rule, on the parameters as the server reads them (first occurrence wins).
          // (what the URL parser sends: e.g. trailing blanks of the URL are dropped)
          const expectedOk = c.valid!(new URL(`${base}?${q}`, 'http://x').searchParams);
          if (expectedOk) expect(r.status, ctx).toBe(200);
          else expect(r.status, ctx).toBe(422);
          if (r.status >= 400) expect(r.json.error.code, ctx).toBe('VALIDATION_FAILED');
        }),
        opts(),
      );
      expect(await snapshot(s, KEY)).toBe(baseline);
      await alive();
    }, FUZZ_TIMEOUT_MS);
  }
});

describe('the API key header', () => {
  const endpoints: [string, string, Buffer?][] = [
    ['GET', '/v1/rules'],
    ['POST', '/v1/rules', Buffer.from('{"rule_id":"k1","attributes":["FR"],"primary_id":"a","secondary_id":"b"}')],
    ['DELETE', '/v1/rules/fp_rule'],
    ['POST', '/v1/route', Buffer.from('{"country":"US","currency":"USD"}')],
    ['POST', '/v1/outcome', Buffer.from('{"rule_id":"fp_rule","processor_id":"stripe","success":true,"latency_ms":1}')],
    ['GET', '/v1/health'],
    ['GET', '/v1/health/fp_rule'],
    ['GET', '/v1/stats'],
    ['GET', '/v1/failover-events'],
    ['GET', '/v1/shadow-report'],
    ['DELETE', '/v1/shadow-report'],
    ['GET', '/v1/config/tiers'],
    ['POST', '/v1/config/tiers', Buffer.from('{"shadow_mode":true}')],
    ['POST', '/v1/onboard', Buffer.from('{"processors":[]}')],
    ['GET', '/v1/tenants'],
    ['GET', '/v1/tenants/fuzzp'],
    ['GET', '/v1/webhooks'],
    ['POST', '/v1/webhooks', Buffer.from('{"url":"https://hooks.example.com/k"}')],
    ['GET', '/v1/webhooks/HOOK'],
    ['PATCH', '/v1/webhooks/HOOK', Buffer.from('{"active":false}')],
    ['DELETE', '/v1/webhooks/HOOK'],
    ['GET', '/v1/webhooks/HOOK/deliveries'],
    ['GET', '/v1/webhooks/HOOK/deliveries/DLV'],
    ['POST', '/v1/webhooks/HOOK/deliveries/DLV/redeliver'],
  ];
  // Header values fetch can send: printable Latin-1, no CR/LF/NUL. Near misses of the real key first.
  const latin1 = fc.string({ unit: fc.oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff })).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 200 });
  const key = fc.oneof(
    fc.constantFrom(KEY.slice(0, -1), KEY + 'x', KEY.toUpperCase(), `${KEY},${KEY}`, `${KEY}:fuzzp`, KEY.replace('-', '_'), 'x'.repeat(8000), 'default', 'fuzzp', `${KEY}\u00a0`),
    latin1,
  );

  it('any other key is 401 UNAUTHORIZED on every /v1/ endpoint, and changes nothing', async () => {
    const baseline = await snapshot(s, KEY);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: endpoints.length - 1 }), key, async (i, k) => {
        // fetch trims blanks around header values, and uWS also trims bytes >= 0x80 there (its
        // whitespace test is on signed chars): the real key wrapped in those is the real key.
        if (k.replace(/^[ \t\x80-\xff]+|[ \t\x80-\xff]+$/g, '') === KEY) return;
        countRun('X-API-Key on every /v1/ endpoint');
        const [method, rawPath, body] = endpoints[i];
        const path = rawPath.replace('HOOK', hookId).replace('DLV', deliveryId);
        const r = await send(s, method, path, body, { 'x-api-key': k, 'content-type': 'application/json' });
        const ctx = `${method} ${path} key=${JSON.stringify(k.slice(0, 40))}`;
        expectWellFormed(r, ctx);
        expect(r.status, ctx).toBe(401);
        expect(r.json.error.code, ctx).toBe('UNAUTHORIZED');
        if (k.length >= 8) expect(r.text).not.toContain(k.slice(0, 64)); // the key is not echoed
      }),
      opts(),
    );
    for (const [method, rawPath] of endpoints) {
      const r = await send(s, method, rawPath.replace('HOOK', hookId).replace('DLV', deliveryId));
      expect(r.status, `${method} ${rawPath} without a key`).toBe(401);
    }
    expect(await snapshot(s, KEY)).toBe(baseline);
    await alive();
  }, FUZZ_TIMEOUT_MS);
});

describe('methods', () => {
  const paths = ['/', '/v1/route', '/v1/outcome', '/v1/rules', '/v1/rules/nope', '/v1/health', '/v1/health/nope', '/v1/stats', '/v1/failover-events',
    '/v1/config/tiers', '/v1/onboard', '/v1/tenants', '/v1/tenants/nope', '/v1/webhooks', '/v1/webhooks/wh_nope', '/v1/webhooks/wh_nope/deliveries',
    '/v1/webhooks/wh_nope/deliveries/dlv_nope/redeliver', '/v1/shadow-report', '/metrics/', '/openapi.json', '/v2/route', '/v1', '/v1/', '/v1/rules/', '//v1//rules'];
  it('any method on any path: never a 5xx, refused ones change nothing', async () => {
    const baseline = await snapshot(s, KEY);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'FOO', 'M-SEARCH'),
        fc.constantFrom(...paths),
        fc.constantFrom(undefined, Buffer.from('{}'), Buffer.from('[]'), Buffer.from('not json')),
        async (method, path, body) => {
          countRun('any method × any path');
          let r;
          try {
            r = await send(s, method, path, method === 'GET' ? undefined : body, JSON_CT);
          } catch (e) {
            // uWS's parser knows the standard methods only and closes the connection on others.
            if (['PROPFIND', 'FOO', 'M-SEARCH'].includes(method) && /fetch failed/.test(String(e))) return;
            throw e;
          }
          const ctx = `${method} ${path}`;
          expectWellFormed(r, ctx);
          if (r.status >= 400 && (await snapshot(s, KEY)) !== baseline) throw new Error(`${ctx}: refused but the stored state changed`);
          if (r.status === 405) expect(r.headers.get('allow')).toBeTruthy();
        },
      ),
      opts(),
    );
    await alive();
  }, FUZZ_TIMEOUT_MS);
});

describe('structural bodies on every body endpoint', () => {
  const bodyEndpoints: [string, string][] = [
    ['POST', '/v1/route'],
    ['POST', '/v1/outcome'],
    ['POST', '/v1/rules'],
    ['POST', '/v1/onboard'],
    ['POST', '/v1/webhooks'],
    ['PATCH', '/v1/webhooks/HOOK'],
    ['POST', '/v1/config/tiers'],
    // No body expected: a body is read and ignored.
    ['DELETE', '/v1/rules/nope'],
    ['DELETE', '/v1/webhooks/wh_000000000000000000000000'],
    ['POST', '/v1/webhooks/HOOK/deliveries/dlv_nope/redeliver'],
    ['DELETE', '/v1/shadow-report?average_order_value=-1'],
  ];
  const nest = (n: number, o = '[', c = ']') => Buffer.from(o.repeat(n) + c.repeat(n));
  const refused = [400, 404, 422];
  const bodies: [string, Buffer, number[]][] = [
    ['empty', Buffer.alloc(0), refused],
    ['whitespace', Buffer.from(' \r\n\t '), refused],
    ['null', Buffer.from('null'), refused],
    ['array', Buffer.from('[{"country":"US","currency":"USD"}]'), refused],
    ['5,000 nested arrays', nest(5000), refused],
    ['32,000 nested arrays (64 KB)', nest(32_000), refused],
    ['5,000 nested objects', Buffer.from('{"a":'.repeat(5000) + '1' + '}'.repeat(5000)), refused],
    ['unbalanced 60,000 [', Buffer.from('['.repeat(60_000)), refused],
    ['BOM + JSON', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"country":"US","currency":"USD"}')]), refused],
    ['UTF-16LE JSON', Buffer.from('{"country":"US","currency":"USD"}', 'utf16le'), refused],
    ['NUL bytes', Buffer.alloc(100), refused],
    ['1 byte over the limit', Buffer.alloc(65_537, 0x20), [413]],
    ['1 MB', Buffer.alloc(1 << 20, 0x5b), [413]],
    ['huge numbers', Buffer.from('{"country":"US","currency":"USD","shadow_mode":1' + '0'.repeat(400) + ',"amount":1' + '0'.repeat(5000) + '}'), refused],
    ['5,000 unknown keys and an invalid one', Buffer.from('{' + Array.from({ length: 5000 }, (_, i) => `"${i}":0`).join(',') + ',"shadow_mode":"x"}'), refused],
  ];
  it('deep nesting, over-limit, empty and non-UTF-8 bodies get a 4xx', async () => {
    const baseline = await snapshot(s, KEY);
    for (const [method, rawPath] of bodyEndpoints) {
      const path = rawPath.replace('HOOK', hookId);
      for (const [name, body, allowed] of bodies) {
        countRun('structural bodies × body endpoints');
        const ctx = `${method} ${path} ${name}`;
        let r;
        try {
          r = await send(s, method, path, body, JSON_CT);
        } catch (e) {
          // An oversized body is answered 413 and the connection closed at once; the client may
          // still be writing and see EPIPE/ECONNRESET instead of the answer. Either way: refused.
          if (body.length > 65_536 && /fetch failed/.test(String(e))) continue;
          throw e;
        }
        expectWellFormed(r, ctx);
        expect(allowed, `${ctx}: ${r.status} ${r.text.slice(0, 200)}`).toContain(r.status);
      }
    }
    expect(await snapshot(s, KEY)).toBe(baseline);
    await alive();
  });
});
