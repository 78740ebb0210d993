/** Outcome batches over the machine's Redis stream: shipped, read by the others, not by the sender. */
import { afterEach, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../src/cluster/keys.js';
import { decodeDeltas, DeltaRecorder } from '../../src/cluster/outcome-delta.js';
import { OutcomeReader, OutcomeShipper, type ReceivedBatch } from '../../src/cluster/outcome-stream.js';
import type { GuardedRedis } from '../../src/cluster/redis-client.js';
import { OutcomeKind } from '../../src/shm/window.js';
import { dropClusterKeys, redisUnavailable, SHARED_REDIS_URL, startPrivateRedis, testClusterName, readyConnection } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const conn = (url: string, name: string): Promise<GuardedRedis> => readyConnection(url, name, 300, cleanups);

function reader(url: string, cluster: string, replicaId: string, got: ReceivedBatch[]): OutcomeReader {
  const r = new OutcomeReader({ url, keys: clusterKeys(cluster), replicaId, onBatch: (b) => got.push(b), blockMs: 200 });
  r.start();
  cleanups.push(() => r.stop());
  return r;
}

describe.skipIf(redisUnavailable !== undefined)('outcome stream', () => {
  it('a batch reaches the other replicas once, with its fast-path flag, and not its sender', async () => {
    const cluster = testClusterName('stream');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    const gotA: ReceivedBatch[] = [];
    const gotB: ReceivedBatch[] = [];
    reader(SHARED_REDIS_URL, cluster, 'a', gotA);
    reader(SHARED_REDIS_URL, cluster, 'b', gotB);
    const rec = new DeltaRecorder();
    const shipper = new OutcomeShipper({ conn: await conn(SHARED_REDIS_URL, 'a'), keys, replicaId: 'a', recorder: rec, intervalMs: 50 });
    shipper.start();
    cleanups.push(() => shipper.stop());
    await new Promise((r) => setTimeout(r, 300)); // readers are blocking on the stream
    const now = Date.now();
    for (let i = 0; i < 30; i++) rec.record(99, 3, now, i < 20 ? OutcomeKind.Success : OutcomeKind.TechError, 100);
    shipper.fastPath('acme');
    await until('batch on b', () => gotB.length >= 1, 5000);
    await new Promise((r) => setTimeout(r, 300));
    expect(gotA).toHaveLength(0);
    expect(gotB).toHaveLength(1);
    expect(gotB[0].fast).toEqual(['acme']);
    expect(gotB[0].replicaId).toBe('a');
    let sum = 0;
    decodeDeltas(gotB[0].data!, (e) => (sum += e.success + e.tech));
    expect(sum).toBe(30);
    expect(shipper.stats().batchesShipped).toBe(1);
  });

  it('a replica started later reads the last minute back (warm windows)', async () => {
    const cluster = testClusterName('warm');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    const rec = new DeltaRecorder();
    const shipper = new OutcomeShipper({ conn: await conn(SHARED_REDIS_URL, 'a'), keys, replicaId: 'a', recorder: rec });
    rec.record(1, 0, Date.now(), OutcomeKind.Success, 10);
    await shipper.flush();
    const got: ReceivedBatch[] = [];
    reader(SHARED_REDIS_URL, cluster, 'late', got);
    await until('history read', () => got.length === 1, 5000);
  });

  it('Redis down: routing-side calls fail fast, the backlog is bounded, and drains when Redis returns', async () => {
    const pr = await startPrivateRedis();
    cleanups.push(() => pr.stop());
    const keys = clusterKeys('outage');
    const rec = new DeltaRecorder();
    const g = await conn(pr.url, 'a');
    const shipper = new OutcomeShipper({ conn: g, keys, replicaId: 'a', recorder: rec, maxBacklogBytes: 2000 });
    await pr.stop();
    const t = Date.now();
    for (let i = 0; i < 200; i++) {
      rec.record(i, i, t, OutcomeKind.Success, 10); // ~30 bytes per window: 200 windows per batch
      const t0 = performance.now();
      await shipper.flush();
      expect(performance.now() - t0).toBeLessThan(500);
    }
    const s = shipper.stats();
    expect(s.backlogBytes).toBeLessThanOrEqual(2000);
    expect(s.batchesDropped).toBeGreaterThan(0);
    await pr.restart();
    await until('reconnected', () => g.connected(), 10_000);
    await until('backlog drained', async () => {
      await shipper.flush().catch(() => {});
      return shipper.stats().backlogBatches === 0;
    }, 10_000);
    expect(await g.redis.xlen(keys.outcomes)).toBe(s.backlogBatches);
  });
});
