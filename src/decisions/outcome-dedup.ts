/**
 * The transaction ids of the last `capacity` outcomes reported with one, across tenants, so a
 * repeated report (a client retry) is counted once. Memory is bounded by `capacity`: the
 * oldest id is forgotten when a new one comes in. A Set per tenant answers the outcome path
 * in O(1) without building a key string. The ring's arrays grow with the ids that come in (an
 * append until the ring first wraps) instead of holding 4 MB from the start.
 */
import type { Tenant } from '../tenants/tenant.js';

export class OutcomeDedup {
  private readonly byTenant = new Map<Tenant, Set<string>>();
  private readonly ringTenants: (Tenant | undefined)[];
  private readonly ringIds: (string | undefined)[];
  private next = 0;

  constructor(readonly capacity: number) {
    this.ringTenants = [];
    this.ringIds = [];
  }

  has(tenant: Tenant, txId: string): boolean {
    const set = this.byTenant.get(tenant);
    return set !== undefined && set.has(txId);
  }

  add(tenant: Tenant, txId: string): void {
    let set = this.byTenant.get(tenant);
    if (set === undefined) this.byTenant.set(tenant, (set = new Set()));
    if (set.has(txId)) return;
    const i = this.next;
    const oldTenant = this.ringTenants[i];
    if (oldTenant !== undefined) this.byTenant.get(oldTenant)?.delete(this.ringIds[i]!);
    this.ringTenants[i] = tenant;
    this.ringIds[i] = txId;
    this.next = i + 1 === this.capacity ? 0 : i + 1;
    set.add(txId);
  }

  size(): number {
    let n = 0;
    for (const s of this.byTenant.values()) n += s.size;
    return n;
  }
}
