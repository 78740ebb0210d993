/**
 * Webhooks on the front thread: the one object the service, the HTTP resources and the
 * engine hold (`AppContext.webhooks`). It wires the parts and orders the steps that span
 * them; each part has one concern:
 * - registry.ts          the webhooks of each tenant (store + memory)
 * - deliveries.ts        the delivery records: attempts, backlog cap, listing, redelivery, pruning
 * - publisher.ts         events → pending deliveries
 * - delivery-thread.ts   starting, restarting and stopping the delivery thread, and its messages
 * - background-writes.ts store writes nobody waits for (logged when they fail; stop() waits for them)
 */
import type { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import { log } from '../log.js';
import type { Metrics } from '../metrics/registry.js';
import type { WebhookInput, WebhookPatch } from '../schemas/webhooks.js';
import type { Store } from '../store/store.js';
import { BackgroundWrites } from './background-writes.js';
import { DeliveryRecords, type DeliveryQuery } from './deliveries.js';
import { DeliveryThread } from './delivery-thread.js';
import type { EventDataMap, EventType } from './events.js';
import { Publisher } from './publisher.js';
import { snapshot, type DeliveryRecord, type WebhookRecord } from './records.js';
import { WebhookRegistry } from './registry.js';

export interface DispatcherOptions {
  store: Store;
  config: Pick<Config, 'webhookAllowPrivate' | 'webhookTimeoutMs' | 'webhookBackoffMs'>;
  metrics?: Metrics;
  version: string;
  /** The compiled delivery thread; defaults to ./delivery-worker.js next to delivery-thread.js. */
  workerUrl?: URL;
  /** Deliveries kept per webhook; default MAX_DELIVERIES_PER_WEBHOOK (lowered by tests). */
  maxDeliveriesPerWebhook?: number;
  /** Pending deliveries per webhook; default MAX_PENDING_PER_WEBHOOK (lowered by tests). */
  maxPendingPerWebhook?: number;
}

export class WebhookDispatcher {
  private readonly writes = new BackgroundWrites();
  private readonly registry: WebhookRegistry;
  private readonly deliveries: DeliveryRecords;
  private readonly thread: DeliveryThread;
  private readonly publisher: Publisher;
  private readonly store: Store;

  constructor(opts: DispatcherOptions) {
    this.store = opts.store;
    this.thread = new DeliveryThread({
      config: opts.config,
      version: opts.version,
      workerUrl: opts.workerUrl,
      onAttempt: (m) => this.deliveries.recordAttempt(m),
      onRestart: () => this.resendPending(),
    });
    this.registry = new WebhookRegistry({
      store: opts.store,
      config: opts.config,
      onRetarget: (tenantId, hook) => this.thread.retarget(tenantId, hook),
      onRemovedElsewhere: (tenantId, webhookId) => {
        this.thread.cancel(tenantId, webhookId);
        this.deliveries.forgetWebhook(tenantId, webhookId);
      },
    });
    this.deliveries = new DeliveryRecords({
      store: opts.store,
      writes: this.writes,
      thread: this.thread,
      metrics: opts.metrics,
      maxDeliveriesPerWebhook: opts.maxDeliveriesPerWebhook,
      maxPendingPerWebhook: opts.maxPendingPerWebhook,
    });
    this.publisher = new Publisher(this.registry, this.deliveries, this.thread);
  }

  /** Deliveries not yet delivered or failed (queued, in flight or waiting for a retry): the backlog. */
  pendingCount(): number {
    return this.deliveries.pendingCount();
  }

  /** The delivery thread while one runs (supervision; tests end it to exercise the restart). */
  get worker(): Worker | null {
    return this.thread.worker;
  }

  // ───────────────────────────── lifecycle ─────────────────────────────

  /**
   * Loads the webhooks, starts the delivery thread (when there is a webhook: otherwise with
   * the first one created) and resumes pending deliveries.
   */
  async start(): Promise<void> {
    if (this.thread.state !== 'new') return;
    const hooks = this.registry.load();
    this.thread.start();
    if (hooks > 0) this.thread.ensure();
    const resumed = this.deliveries.resume(
      (tenantId, webhookId) => this.registry.find(tenantId, webhookId),
      (tenantId, hook, rec) => this.thread.deliver(tenantId, hook, rec),
    );
    log.info('webhooks started', { webhooks: hooks, resumed_deliveries: resumed });
  }

  /**
   * Cluster mode on a shared store: takes over the pending deliveries of `replicaId`, a replica
   * that is gone (the cluster leader decides that), and sends them from here. 0 on a store
   * without replicas, or while the thread is not running.
   */
  async adoptFrom(replicaId: string): Promise<number> {
    const store = this.store;
    if (store.adoptReplicaEntries === undefined || this.thread.state !== 'running') return 0;
    const entries = await store.adoptReplicaEntries<{ webhook_id: string }>('webhook_pending', replicaId);
    if (entries.length === 0) return 0;
    const n = this.deliveries.adopt(
      entries,
      (tenantId, webhookId) => this.registry.find(tenantId, webhookId),
      (tenantId, hook, rec) => this.thread.deliver(tenantId, hook, rec),
    );
    log.warn('webhook deliveries taken over from a replica that is gone', { from_replica: replicaId, deliveries: n });
    return n;
  }

  /** Replica ids holding pending deliveries in the shared store (cluster mode), [] otherwise. */
  async replicasWithPending(): Promise<string[]> {
    return (await this.store.replicasWithEntries?.('webhook_pending')) ?? [];
  }

  /**
   * Stops the delivery thread: nothing new starts, requests in flight get up to
   * min(timeout, 3 s) to finish (their attempts are recorded), then are aborted. Deliveries
   * not finished stay pending in the store and resume at the next start.
   */
  async stop(): Promise<void> {
    if (this.thread.state !== 'running') return;
    await this.thread.stop();
    await this.writes.settle();
    log.info('webhooks stopped', { pending_deliveries: this.deliveries.pendingCount() });
  }

  /** After the delivery thread was restarted: hands it every pending delivery again. */
  private resendPending(): void {
    for (const p of this.deliveries.pendingDeliveries()) {
      const hook = this.registry.find(p.tenantId, p.record.webhook_id);
      if (hook) this.thread.deliver(p.tenantId, hook, p.record);
    }
  }

  // ───────────────────────────── events ─────────────────────────────

  /** See Publisher.publish: never throws, never waits; the event id, or null when dropped. */
  publish<E extends EventType>(tenantId: string, eventType: E, data: EventDataMap[E], atMs?: number): string | null {
    return this.publisher.publish(tenantId, eventType, data, atMs);
  }

  // ───────────────────────────── webhooks ─────────────────────────────

  list(tenantId: string): WebhookRecord[] {
    return this.registry.list(tenantId);
  }

  get(tenantId: string, webhookId: string): WebhookRecord {
    return this.registry.get(tenantId, webhookId);
  }

  async create(tenantId: string, input: WebhookInput): Promise<WebhookRecord> {
    const hook = await this.registry.create(tenantId, input);
    // Started now rather than at the first event: its first delivery does not wait for a thread start.
    this.thread.ensure();
    return hook;
  }

  update(tenantId: string, webhookId: string, patch: WebhookPatch): Promise<WebhookRecord> {
    return this.registry.update(tenantId, webhookId, patch);
  }

  /** Deletes the webhook with its deliveries; pending ones are dropped, requests in flight aborted. */
  remove(tenantId: string, webhookId: string): Promise<void> {
    return this.registry.remove(tenantId, webhookId, () => {
      this.thread.cancel(tenantId, webhookId);
      return this.deliveries.removeWebhook(tenantId, webhookId);
    });
  }

  // ───────────────────────────── deliveries ─────────────────────────────

  /** Newest first. `total` counts the webhook's stored deliveries matching `status`. */
  listDeliveries(tenantId: string, webhookId: string, q: DeliveryQuery): { deliveries: DeliveryRecord[]; total: number } {
    this.registry.get(tenantId, webhookId);
    return this.deliveries.list(tenantId, webhookId, q);
  }

  getDelivery(tenantId: string, webhookId: string, deliveryId: string): DeliveryRecord {
    this.registry.get(tenantId, webhookId);
    return this.deliveries.get(tenantId, webhookId, deliveryId);
  }

  /** Sends a delivered or failed delivery again, as a new series of attempts (same id and bytes). */
  async redeliver(tenantId: string, webhookId: string, deliveryId: string): Promise<DeliveryRecord> {
    const hook = this.registry.get(tenantId, webhookId);
    const rec = await this.deliveries.redeliver(tenantId, webhookId, deliveryId);
    const live = this.registry.find(tenantId, webhookId) ?? hook;
    if (this.deliveries.isPending(rec) && this.thread.running) this.thread.deliver(tenantId, live, rec);
    log.info('webhook delivery redelivered', { tenant_id: tenantId, webhook_id: webhookId, delivery_id: rec.id, series: rec.series });
    return snapshot(rec);
  }
}
