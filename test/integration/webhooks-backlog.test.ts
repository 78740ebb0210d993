/**
 * Webhook backlog under a receiver that never answers (issue 14, item 5), with the real
 * dispatcher, store and delivery thread (compiled, in-process): a noisy tenant's 20 webhooks
 * to a dead receiver get thousands of events; the pending deliveries stay under the
 * per-webhook cap (the oldest dropped: failed with the reason in their history, counted in
 * the metric), memory stays bounded, and a quiet tenant's event is delivered at once.
 * Build first: `npx tsc -p tsconfig.json`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
const { WebhookDispatcher } = (await import('../../dist/src/webhooks/dispatcher.js')) as any;
const { LmdbStore } = (await import('../../dist/src/store/lmdb-store.js')) as any;
const { Metrics } = (await import('../../dist/src/metrics/registry.js')) as any;

const CAP = 200;
const NOISY_HOOKS = 20;
const EVENTS = 600;
const dir = mkdtempSync(join(tmpdir(), 'wh-backlog-'));
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

const failover = { rule_id: 'r1', from_processor: 'stripe', to_processor: 'adyen', reason: 'error rate 0.5', trigger_value: 0.5, threshold: 0.3 };

describe('a receiver that never answers', () => {
  it('keeps the backlog under the cap, counts the dropped, and does not delay another tenant', async () => {
    // Accepts connections and never answers.
    const held: Socket[] = [];
    const dead = createTcpServer((sock) => held.push(sock));
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    cleanups.push(() => {
      held.forEach((s) => s.destroy());
      dead.close();
    });
    const deadPort = (dead.address() as { port: number }).port;
    const arrivals: number[] = [];
    const live = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        arrivals.push(performance.now());
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => live.listen(0, '127.0.0.1', r));
    cleanups.push(() => void live.close());
    const livePort = (live.address() as { port: number }).port;

    const store = new LmdbStore(join(dir, 'data'));
    const metrics = new Metrics();
    const webhooks = new WebhookDispatcher({
      store,
      metrics,
      version: 'test',
      config: { webhookAllowPrivate: true, webhookTimeoutMs: 10_000, webhookBackoffMs: [1000, 2000, 4000] },
      maxPendingPerWebhook: CAP,
    });
    await webhooks.start();
    cleanups.push(async () => {
      await webhooks.stop();
      await store.close();
    });
    const noisy: string[] = [];
    for (let i = 0; i < NOISY_HOOKS; i++) noisy.push((await webhooks.create('noisy', { url: `http://127.0.0.1:${deadPort}/h${i}` })).id);
    await webhooks.create('quiet', { url: `http://127.0.0.1:${livePort}/hook` });

    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < EVENTS; i++) {
      webhooks.publish('noisy', 'failover.triggered', failover);
      if (i % 50 === 49) await new Promise((r) => setImmediate(r));
    }
    // The backlog is bounded by the cap per webhook, whatever the receiver does.
    await until('the backlog to settle at the cap', () => webhooks.pendingCount() <= NOISY_HOOKS * CAP);
    expect(webhooks.pendingCount()).toBeLessThanOrEqual(NOISY_HOOKS * CAP);

    // Another tenant's event is sent at once, not behind 12,000 deliveries to a dead receiver.
    const t0 = performance.now();
    webhooks.publish('quiet', 'failover.triggered', failover);
    await until('the quiet tenant delivery', () => arrivals.length === 1, 10_000);
    const lateMs = arrivals[0] - t0;

    const dropped = (await metrics.registry.getSingleMetric('service_webhook_deliveries_total').get()).values
      .filter((v: any) => v.labels.outcome === 'dropped')
      .reduce((a: number, v: any) => a + v.value, 0);
    expect(dropped).toBe(NOISY_HOOKS * EVENTS - NOISY_HOOKS * CAP);

    // A dropped delivery is in the history: failed, with the reason, redeliverable.
    const failed = webhooks.listDeliveries('noisy', noisy[0], { limit: 100, status: 'failed' });
    expect(failed.total).toBeGreaterThan(0);
    expect(failed.deliveries[0].attempts.at(-1).error).toMatch(/^dropped: more than 200 deliveries were pending/);

    const heapGrowthMb = (process.memoryUsage().heapUsed - heapBefore) / 1048576;
    console.log(`dead receiver: ${NOISY_HOOKS * EVENTS} deliveries, pending ${webhooks.pendingCount()}, dropped ${dropped}, quiet tenant delivered after ${lateMs.toFixed(0)} ms, heap +${heapGrowthMb.toFixed(1)} MB`);
    expect(lateMs).toBeLessThan(2000);
  }, 120_000);
});
