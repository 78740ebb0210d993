/**
 * WebhookDispatcher over a real LMDB store and its real delivery thread (compiled: dist/),
 * without HTTP routing: pruning to the per-webhook limit, deletion cleanup, the paused
 * state, and the guarantees publish() gives its caller.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/* eslint-disable @typescript-eslint/no-explicit-any */
const { LmdbStore } = (await import('../../dist/src/store/lmdb-store.js')) as any;
const { WebhookDispatcher } = (await import('../../dist/src/webhooks/dispatcher.js')) as any;
const { setLogLevel } = (await import('../../dist/src/log.js')) as any;
setLogLevel('error');

const data = { rule_id: 'r1', from_processor: 'a', to_processor: 'b', reason: 'x', trigger_value: 0.5, threshold: 0.3 };
let dir: string;
let store: any;
let wh: any;
let server: Server;
let url: string;
const got: any[] = [];

const until = async (what: string, cond: () => boolean, ms = 8000) => {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push(JSON.parse(body));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  dir = mkdtempSync(join(tmpdir(), 'wh-dispatcher-'));
  store = new LmdbStore(join(dir, 'data'));
  wh = new WebhookDispatcher({
    store,
    config: { webhookAllowPrivate: true, webhookTimeoutMs: 1000, webhookBackoffMs: [50, 100] },
    version: '0.0.0-test',
    maxDeliveriesPerWebhook: 5,
  });
});

afterAll(async () => {
  await wh?.stop();
  await store?.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('WebhookDispatcher', () => {
  it('drops events before start, without throwing', () => {
    expect(wh.publish('t1', 'failover.triggered', data)).toBeNull();
  });

  it('keeps only the newest deliveries per webhook', async () => {
    await wh.start();
    const hook = await wh.create('t1', { url, event_types: ['failover.triggered'] });
    const events: string[] = [];
    for (let i = 0; i < 12; i++) {
      events.push(wh.publish('t1', 'failover.triggered', { ...data, trigger_value: i }));
      await until(`delivery ${i}`, () => got.length === i + 1 && wh.listDeliveries('t1', hook.id, { limit: 100, status: 'pending' }).total === 0);
    }
    await until('the prune', () => wh.listDeliveries('t1', hook.id, { limit: 100 }).total === 5);
    const kept = wh.listDeliveries('t1', hook.id, { limit: 100 }).deliveries.map((d: any) => d.event_id);
    expect(kept).toEqual(events.slice(-5).reverse());
  });

  it('a paused webhook gets nothing; deletion removes its deliveries and pending index', async () => {
    const hook = await wh.create('t1', { url, event_types: ['processor.healthy'], active: false });
    const before = got.length;
    wh.publish('t1', 'processor.healthy', { ...data });
    await new Promise((r) => setTimeout(r, 200));
    expect(got.length).toBe(before);
    expect(wh.listDeliveries('t1', hook.id, { limit: 10 }).total).toBe(0);

    await wh.update('t1', hook.id, { active: true });
    wh.publish('t1', 'processor.healthy', { ...data });
    await until('the delivery', () => got.length === before + 1);
    await until('recorded', () => wh.listDeliveries('t1', hook.id, { limit: 10, status: 'delivered' }).total === 1);

    await wh.remove('t1', hook.id);
    expect(() => wh.get('t1', hook.id)).toThrow(/not found/);
    expect([...store.collection('webhook_deliveries').list(`t1/${hook.id}`)]).toHaveLength(0);
    expect([...store.collection('webhook_pending').list('t1')]).toHaveLength(0);
    expect(store.collection('webhooks').get('t1', hook.id)).toBeUndefined();
  });

  it('stores the secret for signing but keeps it apart from what the API shows', async () => {
    const hook = await wh.create('t2', { url, secret: 'stored-secret-1' });
    expect(store.collection('webhooks').get('t2', hook.id).secret).toBe('stored-secret-1');
    const { webhookOutput } = (await import('../../dist/src/webhooks/records.js')) as any;
    expect(JSON.stringify(webhookOutput(hook))).not.toContain('stored-secret-1');
    const cleared = await wh.update('t2', hook.id, { secret: null });
    expect(cleared.secret).toBeNull();
  });
});

describe('WebhookDispatcher delivery thread', () => {
  it('restarts a delivery thread that died and re-sends what was pending', async () => {
    const hook = await wh.create('t3', { url, event_types: ['failover.recovered'] });
    await (wh as any).worker.terminate();
    const eventId = wh.publish('t3', 'failover.recovered', data);
    await until('the delivery after the restart', () => got.some((g) => g.event_id === eventId), 5000);
    await until('recorded', () => wh.listDeliveries('t3', hook.id, { limit: 10, status: 'delivered' }).total === 1);
  });
});
