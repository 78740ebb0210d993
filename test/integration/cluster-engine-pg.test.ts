/**
 * Both parts of cluster mode together: configuration and audit trail in PostgreSQL
 * (SERVICE_STORE_URL), engine state over Redis (SERVICE_REDIS_URL). A rule and a webhook
 * created once reach every replica; an outage fed to all three is one transition: one
 * `failover.triggered` delivery and one audit entry, listed by every replica, and none
 * repeated when the leader is killed afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, newSchema, testPostgres } from '../helpers/postgres.js';
import { stopAllServers } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { dropClusterKeys, redisUnavailable, SHARED_REDIS_URL } from '../helpers/redis.js';
import { clusterView, primaryStatus, rule, startReplica, Traffic, WebhookReceiver, type Replica } from '../helpers/cluster.js';

const pg = await testPostgres();
const schema = newSchema('engine');
const hook = new WebhookReceiver();
let replicas: Replica[] = [];

describe.skipIf(!pg.ok || redisUnavailable !== undefined)('cluster mode on PostgreSQL and Redis: one engine, one trail', () => {
  beforeAll(async () => {
    await hook.listen();
    const o = { redisUrl: SHARED_REDIS_URL, cluster: schema, replicas: 3, env: { SERVICE_STORE_URL: pg.url } };
    // Together: the schema is created once, under the advisory lock.
    replicas = await Promise.all(['p1', 'p2', 'p3'].map((id) => startReplica(o, id)));
    expect((await replicas[0].request('POST', '/v1/rules', rule('us_card', 'US'))).status).toBe(201);
    expect((await replicas[1].request('POST', '/v1/webhooks', { url: hook.url(), event_types: ['failover.triggered'] })).status).toBe(201);
    await until('the rule on every replica', async () => (await Promise.all(replicas.map((r) => r.request('GET', '/v1/rules/us_card')))).every((x) => x.status === 200), 5000);
  }, 120_000);

  afterAll(async () => {
    await stopAllServers();
    await hook.close();
    await dropClusterKeys(SHARED_REDIS_URL, schema);
    await dropSchema(schema);
  });

  it('an outage over three replicas: one delivery, one audit entry on every replica, none again after a leader change', async () => {
    let alive = replicas;
    const traffic = new Traffic(() => alive, 'us_card', 'US', 50);
    traffic.start();
    await new Promise((r) => setTimeout(r, 1500));
    traffic.failing = true;
    await until('failed over on every replica', async () => (await Promise.all(replicas.map((r) => primaryStatus(r, 'us_card')))).every((s) => s === 'failed_over'), 5000);
    await until('the delivery', () => hook.count('failover.triggered', 'us_card') >= 1, 5000);
    const lists = await until('the audit entry on every replica', async () => {
      const ls = await Promise.all(replicas.map(async (r) => (await r.request('GET', '/v1/failover-events?limit=100')).json.filter((e: any) => e.rule_id === 'us_card')));
      return ls.every((l) => l.length >= 1) && ls;
    }, 5000);
    expect(lists.map((l) => l.length)).toEqual([1, 1, 1]);
    expect(new Set(lists.map((l) => l[0].event_id)).size).toBe(1);

    // The leader dies; its successor has the failed-over status from the table: no repeat.
    const views = await Promise.all(replicas.map(clusterView));
    const leader = replicas[views.findIndex((v) => v.leader)];
    const rest = replicas.filter((r) => r !== leader);
    alive = rest;
    await leader.kill9();
    await until('a new leader', async () => (await Promise.all(rest.map(clusterView))).some((v) => v.leader && v.epoch > views.find((x) => x.leader)!.epoch), 8000);
    await new Promise((r) => setTimeout(r, 2000)); // it evaluates with the outage still going on
    await traffic.stop();
    expect(hook.count('failover.triggered', 'us_card')).toBe(1);
    for (const r of rest) {
      const l = (await r.request('GET', '/v1/failover-events?limit=100')).json.filter((e: any) => e.rule_id === 'us_card');
      expect(l).toHaveLength(1);
    }
    // Requests in flight to the killed replica fail with it; none to the others.
    expect(traffic.failedRoutes.filter((f) => !f.startsWith(`${leader.id}:`))).toEqual([]);
    replicas = rest;
  });

  it("a killed leader's pending webhook delivery is taken over by the new leader and delivered", async () => {
    expect((await replicas[0].request('POST', '/v1/rules', rule('ca_card', 'CA'))).status).toBe(201);
    await until('the rule on both replicas', async () => (await Promise.all(replicas.map((r) => r.request('GET', '/v1/rules/ca_card')))).every((x) => x.status === 200), 5000);
    hook.hang = true; // the receiver takes the request and never answers: the delivery stays pending
    const traffic = new Traffic(() => replicas, 'ca_card', 'CA', 50, false);
    traffic.failing = true;
    traffic.start();
    await until('the hanging delivery', () => hook.count('failover.triggered', 'ca_card') >= 1, 8000);
    await traffic.stop();
    const views = await Promise.all(replicas.map(clusterView));
    const leader = replicas[views.findIndex((v) => v.leader)];
    const survivor = replicas.find((r) => r !== leader)!;
    await leader.kill9();
    hook.hang = false;
    // The survivor leads, sees the dead one's heartbeat expire, adopts its queue and sends it.
    await until('the delivery sent again by the survivor', () => hook.count('failover.triggered', 'ca_card') >= 2, 30_000);
    const hooks = (await survivor.request('GET', '/v1/webhooks')).json.webhooks;
    await until('recorded as delivered', async () => {
      const d = (await survivor.request('GET', `/v1/webhooks/${hooks[0].id}/deliveries?limit=10`)).json.deliveries as any[];
      return d.some((x) => x.event_type === 'failover.triggered' && x.status === 'delivered' && JSON.stringify(x).includes('ca_card'));
    }, 10_000);
    expect(survivor.output()).toMatch(/webhook deliveries taken over from a replica that is gone/);
  }, 60_000);
});
