/**
 * Publishing and following the decision table.
 *
 * Leader: after evaluating a tenant it publishes the tenant's next table (table-builder.ts):
 * a delta (the rules that changed since its base version) or, periodically, a snapshot (every
 * rule), with its epoch and a version that grows with every publish of that leadership. The
 * publish is one script that first compares the lease value (which carries the epoch) and
 * only then stores and PUBLISHes: a leader that lost its lease while paused cannot publish,
 * even if its own clock check passed an instant before the pause. A snapshot replaces the
 * stored table and empties the tenant's delta list; a delta is appended to that list, and only
 * if the stored head is still its base (else 'broken': the leader publishes a snapshot), so
 * Redis always holds "latest snapshot + the unbroken chain of deltas after it".
 *
 * Followers: apply tables pushed on the channel (own subscriber connection), one tenant's
 * tables in order. A delta is applied only on top of the version it is based on; a delta that
 * is not (a missed message, a late joiner) starts a heal. Every `healMs` (and on such a gap)
 * they poll the heads (plus the lease) and fetch, for each tenant they are behind on, the
 * deltas after the snapshot (and the snapshot itself when they do not hold its version). A
 * table from an older epoch than one already seen, or not newer than the one applied, is
 * rejected.
 */
import type { Redis } from 'ioredis';
import { log } from '../log.js';
import type { ClusterKeys } from './keys.js';
import { parseLeaseValue, type LeaderLease } from './lease.js';
import { connectRedis, type GuardedRedis } from './redis-client.js';
import { LuaScript } from './script.js';
import type { BuiltTable } from './table-builder.js';
import { readTableHeader, TableKind } from './table-codec.js';

/** KEYS: lease, tables, heads, deltas. ARGV: lease value, tenant, table, head, channel. */
const PUBLISH_SNAPSHOT = new LuaScript(
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('DEL', KEYS[4])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[3])
return 1`,
  4,
);

/** KEYS: lease, heads, deltas. ARGV: lease value, tenant, delta, head, channel, base head. */
const PUBLISH_DELTA = new LuaScript(
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[6] then return 2 end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[3])
return 1`,
  3,
);

/** `<epoch>:<version>:<snapshot version>`, the value of a tenant's head. */
export function headValue(epoch: number, version: number, snapshotVersion: number): string {
  return `${epoch}:${version}:${snapshotVersion}`;
}

export function parseHead(head: string): { epoch: number; version: number; snapshotVersion: number } {
  const [e, v, s] = head.split(':').map(Number);
  return { epoch: e, version: v, snapshotVersion: Number.isFinite(s) ? s : v };
}

export type PublishResult = 'published' | 'not-leader' | 'fenced' | 'broken' | 'failed';

export class TablePublisher {
  private version = 0;
  private versionEpoch = 0;
  /** Per tenant: the version of the snapshot its stored deltas start from (this leadership). */
  private readonly snapshotOf = new Map<string, number>();
  published = 0;
  fenced = 0;
  failed = 0;
  /** Bytes of the tables published so far (snapshots and deltas). */
  bytes = 0;
  /** Epoch ms of the last successful publish (NaN before the first). */
  lastPublishedMs = NaN;

  constructor(
    private readonly conn: GuardedRedis,
    private readonly keys: ClusterKeys,
    private readonly lease: LeaderLease,
  ) {}

  /**
   * Publishes `build(epoch, version)` for the tenant if we lead. The lease is checked by our
   * own clock before building and by the script in Redis when writing. `onPublished` runs
   * (synchronously, before this resolves) when Redis took the table.
   */
  async publish(
    tenantId: string,
    build: (epoch: number, version: number) => BuiltTable | null | Promise<BuiltTable | null>,
    onPublished?: (epoch: number, version: number) => void,
  ): Promise<PublishResult> {
    const fence = this.lease.fenceValue();
    if (fence === '') return 'not-leader';
    const epoch = this.lease.epoch();
    if (epoch !== this.versionEpoch) {
      this.versionEpoch = epoch;
      this.version = 0;
      this.snapshotOf.clear();
    }
    const version = ++this.version;
    const built = await build(epoch, version);
    if (built === null) return 'not-leader';
    const deltas = this.keys.deltasPrefix + tenantId;
    try {
      let ok: unknown;
      if (built.kind === TableKind.Snapshot) {
        ok = await this.conn.run((r) =>
          PUBLISH_SNAPSHOT.run(r, [this.keys.lease, this.keys.tables, this.keys.heads, deltas], [fence, tenantId, built.table, headValue(epoch, version, version), this.keys.tableChannel]),
        );
      } else {
        const snap = this.snapshotOf.get(tenantId);
        if (snap === undefined) return 'broken';
        ok = await this.conn.run((r) =>
          PUBLISH_DELTA.run(
            r,
            [this.keys.lease, this.keys.heads, deltas],
            [fence, tenantId, built.table, headValue(epoch, version, snap), this.keys.tableChannel, headValue(epoch, built.baseVersion, snap)],
          ),
        );
      }
      if (ok === 2) return 'broken';
      if (ok !== 1) {
        this.fenced++;
        log.warn('cluster: decision table not published, the lease is no longer ours', { tenant: tenantId, epoch });
        return 'fenced';
      }
      if (built.kind === TableKind.Snapshot) this.snapshotOf.set(tenantId, version);
      this.published++;
      this.bytes += built.table.length;
      this.lastPublishedMs = Date.now();
      onPublished?.(epoch, version);
      return 'published';
    } catch {
      this.failed++;
      return 'failed';
    }
  }
}

export type ApplyResult = 'applied' | 'stale' | 'gap' | 'deferred';

type Header = ReturnType<typeof readTableHeader>;

export interface FollowerOptions {
  url: string;
  conn: GuardedRedis;
  keys: ClusterKeys;
  replicaId: string;
  /**
   * Writes the table's rules into the shared tables (possibly across event-loop turns);
   * 'aborted' when it stopped part-way (this replica began to lead): the table is not applied.
   */
  apply: (table: Buffer, header: Header) => Promise<'applied' | 'aborted'> | 'applied' | 'aborted';
  /** False while this replica leads (it is the source of the tables). */
  following: () => boolean;
  /** Heal poll period. Default 2000 ms. */
  healMs?: number;
  /** A table was refused as older than what we hold or from an older epoch. */
  onStale?: () => void;
  /** A delta arrived that is not based on the version we hold (a heal follows). */
  onGap?: () => void;
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
  /** Per tenant: the tail of its queue of tables (applied one after another, in arrival order). */
  private readonly queues = new Map<string, { tail: Promise<unknown>; length: number }>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private healing: Promise<void> | null = null;
  private healAgain = false;
  /** Highest epoch seen on any table or lease. */
  maxEpoch = 0;
  rejectedStale = 0;
  appliedCount = 0;
  gaps = 0;
  /** Monotonic ms when we last knew we held the leader's latest tables (-Infinity: never). */
  lastFreshAt = -Infinity;
  /** Epoch ms when the newest table we applied was published (NaN: none yet). */
  newestPublishedMs = NaN;

  constructor(private readonly o: FollowerOptions) {
    this.healMs = o.healMs ?? 2000;
    this.now = o.now ?? (() => performance.now());
    this.sub = connectRedis({ url: o.url, name: `engine:${o.replicaId}:tables`, commandTimeoutMs: 2000 });
    this.sub.on('messageBuffer', (_channel: Buffer, message: Buffer) => {
      void this.offer(message).then((r) => {
        if (r === 'applied') this.lastFreshAt = this.now();
      });
    });
    // Subscribing needs a live connection; ioredis resubscribes by itself after a reconnect.
    const subscribe = () => void this.sub.subscribe(o.keys.tableChannel).catch(() => {});
    if (this.sub.status === 'ready') subscribe();
    this.sub.once('ready', subscribe);
  }

  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    const loop = () => {
      void this.heal().finally(() => {
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
    await Promise.allSettled([...this.queues.values()].map((q) => q.tail));
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

  /**
   * Queues one table behind the tenant's earlier ones; resolves with what became of it. A
   * delta that is not based on the version held resolves 'gap' and starts a heal.
   */
  offer(table: Buffer): Promise<ApplyResult> {
    let h: Header;
    try {
      h = readTableHeader(table);
    } catch (e) {
      log.error('cluster: malformed decision table ignored', { err: String((e as Error)?.message ?? e) });
      return Promise.resolve('stale');
    }
    this.seeEpoch(h.epoch);
    let q = this.queues.get(h.tenantId);
    if (!q) {
      q = { tail: Promise.resolve(), length: 0 };
      this.queues.set(h.tenantId, q);
    }
    const queue = q;
    queue.length++;
    const run = queue.tail.then(() => this.consider(table, h));
    queue.tail = run.catch(() => {});
    return run
      .catch((e): ApplyResult => {
        log.error('cluster: decision table could not be applied', { tenant: h.tenantId, err: String((e as Error)?.message ?? e) });
        return 'stale';
      })
      .then((r) => {
        if (--queue.length === 0 && this.queues.get(h.tenantId) === queue) this.queues.delete(h.tenantId);
        if (r === 'gap') void this.heal();
        return r;
      });
  }

  private async consider(table: Buffer, h: Header): Promise<ApplyResult> {
    if (!this.o.following()) return 'deferred';
    const cur = this.applied.get(h.tenantId);
    if (h.epoch < this.maxEpoch || (cur !== undefined && (h.epoch < cur.epoch || (h.epoch === cur.epoch && h.version <= cur.version)))) {
      this.rejectedStale++;
      this.o.onStale?.();
      return 'stale';
    }
    if (h.kind === TableKind.Delta && (cur === undefined || cur.epoch !== h.epoch || cur.version !== h.baseVersion)) {
      this.gaps++;
      this.o.onGap?.();
      return 'gap';
    }
    if ((await this.o.apply(table, h)) === 'aborted') return 'deferred';
    this.applied.set(h.tenantId, { epoch: h.epoch, version: h.version, publishedAtMs: h.publishedAtMs });
    this.appliedCount++;
    if (!(this.newestPublishedMs >= h.publishedAtMs)) this.newestPublishedMs = h.publishedAtMs;
    return 'applied';
  }

  /** One heal poll (joined by calls made while one runs; rerun once if asked meanwhile). */
  heal(): Promise<void> {
    if (this.healing !== null) {
      this.healAgain = true;
      return this.healing;
    }
    this.healing = (async () => {
      // At most two reruns: a chain broken in Redis itself must not turn into a busy loop.
      let rounds = 0;
      do {
        this.healAgain = false;
        await this.healOnce();
      } while (this.healAgain && !this.stopped && ++rounds < 3);
    })().finally(() => {
      this.healing = null;
    });
    return this.healing;
  }

  /** Heads and lease in one round trip, then what we are behind on: the deltas after the snapshot, and the snapshot if needed. */
  private async healOnce(): Promise<void> {
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
    let caughtUp = true;
    const behind: { tenant: string; snapshot: boolean }[] = [];
    for (const [tenant, value] of Object.entries(heads)) {
      const head = parseHead(value);
      const cur = this.applied.get(tenant);
      if (head.epoch < this.maxEpoch) continue; // an old leadership's table: its successor will publish
      if (cur !== undefined && (head.epoch < cur.epoch || (head.epoch === cur.epoch && head.version <= cur.version))) continue;
      // Tables of this tenant are on their way through the queue: look again next time.
      if (this.queues.has(tenant)) {
        caughtUp = false;
        continue;
      }
      const holdsSnapshot = cur !== undefined && cur.epoch === head.epoch && cur.version >= head.snapshotVersion;
      behind.push({ tenant, snapshot: !holdsSnapshot });
    }
    for (const b of behind) {
      let snapshot: Buffer | null = null;
      let deltas: Buffer[];
      try {
        // One transaction: the snapshot and the deltas after it, as one publish left them.
        const res = await this.o.conn.run((r) => {
          const m = r.multi();
          if (b.snapshot) m.hgetBuffer(this.o.keys.tables, b.tenant);
          m.lrangeBuffer(this.o.keys.deltasPrefix + b.tenant, 0, -1);
          return m.exec();
        });
        if (res === null || res.some(([e]) => e !== null)) return;
        if (b.snapshot) snapshot = res[0][1] as Buffer | null;
        deltas = res[res.length - 1][1] as Buffer[];
      } catch {
        return;
      }
      const pending: Promise<ApplyResult>[] = [];
      if (snapshot !== null) pending.push(this.offer(snapshot));
      else if (b.snapshot) caughtUp = false;
      // Deltas we already hold are skipped here rather than counted as stale.
      const cur = this.applied.get(b.tenant);
      const snapVersion = snapshot === null ? 0 : readTableHeader(snapshot).version;
      for (const d of deltas) {
        let h: Header;
        try {
          h = readTableHeader(d);
        } catch {
          continue;
        }
        if (snapshot === null && cur !== undefined && h.epoch === cur.epoch && h.version <= cur.version) continue;
        if (snapshot !== null && h.baseVersion < snapVersion) continue;
        pending.push(this.offer(d));
      }
      for (const r of await Promise.all(pending)) if (r !== 'applied') caughtUp = false;
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
