/**
 * Decision-table deltas: the leader sends only changed rules on top of a base version and a
 * snapshot now and then; followers apply a delta only on its base, heal a gap from the stored
 * snapshot and deltas, reject an older epoch's delta; a late joiner gets the full state.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TableFollower, TablePublisher } from '../../src/cluster/decision-table.js';
import { clusterKeys } from '../../src/cluster/keys.js';
import { LeaderLease } from '../../src/cluster/lease.js';
import type { GuardedRedis } from '../../src/cluster/redis-client.js';
import { TableBuilder, type BuiltTable } from '../../src/cluster/table-builder.js';
import { newRuleEntry, readTableHeader, readTableRules, TableKind, TableWriter } from '../../src/cluster/table-codec.js';
import { RF_PRIMARY_SHARE, RULE_F64_STRIDE, RULE_MASK } from '../../src/shm/layout.js';
import { ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import type { LiveRule, Tenant } from '../../src/tenants/tenant.js';
import { dropClusterKeys, redisUnavailable, SHARED_REDIS_URL, testClusterName, readyConnection } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

// ── the leader's builder (memory only) ────────────────────────────────────────────────────
function tenantOf(n: number) {
  const tables = new SharedTables();
  const rules = new Map<string, LiveRule>();
  const keys = new Map<LiveRule, number>();
  for (let i = 0; i < n; i++) {
    const slot = tables.allocRule(1, false);
    const rule = { slot, record: { rule_id: `r${i}`, primary_id: 'stripe', secondary_id: 'adyen' } } as unknown as LiveRule;
    rules.set(`r${i}`, rule);
    keys.set(rule, 1000 + i);
  }
  const tenant = { id: 't', rules } as unknown as Tenant;
  const setShare = (i: number, share: number) => {
    const slot = rules.get(`r${i}`)!.slot;
    ruleSegment(tables.ruleSegs, slot).ruleF64[(slot & RULE_MASK) * RULE_F64_STRIDE + RF_PRIMARY_SHARE] = share;
  };
  return { tables, tenant, keyOf: (r: LiveRule) => keys.get(r), setShare };
}

function sharesOf(b: BuiltTable): Map<number, number> {
  const out = new Map<number, number>();
  readTableRules(readTableHeader(b.table), (e) => out.set(e.key, e.primaryShare));
  return out;
}

describe('table builder', () => {
  it('a snapshot first, then deltas of only the changed rules on the published base', async () => {
    const { tables, tenant, keyOf, setShare } = tenantOf(50);
    let now = 1_800_000_000_000;
    const b = new TableBuilder(tables, keyOf, { snapshotMs: 30_000, now: () => now });
    const first = (await b.build(tenant, 1, 1, () => true))!;
    expect([first.kind, first.rules]).toEqual([TableKind.Snapshot, 50]);
    b.published('t', 1, 1);

    setShare(7, 0.25);
    now += 1000;
    const second = (await b.build(tenant, 1, 2, () => true))!;
    expect([second.kind, second.baseVersion, second.rules]).toEqual([TableKind.Delta, 1, 1]);
    expect([...sharesOf(second)]).toEqual([[1007, 0.25]]);
    expect(second.table.length).toBeLessThan(first.table.length / 20);
    b.published('t', 1, 2);

    // Nothing changed: an empty delta (it still moves the head, so followers stay fresh).
    const third = (await b.build(tenant, 1, 3, () => true))!;
    expect([third.kind, third.baseVersion, third.rules]).toEqual([TableKind.Delta, 2, 0]);
    // Not published (e.g. Redis failed): forget, and the next table is a snapshot again.
    b.forget('t');
    setShare(8, 0.5);
    const fourth = (await b.build(tenant, 1, 4, () => true))!;
    expect([fourth.kind, fourth.rules]).toEqual([TableKind.Snapshot, 50]);
    b.published('t', 1, 4);
    // A change built but never published is still in the next delta.
    setShare(9, 0.5);
    await b.build(tenant, 1, 5, () => true);
    const sixth = (await b.build(tenant, 1, 6, () => true))!;
    expect([sixth.kind, sixth.baseVersion, [...sharesOf(sixth).keys()]]).toEqual([TableKind.Delta, 4, [1009]]);
    // A new epoch, or the snapshot period passed: a snapshot.
    expect((await b.build(tenant, 2, 1, () => true))!.kind).toBe(TableKind.Snapshot);
    now += 30_000;
    expect((await b.build(tenant, 1, 7, () => true))!.kind).toBe(TableKind.Snapshot);
  });

  it('builds a large table in slices, yielding to the event loop between them', async () => {
    const { tables, tenant, keyOf } = tenantOf(20_000);
    const b = new TableBuilder(tables, keyOf, { sliceMs: 1 });
    let turns = 0;
    let running = true;
    const tick = () => {
      turns++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const built = (await b.build(tenant, 1, 1, () => true))!;
    running = false;
    expect(built.rules).toBe(20_000);
    expect(turns).toBeGreaterThan(1);
    // Leadership lost while building: the build is dropped.
    expect(await b.build(tenant, 1, 2, () => false)).toBeNull();
  });
});

// ── publishing and following, over the machine's Redis ───────────────────────────────────
function tableOf(kind: TableKind, epoch: number, version: number, baseVersion: number, rules: [number, number][]): BuiltTable {
  const w = new TableWriter();
  w.begin({ kind, epoch, version, baseVersion, publishedAtMs: Date.now(), tenantId: 'acme' });
  const e = newRuleEntry();
  for (const [key, share] of rules) {
    e.key = key;
    e.primaryShare = share;
    w.rule(e);
  }
  return { table: w.finish(), kind, baseVersion, rules: rules.length };
}

const conn = (name: string): Promise<GuardedRedis> => readyConnection(SHARED_REDIS_URL, name, 500, cleanups);

/** A follower whose "rows" are a map of rule key → share, and the versions it applied. */
async function follower(cluster: string, id: string) {
  const rows = new Map<number, number>();
  const versions: string[] = [];
  const f = new TableFollower({
    url: SHARED_REDIS_URL,
    conn: await conn(id),
    keys: clusterKeys(cluster),
    replicaId: id,
    healMs: 60_000, // heals only when told to (a gap, or the test)
    following: () => true,
    apply: (buf, h) => {
      readTableRules(h, (e) => rows.set(e.key, e.primaryShare));
      versions.push(`${h.epoch}:${h.version}${h.kind === TableKind.Delta ? `<${h.baseVersion}` : ''}`);
      return 'applied';
    },
  });
  cleanups.push(() => f.stop());
  return { f, rows, versions };
}

async function leader(cluster: string, id: string, leaseMs = 5000) {
  const g = await conn(id);
  const lease = new LeaderLease({ conn: g, keys: clusterKeys(cluster), replicaId: id, leaseMs });
  await lease.tick();
  cleanups.push(() => lease.stop());
  const pub = new TablePublisher(g, clusterKeys(cluster), lease);
  const publish = (kind: TableKind, base: number, rules: [number, number][]) => pub.publish('acme', (e, v) => tableOf(kind, e, v, base, rules));
  return { lease, pub, publish };
}

describe.skipIf(redisUnavailable !== undefined)('decision table deltas', () => {
  it('a follower that missed a delta fetches the missing deltas (or the snapshot) and catches up', async () => {
    const cluster = testClusterName('delta-gap');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const a = await leader(cluster, 'a');
    expect(await a.publish(TableKind.Snapshot, 0, [[1, 1], [2, 1], [3, 1]])).toBe('published'); // v1
    expect(await a.publish(TableKind.Delta, 1, [[2, 0.5]])).toBe('published'); // v2
    expect(await a.publish(TableKind.Delta, 2, [[3, 0]])).toBe('published'); // v3
    // A delta whose base is not the stored head is refused: the chain in Redis stays unbroken.
    expect(await a.publish(TableKind.Delta, 2, [[1, 0]])).toBe('broken');

    // b holds the snapshot, then receives v3 without v2: a gap; it fetches the deltas only.
    const b = await follower(cluster, 'b');
    const stored = await a.pub['conn'].run((r) => r.hgetBuffer(clusterKeys(cluster).tables, 'acme'));
    expect(await b.f.offer(stored!)).toBe('applied');
    expect(await b.f.offer(tableOf(TableKind.Delta, 1, 3, 2, [[3, 0]]).table)).toBe('gap');
    await until('healed after the gap', () => b.f.appliedOf('acme')?.version === 3, 3000);
    expect(b.versions).toEqual(['1:1', '1:2<1', '1:3<2']);
    expect([...b.rows].sort()).toEqual([[1, 1], [2, 0.5], [3, 0]]);
    expect(b.f.gaps).toBe(1);

    // c holds nothing and is offered a delta: the snapshot and every delta after it.
    const c = await follower(cluster, 'c');
    expect(await c.f.offer(tableOf(TableKind.Delta, 1, 3, 2, [[3, 0]]).table)).toBe('gap');
    await until('healed from the snapshot', () => c.f.appliedOf('acme')?.version === 3, 3000);
    expect(c.versions).toEqual(['1:1', '1:2<1', '1:3<2']);
    expect([...c.rows].sort()).toEqual([[1, 1], [2, 0.5], [3, 0]]);
  });

  it("an older epoch's delta is rejected, even when it names the version held as its base", async () => {
    const cluster = testClusterName('delta-epoch');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const b = await follower(cluster, 'b');
    expect(await b.f.offer(tableOf(TableKind.Snapshot, 2, 1, 0, [[1, 1]]).table)).toBe('applied');
    expect(await b.f.offer(tableOf(TableKind.Delta, 1, 2, 1, [[1, 0]]).table)).toBe('stale');
    expect(await b.f.offer(tableOf(TableKind.Delta, 2, 1, 0, [[1, 0]]).table)).toBe('stale'); // not newer
    expect(b.rows.get(1)).toBe(1);
    expect(b.f.rejectedStale).toBe(2);
    // The current epoch's delta on the version held applies.
    expect(await b.f.offer(tableOf(TableKind.Delta, 2, 2, 1, [[1, 0.3]]).table)).toBe('applied');
    expect(b.rows.get(1)).toBe(0.3);
  });

  it('a replica joining late gets the full state: the latest snapshot and the deltas after it, pushed ones on top', async () => {
    const cluster = testClusterName('delta-late');
    cleanups.push(() => dropClusterKeys(SHARED_REDIS_URL, cluster));
    const a = await leader(cluster, 'a');
    expect(await a.publish(TableKind.Snapshot, 0, [[1, 1], [2, 1]])).toBe('published'); // v1
    expect(await a.publish(TableKind.Delta, 1, [[1, 0.9]])).toBe('published'); // v2
    expect(await a.publish(TableKind.Snapshot, 0, [[1, 0.9], [2, 0.8], [3, 0.7]])).toBe('published'); // v3: the deltas before it are dropped
    expect(await a.publish(TableKind.Delta, 3, [[3, 0.6]])).toBe('published'); // v4
    const late = await follower(cluster, 'late');
    late.f.start(); // heals once at start
    await until('late joiner caught up', () => late.f.appliedOf('acme')?.version === 4, 3000);
    expect(late.versions).toEqual(['1:3', '1:4<3']);
    expect([...late.rows].sort()).toEqual([[1, 0.9], [2, 0.8], [3, 0.6]]);
    expect(late.f.lastFreshAt).toBeGreaterThan(0);
    const keys = clusterKeys(cluster);
    expect(await a.pub['conn'].run((r) => r.llen(keys.deltasPrefix + 'acme'))).toBe(1);
    // Next deltas arrive by push and apply on top.
    await new Promise((r) => setTimeout(r, 200)); // subscribed
    expect(await a.publish(TableKind.Delta, 4, [[2, 0]])).toBe('published'); // v5
    await until('pushed delta applied', () => late.f.appliedOf('acme')?.version === 5, 3000);
    expect(late.rows.get(2)).toBe(0);
    expect(late.f.gaps).toBe(0);
  });
});
