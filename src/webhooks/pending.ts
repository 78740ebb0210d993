/**
 * The deliveries not yet delivered or failed (queued, in flight or waiting for a retry), in
 * memory: the freshest state of each record (ahead of the store by at most a write), and per
 * webhook the backlog, oldest first, that the pending cap applies to.
 */
import { deliveryScope, type DeliveryRecord } from './records.js';

export interface Pending {
  tenantId: string;
  record: DeliveryRecord;
}

export class PendingDeliveries {
  private readonly byId = new Map<string, Pending>();
  /** Pending delivery ids per webhook scope, oldest first (insertion order). */
  private readonly byHook = new Map<string, Set<string>>();

  /** `cap`: pending deliveries per webhook before the oldest is pushed out. */
  constructor(private readonly cap: number) {}

  get size(): number {
    return this.byId.size;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): Pending | undefined {
    return this.byId.get(id);
  }

  /** The pending record `id` when it belongs to this tenant's webhook (anyone else's is not ours to see). */
  of(tenantId: string, webhookId: string, id: string): DeliveryRecord | undefined {
    const p = this.byId.get(id);
    return p && p.tenantId === tenantId && p.record.webhook_id === webhookId ? p.record : undefined;
  }

  /** Whether `rec` is still the pending state of its delivery (not finished, dropped or deleted meanwhile). */
  isCurrent(rec: DeliveryRecord): boolean {
    return this.byId.get(rec.id)?.record === rec;
  }

  values(): IterableIterator<Pending> {
    return this.byId.values();
  }

  /** Adds a pending delivery; returns the id of the webhook's oldest one when the cap is now exceeded (it may be this one), else null. */
  add(tenantId: string, rec: DeliveryRecord): string | null {
    this.byId.set(rec.id, { tenantId, record: rec });
    const scope = deliveryScope(tenantId, rec.webhook_id);
    let ids = this.byHook.get(scope);
    if (!ids) {
      ids = new Set();
      this.byHook.set(scope, ids);
    }
    ids.add(rec.id);
    return ids.size <= this.cap ? null : (ids.values().next().value as string);
  }

  remove(id: string): void {
    const p = this.byId.get(id);
    if (!p) return;
    this.byId.delete(id);
    const scope = deliveryScope(p.tenantId, p.record.webhook_id);
    const ids = this.byHook.get(scope);
    ids?.delete(id);
    if (ids?.size === 0) this.byHook.delete(scope);
  }

  /** Forgets every pending delivery of one webhook (deleted). */
  removeWebhook(tenantId: string, webhookId: string): void {
    for (const [id, p] of this.byId) if (p.tenantId === tenantId && p.record.webhook_id === webhookId) this.remove(id);
  }
}
