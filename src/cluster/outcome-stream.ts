/**
 * Outcome delta shipping over one Redis stream per cluster.
 *
 *   outcome ─► DeltaRecorder ──(every ~200 ms, or at once on a fast-path trigger)──► XADD (one per batch)
 *   XREAD BLOCK (own connection) ─► other replicas' batches ─► merged into our windows
 *
 * Redis work per replica is a few commands per second whatever the number of rules: one XADD
 * per batch, one XREAD per arrival burst. The stream is trimmed by time (MINID ~): entries
 * older than the windows' history are of no use to anyone.
 *
 * While Redis is unreachable, batches wait in a backlog bounded in bytes and in age (older
 * than the windows' history they are dropped: they could not be merged anyway).
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { log } from '../log.js';
import type { ClusterKeys } from './keys.js';
import type { DeltaRecorder } from './outcome-delta.js';
import { connectRedis, type GuardedRedis } from './redis-client.js';

/** Identifies this process among the stream's writers (a restarted replica keeps its id but not its windows). */
export const INCARNATION = randomBytes(6).toString('hex');

interface Batch {
  data: Buffer | null;
  fast: string[];
  firstAtMs: number;
}

export interface ShipperOptions {
  conn: GuardedRedis;
  keys: ClusterKeys;
  replicaId: string;
  recorder: DeltaRecorder;
  /** Batch period. Default 200 ms. */
  intervalMs?: number;
  /** Stream entries older than this are trimmed. Default 70 s (the windows keep 64 s). */
  retentionMs?: number;
  /** Backlog cap while Redis is unreachable. Default 8 MiB. */
  maxBacklogBytes?: number;
  /** Batches per round trip when catching up. Default 64. */
  maxBatchesPerSend?: number;
  now?: () => number;
  onShipped?: (batches: number, bytes: number) => void;
  onDropped?: (batches: number) => void;
}

export interface ShipperStats {
  batchesShipped: number;
  bytesShipped: number;
  batchesDropped: number;
  backlogBatches: number;
  backlogBytes: number;
  /** Epoch ms of the last successful XADD (NaN before the first). */
  lastShippedMs: number;
}

export class OutcomeShipper {
  private readonly intervalMs: number;
  private readonly retentionMs: number;
  private readonly maxBacklogBytes: number;
  private readonly maxPerSend: number;
  private readonly now: () => number;
  private backlog: Batch[] = [];
  private backlogBytes = 0;
  private fast = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private immediate = false;
  private sending: Promise<void> | null = null;
  private stopped = false;
  private readonly s: ShipperStats = { batchesShipped: 0, bytesShipped: 0, batchesDropped: 0, backlogBatches: 0, backlogBytes: 0, lastShippedMs: NaN };

  constructor(private readonly o: ShipperOptions) {
    this.intervalMs = o.intervalMs ?? 200;
    this.retentionMs = o.retentionMs ?? 70_000;
    this.maxBacklogBytes = o.maxBacklogBytes ?? 8 * 1024 * 1024;
    this.maxPerSend = o.maxBatchesPerSend ?? 64;
    this.now = o.now ?? Date.now;
  }

  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** This replica's fast path fired for `tenantId`: ship now, flagged, so the leader evaluates at once. */
  fastPath(tenantId: string): void {
    this.fast.add(tenantId);
    if (this.immediate || this.stopped) return;
    this.immediate = true;
    setImmediate(() => {
      this.immediate = false;
      this.flush();
    });
  }

  /** Cuts the pending batch into the backlog and sends what the backlog holds (one round trip). */
  flush(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.cut();
    if (this.sending !== null || this.backlog.length === 0) return this.sending ?? Promise.resolve();
    this.sending = this.send().finally(() => {
      this.sending = null;
    });
    return this.sending;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    // Last batch out, so the others keep this replica's final outcomes.
    this.cut();
    if (this.sending === null && this.backlog.length > 0) this.sending = this.send();
    await this.sending?.catch(() => {});
    this.stopped = true;
    clearInterval(this.timer);
  }

  stats(): ShipperStats {
    return { ...this.s, backlogBatches: this.backlog.length, backlogBytes: this.backlogBytes };
  }

  private cut(): void {
    const first = this.o.recorder.firstAtMs;
    const data = this.o.recorder.take();
    if (data === null && this.fast.size === 0) return;
    const batch: Batch = { data, fast: [...this.fast], firstAtMs: Number.isNaN(first) ? this.now() : first };
    this.fast.clear();
    this.backlog.push(batch);
    this.backlogBytes += data?.length ?? 0;
    this.bound();
  }

  /** Drops what can no longer be merged (older than the history) and the oldest past the byte cap. */
  private bound(): void {
    const minAt = this.now() - this.retentionMs;
    let drop = 0;
    while (drop < this.backlog.length && (this.backlog[drop].firstAtMs < minAt || this.backlogBytes > this.maxBacklogBytes)) {
      this.backlogBytes -= this.backlog[drop].data?.length ?? 0;
      drop++;
    }
    if (drop > 0) {
      this.backlog.splice(0, drop);
      if (this.s.batchesDropped === 0) log.warn('cluster: outcome batches dropped while Redis was unreachable', { dropped: drop });
      this.s.batchesDropped += drop;
      this.o.onDropped?.(drop);
    }
  }

  private async send(): Promise<void> {
    const batches = this.backlog.slice(0, this.maxPerSend);
    const minId = String(Math.max(0, this.now() - this.retentionMs));
    try {
      await this.o.conn.run((r) => {
        const p = r.pipeline();
        for (const b of batches) {
          const fields: (string | Buffer)[] = ['r', this.o.replicaId, 'i', INCARNATION, 't', String(b.firstAtMs)];
          if (b.data !== null) fields.push('d', b.data);
          if (b.fast.length > 0) fields.push('f', b.fast.join(','));
          p.xadd(this.o.keys.outcomes, 'MINID', '~', minId, '*', ...fields);
        }
        return p.exec().then((res) => {
          const err = res?.find(([e]) => e !== null)?.[0];
          if (err) throw err;
        });
      });
    } catch {
      this.bound();
      return; // kept in the backlog for the next tick
    }
    let bytes = 0;
    for (const b of batches) bytes += b.data?.length ?? 0;
    // The backlog may have been trimmed while we sent: remove exactly what went out.
    this.backlog = this.backlog.filter((b) => !batches.includes(b));
    this.backlogBytes -= bytes;
    if (this.backlogBytes < 0) this.backlogBytes = 0;
    this.s.batchesShipped += batches.length;
    this.s.bytesShipped += bytes;
    this.s.lastShippedMs = this.now();
    this.o.onShipped?.(batches.length, bytes);
  }
}

export interface ReceivedBatch {
  replicaId: string;
  data: Buffer | null;
  /** Tenants whose fast path fired on the sender. */
  fast: string[];
  /** When the sender recorded the batch's first outcome (its clock), epoch ms. */
  firstAtMs: number;
}

export interface ReaderOptions {
  url: string;
  keys: ClusterKeys;
  replicaId: string;
  onBatch: (b: ReceivedBatch) => void;
  /** XREAD BLOCK time. Default 1000 ms. */
  blockMs?: number;
  /** At start, read back this far so a new replica's windows start warm. Default 65 s. */
  warmMs?: number;
  /**
   * Pause after a read that came back with less than a full page, so that with many
   * replicas one XREAD collects several batches instead of one each. Default 50 ms.
   */
  minGapMs?: number;
  now?: () => number;
}

export interface ReaderStats {
  /** XREAD round trips. */
  reads: number;
  entriesRead: number;
  ownSkipped: number;
  readErrors: number;
  lastId: string;
  connected: boolean;
}

const READ_PAGE = 1000;

/** Reads the stream on a dedicated connection (XREAD BLOCK would hold up any other command). */
export class OutcomeReader {
  private readonly redis: Redis;
  private readonly blockMs: number;
  private readonly minGapMs: number;
  private lastId: string;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly s: ReaderStats = { reads: 0, entriesRead: 0, ownSkipped: 0, readErrors: 0, lastId: '', connected: false };

  constructor(private readonly o: ReaderOptions) {
    this.blockMs = o.blockMs ?? 1000;
    this.minGapMs = o.minGapMs ?? 50;
    this.redis = connectRedis({ url: o.url, name: `engine:${o.replicaId}:outcomes`, commandTimeoutMs: this.blockMs + 1500 });
    const now = o.now ?? Date.now;
    this.lastId = `${Math.max(0, now() - (o.warmMs ?? 65_000))}-0`;
  }

  start(): void {
    if (this.loop !== null) return;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.redis.disconnect(false);
    await this.loop;
  }

  stats(): ReaderStats {
    return { ...this.s, lastId: this.lastId, connected: this.redis.status === 'ready' };
  }

  private async run(): Promise<void> {
    let backoff = 100;
    while (!this.stopped) {
      if (this.redis.status !== 'ready') {
        await sleep(backoff);
        backoff = Math.min(2000, backoff * 2);
        continue;
      }
      try {
        this.s.reads++;
        const res = await this.redis.xreadBuffer('COUNT', READ_PAGE, 'BLOCK', this.blockMs, 'STREAMS', this.o.keys.outcomes, this.lastId);
        backoff = 100;
        if (res === null) continue;
        let n = 0;
        for (const [, entries] of res) {
          for (const [id, fields] of entries) {
            this.lastId = id.toString();
            this.deliver(fields);
            n++;
          }
        }
        if (n < READ_PAGE && this.minGapMs > 0) await sleep(this.minGapMs);
      } catch {
        if (this.stopped) break;
        this.s.readErrors++;
        await sleep(backoff);
        backoff = Math.min(2000, backoff * 2);
      }
    }
  }

  private deliver(fields: Buffer[]): void {
    let replicaId = '';
    let incarnation = '';
    let data: Buffer | null = null;
    let fast: string[] = [];
    let firstAtMs = NaN;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const f = fields[i].toString();
      const v = fields[i + 1];
      if (f === 'r') replicaId = v.toString();
      else if (f === 'i') incarnation = v.toString();
      else if (f === 'd') data = v;
      else if (f === 'f') fast = v.toString().split(',').filter((s) => s.length > 0);
      else if (f === 't') firstAtMs = Number(v.toString());
    }
    this.s.entriesRead++;
    if (replicaId === this.o.replicaId && incarnation === INCARNATION) {
      this.s.ownSkipped++;
      return;
    }
    try {
      this.o.onBatch({ replicaId, data, fast, firstAtMs });
    } catch (e) {
      log.error('cluster: outcome batch not merged', { from: replicaId, err: String((e as Error)?.message ?? e) });
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
