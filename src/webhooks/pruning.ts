/**
 * Keeps each webhook's stored deliveries to the newest N: counts them as they are stored (an
 * estimate per webhook, corrected on every prune) and, past N, removes the oldest finished
 * ones in the background. Pending deliveries are never pruned.
 */
import type { Collection, Store } from '../store/store.js';
import type { BackgroundWrites } from './background-writes.js';
import { deliveryScope, type DeliveryRecord } from './records.js';

export class DeliveryPruner {
  /** Deliveries stored per webhook scope. */
  private readonly counts = new Map<string, number>();
  private readonly pruning = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly deliveries: Collection<DeliveryRecord>,
    private readonly writes: BackgroundWrites,
    private readonly maxDeliveries: number,
    /** Whether a delivery is pending in memory (its stored copy may still say so, or not yet). */
    private readonly isPending: (id: string) => boolean,
  ) {}

  /** Counts a stored delivery and prunes the webhook's oldest finished ones past the limit. */
  noteStored(tenantId: string, webhookId: string): void {
    const scope = deliveryScope(tenantId, webhookId);
    const known = this.counts.get(scope);
    const n = known === undefined ? this.countStored(scope) : known + 1;
    this.counts.set(scope, n);
    if (n > this.maxDeliveries && !this.pruning.has(scope)) {
      this.pruning.add(scope);
      this.writes.track(this.prune(tenantId, webhookId).finally(() => this.pruning.delete(scope)));
    }
  }

  /** The webhook was deleted: its count goes with it. */
  forget(tenantId: string, webhookId: string): void {
    this.counts.delete(deliveryScope(tenantId, webhookId));
  }

  private countStored(scope: string): number {
    let n = 0;
    for (const _ of this.deliveries.list(scope)) n++;
    return n;
  }

  private async prune(tenantId: string, webhookId: string): Promise<void> {
    const scope = deliveryScope(tenantId, webhookId);
    const all: { id: string; pending: boolean }[] = [];
    for (const { id, value } of this.deliveries.list(scope)) all.push({ id, pending: value.status === 'pending' || this.isPending(id) });
    const excess = all.length - this.maxDeliveries;
    if (excess <= 0) {
      this.counts.set(scope, all.length);
      return;
    }
    const victims = all.filter((d) => !d.pending).slice(0, excess).map((d) => d.id);
    if (victims.length > 0) {
      await this.store.atomic((b) => {
        for (const id of victims) b.remove(this.deliveries, scope, id);
      });
    }
    if (this.counts.has(scope)) this.counts.set(scope, (this.counts.get(scope) ?? all.length) - victims.length);
  }
}
