/**
 * Cluster mode with Redis gone for 30 s (a private redis-server, killed and restarted; the
 * machine's Redis is never touched): routes keep answering 200 from memory, every replica
 * shows the fallback after SERVICE_CLUSTER_STALE_MS, and within 5 s of Redis' return there is
 * one leader again, without a restart. An operator command on a follower cut off from Redis
 * answers 503 JSON naming Redis; on a replica in fallback it is applied there, as in a single process.
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
    const leaderIdx = await until('a leader', async () => {
      const views = await Promise.all(replicas.map(clusterView));
      return views.filter((v) => v.leader).length === 1 && views.findIndex((v) => v.leader) + 1;
    }, 15_000);
    const follower = replicas.find((_, i) => i !== leaderIdx - 1)!;
    const traffic = new Traffic(() => replicas, 'us_card', 'US', 20);
    traffic.start();
    await new Promise((r) => setTimeout(r, 1000));
    await redis.stop();
    const downAt = performance.now();
    // A follower cannot forward an operator command without Redis: a clear 503, nothing applied.
    await until('the follower sees Redis gone', async () => !(await clusterView(follower)).redis_connected, 5000);
    const refused = await follower.request('POST', '/v1/rules/us_card/failover');
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(refused.json.error.message).toMatch(/Redis/);
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
    // In fallback each replica is its own engine: the command is applied where it lands.
    const applied = await follower.request('POST', '/v1/rules/us_card/failover');
    expect(applied.status, applied.text).toBe(200);
    expect(applied.json.primary.status).toBe('failed_over');
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
