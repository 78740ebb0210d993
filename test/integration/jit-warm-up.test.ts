/**
 * The start-up JIT warm-up (SERVICE_JIT_WARM_UP, default on) in the real server: the evaluation
 * thread reports its warm-up, the front thread warms its checkpoint and registry paths before it
 * listens, and the metrics render thread is started and warmed before any scrape; the service then routes, evaluates and renders /metrics/ as usual, on its own tables
 * only (nothing simulated shows in its metrics). Off, neither happens, and the render thread
 * starts at the first scrape, as before.
 */
import { availableParallelism } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

afterAll(stopAllServers);

const KEY = { 'X-API-Key': 'k-acme' };
const ENV = { SERVICE_API_KEYS: 'k-acme:acme', SERVICE_EVAL_INTERVAL_MS: '200' };
const lines = (s: TestServer, msg: string) =>
  s
    .output()
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function scrape(s: TestServer): Promise<string> {
  const r = await s.request('GET', '/metrics/');
  expect(r.status).toBe(200);
  return r.text;
}

describe('JIT warm-up at start', () => {
  it('warms the evaluation and render threads before traffic; the service then works on its own tables only', async () => {
    const s = await startServer({ env: ENV, jitWarmUp: true });
    // Every pool thread of both sets (early evaluations, cycle: worker-pool.ts) warms up.
    const poolThreads = 2 * Math.max(1, availableParallelism() - 1);
    await until('every warm-up', () => lines(s, 'evaluation thread warmed up').length === poolThreads && lines(s, 'metrics render thread started').length > 0, 20_000);
    expect(lines(s, 'evaluation thread warm-up failed')).toEqual([]);
    const [pool] = lines(s, 'evaluation thread warmed up');
    expect(pool.evaluations).toBeGreaterThan(0);
    expect(pool.transitions).toBeGreaterThan(0);
    const [render] = lines(s, 'metrics render thread started');
    expect(render.warm_up_ms).toEqual(expect.any(Number));
    // The front thread's own (registry text, checkpoints into a scratch store), before it listened.
    const [front] = lines(s, 'front thread warmed up');
    expect(front).toMatchObject({ registry_ms: expect.any(Number), checkpoint_ms: expect.any(Number), checkpoint_writes: expect.any(Number) });
    expect(front.checkpoint_writes).toBeGreaterThan(0);
    expect(s.output().indexOf('"front thread warmed up"')).toBeLessThan(s.output().indexOf('"service started"'));

    const rule = { rule_id: 'r1', attributes: ['US', 'USD', 'card'], primary_id: 'stripe', secondary_id: 'adyen', primary_weight: 0.9 };
    expect((await s.request('POST', '/v1/rules', rule, KEY)).status).toBe(201);
    const route = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', payment_method: 'card', amount: 10 }, KEY);
    expect(route.status).toBe(200);
    for (let i = 0; i < 20; i++) {
      const r = await s.request('POST', '/v1/outcome', { rule_id: 'r1', processor_id: 'stripe', success: false, latency_ms: 100, error_code: 'processor_unavailable' }, KEY);
      expect(r.status).toBe(202);
    }
    // The real rule fails over (the warm-up's transitions went nowhere: only this one is recorded).
    await until('r1 failed over', async () => JSON.stringify((await s.request('GET', '/v1/health', undefined, KEY)).json).includes('failed_over'), 10_000);
    const text = await scrape(s);
    expect(text).toContain('service_metrics_render_thread_up 1');
    // A scrape counts the renderings finished before it: the next one (after the 1 s cache) shows this one's.
    await new Promise((r) => setTimeout(r, 1100));
    expect(await scrape(s)).toMatch(/service_metrics_renderings_total\{thread="render"\} [1-9]/);
    expect(text).toContain('rule_id="r1",processor_id="stripe",tenant_id="acme"');
    // Nothing of the synthetic tables: no warm-up tenant, no rule of theirs, no warm-up family.
    expect(text).not.toMatch(/warm-up|service_warm_up|rule-0-/);
    expect(text).toMatch(/service_processor_health_status\{rule_id="r1",processor_id="stripe",tenant_id="acme"\} 0\n/);
  });

  it('SERVICE_JIT_WARM_UP=false skips it: no warm-up, and the render thread starts at the first scrape', async () => {
    const s = await startServer({ env: { ...ENV, SERVICE_JIT_WARM_UP: 'false' } });
    expect((await s.request('GET', '/ready')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(lines(s, 'evaluation thread warmed up')).toHaveLength(0);
    expect(lines(s, 'metrics render thread started')).toHaveLength(0);
    expect(lines(s, 'front thread warmed up')).toHaveLength(0);
    await scrape(s);
    await until('the render thread', () => lines(s, 'metrics render thread started').length > 0, 10_000);
    expect(lines(s, 'metrics render thread started')[0].warm_up_ms).toBeUndefined();
  });
});
