/**
 * Forwarded operator commands over the machine's Redis: the leader's answer comes back to the
 * sender; a command is applied once even when two replicas think they lead (only the lease
 * value in Redis claims it); a command past its deadline is not applied; without a leader the
 * sender hears nothing and says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CommandRelay, type ForwardedCommand } from '../../src/cluster/command-relay.js';
import { clusterKeys } from '../../src/cluster/keys.js';
import type { GuardedRedis } from '../../src/cluster/redis-client.js';
import { dropClusterKeys, redisUnavailable, SHARED_REDIS_URL, testClusterName, readyConnection } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const conn = (name: string): Promise<GuardedRedis> => readyConnection(SHARED_REDIS_URL, name, 500, cleanups);

async function relay(cluster: string, id: string, fence: () => string): Promise<CommandRelay> {
  const r = new CommandRelay({ url: SHARED_REDIS_URL, conn: await conn(id), keys: clusterKeys(cluster), replicaId: id, fenceValue: fence });
  cleanups.push(() => r.stop());
  // Subscribed once a forward no longer reports Redis unreachable: wait for the subscription.
  await until(`${id} subscribed`, () => (r as unknown as { subscribed: boolean }).subscribed, 5000);
  return r;
}

const command = { tenant: 'default', rule_id: 'r1', primary_id: 'stripe', secondary_id: 'adyen', action: 'failover' as const, actor: 'sha256:abc', admin: false };

describe.skipIf(redisUnavailable !== undefined)('command relay', () => {
  it('the leader applies a forwarded command once and its answer reaches the sender; a second replica that thinks it leads cannot claim it', async () => {
    const cluster = testClusterName('relay');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    const setup = await conn('setup');
    await setup.redis.set(keys.lease, 'leader:7', 'PX', 10_000);
    const applied: { by: string; c: ForwardedCommand }[] = [];
    const leader = await relay(cluster, 'leader', () => 'leader:7');
    // A paused ex-leader that still believes it leads with an older epoch.
    const stale = await relay(cluster, 'stale', () => 'stale:6');
    for (const [id, r] of [['leader', leader], ['stale', stale]] as const) {
      r.serve(async (c) => {
        applied.push({ by: id, c });
        return { status: 200, body: { rule_id: c.rule_id, by: id } };
      });
    }
    const follower = await relay(cluster, 'follower', () => '');
    const answer = await follower.forward(command, Date.now() + 3000);
    expect(answer).toEqual({ status: 200, body: { rule_id: 'r1', by: 'leader' }, error: undefined, table: undefined });
    await new Promise((r) => setTimeout(r, 200));
    expect(applied.map((a) => a.by)).toEqual(['leader']);
    expect(applied[0].c).toMatchObject({ ...command, from: 'follower' });
    expect(leader.served).toBe(1);
  });

  it('no leader: the sender hears nothing by its deadline; a command past its deadline is never applied', async () => {
    const cluster = testClusterName('relay');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    let applied = 0;
    const leader = await relay(cluster, 'leader', () => 'leader:3');
    leader.serve(async () => {
      applied++;
      return { status: 200, body: {} };
    });
    const follower = await relay(cluster, 'follower', () => '');
    // The lease is not in Redis (expired): the would-be leader cannot claim.
    const t0 = performance.now();
    expect(await follower.forward(command, Date.now() + 300)).toBe('no_answer');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    expect(applied).toBe(0);
    // With the lease, a command whose deadline already passed is ignored.
    const setup = await conn('setup');
    await setup.redis.set(keys.lease, 'leader:3', 'PX', 10_000);
    expect(await follower.forward(command, Date.now() - 1)).toBe('no_answer');
    await new Promise((r) => setTimeout(r, 200));
    expect(applied).toBe(0);
    // And in time it is applied.
    expect(await follower.forward(command, Date.now() + 3000)).toMatchObject({ status: 200 });
    expect(applied).toBe(1);
  });

  it('an error answer comes back with its code, message and fields', async () => {
    const cluster = testClusterName('relay');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const setup = await conn('setup');
    await setup.redis.set(clusterKeys(cluster).lease, 'leader:1', 'PX', 10_000);
    const leader = await relay(cluster, 'leader', () => 'leader:1');
    const error = { code: 'ENGINE_STATE_CONFLICT', message: 'the primary of rule "r1" is already failed over', fields: [{ field: 'rule_id', message: 'x' }] };
    leader.serve(async () => ({ status: 409, error }));
    const follower = await relay(cluster, 'follower', () => '');
    expect(await follower.forward(command, Date.now() + 3000)).toMatchObject({ status: 409, error });
  });
});
