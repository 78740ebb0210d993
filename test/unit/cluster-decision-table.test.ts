/** Decision tables over the machine's Redis: fenced publishing, stale-epoch rejection, healing. */
import { afterEach, describe, expect, it } from 'vitest';
import { TableFollower, TablePublisher } from '../../src/cluster/decision-table.js';
import { clusterKeys } from '../../src/cluster/keys.js';
import { LeaderLease } from '../../src/cluster/lease.js';
import type { GuardedRedis } from '../../src/cluster/redis-client.js';
import { newRuleEntry, readTableHeader, readTableRules, TableKind, TableWriter } from '../../src/cluster/table-codec.js';
import { dropClusterKeys, redisUnavailable, SHARED_REDIS_URL, testClusterName, readyConnection } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const conn = (name: string): Promise<GuardedRedis> => readyConnection(SHARED_REDIS_URL, name, 500, cleanups);

function table(tenantId: string, epoch: number, version: number, share: number) {
  return { table: tableBuf(tenantId, epoch, version, share), kind: TableKind.Snapshot, baseVersion: 0, rules: 1 };
}

function tableBuf(tenantId: string, epoch: number, version: number, share: number): Buffer {
  const w = new TableWriter();
  w.begin({ kind: TableKind.Snapshot, epoch, version, baseVersion: 0, publishedAtMs: Date.now(), tenantId });
  const e = newRuleEntry();
  e.key = 77;
  e.primaryShare = share;
  e.procs[0].status = 2;
  e.procs[0].statusSinceMs = Date.now() - 1234;
  e.procs[0].t1 = new Float64Array(12).fill(3);
  w.rule(e);
  return w.finish();
}

interface Seen {
  tenant: string;
  epoch: number;
  version: number;
  share: number;
}

async function follower(cluster: string, id: string, seen: Seen[], following = () => true): Promise<TableFollower> {
  const f = new TableFollower({
    url: SHARED_REDIS_URL,
    conn: await conn(id),
    keys: clusterKeys(cluster),
    replicaId: id,
    healMs: 200,
    following,
    apply: (buf, h) => {
      readTableRules(h, (e) => seen.push({ tenant: h.tenantId, epoch: h.epoch, version: h.version, share: e.primaryShare }));
      return 'applied';
    },
  });
  cleanups.push(() => f.stop());
  return f;
}

describe.skipIf(redisUnavailable !== undefined)('decision table', () => {
  it('the codec round-trips a rule, its statuses and Tier 1 bookkeeping', () => {
    const buf = tableBuf('acme', 3, 9, 0.25);
    const h = readTableHeader(buf);
    expect([h.tenantId, h.epoch, h.version, h.rules]).toEqual(['acme', 3, 9, 1]);
    const got: number[][] = [];
    readTableRules(h, (e) => got.push([e.key, e.primaryShare, e.procs[0].status, Date.now() - e.procs[0].statusSinceMs >= 1234 ? 1 : 0, e.procs[0].t1![5], e.procs[1].t1 === null ? 1 : 0]));
    expect(got).toEqual([[77, 0.25, 2, 1, 3, 1]]);
    expect(buf.length).toBeLessThan(200);
  });

  it('the leader publishes; followers apply; a deposed leader is fenced; older epochs are rejected', async () => {
    const cluster = testClusterName('table');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    const seen: Seen[] = [];
    const f = await follower(cluster, 'b', seen);
    f.start();
    await new Promise((r) => setTimeout(r, 200)); // subscribed
    let clockA = 0;
    const gA = await conn('a');
    const a = new LeaderLease({ conn: gA, keys, replicaId: 'a', leaseMs: 400, now: () => clockA });
    await a.tick();
    const pubA = new TablePublisher(gA, keys, a);
    expect(await pubA.publish('acme', (e, v) => table('acme', e, v, 0.5))).toBe('published');
    await until('table applied', () => seen.length === 1, 3000);
    expect(seen[0]).toMatchObject({ tenant: 'acme', epoch: 1, version: 1, share: 0.5 });

    // "a" pauses; its lease expires; "c" takes over with epoch 2 and publishes.
    await new Promise((r) => setTimeout(r, 500));
    const gC = await conn('c');
    const c = new LeaderLease({ conn: gC, keys, replicaId: 'c', leaseMs: 5000 });
    await c.tick();
    expect(c.epoch()).toBe(2);
    const pubC = new TablePublisher(gC, keys, c);
    expect(await pubC.publish('acme', (e, v) => table('acme', e, v, 0))).toBe('published');
    await until('new epoch applied', () => seen.length === 2, 3000);
    expect(seen[1]).toMatchObject({ epoch: 2, share: 0 });

    // "a" wakes (its clock has not moved yet: the worst case); the script refuses its write.
    expect(await pubA.publish('acme', (e, v) => table('acme', e, v, 0.9))).toBe('fenced');
    // A table of epoch 1 that reaches the follower anyway (e.g. delayed) is rejected.
    expect(await f.offer(tableBuf('acme', 1, 99, 0.9))).toBe('stale');
    // Its own clock then tells "a" it is no longer leader: it does not even try.
    clockA += 500;
    expect(await pubA.publish('acme', (e, v) => table('acme', e, v, 0.9))).toBe('not-leader');
    await new Promise((r) => setTimeout(r, 500));
    expect(seen.map((s) => s.share)).toEqual([0.5, 0]);
    expect(f.rejectedStale).toBeGreaterThanOrEqual(1);
    await c.stop();
  });

  it('a follower that missed the message heals from the stored table and counts as fresh', async () => {
    const cluster = testClusterName('heal');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const keys = clusterKeys(cluster);
    const g = await conn('a');
    const a = new LeaderLease({ conn: g, keys, replicaId: 'a', leaseMs: 5000 });
    await a.tick();
    const pub = new TablePublisher(g, keys, a);
    expect(await pub.publish('t1', (e, v) => table('t1', e, v, 0.3))).toBe('published');
    expect(await pub.publish('t2', (e, v) => table('t2', e, v, 0.7))).toBe('published');
    const seen: Seen[] = [];
    const f = await follower(cluster, 'late', seen);
    expect(f.lastFreshAt).toBe(-Infinity);
    await f.heal();
    expect(seen.map((s) => [s.tenant, s.share]).sort()).toEqual([['t1', 0.3], ['t2', 0.7]]);
    expect(f.lastFreshAt).toBeGreaterThan(0);
    // Nothing new: a second poll applies nothing again.
    await f.heal();
    expect(seen).toHaveLength(2);
    await a.stop();
    // No leader any more: a poll does not count as fresh.
    const before = f.lastFreshAt;
    await new Promise((r) => setTimeout(r, 5));
    await f.heal();
    expect(f.lastFreshAt).toBe(before);
  });
});
