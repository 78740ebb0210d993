/**
 * The webhook delivery thread runs only once there is something to deliver to
 * (src/webhooks/delivery-thread.ts): a service without webhooks starts none; the first
 * webhook starts it, and a restart with webhooks stored starts it at once. Real LMDB store,
 * real (compiled) thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/* eslint-disable @typescript-eslint/no-explicit-any */
const { LmdbStore } = (await import('../../dist/src/store/lmdb-store.js')) as any;
const { WebhookDispatcher } = (await import('../../dist/src/webhooks/dispatcher.js')) as any;
const { setLogLevel } = (await import('../../dist/src/log.js')) as any;
setLogLevel('error');

const config = { webhookAllowPrivate: true, webhookTimeoutMs: 2000, webhookBackoffMs: [10] };
const dir = mkdtempSync(join(tmpdir(), 'wh-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('webhook delivery thread start', () => {
  it('none without webhooks; started by the first webhook; at start when webhooks are stored', async () => {
    let store = new LmdbStore(dir);
    let wh = new WebhookDispatcher({ store, config, version: 'test' });
    await wh.start();
    expect(wh.worker).toBeNull();
    await wh.create('t1', { url: 'http://127.0.0.1:9/hook' });
    expect(wh.worker).not.toBeNull();
    await wh.stop();
    await store.close();

    store = new LmdbStore(dir);
    wh = new WebhookDispatcher({ store, config, version: 'test' });
    await wh.start();
    expect(wh.worker).not.toBeNull();
    await wh.stop();
    expect(wh.worker).toBeNull();
    await store.close();
  });
});
