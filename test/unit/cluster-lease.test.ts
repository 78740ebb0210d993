/** The leader lease against the machine's Redis: one holder, growing epochs, no stale leader. */
import { afterEach, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../src/cluster/keys.js';
import { LeaderLease } from '../../src/cluster/lease.js';
import type { GuardedRedis } from '../../src/cluster/redis-client.js';
import { dropClusterKeys, redisUnavailable, SHARED_REDIS_URL, startPrivateRedis, testClusterName, readyConnection, whenReady } from '../helpers/redis.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const conn = (url: string, name: string): Promise<GuardedRedis> => readyConnection(url, name, 300, cleanups);

describe.skipIf(redisUnavailable !== undefined)('leader lease', () => {
  it('one replica holds it; epochs grow; a graceful stop hands it over', async () => {
    const cluster = testClusterName('lease');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    const a = new LeaderLease({ conn: await conn(SHARED_REDIS_URL, 'a'), keys, replicaId: 'a', leaseMs: 1000 });
    const b = new LeaderLease({ conn: await conn(SHARED_REDIS_URL, 'b'), keys, replicaId: 'b', leaseMs: 1000 });
    await a.tick();
    await b.tick();
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
    expect(b.state.holder).toBe('a');
    const e1 = a.epoch();
    expect(b.epoch()).toBe(e1);
    // Renewal keeps it past the lease time.
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await a.tick();
      await b.tick();
    }
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
    await a.stop();
    await b.tick();
    expect(b.isLeader()).toBe(true);
    expect(b.epoch()).toBe(e1 + 1);
    await b.stop();
  });

  it('a holder elected on a reset counter (epoch below one seen) is deposed', async () => {
    const cluster = testClusterName('lease_floor');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    const a = new LeaderLease({ conn: await conn(SHARED_REDIS_URL, 'a'), keys, replicaId: 'a', leaseMs: 5000 });
    const b = new LeaderLease({ conn: await conn(SHARED_REDIS_URL, 'b'), keys, replicaId: 'b', leaseMs: 5000 });
    await a.tick();
    expect(a.epoch()).toBe(1);
    b.observeEpoch(7); // b saw epoch 7 before Redis lost its data
    await b.tick();
    expect(b.isLeader()).toBe(true);
    expect(b.epoch()).toBe(8);
    await a.tick();
    expect(a.isLeader()).toBe(false);
    await b.stop();
  });

  it('a paused holder finds it lost by its own clock before any publish, and cannot renew it', async () => {
    const cluster = testClusterName('lease_pause');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    let fakeNow = 0;
    const a = new LeaderLease({ conn: await conn(SHARED_REDIS_URL, 'a'), keys, replicaId: 'a', leaseMs: 400, now: () => fakeNow });
    const b = new LeaderLease({ conn: await conn(SHARED_REDIS_URL, 'b'), keys, replicaId: 'b', leaseMs: 400 });
    await a.tick();
    expect(a.isLeader()).toBe(true);
    // "a" is paused: its timers do not run; the key expires in Redis, "b" takes it.
    await new Promise((r) => setTimeout(r, 500));
    await b.tick();
    expect(b.isLeader()).toBe(true);
    expect(b.epoch()).toBeGreaterThan(a.epoch());
    // "a" wakes: its monotonic clock moved on as well; before it renews, it already knows.
    fakeNow += 500;
    expect(a.isLeader()).toBe(false);
    expect(a.fenceValue()).toBe('');
    await a.tick();
    expect(a.isLeader()).toBe(false);
    expect(a.state.lost).toBe(1);
    await b.stop();
  });

  it('a renewal that finds another holder steps down', async () => {
    const cluster = testClusterName('lease_steal');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    const g = await conn(SHARED_REDIS_URL, 'a');
    const a = new LeaderLease({ conn: g, keys, replicaId: 'a', leaseMs: 5000, now: () => 0 });
    await a.tick();
    expect(a.isLeader()).toBe(true);
    await g.redis.set(keys.lease, 'intruder:999', 'PX', 5000);
    await a.tick();
    expect(a.isLeader()).toBe(false);
  });

  it('Redis unreachable: the holder steps down at its own deadline; back, one leader within a few ticks', async () => {
    const pr = await startPrivateRedis();
    cleanups.push(() => pr.stop());
    const keys = clusterKeys('outage');
    const ga = await conn(pr.url, 'a');
    const gb = await conn(pr.url, 'b');
    const a = new LeaderLease({ conn: ga, keys, replicaId: 'a', leaseMs: 600 });
    const b = new LeaderLease({ conn: gb, keys, replicaId: 'b', leaseMs: 600 });
    await a.tick();
    await b.tick();
    expect(a.isLeader()).toBe(true);
    expect(a.epoch()).toBe(1);
    await pr.stop();
    const t0 = performance.now();
    // Renewals fail fast (no offline queue), they do not hang.
    await a.tick();
    expect(performance.now() - t0).toBeLessThan(400);
    await new Promise((r) => setTimeout(r, 650));
    expect(a.isLeader()).toBe(false);
    await pr.restart();
    a.start();
    b.start();
    cleanups.push(() => a.stop(), () => b.stop());
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && !(a.isLeader() || b.isLeader())) await new Promise((r) => setTimeout(r, 50));
    expect(Number(a.isLeader()) + Number(b.isLeader())).toBe(1);
    // The restarted Redis lost the counter; the new epoch is still above the old one.
    expect(Math.max(a.epoch(), b.epoch())).toBeGreaterThan(1);
  });
});
