/**
 * Publishing and following the decision table.
 *
 * Leader: after evaluating a tenant it publishes the tenant's table (table-codec.ts) with its
 * epoch and a version that grows with every publish of that leadership. The publish is one
 * script that first compares the lease value (which carries the epoch) and only then stores
 * the table, its head and PUBLISHes it: a leader that lost its lease while paused cannot
 * publish, even if its own clock check passed an instant before the pause.
 *
 * Followers: apply tables pushed on the channel (own subscriber connection), and every
 * `healMs` poll the heads (plus the lease) and fetch any table they are behind on, so a
 * missed message heals. A table from an older epoch than one already seen, or not newer
 * than the one applied, is rejected.
 */
import type { Redis } from 'ioredis';
import { log } from '../log.js';
import type { ClusterKeys } from './keys.js';
import { parseLeaseValue, type LeaderLease } from './lease.js';
import { connectRedis, type GuardedRedis } from './redis-client.js';
import { LuaScript } from './script.js';
import { readTableHeader } from './table-codec.js';

/** KEYS: lease, tables, heads. ARGV: lease value, tenant, table, head, channel. */
const PUBLISH_TABLE = new LuaScript(
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[3])
return 1`,
  3,
);

export type PublishResult = 'published' | 'not-leader' | 'fenced' | 'failed';

export class TablePublisher {
  private version = 0;
  private versionEpoch = 0;
  published = 0;
  fenced = 0;
  failed = 0;
  /** Epoch ms of the last successful publish (NaN before the first). */
  lastPublishedMs = NaN;

  constructor(
    private readonly conn: GuardedRedis,
    private readonly keys: ClusterKeys,
    private readonly lease: LeaderLease,
  ) {}

  /**
   * Publishes `build(epoch, version)` for the tenant if we lead. The lease is checked by our
   * own clock before building and by the script in Redis when writing.
   */
  async publish(tenantId: string, build: (epoch: number, version: number) => Buffer | null): Promise<PublishResult> {
    const fence = this.lease.fenceValue();
    if (fence === '') return 'not-leader';
    const epoch = this.lease.epoch();
    if (epoch !== this.versionEpoch) {
      this.versionEpoch = epoch;
      this.version = 0;
    }
    const version = ++this.version;
    const table = build(epoch, version);
    if (table === null) return 'not-leader';
    try {
      const ok = await this.conn.run((r) =>
        PUBLISH_TABLE.run(r, [this.keys.lease, this.keys.tables, this.keys.heads], [fence, tenantId, table, `${epoch}:${version}`, this.keys.tableChannel]),
      );
      if (ok !== 1) {
        this.fenced++;
        log.warn('cluster: decision table not published, the lease is no longer ours', { tenant: tenantId, epoch });
        return 'fenced';
      }
      this.published++;
      this.lastPublishedMs = Date.now();
      return 'published';
    } catch {
      this.failed++;
      return 'failed';
    }
  }
}

export type ApplyResult = 'applied' | 'stale' | 'deferred';

export interface FollowerOptions {
  url: string;
  conn: GuardedRedis;
  keys: ClusterKeys;
  replicaId: string;
  /** Writes the table into the shared tables; 'deferred' when it cannot now (a task runs on the tenant). */
  apply: (table: Buffer, header: ReturnType<typeof readTableHeader>) => 'applied' | 'deferred';
  /** False while this replica leads (it is the source of the tables). */
  following: () => boolean;
  /** Heal poll period. Default 2000 ms. */
  healMs?: number;
  /** A table was refused as older than what we hold or from an older epoch. */
  onStale?: () => void;
  /** A newer epoch was seen (the lease uses it as the floor of its next acquisition). */
  onEpoch?: (epoch: number) => void;
  now?: () => number;
}

interface Applied {
  epoch: number;
  version: number;
  publishedAtMs: number;
}

export class TableFollower {
  private readonly sub: Redis;
  private readonly healMs: number;
  private readonly now: () => number;
  private readonly applied = new Map<string, Applied>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private healing: Promise<void> | null = null;
  /** Highest epoch seen on any table or lease. */
  maxEpoch = 0;
  rejectedStale = 0;
  appliedCount = 0;
  /** Monotonic ms when we last knew we held the leader's latest tables (-Infinity: never). */
  lastFreshAt = -Infinity;
  /** Epoch ms when the newest table we applied was published (NaN: none yet). */
  newestPublishedMs = NaN;

  constructor(private readonly o: FollowerOptions) {
    this.healMs = o.healMs ?? 2000;
    this.now = o.now ?? (() => performance.now());
    this.sub = connectRedis({ url: o.url, name: `engine:${o.replicaId}:tables`, commandTimeoutMs: 2000 });
    this.sub.on('messageBuffer', (_channel: Buffer, message: Buffer) => {
      if (this.offer(message) === 'applied') this.lastFreshAt = this.now();
    });
    // Subscribing needs a live connection; ioredis resubscribes by itself after a reconnect.
    const subscribe = () => void this.sub.subscribe(o.keys.tableChannel).catch(() => {});
    if (this.sub.status === 'ready') subscribe();
    this.sub.once('ready', subscribe);
  }

  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    const loop = () => {
      this.healing = this.heal().finally(() => {
        this.healing = null;
        if (!this.stopped) {
          this.timer = setTimeout(loop, this.healMs);
          this.timer.unref();
        }
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.healing?.catch(() => {});
    this.sub.disconnect(false);
  }

  /** The (epoch, version) applied for a tenant, if any. */
  appliedOf(tenantId: string): Applied | undefined {
    return this.applied.get(tenantId);
  }

  /** Forget what was applied (this replica led meanwhile: its own tables are what it holds). */
  resetApplied(): void {
    this.applied.clear();
  }

  /** Considers one table; applies it when it is newer than what we hold and not from an old epoch. */
  offer(table: Buffer): ApplyResult {
    let h: ReturnType<typeof readTableHeader>;
    try {
      h = readTableHeader(table);
    } catch (e) {
      log.error('cluster: malformed decision table ignored', { err: String((e as Error)?.message ?? e) });
      return 'stale';
    }
    this.seeEpoch(h.epoch);
    if (!this.o.following()) return 'deferred';
    const cur = this.applied.get(h.tenantId);
    if (h.epoch < this.maxEpoch || (cur !== undefined && (h.epoch < cur.epoch || (h.epoch === cur.epoch && h.version <= cur.version)))) {
      this.rejectedStale++;
      this.o.onStale?.();
      return 'stale';
    }
    if (this.o.apply(table, h) === 'deferred') return 'deferred';
    this.applied.set(h.tenantId, { epoch: h.epoch, version: h.version, publishedAtMs: h.publishedAtMs });
    this.appliedCount++;
    if (!(this.newestPublishedMs >= h.publishedAtMs)) this.newestPublishedMs = h.publishedAtMs;
    return 'applied';
  }

  /** One heal poll: heads and lease in one round trip, then the tables we are behind on. */
  async heal(): Promise<void> {
    let heads: Record<string, string>;
    let lease: string | null;
    try {
      const res = await this.o.conn.run((r) => r.pipeline().hgetall(this.o.keys.heads).get(this.o.keys.lease).exec());
      if (res === null || res.some(([e]) => e !== null)) return;
      heads = res[0][1] as Record<string, string>;
      lease = res[1][1] as string | null;
    } catch {
      return;
    }
    const leaseEpoch = lease === null ? 0 : parseLeaseValue(lease).epoch;
    this.seeEpoch(leaseEpoch);
    if (!this.o.following()) return;
    const behind: string[] = [];
    for (const [tenant, head] of Object.entries(heads)) {
      const [e, v] = head.split(':').map(Number);
      const cur = this.applied.get(tenant);
      if (e < this.maxEpoch) continue; // an old leadership's table: its successor will publish
      if (cur === undefined || e > cur.epoch || (e === cur.epoch && v > cur.version)) behind.push(tenant);
    }
    let caughtUp = true;
    if (behind.length > 0) {
      try {
        const tables = await this.o.conn.run((r) => r.hmgetBuffer(this.o.keys.tables, ...behind));
        for (const t of tables) if (t !== null && this.offer(t) === 'deferred') caughtUp = false;
      } catch {
        return;
      }
    }
    // Fresh: a leader holds the lease and we hold its latest tables.
    if (lease !== null && caughtUp) this.lastFreshAt = this.now();
  }

  private seeEpoch(e: number): void {
    if (e > this.maxEpoch) {
      this.maxEpoch = e;
      this.o.onEpoch?.(e);
    }
  }
}
