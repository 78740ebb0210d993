/**
 * Webhooks on the front thread: the per-tenant registry (CRUD over the store, cached in
 * memory), `publish()` for the engine, the delivery records, and the delivery thread.
 *
 * Storage (one LMDB environment, through the Store interface):
 * - `webhooks`          [tenantId, webhookId] → WebhookRecord (secret included: it is needed to sign)
 * - `webhook_deliveries` [`${tenantId}/${webhookId}`, deliveryId] → DeliveryRecord; delivery ids
 *                       sort by creation time, so one webhook's deliveries are one key range in
 *                       creation order (newest = last); at most 1000 per webhook are kept
 * - `webhook_pending`   [tenantId, deliveryId] → {webhook_id}: the index of deliveries not yet
 *                       delivered or failed, scanned at start to resume them
 *
 * Who writes: only this thread. The delivery thread sends and reports each attempt back over
 * its MessagePort; the front thread appends the attempt to the record and writes it. One
 * writer keeps the ordering of a record's updates trivial (writes are queued in order), keeps
 * the thread free of store handles (and the store behind its interface, so a shared backend
 * later needs no change in the thread), and costs one small write per attempt, which is
 * nothing next to an HTTP request. A delivery is written (pending) before it is handed to the
 * thread, so one that is pending when the service stops, or crashes, is resumed at start.
 */
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import { errors, ServiceError } from '../errors.js';
import { log } from '../log.js';
import type { Metrics } from '../metrics/registry.js';
import type { Collection, Store } from '../store/store.js';
import { checkWebhookUrl } from './address.js';
import { buildPayload, EVENT_TYPES, isEventType, newDeliveryId, newWebhookId, type EventDataMap, type EventType } from './events.js';
import { WEBHOOK_MAX_ATTEMPTS, type DeliveryWorkerOptions, type FromWorker, type ToWorker, type WebhookTarget } from './protocol.js';
import { snapshot, type DeliveryRecord, type DeliveryStatus, type WebhookRecord } from './records.js';

export const MAX_WEBHOOKS_PER_TENANT = 50;
export const MAX_DELIVERIES_PER_WEBHOOK = 1000;
/** Attempt history kept per delivery (redeliveries add series); the oldest are dropped. */
export const MAX_ATTEMPTS_KEPT = 100;
export const DELIVERY_CONCURRENCY = 64;
export const DELIVERY_CONCURRENCY_PER_WEBHOOK = 8;
/** Requests in flight per tenant (all its webhooks): a quarter of the thread's slots. */
export const DELIVERY_CONCURRENCY_PER_TENANT = 16;
/**
 * Deliveries pending (not yet delivered or failed) per webhook. Beyond it the oldest pending
 * one is dropped: recorded as failed with the reason in its history, counted in
 * service_webhook_deliveries_total{outcome="dropped"}, and redeliverable. Bounds memory and
 * the delivery thread's queues whatever a receiver does (a dead one holds at most this many).
 */
export const MAX_PENDING_PER_WEBHOOK = 1000;
/** The most `stop()` lets requests in flight run before aborting them. */
export const STOP_GRACE_MS = 3000;

export interface WebhookInput {
  url: string;
  event_types?: EventType[];
  secret?: string;
  active?: boolean;
}

export interface WebhookPatch {
  url?: string;
  event_types?: EventType[];
  secret?: string | null;
  active?: boolean;
}

export interface DeliveryQuery {
  limit: number;
  status?: DeliveryStatus;
  /** Only deliveries older than this delivery id (pagination). */
  before?: string;
}

export interface DispatcherOptions {
  store: Store;
  config: Pick<Config, 'webhookAllowPrivate' | 'webhookTimeoutMs' | 'webhookBackoffMs'>;
  metrics?: Metrics;
  version: string;
  /** The compiled delivery thread; defaults to ./delivery-worker.js next to this file. */
  workerUrl?: URL;
  /** Deliveries kept per webhook; default MAX_DELIVERIES_PER_WEBHOOK (lowered by tests). */
  maxDeliveriesPerWebhook?: number;
  /** Pending deliveries per webhook; default MAX_PENDING_PER_WEBHOOK (lowered by tests). */
  maxPendingPerWebhook?: number;
}

interface InFlight {
  tenantId: string;
  record: DeliveryRecord;
}

const scopeOf = (tenantId: string, webhookId: string) => `${tenantId}/${webhookId}`;

function byCreation(a: WebhookRecord, b: WebhookRecord): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export class WebhookDispatcher {
  private readonly webhooks: Collection<WebhookRecord>;
  private readonly deliveries: Collection<DeliveryRecord>;
  private readonly pendingIndex: Collection<{ webhook_id: string }>;
  /** tenantId → webhookId → record: publish() reads only memory. */
  private readonly cache = new Map<string, Map<string, WebhookRecord>>();
  private readonly reserved = new Map<string, number>();
  /** Pending deliveries by id: the freshest state, ahead of the store by at most a write. */
  private readonly inflight = new Map<string, InFlight>();
  /** Deliveries stored per webhook scope (an estimate, corrected on every prune). */
  private readonly counts = new Map<string, number>();
  private readonly pruning = new Set<string>();
  private readonly writes = new Set<Promise<unknown>>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private worker: Worker | null = null;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  private onWorkerStopped: (() => void) | null = null;
  private readonly workerOptions: DeliveryWorkerOptions;
  private readonly workerUrl: URL;
  private readonly maxDeliveries: number;
  private readonly maxPending: number;
  /** Pending delivery ids per webhook scope, oldest first (insertion order): the backlog the cap applies to. */
  private readonly pendingByHook = new Map<string, Set<string>>();
  private droppedCount = 0;

  constructor(private readonly opts: DispatcherOptions) {
    this.webhooks = opts.store.collection<WebhookRecord>('webhooks');
    this.deliveries = opts.store.collection<DeliveryRecord>('webhook_deliveries');
    this.pendingIndex = opts.store.collection<{ webhook_id: string }>('webhook_pending');
    this.workerUrl = opts.workerUrl ?? new URL('./delivery-worker.js', import.meta.url);
    this.maxDeliveries = opts.maxDeliveriesPerWebhook ?? MAX_DELIVERIES_PER_WEBHOOK;
    this.workerOptions = {
      timeoutMs: opts.config.webhookTimeoutMs,
      backoffMs: [...opts.config.webhookBackoffMs],
      allowPrivate: opts.config.webhookAllowPrivate,
      version: opts.version,
      maxConcurrency: DELIVERY_CONCURRENCY,
      maxPerWebhook: DELIVERY_CONCURRENCY_PER_WEBHOOK,
      maxPerTenant: DELIVERY_CONCURRENCY_PER_TENANT,
    };
    this.maxPending = opts.maxPendingPerWebhook ?? MAX_PENDING_PER_WEBHOOK;
  }

  /** Deliveries not yet delivered or failed (queued, in flight or waiting for a retry): the backlog. */
  pendingCount(): number {
    return this.inflight.size;
  }

  // ───────────────────────────── lifecycle ─────────────────────────────

  /** Loads the webhooks, starts the delivery thread and resumes pending deliveries. */
  async start(): Promise<void> {
    if (this.state !== 'new') return;
    for (const { tenantId, id, value } of this.webhooks.listAll()) this.tenantHooks(tenantId).set(id, value);
    this.state = 'running';
    this.spawn();
    let resumed = 0;
    const stale: { tenantId: string; id: string }[] = [];
    for (const { tenantId, id, value } of this.pendingIndex.listAll()) {
      const hook = this.cache.get(tenantId)?.get(value.webhook_id);
      const rec = hook ? this.deliveries.get(scopeOf(tenantId, hook.id), id) : undefined;
      if (!hook || !rec || rec.status !== 'pending') {
        stale.push({ tenantId, id });
        continue;
      }
      if (!this.addPending(tenantId, rec)) continue;
      this.send(tenantId, hook, rec);
      resumed++;
    }
    if (stale.length > 0) {
      // Housekeeping only: on a full disk the service still starts; they are dropped next time.
      this.track(
        this.opts.store.atomic((b) => {
          for (const s of stale) b.remove(this.pendingIndex, s.tenantId, s.id);
        }),
      );
    }
    let hooks = 0;
    for (const m of this.cache.values()) hooks += m.size;
    log.info('webhooks started', { webhooks: hooks, resumed_deliveries: resumed });
  }

  /**
   * Stops the delivery thread: nothing new starts, requests in flight get up to
   * min(timeout, 3 s) to finish (their attempts are recorded), then are aborted. Deliveries
   * not finished stay pending in the store and resume at the next start.
   */
  async stop(): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'stopping';
    const w = this.worker;
    if (w) {
      const graceMs = Math.min(this.workerOptions.timeoutMs, STOP_GRACE_MS);
      const stopped = new Promise<void>((resolve) => (this.onWorkerStopped = resolve));
      w.postMessage({ type: 'stop', graceMs } satisfies ToWorker);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stopped, new Promise<void>((r) => (timer = setTimeout(r, graceMs + 2000)))]);
      clearTimeout(timer);
      this.worker = null;
      await w.terminate();
    }
    await this.settle();
    this.state = 'stopped';
    log.info('webhooks stopped', { pending_deliveries: this.inflight.size });
  }

  private spawn(): void {
    const w = new Worker(this.workerUrl, { workerData: this.workerOptions, name: 'webhook-delivery' });
    w.on('message', (m: FromWorker) => this.onMessage(m));
    w.on('error', (e) => log.error('webhook delivery thread failed', { err: String((e as Error)?.stack ?? e) }));
    w.on('exit', (code) => {
      if (this.worker !== w) return;
      this.worker = null;
      if (this.state === 'stopping') {
        this.onWorkerStopped?.();
        return;
      }
      if (this.state !== 'running') return;
      log.error('webhook delivery thread exited; restarting it', { code });
      setTimeout(() => {
        if (this.state !== 'running' || this.worker) return;
        this.spawn();
        for (const [, f] of this.inflight) {
          const hook = this.cache.get(f.tenantId)?.get(f.record.webhook_id);
          if (hook) this.send(f.tenantId, hook, f.record);
        }
      }, 1000).unref();
    });
    this.worker = w;
  }

  private post(msg: ToWorker): void {
    this.worker?.postMessage(msg);
  }

  private send(tenantId: string, hook: WebhookRecord, rec: DeliveryRecord): void {
    const attemptsMade = rec.attempts.filter((a) => a.series === rec.series).length;
    this.post({
      type: 'deliver',
      target: this.target(tenantId, hook),
      job: {
        id: rec.id,
        tenantId,
        webhookId: hook.id,
        eventType: rec.event_type,
        body: rec.body,
        attemptsMade: Math.min(attemptsMade, WEBHOOK_MAX_ATTEMPTS - 1),
        maxAttempts: WEBHOOK_MAX_ATTEMPTS,
      },
    });
  }

  private target(tenantId: string, hook: WebhookRecord): WebhookTarget {
    return { tenantId, webhookId: hook.id, url: hook.url, secret: hook.secret };
  }

  private onMessage(m: FromWorker): void {
    if (m.type === 'stopped') {
      this.onWorkerStopped?.();
      return;
    }
    const f = this.inflight.get(m.id);
    if (!f || f.tenantId !== m.tenantId || f.record.webhook_id !== m.webhookId) return; // webhook deleted meanwhile
    const rec = f.record;
    const now = Date.now();
    rec.attempts.push({ series: rec.series, ...m.attempt });
    if (rec.attempts.length > MAX_ATTEMPTS_KEPT) rec.attempts.splice(0, rec.attempts.length - MAX_ATTEMPTS_KEPT);
    rec.updated_at = new Date(now).toISOString();
    const scope = scopeOf(f.tenantId, rec.webhook_id);
    if (m.next === 'retry') {
      rec.next_attempt_at = new Date(now + (m.retryInMs ?? 0)).toISOString();
      this.opts.metrics?.webhookDeliveries.inc({ event_type: rec.event_type, outcome: 'retried' });
      this.track(this.deliveries.put(scope, rec.id, snapshot(rec)));
    } else {
      rec.status = m.next;
      rec.next_attempt_at = null;
      this.removePending(rec.id);
      this.opts.metrics?.webhookDeliveries.inc({ event_type: rec.event_type, outcome: m.next });
      const snap = snapshot(rec);
      this.track(
        this.opts.store.atomic((b) => {
          b.put(this.deliveries, scope, snap.id, snap);
          b.remove(this.pendingIndex, f.tenantId, snap.id);
        }),
      );
    }
    log.debug('webhook delivery attempt', {
      tenant_id: f.tenantId,
      webhook_id: rec.webhook_id,
      delivery_id: rec.id,
      event_type: rec.event_type,
      attempt: m.attempt.attempt,
      status_code: m.attempt.status_code,
      outcome: m.next,
    });
  }

  // ───────────────────────────── backlog ─────────────────────────────

  /**
   * A delivery becomes pending. Past MAX_PENDING_PER_WEBHOOK pending for its webhook, the
   * oldest is dropped; returns false when that was this one (resumed deliveries are oldest).
   */
  private addPending(tenantId: string, rec: DeliveryRecord): boolean {
    this.inflight.set(rec.id, { tenantId, record: rec });
    const scope = scopeOf(tenantId, rec.webhook_id);
    let ids = this.pendingByHook.get(scope);
    if (!ids) {
      ids = new Set();
      this.pendingByHook.set(scope, ids);
    }
    ids.add(rec.id);
    if (ids.size <= this.maxPending) return true;
    const oldest = ids.values().next().value as string;
    this.dropPending(oldest);
    return oldest !== rec.id;
  }

  private removePending(id: string): void {
    const f = this.inflight.get(id);
    if (!f) return;
    this.inflight.delete(id);
    const scope = scopeOf(f.tenantId, f.record.webhook_id);
    const ids = this.pendingByHook.get(scope);
    ids?.delete(id);
    if (ids?.size === 0) this.pendingByHook.delete(scope);
  }

  /** Drops a pending delivery over the cap: failed, with the reason in its history; redeliverable. */
  private dropPending(id: string): void {
    const f = this.inflight.get(id);
    if (!f) return;
    this.removePending(id);
    const rec = f.record;
    const now = new Date().toISOString();
    rec.status = 'failed';
    rec.next_attempt_at = null;
    rec.updated_at = now;
    rec.attempts.push({
      series: rec.series,
      attempt: rec.attempts.filter((a) => a.series === rec.series).length + 1,
      started_at: now,
      duration_ms: 0,
      status_code: null,
      error: `dropped: more than ${this.maxPending} deliveries were pending for this webhook (receiver slow or down); redeliver it once the receiver is back`,
    });
    if (rec.attempts.length > MAX_ATTEMPTS_KEPT) rec.attempts.splice(0, rec.attempts.length - MAX_ATTEMPTS_KEPT);
    this.droppedCount++;
    this.opts.metrics?.webhookDeliveries.inc({ event_type: rec.event_type, outcome: 'dropped' });
    this.post({ type: 'drop', tenantId: f.tenantId, webhookId: rec.webhook_id, id });
    const snap = snapshot(rec);
    this.track(
      this.opts.store.atomic((b) => {
        b.put(this.deliveries, scopeOf(f.tenantId, rec.webhook_id), snap.id, snap);
        b.remove(this.pendingIndex, f.tenantId, snap.id);
      }),
    );
    if (this.droppedCount === 1 || this.droppedCount % 1000 === 0) {
      log.warn('webhook deliveries dropped: too many pending for one webhook', { tenant_id: f.tenantId, webhook_id: rec.webhook_id, dropped_total: this.droppedCount });
    }
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((e) => {
      // A full store is logged once by the store itself; anything else is logged here.
      if (!(e instanceof ServiceError && (e.code === 'STORAGE_FULL' || e.code === 'STORAGE_UNAVAILABLE'))) {
        log.error('webhook store write failed', { err: String((e as Error)?.message ?? e) });
      }
    });
    this.writes.add(q);
    void q.finally(() => this.writes.delete(q));
  }

  /** Resolves once every write issued so far has settled. */
  private async settle(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  /** Runs `fn` after any earlier operation on the same key (update and delete of one webhook). */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  // ───────────────────────────── publishing ─────────────────────────────

  /**
   * Announces an event to the tenant's active webhooks subscribed to its type. Never throws
   * and never waits: the payload is built and the deliveries are recorded (pending) and handed
   * to the delivery thread in the background. Returns the event id, or null when the event was
   * dropped (unknown type, unserializable data, dispatcher not running).
   */
  publish<E extends EventType>(tenantId: string, eventType: E, data: EventDataMap[E], atMs?: number): string | null {
    try {
      if (!isEventType(eventType)) {
        log.warn('webhook event dropped: unknown event type', { event_type: String(eventType) });
        return null;
      }
      if (this.state !== 'running') {
        log.warn('webhook event dropped: webhooks are not running', { tenant_id: tenantId, event_type: eventType });
        return null;
      }
      const { eventId, body } = buildPayload(eventType, data, atMs ?? Date.now());
      const hooks = [...(this.cache.get(tenantId)?.values() ?? [])].filter((h) => h.active && h.event_types.includes(eventType));
      if (hooks.length === 0) return eventId;
      const nowMs = Date.now();
      const now = new Date(nowMs).toISOString();
      const recs = hooks.map(
        (h): DeliveryRecord => ({
          id: newDeliveryId(nowMs),
          webhook_id: h.id,
          event_id: eventId,
          event_type: eventType,
          status: 'pending',
          series: 1,
          body,
          created_at: now,
          updated_at: now,
          next_attempt_at: now,
          attempts: [],
        }),
      );
      for (const r of recs) this.addPending(tenantId, r);
      const snaps = recs.map(snapshot);
      const written = this.opts.store.atomic((b) => {
        for (const s of snaps) {
          b.put(this.deliveries, scopeOf(tenantId, s.webhook_id), s.id, s);
          b.put(this.pendingIndex, tenantId, s.id, { webhook_id: s.webhook_id });
        }
      });
      this.track(
        written.then(
          () => {
            for (const r of recs) {
              const hook = this.cache.get(tenantId)?.get(r.webhook_id);
              if (!hook || this.inflight.get(r.id)?.record !== r) continue; // deleted meanwhile
              if (this.state === 'running') this.send(tenantId, hook, r);
              this.noteStored(tenantId, r.webhook_id);
            }
          },
          (e) => {
            for (const r of recs) if (this.inflight.get(r.id)?.record === r) this.removePending(r.id);
            throw e; // logged by track()
          },
        ),
      );
      return eventId;
    } catch (e) {
      log.error('webhook publish failed', { tenant_id: tenantId, event_type: String(eventType), err: String((e as Error)?.message ?? e) });
      return null;
    }
  }

  /** Counts a stored delivery and prunes the webhook's oldest finished ones past the limit. */
  private noteStored(tenantId: string, webhookId: string): void {
    const scope = scopeOf(tenantId, webhookId);
    const known = this.counts.get(scope);
    const n = known === undefined ? this.countStored(scope) : known + 1;
    this.counts.set(scope, n);
    if (n > this.maxDeliveries && !this.pruning.has(scope)) {
      this.pruning.add(scope);
      this.track(this.prune(tenantId, webhookId).finally(() => this.pruning.delete(scope)));
    }
  }

  private countStored(scope: string): number {
    let n = 0;
    for (const _ of this.deliveries.list(scope)) n++;
    return n;
  }

  private async prune(tenantId: string, webhookId: string): Promise<void> {
    const scope = scopeOf(tenantId, webhookId);
    const all: { id: string; pending: boolean }[] = [];
    for (const { id, value } of this.deliveries.list(scope)) all.push({ id, pending: value.status === 'pending' || this.inflight.has(id) });
    const excess = all.length - this.maxDeliveries;
    if (excess <= 0) {
      this.counts.set(scope, all.length);
      return;
    }
    const victims = all.filter((d) => !d.pending).slice(0, excess).map((d) => d.id);
    if (victims.length > 0) {
      await this.opts.store.atomic((b) => {
        for (const id of victims) b.remove(this.deliveries, scope, id);
      });
    }
    if (this.counts.has(scope)) this.counts.set(scope, (this.counts.get(scope) ?? all.length) - victims.length);
  }

  // ───────────────────────────── webhooks ─────────────────────────────

  private tenantHooks(tenantId: string): Map<string, WebhookRecord> {
    let m = this.cache.get(tenantId);
    if (!m) {
      m = new Map();
      this.cache.set(tenantId, m);
    }
    return m;
  }

  list(tenantId: string): WebhookRecord[] {
    return [...(this.cache.get(tenantId)?.values() ?? [])].sort(byCreation);
  }

  get(tenantId: string, webhookId: string): WebhookRecord {
    const h = this.cache.get(tenantId)?.get(webhookId);
    if (!h) throw errors.webhookNotFound(webhookId);
    return h;
  }

  private checkUrl(url: string): void {
    const problem = checkWebhookUrl(url, this.opts.config.webhookAllowPrivate);
    if (problem) throw errors.field('url', problem);
  }

  async create(tenantId: string, input: WebhookInput): Promise<WebhookRecord> {
    this.checkUrl(input.url);
    const hooks = this.tenantHooks(tenantId);
    const reserved = this.reserved.get(tenantId) ?? 0;
    if (hooks.size + reserved >= MAX_WEBHOOKS_PER_TENANT) {
      throw errors.limit('webhooks', `a tenant may have at most ${MAX_WEBHOOKS_PER_TENANT} webhooks; delete one first`);
    }
    const now = new Date().toISOString();
    const record: WebhookRecord = {
      id: newWebhookId(),
      url: input.url,
      event_types: input.event_types ? [...input.event_types] : [...EVENT_TYPES],
      active: input.active ?? true,
      secret: input.secret ?? null,
      created_at: now,
      updated_at: now,
    };
    this.reserved.set(tenantId, reserved + 1);
    try {
      await this.webhooks.put(tenantId, record.id, record);
    } finally {
      this.reserved.set(tenantId, (this.reserved.get(tenantId) ?? 1) - 1);
    }
    hooks.set(record.id, record);
    log.info('webhook created', { tenant_id: tenantId, webhook_id: record.id, event_types: record.event_types, signed: record.secret !== null });
    return record;
  }

  update(tenantId: string, webhookId: string, patch: WebhookPatch): Promise<WebhookRecord> {
    if (patch.url !== undefined) this.checkUrl(patch.url);
    return this.serial(`${tenantId}/${webhookId}`, async () => {
      const cur = this.get(tenantId, webhookId);
      const next: WebhookRecord = {
        ...cur,
        url: patch.url ?? cur.url,
        event_types: patch.event_types ? [...patch.event_types] : cur.event_types,
        active: patch.active ?? cur.active,
        secret: patch.secret === undefined ? cur.secret : patch.secret,
        updated_at: new Date().toISOString(),
      };
      await this.webhooks.put(tenantId, webhookId, next);
      this.tenantHooks(tenantId).set(webhookId, next);
      if (next.url !== cur.url || next.secret !== cur.secret) this.post({ type: 'target', target: this.target(tenantId, next) });
      log.info('webhook updated', { tenant_id: tenantId, webhook_id: webhookId, active: next.active, event_types: next.event_types, signed: next.secret !== null });
      return next;
    });
  }

  /** Deletes the webhook with its deliveries; pending ones are dropped, requests in flight aborted. */
  remove(tenantId: string, webhookId: string): Promise<void> {
    return this.serial(`${tenantId}/${webhookId}`, async () => {
      const cur = this.get(tenantId, webhookId);
      const hooks = this.tenantHooks(tenantId);
      hooks.delete(webhookId); // publish() stops seeing it now
      this.post({ type: 'cancel', tenantId, webhookId });
      for (const [id, f] of this.inflight) if (f.tenantId === tenantId && f.record.webhook_id === webhookId) this.removePending(id);
      const scope = scopeOf(tenantId, webhookId);
      this.counts.delete(scope);
      await this.settle(); // every delivery write of this webhook is in the store: the range below is complete
      const ids = [...this.deliveries.list(scope)].map((d) => d.id);
      try {
        await this.opts.store.atomic((b) => {
          b.remove(this.webhooks, tenantId, webhookId);
          for (const id of ids) {
            b.remove(this.deliveries, scope, id);
            b.remove(this.pendingIndex, tenantId, id);
          }
        });
      } catch (e) {
        hooks.set(webhookId, cur);
        throw e;
      }
      log.info('webhook deleted', { tenant_id: tenantId, webhook_id: webhookId, deliveries_removed: ids.length });
    });
  }

  // ───────────────────────────── deliveries ─────────────────────────────

  private current(tenantId: string, webhookId: string, rec: DeliveryRecord): DeliveryRecord {
    const f = this.inflight.get(rec.id);
    return f && f.tenantId === tenantId && f.record.webhook_id === webhookId ? f.record : rec;
  }

  /** Newest first. `total` counts the webhook's stored deliveries matching `status`. */
  listDeliveries(tenantId: string, webhookId: string, q: DeliveryQuery): { deliveries: DeliveryRecord[]; total: number } {
    this.get(tenantId, webhookId);
    const matching: DeliveryRecord[] = [];
    for (const { value } of this.deliveries.list(scopeOf(tenantId, webhookId))) {
      const rec = this.current(tenantId, webhookId, value);
      if (!q.status || rec.status === q.status) matching.push(rec);
    }
    const total = matching.length;
    matching.reverse();
    const from = q.before ? matching.findIndex((d) => d.id < q.before!) : 0;
    const page = from < 0 ? [] : matching.slice(from, from + q.limit);
    return { deliveries: page.map(snapshot), total };
  }

  getDelivery(tenantId: string, webhookId: string, deliveryId: string): DeliveryRecord {
    this.get(tenantId, webhookId);
    const rec = this.deliveries.get(scopeOf(tenantId, webhookId), deliveryId);
    if (!rec) {
      const f = this.inflight.get(deliveryId);
      if (f && f.tenantId === tenantId && f.record.webhook_id === webhookId) return snapshot(f.record);
      throw errors.deliveryNotFound(deliveryId);
    }
    return snapshot(this.current(tenantId, webhookId, rec));
  }

  /** Sends a delivered or failed delivery again, as a new series of attempts (same id and bytes). */
  async redeliver(tenantId: string, webhookId: string, deliveryId: string): Promise<DeliveryRecord> {
    const hook = this.get(tenantId, webhookId);
    const stored = this.deliveries.get(scopeOf(tenantId, webhookId), deliveryId);
    // Only a delivery of this tenant's webhook is "in progress" to it; anyone else's is not found.
    const f = this.inflight.get(deliveryId);
    const ours = f !== undefined && f.tenantId === tenantId && f.record.webhook_id === webhookId;
    if (ours) throw errors.deliveryInProgress(deliveryId);
    if (!stored) throw errors.deliveryNotFound(deliveryId);
    if (stored.status === 'pending') throw errors.deliveryInProgress(deliveryId);
    if (this.state !== 'running') throw errors.unavailable('webhook delivery is stopping');
    const now = new Date().toISOString();
    const rec: DeliveryRecord = { ...stored, attempts: stored.attempts.map((a) => ({ ...a })), status: 'pending', series: stored.series + 1, updated_at: now, next_attempt_at: now };
    this.addPending(tenantId, rec);
    const snap = snapshot(rec);
    try {
      await this.opts.store.atomic((b) => {
        b.put(this.deliveries, scopeOf(tenantId, webhookId), snap.id, snap);
        b.put(this.pendingIndex, tenantId, snap.id, { webhook_id: webhookId });
      });
    } catch (e) {
      if (this.inflight.get(rec.id)?.record === rec) this.removePending(rec.id);
      throw e;
    }
    const live = this.cache.get(tenantId)?.get(webhookId) ?? hook;
    if (this.inflight.get(rec.id)?.record === rec && this.state === 'running') this.send(tenantId, live, rec);
    log.info('webhook delivery redelivered', { tenant_id: tenantId, webhook_id: webhookId, delivery_id: rec.id, series: rec.series });
    return snapshot(rec);
  }
}
