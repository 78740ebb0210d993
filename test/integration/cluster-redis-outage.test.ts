/**
 * Cluster mode with Redis gone for 30 s (a private redis-server, killed and restarted; the
 * machine's Redis is never touched): routes keep answering 200 from memory, every replica
 * shows the fallback after SERVICE_CLUSTER_STALE_MS, and within 5 s of Redis' return there is
 * one leader again, without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAllServers } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { redisUnavailable, startPrivateRedis, type PrivateRedis } from '../helpers/redis.js';
import { clusterView, createEverywhere, rule, startReplicas, Traffic, type Replica } from '../helpers/cluster.js';

let redis: PrivateRedis;
let replicas: Replica[] = [];

describe.skipIf(redisUnavailable !== undefined)('cluster mode: Redis down for 30 s', () => {
  beforeAll(async () => {
    redis = await startPrivateRedis();
    replicas = await startReplicas({ redisUrl: redis.url, cluster: 'outage', replicas: 3 }); // the documented 15 s staleness
    await createEverywhere(replicas, '/v1/rules', rule('us_card', 'US'));
  }, 120_000);

  afterAll(async () => {
    await stopAllServers();
    await redis?.stop();
  });

  it('routes all answer 200, the fallback shows, one leader within 5 s of the return', async () => {
    await until('a leader', async () => (await Promise.all(replicas.map(clusterView))).filter((v) => v.leader).length === 1, 15_000);
    const traffic = new Traffic(() => replicas, 'us_card', 'US', 20);
    traffic.start();
    await new Promise((r) => setTimeout(r, 1000));
    await redis.stop();
    const downAt = performance.now();
    // Every replica falls back once no table has been fresh for SERVICE_CLUSTER_STALE_MS.
    await until('fallback on every replica', async () => {
      const views = await Promise.all(replicas.map(clusterView));
      return views.every((v) => v.role === 'fallback' && !v.redis_connected) && views;
    }, 25_000);
    const fellBackAfter = performance.now() - downAt;
    expect(fellBackAfter).toBeGreaterThan(14_000);
    const gauge = (await replicas[0].request('GET', '/metrics/')).text;
    expect(gauge).toMatch(/service_cluster_fallback 1/);
    expect(replicas.some((r) => /"msg":"cluster: no fresh decision table/.test(r.output()))).toBe(true);
    // Still serving while Redis stays down (30 s in all).
    await new Promise((r) => setTimeout(r, Math.max(0, 30_000 - (performance.now() - downAt))));
    await redis.restart();
    const backAt = performance.now();
    await until('one leader again, the others following', async () => {
      const views = await Promise.all(replicas.map(clusterView));
      return views.filter((v) => v.role === 'leader').length === 1 && views.filter((v) => v.role === 'follower').length === 2;
    }, 5000);
    console.log(`redis outage: fallback after ${(fellBackAfter / 1000).toFixed(1)} s; one leader ${((performance.now() - backAt) / 1000).toFixed(1)} s after Redis returned`);
    await new Promise((r) => setTimeout(r, 500));
    await traffic.stop();
    expect(traffic.routes).toBeGreaterThan(500);
    expect(traffic.failedRoutes).toEqual([]);
    expect(traffic.failedOutcomes).toEqual([]);
  }, 90_000);
});
