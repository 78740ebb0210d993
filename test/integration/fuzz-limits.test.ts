/**
 * Every documented limit (README, "Limits"), at its boundary: the value at the limit is
 * accepted, one past it is refused with the catalogued 4xx and changes nothing. Body size
 * (here lowered to 16 KiB with SERVICE_MAX_BODY_BYTES, also chunked), JSON nesting depth, id,
 * name and attribute lengths, attribute count, webhooks per tenant, onboarding processors and
 * generated rules per request, error-code lists, webhook URL and secret lengths, page sizes,
 * amounts and latencies. (Rate limit and slow bodies: hardening-limits.test.ts; failover-event
 * retention: test/unit/retention.test.ts; rules per tenant: documented, no override.)
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_3166_1_ALPHA2 } from '../../src/data/iso-3166-1-alpha2.js';
import { ISO_4217 } from '../../src/data/iso-4217.js';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { snapshot } from '../helpers/fuzz.js';

const KEY = 'klim-0c7e2a94';
const KEY2 = 'klim2-d18b3f50';
const H = { 'x-api-key': KEY };
const LIMIT = 16_384;

let s: TestServer;

beforeAll(async () => {
  s = await startServer({
    env: { SERVICE_API_KEYS: `${KEY}:lim,${KEY2}:lim2`, SERVICE_RATE_LIMIT_RPS: '0', SERVICE_MAX_BODY_BYTES: String(LIMIT), SERVICE_LOG_LEVEL: 'warn' },
  });
});
afterAll(stopAllServers);

const rule = (over: Record<string, unknown> = {}) => ({ rule_id: 'lim_r', attributes: ['US', 'USD'], primary_id: 'p1', secondary_id: 'p2', ...over });

async function refused(method: string, path: string, body: unknown, status: number, code: string, field?: string): Promise<void> {
  const before = await snapshot(s, KEY);
  const r = await s.request(method, path, body, H);
  expect(r.status, `${method} ${path}: ${r.text.slice(0, 300)}`).toBe(status);
  expect(r.json.error.code).toBe(code);
  if (field !== undefined) expect(r.json.error.fields.map((f: { field: string }) => f.field)).toContain(field);
  expect(await snapshot(s, KEY)).toBe(before);
}

/**
 * A raw TCP exchange with the server: `write` sends what it likes; resolves with everything
 * the server answered once it closes the connection (or after `timeoutMs`), and the first
 * socket error (EPIPE/ECONNRESET: the server cut the client off mid-write), if any.
 */
function rawExchange(write: (sock: Socket) => void, timeoutMs: number): Promise<{ reply: string; writeError: string | null }> {
  return new Promise((resolve, reject) => {
    const sock = connect(s.port, '127.0.0.1');
    let reply = '';
    let writeError: string | null = null;
    sock.on('data', (d) => (reply += d.toString()));
    sock.on('close', () => resolve({ reply, writeError }));
    sock.on('error', (e) => {
      writeError = (e as NodeJS.ErrnoException).code ?? e.message;
      if (!reply) reject(e);
    });
    write(sock);
    setTimeout(() => sock.destroy(), timeoutMs);
  });
}

describe('body size', () => {
  const routeOfSize = (n: number) => {
    const text = JSON.stringify({ country: 'US', currency: 'USD' });
    return text + ' '.repeat(n - text.length);
  };
  it(`${LIMIT} bytes are read, one more is 413`, async () => {
    expect((await s.request('POST', '/v1/route', routeOfSize(LIMIT), H)).status).toBe(404); // read and parsed: no rule matches
    await refused('POST', '/v1/route', routeOfSize(LIMIT + 1), 413, 'PAYLOAD_TOO_LARGE');
  });
  it('a chunked body (no Content-Length) past the limit is 413 too, and the connection is closed', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect(s.port, '127.0.0.1');
      let data = '';
      sock.on('data', (d) => (data += d.toString()));
      sock.on('close', () => resolve(data));
      sock.on('error', (e) => (data ? resolve(data) : reject(e)));
      sock.write(`POST /v1/rules HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = `1000\r\n${' '.repeat(4096)}\r\n`;
      let n = 0;
      // The whole body, then its end: the excess is read and discarded, then the 413 comes.
      const timer = setInterval(() => {
        if (sock.destroyed) return clearInterval(timer);
        if (n++ >= 8) {
          clearInterval(timer);
          sock.write('0\r\n\r\n');
          return;
        }
        sock.write(chunk);
      }, 10);
      setTimeout(() => sock.destroy(), 5000);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('PAYLOAD_TOO_LARGE');
    expect((await s.request('GET', '/')).status).toBe(200);
  });
});

describe('oversized bodies get a readable 413', () => {
  const FIVE_MB = 5 * 1024 * 1024;
  /** Writes the whole request (as most clients do before reading), then collects the answer. */
  const rawPost = (body: Buffer) =>
    rawExchange((sock) => {
      sock.write(`POST /v1/route HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      sock.write(body);
    }, 20_000);

  it('a 5 MB JSON body, written in full, is answered 413 PAYLOAD_TOO_LARGE (no reset), and the connection closed', async () => {
    const json = Buffer.from(JSON.stringify({ country: 'US', currency: 'USD', card_type: 'x'.repeat(FIVE_MB) }));
    const { reply, writeError } = await rawPost(json);
    expect(writeError).toBeNull();
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('"code":"PAYLOAD_TOO_LARGE"');
  });

  it('a 5 MB body of malformed JSON too; and through fetch (undici) both get the JSON error', async () => {
    const junk = Buffer.alloc(FIVE_MB, '{');
    const { reply, writeError } = await rawPost(junk);
    expect(writeError).toBeNull();
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    for (const body of [junk, Buffer.alloc(FIVE_MB, ' ')]) {
      const r = await s.request('POST', '/v1/route', body, H);
      expect(r.status).toBe(413);
      expect(r.json.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    }
    expect((await s.request('GET', '/')).status).toBe(200);
  });

  it('a declared length beyond the 32 MiB discard cap is answered at once', async () => {
    const { reply } = await rawExchange((sock) => {
      sock.write(`POST /v1/route HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Length: ${40 * 1024 * 1024}\r\n\r\n{"country":`);
    }, 5000);
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
  });
});

describe('JSON nesting depth', () => {
  it('32 levels are accepted, 33 are 422', async () => {
    const deep = (levels: number) => `{"country":"US","currency":"USD","x":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    // 32 levels pass the depth check and reach validation, which names the unknown field.
    await refused('POST', '/v1/route', deep(32), 422, 'VALIDATION_FAILED', 'x');
    await refused('POST', '/v1/route', deep(33), 422, 'VALIDATION_FAILED', 'body');
  });
});

describe('rules', () => {
  it('ids: 128 characters accepted, 129 refused (body and path)', async () => {
    const id128 = 'r'.repeat(128);
    expect((await s.request('POST', '/v1/rules', rule({ rule_id: id128, primary_id: 'p'.repeat(128), secondary_id: 's'.repeat(128) }), H)).status).toBe(201);
    expect((await s.request('GET', `/v1/health/${id128}`, undefined, H)).status).toBe(200);
    await refused('POST', '/v1/rules', rule({ rule_id: 'r'.repeat(129), attributes: ['CA'] }), 422, 'VALIDATION_FAILED', 'rule_id');
    await refused('POST', '/v1/rules', rule({ rule_id: 'x1', attributes: ['CA'], primary_id: 'p'.repeat(129) }), 422, 'VALIDATION_FAILED', 'primary_id');
    await refused('DELETE', `/v1/rules/${'r'.repeat(129)}`, undefined, 422, 'VALIDATION_FAILED', 'rule_id');
    await refused('GET', `/v1/health/${'r'.repeat(129)}`, undefined, 422, 'VALIDATION_FAILED', 'rule_id');
    expect((await s.request('DELETE', `/v1/rules/${id128}`, undefined, H)).status).toBe(200);
  });
  it('names: 256 characters accepted, 257 refused', async () => {
    expect((await s.request('POST', '/v1/rules', rule({ rule_id: 'n1', attributes: ['MX'], primary_name: 'N'.repeat(256) }), H)).status).toBe(201);
    await refused('POST', '/v1/rules', rule({ rule_id: 'n2', attributes: ['BR'], secondary_name: 'N'.repeat(257) }), 422, 'VALIDATION_FAILED', 'secondary_name');
  });
  it('attributes: 6 of up to 64 characters accepted; 7, or 65 characters, refused', async () => {
    const six = ['DE', 'EUR', 'card', 'v'.repeat(64), 'recurring', 'premium'];
    const r = await s.request('POST', '/v1/rules', rule({ rule_id: 'a6', attributes: six }), H);
    expect(r.status).toBe(201);
    expect(r.json.attributes).toEqual(['DE', 'EUR', 'card', 'v'.repeat(64), 'recurring', 'premium']);
    await refused('POST', '/v1/rules', rule({ rule_id: 'a7', attributes: [...six.slice(0, 3), 'visa', 'one_time', 'micro', '*'] }), 422, 'VALIDATION_FAILED', 'attributes');
    await refused('POST', '/v1/rules', rule({ rule_id: 'a65', attributes: ['DE', 'EUR', 'card', 'v'.repeat(65)] }), 422, 'VALIDATION_FAILED', 'attributes[3]');
    // A route request's card_type has the same bound.
    await refused('POST', '/v1/route', { country: 'DE', currency: 'EUR', card_type: 'v'.repeat(65) }, 422, 'VALIDATION_FAILED', 'card_type');
  });
  it('primary_weight in [0, 1]; amounts up to 1e15; latency up to 3,600,000 ms; error codes up to 128 characters', async () => {
    await refused('POST', '/v1/rules', rule({ rule_id: 'w', attributes: ['JP'], primary_weight: 1.0000001 }), 422, 'VALIDATION_FAILED', 'primary_weight');
    expect((await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', amount: 1e15 }, H)).status).toBe(404);
    await refused('POST', '/v1/route', { country: 'US', currency: 'USD', amount: 1e15 * 1.01 }, 422, 'VALIDATION_FAILED', 'amount');
    const out = (over: Record<string, unknown>) => ({ rule_id: 'n1', processor_id: 'p1', success: false, latency_ms: 3_600_000, error_code: 'e'.repeat(128), ...over });
    expect((await s.request('POST', '/v1/outcome', out({}), H)).status).toBe(202);
    const before = await snapshot(s, KEY);
    expect((await s.request('POST', '/v1/outcome', out({ latency_ms: 3_600_001 }), H)).status).toBe(422);
    expect((await s.request('POST', '/v1/outcome', out({ error_code: 'e'.repeat(129) }), H)).status).toBe(422);
    expect(await snapshot(s, KEY)).toBe(before);
  });
});

describe('webhooks', () => {
  it('50 per tenant: the 51st is 422 LIMIT_EXCEEDED; other tenants are not affected; deleting one frees a place', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await s.request('POST', '/v1/webhooks', { url: `https://hooks.example.com/${i}` }, H);
      expect(r.status).toBe(201);
      ids.push(r.json.id);
    }
    await refused('POST', '/v1/webhooks', { url: 'https://hooks.example.com/51' }, 422, 'LIMIT_EXCEEDED', 'webhooks');
    expect((await s.request('POST', '/v1/webhooks', { url: 'https://hooks.example.com/other' }, { 'x-api-key': KEY2 })).status).toBe(201);
    expect((await s.request('DELETE', `/v1/webhooks/${ids[0]}`, undefined, H)).status).toBe(200);
    expect((await s.request('POST', '/v1/webhooks', { url: 'https://hooks.example.com/again' }, H)).status).toBe(201);
  });
  it('secret 8-256 characters, URL up to 2048 characters', async () => {
    await refused('POST', '/v1/webhooks', { url: 'https://hooks.example.com/s', secret: 's'.repeat(7) }, 422, 'VALIDATION_FAILED', 'secret');
    await refused('POST', '/v1/webhooks', { url: 'https://hooks.example.com/s', secret: 's'.repeat(257) }, 422, 'VALIDATION_FAILED', 'secret');
    await refused('POST', '/v1/webhooks', { url: `https://hooks.example.com/${'u'.repeat(2048)}` }, 422, 'VALIDATION_FAILED', 'url');
  });
  it('deliveries page: limit 1-100', async () => {
    const id = (await s.request('GET', '/v1/webhooks', undefined, H)).json.webhooks[0].id;
    expect((await s.request('GET', `/v1/webhooks/${id}/deliveries?limit=100`, undefined, H)).status).toBe(200);
    await refused('GET', `/v1/webhooks/${id}/deliveries?limit=101`, undefined, 422, 'VALIDATION_FAILED', 'limit');
  });
});

describe('onboarding', () => {
  const p = (id: string, countries: string[], currencies: string[], priority = 1) => ({ processor_id: id, name: id, countries, currencies, priority });
  it('at most 100 processors per request', async () => {
    const many = Array.from({ length: 101 }, (_, i) => p(`op${i}`, ['LU'], ['EUR']));
    await refused('POST', '/v1/onboard', { processors: many }, 422, 'VALIDATION_FAILED', 'processors');
  });
  it('at most 10,000 generated rules per request (422 LIMIT_EXCEEDED, nothing created)', async () => {
    const countries = ISO_3166_1_ALPHA2.slice(0, 250);
    const currencies = ISO_4217.slice(0, 41); // 250 × 41 = 10,250 combinations
    await refused('POST', '/v1/onboard', { processors: [p('big1', countries, currencies), p('big2', ['LU'], ['EUR'], 2)] }, 422, 'LIMIT_EXCEEDED', 'processors');
  });
});

describe('configuration and pages', () => {
  it('error-code lists: up to 200 codes of up to 64 characters', async () => {
    const codes = Array.from({ length: 200 }, (_, i) => `code_${i}`);
    expect((await s.request('POST', '/v1/config/tiers', { error_codes: { decline: codes } }, H)).status).toBe(200);
    await refused('POST', '/v1/config/tiers', { error_codes: { decline: [...codes, 'one_more'] } }, 422, 'VALIDATION_FAILED', 'error_codes.decline');
    await refused('POST', '/v1/config/tiers', { error_codes: { technical: ['c'.repeat(65)] } }, 422, 'VALIDATION_FAILED', 'error_codes.technical[0]');
  });
  it('failover events page: limit 1-1000', async () => {
    expect((await s.request('GET', '/v1/failover-events?limit=1000', undefined, H)).status).toBe(200);
    await refused('GET', '/v1/failover-events?limit=1001', undefined, 422, 'VALIDATION_FAILED', 'limit');
    await refused('GET', '/v1/failover-events?limit=0', undefined, 422, 'VALIDATION_FAILED', 'limit');
  });
  it('shadow report: average_order_value in (0, 1e12]', async () => {
    expect((await s.request('GET', '/v1/shadow-report?average_order_value=1e12', undefined, H)).status).toBe(200);
    await refused('GET', '/v1/shadow-report?average_order_value=1.1e12', undefined, 422, 'VALIDATION_FAILED', 'average_order_value');
  });
});

describe('regressions found by fuzzing', () => {
  it('deep nesting in a uniqueItems array (webhook event_types) is a 422, not a 500', async () => {
    const body = `{"url":"https://hooks.example.com/deep","event_types":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    await refused('POST', '/v1/webhooks', body, 422, 'VALIDATION_FAILED', 'body');
  });

  it('a lone surrogate is a 422 naming the field (it would not survive a restart)', async () => {
    await refused('POST', '/v1/rules', '{"rule_id":"ls","attributes":["US","USD","card","\\ud800"],"primary_id":"a","secondary_id":"b"}', 422, 'VALIDATION_FAILED', 'attributes[3]');
    await refused('POST', '/v1/webhooks', '{"url":"https://hooks.example.com/ls","secret":"abcdefgh\\udc00"}', 422, 'VALIDATION_FAILED', 'secret');
    // A well-formed pair written as escapes is fine.
    const ok = await s.request('POST', '/v1/rules', '{"rule_id":"emoji","attributes":["US","USD","card","\\ud83d\\udcb3"],"primary_id":"a","secondary_id":"b"}', H);
    expect(ok.status).toBe(201);
    expect(ok.json.attributes[3]).toBe('💳');
  });

  it('a rule called __proto__ is listed in /v1/health and the shadow report, also after a restart', async () => {
    const env = { SERVICE_API_KEYS: `${KEY}:lim`, SERVICE_RATE_LIMIT_RPS: '0', SERVICE_LOG_LEVEL: 'warn' };
    const p = await startServer({ env });
    expect((await p.request('POST', '/v1/rules', { rule_id: '__proto__', attributes: ['US'], primary_id: 'a', secondary_id: 'b' }, H)).status).toBe(201);
    expect((await p.request('POST', '/v1/config/tiers', { shadow_mode: true }, H)).status).toBe(200);
    expect((await p.request('POST', '/v1/outcome', { rule_id: '__proto__', processor_id: 'a', success: true, latency_ms: 5 }, H)).status).toBe(202);
    const has = (o: object) => Object.prototype.hasOwnProperty.call(o, '__proto__');
    expect(has((await p.request('GET', '/v1/health', undefined, H)).json.rules)).toBe(true);
    expect(has((await p.request('GET', '/v1/shadow-report', undefined, H)).json.rules)).toBe(true);
    expect(await p.stop()).toBe(0);
    const p2 = await startServer({ dataDir: p.dataDir, env });
    const report = (await p2.request('GET', '/v1/shadow-report', undefined, H)).json;
    expect(has(report.rules)).toBe(true);
    expect(Object.getOwnPropertyDescriptor(report.rules, '__proto__')!.value.total_outcomes).toBe(1);
    await p2.stop();
  });
});
