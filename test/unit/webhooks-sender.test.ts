import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryJob, DeliveryWorkerOptions, FromWorker, WebhookTarget } from '../../src/webhooks/protocol.js';
import { DeliveryEngine, type SendFn } from '../../src/webhooks/sender.js';
import { verify } from '../../src/webhooks/signature.js';

interface Call {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  at: number;
  signal: AbortSignal;
}

const opts = (o: Partial<DeliveryWorkerOptions> = {}): DeliveryWorkerOptions => ({
  timeoutMs: 1000,
  backoffMs: [100, 200, 400],
  allowPrivate: true,
  version: '9.9.9',
  maxConcurrency: 64,
  maxPerWebhook: 8,
  ...o,
});

const target = (webhookId: string, secret: string | null = null, url = `http://receiver/${webhookId}`): WebhookTarget => ({ tenantId: 't1', webhookId, url, secret });
let n = 0;
const job = (webhookId: string, extra: Partial<DeliveryJob> = {}): DeliveryJob => ({
  id: `dlv_${webhookId}_${n++}`,
  tenantId: 't1',
  webhookId,
  eventType: 'failover.triggered',
  body: '{"event_id":"evt_1","event_type":"failover.triggered"}',
  attemptsMade: 0,
  maxAttempts: 3,
  ...extra,
});

/** A send function whose behaviour is chosen per call; `hang` waits for the abort. */
function fakeSend(behave: (c: Call, i: number) => number | 'hang' | Error) {
  const calls: Call[] = [];
  const send: SendFn = (url, headers, body, signal) => {
    const c = { url, headers, body, at: performance.now(), signal };
    calls.push(c);
    const b = behave(c, calls.length - 1);
    if (b === 'hang') {
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))));
    }
    if (b instanceof Error) return Promise.reject(b);
    return new Promise((r) => setTimeout(() => r(b), 1));
  };
  return { send, calls };
}

const engines: DeliveryEngine[] = [];
function engine(o: DeliveryWorkerOptions, send: SendFn) {
  const reports: (FromWorker & { at: number })[] = [];
  const e = new DeliveryEngine(o, (m) => reports.push({ ...m, at: performance.now() }), send);
  engines.push(e);
  return { e, reports };
}
afterEach(() => {
  for (const e of engines.splice(0)) e.handle({ type: 'stop', graceMs: 0 });
});

const until = async (cond: () => boolean, ms = 3000) => {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('DeliveryEngine', () => {
  it('sends the headers, signs only with a secret, and reports a 2xx as delivered', async () => {
    const { send, calls } = fakeSend(() => 204);
    const { e, reports } = engine(opts(), send);
    const signed = job('wh_a');
    e.handle({ type: 'deliver', target: target('wh_a', 'secret-123'), job: signed });
    e.handle({ type: 'deliver', target: target('wh_b'), job: job('wh_b') });
    await until(() => reports.length === 2);
    const a = calls.find((c) => c.url.endsWith('wh_a'))!;
    const b = calls.find((c) => c.url.endsWith('wh_b'))!;
    expect(a.headers['content-type']).toBe('application/json');
    expect(a.headers['user-agent']).toBe('payment-routing-engine/9.9.9');
    expect(a.headers['x-service-event']).toBe('failover.triggered');
    expect(a.headers['x-service-delivery']).toBe(signed.id);
    expect(a.body.toString('utf8')).toBe(signed.body);
    expect(verify('secret-123', a.body, a.headers['x-service-signature'])).toBe(true);
    expect(b.headers).not.toHaveProperty('x-service-signature');
    for (const r of reports) {
      expect(r).toMatchObject({ type: 'attempt', next: 'delivered', attempt: { attempt: 1, status_code: 204, error: null } });
    }
  });

  it('retries failures with the back-off and gives up after the third attempt', async () => {
    const { send, calls } = fakeSend((_c, i) => (i < 2 ? 500 : 200));
    const { e, reports } = engine(opts(), send);
    e.handle({ type: 'deliver', target: target('wh_a'), job: job('wh_a') });
    await until(() => reports.length === 3);
    expect(reports.map((r) => r.type === 'attempt' && r.next)).toEqual(['retry', 'retry', 'delivered']);
    expect(reports.map((r) => r.type === 'attempt' && r.retryInMs)).toEqual([100, 200, null]);
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(95);
    expect(calls[2].at - calls[1].at).toBeGreaterThanOrEqual(195);
    expect(reports[0]).toMatchObject({ attempt: { attempt: 1, status_code: 500, error: 'HTTP 500' } });

    const failing = fakeSend(() => new Error('connect ECONNREFUSED'));
    const f = engine(opts({ backoffMs: [10, 20] }), failing.send);
    f.e.handle({ type: 'deliver', target: target('wh_x'), job: job('wh_x') });
    await until(() => f.reports.length === 3);
    expect(f.reports.map((r) => r.type === 'attempt' && r.next)).toEqual(['retry', 'retry', 'failed']);
    expect(f.reports[2]).toMatchObject({ attempt: { attempt: 3, status_code: null } });
    expect((f.reports[2] as { attempt: { error: string } }).attempt.error).toMatch(/ECONNREFUSED/);
  });

  it('a resumed delivery continues its series', async () => {
    const { send, calls } = fakeSend(() => 503);
    const { e, reports } = engine(opts({ backoffMs: [10] }), send);
    e.handle({ type: 'deliver', target: target('wh_a'), job: job('wh_a', { attemptsMade: 2 }) });
    await until(() => reports.length === 1);
    expect(calls).toHaveLength(1);
    expect(reports[0]).toMatchObject({ next: 'failed', attempt: { attempt: 3 } });
  });

  it('cuts an attempt at the timeout', async () => {
    const { send } = fakeSend(() => 'hang');
    const { e, reports } = engine(opts({ timeoutMs: 150, backoffMs: [10] }), send);
    e.handle({ type: 'deliver', target: target('wh_a'), job: job('wh_a', { maxAttempts: 1 }) });
    await until(() => reports.length === 1);
    const r = reports[0] as Extract<FromWorker, { type: 'attempt' }>;
    expect(r.next).toBe('failed');
    expect(r.attempt.error).toMatch(/timeout/);
    expect(r.attempt.duration_ms).toBeGreaterThanOrEqual(140);
    expect(r.attempt.duration_ms).toBeLessThan(1000);
  });

  it('a hanging webhook holds at most maxPerWebhook slots and never delays another', async () => {
    const { send, calls } = fakeSend((c) => (c.url.endsWith('slow') ? 'hang' : 200));
    const { e, reports } = engine(opts({ timeoutMs: 5000, maxPerWebhook: 2, maxConcurrency: 4 }), send);
    for (let i = 0; i < 10; i++) e.handle({ type: 'deliver', target: target('wh_slow', null, 'http://r/slow'), job: job('wh_slow') });
    for (let i = 0; i < 5; i++) e.handle({ type: 'deliver', target: target('wh_fast'), job: job('wh_fast') });
    await until(() => reports.length === 5, 1000);
    expect(calls.filter((c) => c.url.endsWith('slow'))).toHaveLength(2);
    expect(reports.every((r) => r.type === 'attempt' && r.webhookId === 'wh_fast' && r.next === 'delivered')).toBe(true);
    expect(e.size).toBe(10);
  });

  it('round-robins webhooks under the global cap', async () => {
    const order: string[] = [];
    const { send } = fakeSend((c) => {
      order.push(c.url.slice(-1));
      return 200;
    });
    const { e, reports } = engine(opts({ maxConcurrency: 1, maxPerWebhook: 1 }), send);
    for (const w of ['a', 'a', 'a', 'b', 'b', 'c']) e.handle({ type: 'deliver', target: target(`wh_${w}`, null, `http://r/${w}`), job: job(`wh_${w}`) });
    await until(() => reports.length === 6);
    // 'a' was first and alone when it started; then the three queues take turns
    expect(order.slice(1, 4).sort()).toEqual(['a', 'b', 'c']);
  });

  it('cancel drops queued, retrying and in-flight jobs of a webhook without reporting them', async () => {
    const { send } = fakeSend((c) => (c.url.endsWith('gone') ? 'hang' : 200));
    const { e, reports } = engine(opts({ timeoutMs: 5000, maxPerWebhook: 1 }), send);
    e.handle({ type: 'deliver', target: target('wh_gone', null, 'http://r/gone'), job: job('wh_gone') });
    e.handle({ type: 'deliver', target: target('wh_gone', null, 'http://r/gone'), job: job('wh_gone') });
    await new Promise((r) => setTimeout(r, 20));
    e.handle({ type: 'cancel', tenantId: 't1', webhookId: 'wh_gone' });
    await until(() => e.size === 0);
    await new Promise((r) => setTimeout(r, 20));
    expect(reports).toHaveLength(0);
  });

  it('target updates apply to retries', async () => {
    const { send, calls } = fakeSend((_c, i) => (i === 0 ? 500 : 200));
    const { e, reports } = engine(opts({ backoffMs: [50] }), send);
    e.handle({ type: 'deliver', target: target('wh_a', 'old-secret-1', 'http://r/old'), job: job('wh_a') });
    await until(() => reports.length === 1);
    e.handle({ type: 'target', target: target('wh_a', 'new-secret-2', 'http://r/new') });
    await until(() => reports.length === 2);
    expect(calls[1].url).toBe('http://r/new');
    expect(verify('new-secret-2', calls[1].body, calls[1].headers['x-service-signature'])).toBe(true);
  });

  it('stop lets requests finish within the grace, aborts the rest unreported, schedules no retry', async () => {
    const { send, calls } = fakeSend((c) => (c.url.endsWith('hang') ? 'hang' : c.url.endsWith('fail') ? 500 : 200));
    const { e, reports } = engine(opts({ timeoutMs: 5000, backoffMs: [20] }), send);
    e.handle({ type: 'deliver', target: target('wh_h', null, 'http://r/hang'), job: job('wh_h') });
    e.handle({ type: 'deliver', target: target('wh_f', null, 'http://r/fail'), job: job('wh_f') });
    await until(() => calls.length === 2);
    e.handle({ type: 'stop', graceMs: 100 });
    const t0 = performance.now();
    await until(() => reports.some((r) => r.type === 'stopped'));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90);
    expect(reports.map((r) => (r.type === 'attempt' ? `${r.webhookId}:${r.next}` : r.type))).toEqual(['wh_f:retry', 'stopped']);
    await new Promise((r) => setTimeout(r, 60));
    expect(calls).toHaveLength(2); // no retry after stop
    e.handle({ type: 'deliver', target: target('wh_x'), job: job('wh_x') });
    expect(calls).toHaveLength(2);
  });
});
