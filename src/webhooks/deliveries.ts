/**
 * The delivery records: what is written when a delivery is created, when each attempt comes
 * back from the delivery thread, when the backlog cap drops one and when it is redelivered;
 * the listing (newest first, paginated). Pruning to the newest N per webhook: pruning.ts.
 *
 * Storage:
 * - `webhook_deliveries` [`${tenantId}/${webhookId}`, deliveryId] → DeliveryRecord; delivery ids
 *                        sort by creation time, so one webhook's deliveries are one key range in
 *                        creation order (newest = last)
 * - `webhook_pending`    [tenantId, deliveryId] → {webhook_id}: the index of deliveries not yet
 *                        delivered or failed, scanned at start to resume them
 *
 * Only the front thread writes them: the delivery thread reports each attempt and this module
 * appends it to the record. One writer keeps the order of a record's updates trivial (writes
 * are queued in order) and costs one small write per attempt, nothing next to an HTTP request.
 * A delivery is written (pending) before it is handed to the thread, so one that is pending
 * when the service stops, or crashes, is resumed at start.
 */
import { errors } from '../errors.js';
import { log } from '../log.js';
import type { Metrics } from '../metrics/registry.js';
import type { Collection, Store, WriteBatch } from '../store/store.js';
import type { BackgroundWrites } from './background-writes.js';
import type { AttemptMessage, DeliveryThread } from './delivery-thread.js';
import { newDeliveryId, type EventType } from './events.js';
import { PendingDeliveries, type Pending } from './pending.js';
import { DeliveryPruner } from './pruning.js';
import type { DeliveryAttempt, DeliveryStatus } from '../schemas/webhooks.js';
import { deliveryScope, snapshot, type DeliveryRecord, type WebhookRecord } from './records.js';
import type { Cascade } from './registry.js';

export const MAX_DELIVERIES_PER_WEBHOOK = 1000;
/** Attempt history kept per delivery (redeliveries add series); the oldest are dropped. */
export const MAX_ATTEMPTS_KEPT = 100;
/**
 * Deliveries pending (not yet delivered or failed) per webhook. Beyond it the oldest pending
 * one is dropped: recorded as failed with the reason in its history, counted in
 * service_webhook_deliveries_total{outcome="dropped"}, and redeliverable. Bounds memory and
 * the delivery thread's queues whatever a receiver does (a dead one holds at most this many).
 */
export const MAX_PENDING_PER_WEBHOOK = 1000;

export interface DeliveryQuery {
  limit: number;
  status?: DeliveryStatus;
  /** Only deliveries older than this delivery id (pagination). */
  before?: string;
}

/** One published event, serialized once: the same bytes for every webhook and attempt. */
export interface SerializedEvent {
  eventId: string;
  eventType: EventType;
  body: string;
}

export interface DeliveryRecordsOptions {
  store: Store;
  writes: BackgroundWrites;
  /** Told of deliveries dropped by the backlog cap; asked whether new series may start. */
  thread: Pick<DeliveryThread, 'drop' | 'running'>;
  metrics?: Metrics;
  /** Deliveries kept per webhook; default MAX_DELIVERIES_PER_WEBHOOK (lowered by tests). */
  maxDeliveriesPerWebhook?: number;
  /** Pending deliveries per webhook; default MAX_PENDING_PER_WEBHOOK (lowered by tests). */
  maxPendingPerWebhook?: number;
}

function keepNewestAttempts(rec: DeliveryRecord): void {
  if (rec.attempts.length > MAX_ATTEMPTS_KEPT) rec.attempts.splice(0, rec.attempts.length - MAX_ATTEMPTS_KEPT);
}

export class DeliveryRecords {
  private readonly deliveries: Collection<DeliveryRecord>;
  private readonly pendingIndex: Collection<{ webhook_id: string }>;
  private readonly pending: PendingDeliveries;
  private readonly pruner: DeliveryPruner;
  private readonly maxPending: number;
  private droppedCount = 0;

  constructor(private readonly opts: DeliveryRecordsOptions) {
    this.deliveries = opts.store.collection<DeliveryRecord>('webhook_deliveries');
    // Each replica resumes the deliveries it started (the index is kept per replica in cluster mode).
    this.pendingIndex = opts.store.collection<{ webhook_id: string }>('webhook_pending', { scope: 'replica' });
    this.maxPending = opts.maxPendingPerWebhook ?? MAX_PENDING_PER_WEBHOOK;
    this.pending = new PendingDeliveries(this.maxPending);
    const maxDeliveries = opts.maxDeliveriesPerWebhook ?? MAX_DELIVERIES_PER_WEBHOOK;
    this.pruner = new DeliveryPruner(opts.store, this.deliveries, opts.writes, maxDeliveries, (id) => this.pending.has(id));
  }

  /** Deliveries not yet delivered or failed (queued, in flight or waiting for a retry): the backlog. */
  pendingCount(): number {
    return this.pending.size;
  }

  /** Every pending delivery, with its freshest state. */
  pendingDeliveries(): IterableIterator<Pending> {
    return this.pending.values();
  }

  /** Whether `rec` is still pending as this very record (not finished, dropped or deleted meanwhile). */
  isPending(rec: DeliveryRecord): boolean {
    return this.pending.isCurrent(rec);
  }

  /**
   * At start: takes back every delivery the store says is pending and passes it to `send`;
   * index entries whose webhook or record is gone are removed. Returns how many were resumed.
   */
  resume(find: (tenantId: string, webhookId: string) => WebhookRecord | undefined, send: (tenantId: string, hook: WebhookRecord, rec: DeliveryRecord) => void): number {
    return this.resumeEntries(this.pendingIndex.listAll(), find, send);
  }

  /**
   * Cluster mode: the pending deliveries of a replica that is gone, whose index entries the
   * store has just moved under this replica (Store.adoptReplicaEntries): sent from here on.
   */
  adopt(
    entries: Iterable<{ tenantId: string; id: string; value: { webhook_id: string } }>,
    find: (tenantId: string, webhookId: string) => WebhookRecord | undefined,
    send: (tenantId: string, hook: WebhookRecord, rec: DeliveryRecord) => void,
  ): number {
    return this.resumeEntries(entries, find, send);
  }

  private resumeEntries(
    entries: Iterable<{ tenantId: string; id: string; value: { webhook_id: string } }>,
    find: (tenantId: string, webhookId: string) => WebhookRecord | undefined,
    send: (tenantId: string, hook: WebhookRecord, rec: DeliveryRecord) => void,
  ): number {
    let resumed = 0;
    const stale: { tenantId: string; id: string }[] = [];
    for (const { tenantId, id, value } of entries) {
      const hook = find(tenantId, value.webhook_id);
      const rec = hook ? this.deliveries.get(deliveryScope(tenantId, hook.id), id) : undefined;
      if (!hook || !rec || rec.status !== 'pending') {
        stale.push({ tenantId, id });
        continue;
      }
      if (!this.admit(tenantId, rec)) continue;
      send(tenantId, hook, rec);
      resumed++;
    }
    if (stale.length > 0) {
      // Housekeeping only: on a full disk the service still starts; they are dropped next time.
      this.opts.writes.track(
        this.opts.store.atomic((b) => {
          for (const s of stale) b.remove(this.pendingIndex, s.tenantId, s.id);
        }),
      );
    }
    return resumed;
  }

  /**
   * Records one pending delivery of `event` per webhook, in the background. `onStored` runs
   * for each once it is in the store and still pending; a failed write is logged and the
   * deliveries forgotten.
   */
  create(tenantId: string, webhookIds: string[], event: SerializedEvent, onStored: (rec: DeliveryRecord) => void): void {
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const recs = webhookIds.map(
      (webhookId): DeliveryRecord => ({
        id: newDeliveryId(nowMs),
        webhook_id: webhookId,
        event_id: event.eventId,
        event_type: event.eventType,
        status: 'pending',
        series: 1,
        body: event.body,
        created_at: now,
        updated_at: now,
        next_attempt_at: now,
        attempts: [],
      }),
    );
    for (const r of recs) this.admit(tenantId, r);
    const snaps = recs.map(snapshot);
    const written = this.opts.store.atomic((b) => {
      for (const s of snaps) this.putPending(b, tenantId, s);
    });
    this.opts.writes.track(
      written.then(
        () => {
          for (const r of recs) {
            if (!this.pending.isCurrent(r)) continue; // deleted meanwhile
            onStored(r);
            this.pruner.noteStored(tenantId, r.webhook_id);
          }
        },
        (e) => {
          for (const r of recs) if (this.pending.isCurrent(r)) this.pending.remove(r.id);
          throw e; // logged by BackgroundWrites
        },
      ),
    );
  }

  /** Appends an attempt reported by the delivery thread to its record and writes it. */
  recordAttempt(m: AttemptMessage): void {
    const p = this.pending.get(m.id);
    if (!p || p.tenantId !== m.tenantId || p.record.webhook_id !== m.webhookId) return; // webhook deleted meanwhile
    const rec = p.record;
    const now = Date.now();
    rec.attempts.push({ series: rec.series, ...m.attempt });
    keepNewestAttempts(rec);
    rec.updated_at = new Date(now).toISOString();
    const scope = deliveryScope(p.tenantId, rec.webhook_id);
    if (m.next === 'retry') {
      rec.next_attempt_at = new Date(now + (m.retryInMs ?? 0)).toISOString();
      this.opts.metrics?.webhookDeliveries.inc({ event_type: rec.event_type, outcome: 'retried' });
      this.opts.writes.track(this.deliveries.put(scope, rec.id, snapshot(rec)));
    } else {
      rec.status = m.next;
      this.finish(p.tenantId, rec);
      this.opts.metrics?.webhookDeliveries.inc({ event_type: rec.event_type, outcome: m.next });
    }
    log.debug('webhook delivery attempt', {
      tenant_id: p.tenantId,
      webhook_id: rec.webhook_id,
      delivery_id: rec.id,
      event_type: rec.event_type,
      attempt: m.attempt.attempt,
      status_code: m.attempt.status_code,
      outcome: m.next,
    });
  }

  /** Newest first. `total` counts the webhook's stored deliveries matching `status`. */
  list(tenantId: string, webhookId: string, q: DeliveryQuery): { deliveries: DeliveryRecord[]; total: number } {
    const matching: DeliveryRecord[] = [];
    for (const { value } of this.deliveries.list(deliveryScope(tenantId, webhookId))) {
      const rec = this.pending.of(tenantId, webhookId, value.id) ?? value;
      if (!q.status || rec.status === q.status) matching.push(rec);
    }
    const total = matching.length;
    matching.reverse();
    const from = q.before ? matching.findIndex((d) => d.id < q.before!) : 0;
    const page = from < 0 ? [] : matching.slice(from, from + q.limit);
    return { deliveries: page.map(snapshot), total };
  }

  get(tenantId: string, webhookId: string, deliveryId: string): DeliveryRecord {
    const live = this.pending.of(tenantId, webhookId, deliveryId);
    if (live) return snapshot(live);
    const rec = this.deliveries.get(deliveryScope(tenantId, webhookId), deliveryId);
    if (!rec) throw errors.deliveryNotFound(deliveryId);
    return snapshot(rec);
  }

  /**
   * Makes a delivered or failed delivery pending again as a new series of attempts (same id
   * and bytes) and writes it; the caller hands it to the thread while isPending() holds.
   */
  async redeliver(tenantId: string, webhookId: string, deliveryId: string): Promise<DeliveryRecord> {
    const stored = this.deliveries.get(deliveryScope(tenantId, webhookId), deliveryId);
    // Only a delivery of this tenant's webhook is "in progress" to it; anyone else's is not found.
    if (this.pending.of(tenantId, webhookId, deliveryId)) throw errors.deliveryInProgress(deliveryId);
    if (!stored) throw errors.deliveryNotFound(deliveryId);
    if (stored.status === 'pending') throw errors.deliveryInProgress(deliveryId);
    if (!this.opts.thread.running) throw errors.unavailable('webhook delivery is stopping');
    const now = new Date().toISOString();
    const rec: DeliveryRecord = { ...stored, attempts: stored.attempts.map((a) => ({ ...a })), status: 'pending', series: stored.series + 1, updated_at: now, next_attempt_at: now };
    this.admit(tenantId, rec);
    const snap = snapshot(rec);
    try {
      await this.opts.store.atomic((b) => this.putPending(b, tenantId, snap));
    } catch (e) {
      if (this.pending.isCurrent(rec)) this.pending.remove(rec.id);
      throw e;
    }
    return rec;
  }

  /**
   * A webhook is being deleted: forgets its pending deliveries, waits until every write issued
   * so far is in the store (so the key range read next is complete) and returns the removal
   * of its records, to be written with the webhook's.
   */
  async removeWebhook(tenantId: string, webhookId: string): Promise<Cascade> {
    this.pending.removeWebhook(tenantId, webhookId);
    this.pruner.forget(tenantId, webhookId);
    const scope = deliveryScope(tenantId, webhookId);
    await this.opts.writes.settle();
    const ids = [...this.deliveries.list(scope)].map((d) => d.id);
    return {
      removed: ids.length,
      write: (b) => {
        for (const id of ids) {
          b.remove(this.deliveries, scope, id);
          b.remove(this.pendingIndex, tenantId, id);
        }
      },
    };
  }

  /**
   * Another replica deleted the webhook (and its delivery records): its pending deliveries
   * here are forgotten and their entries in this replica's index removed.
   */
  forgetWebhook(tenantId: string, webhookId: string): void {
    const ids = [...this.pending.values()].filter((p) => p.tenantId === tenantId && p.record.webhook_id === webhookId).map((p) => p.record.id);
    this.pending.removeWebhook(tenantId, webhookId);
    this.pruner.forget(tenantId, webhookId);
    if (ids.length === 0) return;
    this.opts.writes.track(
      this.opts.store.atomic((b) => {
        for (const id of ids) b.remove(this.pendingIndex, tenantId, id);
      }),
    );
  }

  private putPending(b: WriteBatch, tenantId: string, rec: DeliveryRecord): void {
    b.put(this.deliveries, deliveryScope(tenantId, rec.webhook_id), rec.id, rec);
    b.put(this.pendingIndex, tenantId, rec.id, { webhook_id: rec.webhook_id });
  }

  /** A delivery reached delivered or failed: out of the backlog and the pending index. */
  private finish(tenantId: string, rec: DeliveryRecord): void {
    rec.next_attempt_at = null;
    this.pending.remove(rec.id);
    const snap = snapshot(rec);
    this.opts.writes.track(
      this.opts.store.atomic((b) => {
        b.put(this.deliveries, deliveryScope(tenantId, rec.webhook_id), snap.id, snap);
        b.remove(this.pendingIndex, tenantId, snap.id);
      }),
    );
  }

  /**
   * A delivery becomes pending. Past the pending cap for its webhook, the oldest is dropped;
   * returns false when that was this one (resumed deliveries are oldest).
   */
  private admit(tenantId: string, rec: DeliveryRecord): boolean {
    const over = this.pending.add(tenantId, rec);
    if (over === null) return true;
    this.drop(over);
    return over !== rec.id;
  }

  /** Drops a pending delivery over the cap: failed, with the reason in its history; redeliverable. */
  private drop(id: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    const rec = p.record;
    const now = new Date().toISOString();
    const attempt: DeliveryAttempt = {
      series: rec.series,
      attempt: rec.attempts.filter((a) => a.series === rec.series).length + 1,
      started_at: now,
      duration_ms: 0,
      status_code: null,
      error: `dropped: more than ${this.maxPending} deliveries were pending for this webhook (receiver slow or down); redeliver it once the receiver is back`,
    };
    rec.status = 'failed';
    rec.updated_at = now;
    rec.attempts.push(attempt);
    keepNewestAttempts(rec);
    this.droppedCount++;
    this.opts.metrics?.webhookDeliveries.inc({ event_type: rec.event_type, outcome: 'dropped' });
    this.opts.thread.drop(p.tenantId, rec.webhook_id, id);
    this.finish(p.tenantId, rec);
    if (this.droppedCount === 1 || this.droppedCount % 1000 === 0) {
      log.warn('webhook deliveries dropped: too many pending for one webhook', { tenant_id: p.tenantId, webhook_id: rec.webhook_id, dropped_total: this.droppedCount });
    }
  }
}
