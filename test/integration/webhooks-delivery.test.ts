/**
 * Webhook delivery end to end, in-process: the compiled service (dist/) is started with
 * startService(), events are published through `app.webhooks.publish()` (the call the engine
 * makes), and real HTTP receivers on the loopback get them from the delivery thread.
 * Build first: `npx tsc -p tsconfig.json`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';

// The compiled modules (plain JS, no declarations): typed loosely here.
/* eslint-disable @typescript-eslint/no-explicit-any */
type Service = { port: number; app: any; stop(): Promise<void> };
const { loadConfig } = (await import('../../dist/src/config.js')) as any;
const { startService } = (await import('../../dist/src/service.js')) as any;

const KEY_T1 = 'key-t1';
const KEY_T2 = 'key-t2';
const BACKOFF = [300, 600, 1200];
const TIMEOUT_MS = 1000;
const dirs: string[] = [];

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'wh-delivery-'));
  dirs.push(d);
  return join(d, 'data');
}

async function start(dir: string, env: Record<string, string> = {}): Promise<Service> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SERVICE_DATA_DIR: dir,
    SERVICE_API_KEYS: `${KEY_T1}:t1,${KEY_T2}:t2`,
    SERVICE_WEBHOOK_ALLOW_PRIVATE: '1',
    SERVICE_WEBHOOK_BACKOFF_MS: BACKOFF.join(','),
    SERVICE_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    SERVICE_LOG_LEVEL: 'error',
    ...env,
  });
  return startService(config);
}

interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  json: any;
}

type Behaviour = (n: number, res: ServerResponse) => void;
const answer = (status: number): Behaviour => (_n, res) => res.writeHead(status).end();
const hang: Behaviour = () => {};

class Receiver {
  readonly got: Received[] = [];
  behave: Behaviour = answer(200);
  private server!: Server;
  port = 0;
  async listen(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        this.got.push({ at: performance.now(), headers: req.headers, raw, json: JSON.parse(raw.toString('utf8')) });
        this.behave(this.got.length, res);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

async function api(svc: Service, method: string, path: string, body?: unknown, key = KEY_T1): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${svc.port}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function register(svc: Service, input: Record<string, unknown>, key = KEY_T1): Promise<string> {
  const r = await api(svc, 'POST', '/v1/webhooks', input, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}


const failover = { rule_id: 'us_usd_card', from_processor: 'stripe', to_processor: 'adyen', reason: 'error rate 42.0% > 30.0%', trigger_value: 0.42, threshold: 0.3 };
const degraded = {
  rule_id: 'us_usd_card',
  processor_id: 'stripe',
  role: 'primary',
  status: 'degraded',
  previous_status: 'healthy',
  reason: 'error rate 12.0% > 10.0%',
  trigger_value: 0.12,
  threshold: 0.1,
};

async function counter(eventType: string, outcome: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${svc.port}/metrics/`)).text();
  const m = new RegExp(`service_webhook_deliveries_total\\{event_type="${eventType.replace('.', '\\.')}",outcome="${outcome}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

const receivers: Receiver[] = [];
async function receiver(): Promise<Receiver> {
  const r = await new Receiver().listen();
  receivers.push(r);
  return r;
}

let svc: Service;

beforeAll(async () => {
  svc = await start(dataDir());
});

afterAll(async () => {
  await svc?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('webhook delivery', () => {
  it('signs the exact body with the secret; headers and payload as specified', async () => {
    const rx = await receiver();
    const secret = 'whsec-test-0123456789';
    const id = await register(svc, { url: rx.url(), secret, event_types: ['failover.triggered'] });
    const atMs = Date.UTC(2025, 2, 1, 12, 0, 5);
    const eventId = svc.app.webhooks.publish('t1', 'failover.triggered', failover, atMs);
    expect(eventId).toMatch(/^evt_/);
    const got = await until('the delivery', () => rx.got[0]);

    const expected = `sha256=${createHmac('sha256', secret).update(got.raw).digest('hex')}`;
    const header = String(got.headers['x-service-signature']);
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(timingSafeEqual(Buffer.from(header), Buffer.from(expected))).toBe(true);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toMatch(/^payment-routing-engine\/\d+\.\d+\.\d+/);
    expect(got.headers['x-service-event']).toBe('failover.triggered');
    expect(got.headers['x-service-delivery']).toMatch(/^dlv_/);
    expect(got.json).toEqual({ event_id: eventId, event_type: 'failover.triggered', timestamp: '2025-03-01T12:00:05.000Z', data: failover });

    const list = await until('the delivered record', async () => {
      const r = await api(svc, 'GET', `/v1/webhooks/${id}/deliveries`);
      return r.body.deliveries[0]?.status === 'delivered' ? r.body : null;
    });
    expect(list.total).toBe(1);
    const d = list.deliveries[0];
    expect(d).toMatchObject({ id: got.headers['x-service-delivery'], webhook_id: id, event_id: eventId, event_type: 'failover.triggered', series: 1 });
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({ series: 1, attempt: 1, status_code: 200, error: null });
    expect(d.payload).toEqual(got.json);
    const one = await api(svc, 'GET', `/v1/webhooks/${id}/deliveries/${d.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(d);
  });

  it('sends no signature without a secret; honours subscriptions, pause and tenants', async () => {
    const rx = await receiver();
    const other = await receiver();
    const plain = await register(svc, { url: rx.url('/plain') });
    const healthyOnly = await register(svc, { url: other.url('/healthy-only'), event_types: ['processor.healthy'] });
    const paused = await register(svc, { url: other.url('/paused'), active: false });
    await register(svc, { url: other.url('/t2') }, KEY_T2);

    svc.app.webhooks.publish('t1', 'processor.degraded', degraded);
    const got = await until('the delivery', () => rx.got.find((g) => g.json.event_type === 'processor.degraded'));
    expect(got.headers).not.toHaveProperty('x-service-signature');
    expect(got.json.data).toEqual(degraded);
    await new Promise((r) => setTimeout(r, 300));
    expect(other.got).toHaveLength(0); // not subscribed, paused, another tenant's

    expect((await api(svc, 'PATCH', `/v1/webhooks/${paused}`, { active: true })).body.active).toBe(true);
    svc.app.webhooks.publish('t1', 'processor.healthy', { ...degraded, status: 'healthy', previous_status: 'degraded' });
    await until('both deliveries', () => other.got.length === 2);
    expect(other.got.map((g) => g.json.event_type)).toEqual(['processor.healthy', 'processor.healthy']);
    expect(healthyOnly).toMatch(/^wh_/);
    expect(plain).toMatch(/^wh_/);
  });

  it('publish never throws into the caller', () => {
    const circular: any = { rule_id: 'r' };
    circular.self = circular;
    expect(svc.app.webhooks.publish('t1', 'failover.triggered', circular)).toBeNull();
    expect(svc.app.webhooks.publish('t1', 'no.such.event', {})).toBeNull();
    expect(svc.app.webhooks.publish('nobody', 'failover.triggered', failover)).toMatch(/^evt_/);
  });

  it('retries 500, 500 then 200: three attempts in order, spaced by the back-off', async () => {
    const rx = await receiver();
    rx.behave = (n, res) => res.writeHead(n < 3 ? 500 : 200).end();
    const id = await register(svc, { url: rx.url(), event_types: ['failover.recovered'] });
    const retried0 = await counter('failover.recovered', 'retried');
    const delivered0 = await counter('failover.recovered', 'delivered');
    svc.app.webhooks.publish('t1', 'failover.recovered', { ...failover, from_processor: 'adyen', to_processor: 'stripe' });
    await until('three attempts', () => rx.got.length === 3);
    const ids = new Set(rx.got.map((g) => g.headers['x-service-delivery']));
    expect(ids.size).toBe(1);
    expect(rx.got[1].at - rx.got[0].at).toBeGreaterThanOrEqual(0.8 * BACKOFF[0]);
    expect(rx.got[2].at - rx.got[1].at).toBeGreaterThanOrEqual(0.8 * BACKOFF[1]);
    expect(rx.got[0].raw.equals(rx.got[2].raw)).toBe(true);
    const d = await until('delivered', async () => {
      const r = await api(svc, 'GET', `/v1/webhooks/${id}/deliveries?status=delivered`);
      return r.body.deliveries[0];
    });
    expect(d.attempts.map((a: any) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    expect(d.attempts[0].error).toBe('HTTP 500');
    // (earlier tests' webhooks subscribed to everything get this event too, without retries)
    expect((await counter('failover.recovered', 'retried')) - retried0).toBe(2);
    expect((await counter('failover.recovered', 'delivered')) - delivered0).toBeGreaterThanOrEqual(1);
  });

  it('delivers to webhooks in parallel, cuts a hanging receiver at the timeout, keeps the failure and redelivers it', async () => {
    const slow = await receiver();
    const fast = await receiver();
    slow.behave = hang;
    const slowId = await register(svc, { url: slow.url(), event_types: ['processor.degraded'] }, KEY_T2);
    const fastId = await register(svc, { url: fast.url(), event_types: ['processor.degraded'] }, KEY_T2);
    const t0 = performance.now();
    svc.app.webhooks.publish('t2', 'processor.degraded', degraded);
    await until('the fast delivery', () => fast.got.length === 1 && slow.got.length === 1);
    expect(fast.got[0].at - t0).toBeLessThan(TIMEOUT_MS / 2); // not queued behind the hanging one
    expect(fast.got[0].json.event_id).toBe(slow.got[0].json.event_id);

    // 3 attempts of ~1 s each plus 0.3 s and 0.6 s of back-off
    const failed = await until(
      'the failed delivery',
      async () => (await api(svc, 'GET', `/v1/webhooks/${slowId}/deliveries?status=failed`, undefined, KEY_T2)).body.deliveries[0],
      10_000,
    );
    expect(slow.got).toHaveLength(3);
    expect(failed.attempts).toHaveLength(3);
    for (const a of failed.attempts) {
      expect(a.status_code).toBeNull();
      expect(a.error).toMatch(/timeout/);
      expect(a.duration_ms).toBeGreaterThanOrEqual(0.8 * TIMEOUT_MS);
      expect(a.duration_ms).toBeLessThan(2.5 * TIMEOUT_MS);
    }
    const fastList = await api(svc, 'GET', `/v1/webhooks/${fastId}/deliveries`, undefined, KEY_T2);
    expect(fastList.body.deliveries[0].status).toBe('delivered');
    expect((await api(svc, 'GET', `/v1/webhooks/${slowId}/deliveries?status=delivered`, undefined, KEY_T2)).body).toEqual({ deliveries: [], total: 0 });
    // Another tenant does not see it.
    expect((await api(svc, 'GET', `/v1/webhooks/${slowId}/deliveries/${failed.id}`)).status).toBe(404);
    expect((await api(svc, 'POST', `/v1/webhooks/${slowId}/deliveries/${failed.id}/redeliver`)).status).toBe(404);

    slow.behave = answer(202);
    const re = await api(svc, 'POST', `/v1/webhooks/${slowId}/deliveries/${failed.id}/redeliver`, undefined, KEY_T2);
    expect(re.status).toBe(202);
    expect(re.body).toMatchObject({ id: failed.id, status: 'pending', series: 2 });
    const again = await api(svc, 'POST', `/v1/webhooks/${slowId}/deliveries/${failed.id}/redeliver`, undefined, KEY_T2);
    expect([409, 202]).toContain(again.status); // 409 while pending (202 only if it was already delivered)
    if (again.status === 409) expect(again.body.error.code).toBe('DELIVERY_IN_PROGRESS');
    const done = await until('the redelivery', async () => {
      const r = await api(svc, 'GET', `/v1/webhooks/${slowId}/deliveries/${failed.id}`, undefined, KEY_T2);
      return r.body.status === 'delivered' ? r.body : null;
    });
    expect(slow.got.at(-1)!.raw.equals(slow.got[0].raw)).toBe(true);
    expect(slow.got.at(-1)!.headers['x-service-delivery']).toBe(failed.id);
    expect(done.attempts.filter((a: any) => a.series === 2).map((a: any) => a.status_code)).toContain(202);
  });

  it('lists newest first with limit and before; validates the query; 404 for unknown ids', async () => {
    const rx = await receiver();
    const id = await register(svc, { url: rx.url(), event_types: ['processor.healthy'] });
    const eventIds: string[] = [];
    for (let i = 0; i < 5; i++) eventIds.push(svc.app.webhooks.publish('t1', 'processor.healthy', { ...degraded, status: 'healthy', trigger_value: i }));
    await until('five deliveries', async () => (await api(svc, 'GET', `/v1/webhooks/${id}/deliveries?status=delivered&limit=100`)).body.total === 5);
    const page1 = (await api(svc, 'GET', `/v1/webhooks/${id}/deliveries?limit=2`)).body;
    expect(page1.total).toBe(5);
    expect(page1.deliveries.map((d: any) => d.event_id)).toEqual([eventIds[4], eventIds[3]]);
    const page2 = (await api(svc, 'GET', `/v1/webhooks/${id}/deliveries?limit=2&before=${page1.deliveries[1].id}`)).body;
    expect(page2.deliveries.map((d: any) => d.event_id)).toEqual([eventIds[2], eventIds[1]]);
    for (const [q, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['status=done', 'status'],
      ['before=xyz', 'before'],
    ]) {
      const r = await api(svc, 'GET', `/v1/webhooks/${id}/deliveries?${q}`);
      expect(r.status, q).toBe(422);
      expect(r.body.error.fields[0].field).toBe(field);
    }
    expect((await api(svc, 'GET', `/v1/webhooks/${id}/deliveries/dlv_nope`)).body.error.code).toBe('DELIVERY_NOT_FOUND');
    expect((await api(svc, 'GET', `/v1/webhooks/${id}/deliveries/dlv_000000000000000000000000`)).status).toBe(404);
    expect((await api(svc, 'GET', `/v1/webhooks/wh_000000000000000000000000/deliveries`)).body.error.code).toBe('WEBHOOK_NOT_FOUND');
  });
});

describe('webhook durability and delivery-time checks', () => {
  it('a delivery pending when the service stops is sent when it starts again', async () => {
    const dir = dataDir();
    const rx = await receiver();
    rx.behave = hang;
    let s = await start(dir);
    const id = await register(s, { url: rx.url() });
    const eventId = s.app.webhooks.publish('t1', 'failover.triggered', failover);
    await until('the first attempt', () => rx.got.length === 1);
    const t0 = performance.now();
    await s.stop();
    expect(performance.now() - t0).toBeLessThan(5000);
    rx.behave = answer(200);
    const before = rx.got.length;
    s = await start(dir);
    try {
      await until('the resumed delivery', () => rx.got.length > before && rx.got.at(-1)!.json.event_id === eventId);
      const d = await until('delivered', async () => {
        const r = await api(s, 'GET', `/v1/webhooks/${id}/deliveries`);
        return r.body.deliveries[0]?.status === 'delivered' ? r.body.deliveries[0] : null;
      });
      expect(d.event_id).toBe(eventId);
      expect(d.attempts.at(-1).status_code).toBe(200);
      expect(rx.got.at(-1)!.headers['x-service-delivery']).toBe(rx.got[0].headers['x-service-delivery']);
    } finally {
      await s.stop();
    }
  });

  it('refuses a name resolving to a private address at delivery time when private destinations are not allowed', async () => {
    const dir = dataDir();
    const rx = await receiver();
    let s = await start(dir);
    const id = await register(s, { url: `http://localhost:${rx.port}/hook` }); // allowed: the flag is on
    await s.stop();
    s = await start(dir, { SERVICE_WEBHOOK_ALLOW_PRIVATE: '0', SERVICE_WEBHOOK_BACKOFF_MS: '50,50' });
    try {
      expect((await api(s, 'POST', '/v1/webhooks', { url: `http://localhost:${rx.port}/hook` })).status).toBe(422);
      s.app.webhooks.publish('t1', 'failover.triggered', failover);
      const d = await until('the failed delivery', async () => (await api(s, 'GET', `/v1/webhooks/${id}/deliveries?status=failed`)).body.deliveries[0]);
      expect(d.attempts).toHaveLength(3);
      // The tenant gets a generic reason; how the name resolves here is for the operator log only.
      for (const a of d.attempts) {
        expect(a.error).toBe('destination refused: the host is not a public address');
        expect(a.error).not.toMatch(/127\.0\.0\.1|::1|resolves|loopback/);
      }
      expect(rx.got).toHaveLength(0);
    } finally {
      await s.stop();
    }
  });
});
