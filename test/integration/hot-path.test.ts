/**
 * The router's fast path for POST /v1/route and POST /v1/outcome (src/http/hot-path.ts, with
 * flat-json.ts and the rule's kept reply bytes) must answer byte for byte as the generic path does.
 * A query string sends a request down the generic path (the fast path takes none), so every
 * body below is sent both ways on raw sockets and the two answers compared whole: status line,
 * headers (the Date header aside) and body. Covers the usual bodies and every kind of refusal
 * (401, 404, 413, 422 per field, 400 malformed), and bodies arriving in several chunks.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

const KEY = 'khot-5e1f';
let s: TestServer;

beforeAll(async () => {
  s = await startServer({ env: { SERVICE_API_KEYS: `${KEY}:hot`, SERVICE_RATE_LIMIT_RPS: '0', SERVICE_MAX_BODY_BYTES: '4096' } });
  // primary_weight 1: every route picks the primary, so two answers can be compared.
  for (const rule of [
    { rule_id: 'r_us', attributes: ['US', 'USD', 'card'], primary_id: 'stripe', secondary_id: 'adyen', primary_weight: 1 },
    { rule_id: 'r_any', attributes: ['*', 'EUR'], primary_id: 'adyen', secondary_id: 'stripe', primary_weight: 1 },
    { rule_id: 'r_memo', attributes: ['GB', 'GBP'], primary_id: 'stripe', secondary_id: 'adyen', primary_weight: 1 }, // no outcomes: its weight moves only by PATCH
  ]) {
    expect((await s.request('POST', '/v1/rules', rule, { 'x-api-key': KEY })).status).toBe(201);
  }
});
afterAll(stopAllServers);

/** Writes `parts` (a pause between them) and resolves with the whole answer, its Date header blanked. */
function exchange(parts: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(s.port, '127.0.0.1');
    let text = '';
    sock.on('data', (c) => (text += c.toString('latin1')));
    sock.on('close', () => resolve(text.replace(/\r\nDate: [^\r]*/i, '\r\nDate: -')));
    sock.on('error', reject);
    parts.forEach((p, i) => setTimeout(() => sock.write(p), i * 30));
  });
}

/** `key`: the X-API-Key header's value, or several values (one header each), or null for none. */
function request(path: string, body: string, key: string | string[] | null, split = false, extraHeaders = ''): Promise<string> {
  const keys = key === null ? [] : Array.isArray(key) ? key : [key];
  const head =
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    keys.map((k) => `X-API-Key: ${k}\r\n`).join('') +
    extraHeaders +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  if (!split) return exchange([head + body]);
  const b = Buffer.from(body);
  const cut = Math.floor(b.length / 2);
  return exchange([head + b.subarray(0, cut).toString('latin1'), b.subarray(cut).toString('latin1')]);
}

let txSeq = 0;

/** The same request on the fast path and on the generic one: identical answers. `{tx}` becomes a new transaction id each time. */
async function expectSameBothWays(path: string, body: string, key: string | string[] | null = KEY, split = false, extraHeaders = ''): Promise<string> {
  const fast = await request(path, body.replace('{tx}', `tx-${++txSeq}`), key, split, extraHeaders);
  const generic = await request(`${path}?generic=1`, body.replace('{tx}', `tx-${++txSeq}`), key, split, extraHeaders);
  expect(fast, `${path} ${body}`).toBe(generic);
  expect(fast).toMatch(/^HTTP\/1\.1 \d{3} /);
  return fast;
}

const ROUTES = [
  '{"country":"US","currency":"USD","payment_method":"card","card_type":"visa","transaction_type":"one_time","amount":42}',
  '{"country":"us","currency":"usd"}',
  ' {\n "country" : "FR" , "currency" : "EUR", "amount" : 0.5 } ',
  '{"country":"US","currency":"USD","amount":null,"amount_tier":null,"transaction_id":"tx-1"}',
  '{"country":"US","currency":"USD","amount":12345678901234567}',
  '{"country":"US","currency":"USD","amount":1e3}',
  '{"country":"U\\u0053","currency":"USD"}',
  '{"country":"US","currency":"USD","country":"FR"}',
  '{"country":"DE","currency":"JPY"}', // no rule: 404
  '{"country":"USA","currency":"USD"}', // 422 country
  '{"country":"US","currency":"USD","amount":-1}',
  '{"country":"US","currency":"USD","payment_method":"cash"}',
  '{"country":"US","currency":"USD","extra":1}',
  '{"country":"US","currency":"USD","card_type":{"x":1}}',
  '{"country":"US","currency":"USD","transaction_id":"bad id"}',
  '{"country":"US"',
  '[]',
  '',
  'not json',
  `{"country":"US","currency":"USD","card_type":"${'x'.repeat(5000)}"}`, // 413
];

const OUTCOMES = [
  '{"rule_id":"r_us","processor_id":"stripe","success":true,"latency_ms":120}',
  '{"rule_id":"r_us","processor_id":"adyen","success":false,"latency_ms":80.25,"error_code":"do_not_honor"}',
  '{"rule_id":"r_us","processor_id":"stripe","success":false,"latency_ms":3000,"error_code":null}',
  '{"rule_id":"r_us","processor_id":"stripe","success":true,"latency_ms":10,"transaction_id":"{tx}"}', // a new id per request
  '{"rule_id":"r_us","processor_id":"stripe","success":true,"latency_ms":10,"transaction_id":"tx-dup"}', // reported before: duplicate
  '{"rule_id":"nope","processor_id":"stripe","success":true,"latency_ms":1}',
  '{"rule_id":"r_us","processor_id":"paypal","success":true,"latency_ms":1}',
  '{"rule_id":"r_us","processor_id":"stripe","success":"yes","latency_ms":1}',
  '{"rule_id":"r_us","processor_id":"stripe","success":true,"latency_ms":-5}',
  '{"rule_id":"r_us","processor_id":"stripe","success":true}',
  '{"rule_id":"r_us","processor_id":"stripe","success":true,"latency_ms":1,"latency_ms":2}',
];

describe('fast path = generic path, byte for byte', () => {
  it('POST /v1/route: usual bodies and every refusal', async () => {
    const statuses = [];
    for (const body of ROUTES) statuses.push((await expectSameBothWays('/v1/route', body)).slice(9, 12));
    // The list does reach both the answers and the refusals.
    expect(new Set(statuses)).toEqual(new Set(['200', '404', '422', '400', '413']));
  });

  it('POST /v1/outcome: usual bodies and every refusal', async () => {
    await request('/v1/outcome', OUTCOMES[4], KEY); // tx-dup reported once: both answers below are the duplicate's
    const statuses = [];
    for (const body of OUTCOMES) statuses.push((await expectSameBothWays('/v1/outcome', body)).slice(9, 12));
    expect(new Set(statuses)).toEqual(new Set(['202', '422']));
  });

  it('a body in two chunks, and requests without or with an unknown key', async () => {
    expect(await expectSameBothWays('/v1/route', ROUTES[0], KEY, true)).toMatch(/^HTTP\/1\.1 200 /);
    expect(await expectSameBothWays('/v1/outcome', OUTCOMES[0], KEY, true)).toMatch(/^HTTP\/1\.1 202 /);
    expect(await expectSameBothWays('/v1/route', ROUTES[0], null)).toMatch(/^HTTP\/1\.1 401 /);
    expect(await expectSameBothWays('/v1/route', ROUTES[0], 'wrong-key')).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('repeated headers: the first X-API-Key counts (as getHeader), the same Content-Length twice is accepted', async () => {
    expect(await expectSameBothWays('/v1/route', ROUTES[0], [KEY, 'wrong-key'])).toMatch(/^HTTP\/1\.1 200 /);
    expect(await expectSameBothWays('/v1/route', ROUTES[0], ['wrong-key', KEY])).toMatch(/^HTTP\/1\.1 401 /);
    expect(await expectSameBothWays('/v1/route', ROUTES[0], ['', KEY])).toMatch(/^HTTP\/1\.1 401 /);
    const cl = `Content-Length: ${Buffer.byteLength(ROUTES[0])}\r\n`;
    expect(await expectSameBothWays('/v1/route', ROUTES[0], KEY, false, cl)).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("the route reply follows a weight change at once (the rule's kept reply bytes are not stale)", async () => {
    const gb = '{"country":"GB","currency":"GBP"}';
    const first = await request('/v1/route', gb, KEY);
    expect(first).toContain('"processor_id":"stripe","weight":1,');
    const patch = await s.request('PATCH', '/v1/rules/r_memo', { primary_weight: 0 }, { 'x-api-key': KEY });
    expect(patch.status).toBe(200);
    const after = await request('/v1/route', gb, KEY);
    expect(after).toContain('"processor_id":"adyen","weight":1,"fallback_processor_id":"stripe"');
  });
});
