/**
 * The change audit: every write made through the API (rules, overrides, drains, manual
 * failover/recovery, tier configuration, webhooks, onboarding, shadow resets) and every
 * override that expired, per tenant, with the time, the key that made it (its fingerprint,
 * never the key), the action, the target and the state before and after. Appended after the
 * write committed and before the answer; kept like the failover audit trail (newest 10,000
 * per tenant, at most 90 days; pruned once a minute per tenant, and after every 1,000 entries).
 */
import { EventRetention } from '../store/retention.js';
import type { KeyGrant } from '../http/api-keys.js';
import { log } from '../log.js';
import type { Log, Store } from '../store/store.js';

export interface AuditEntry {
  timestamp: string; // ISO 8601 UTC
  tenant_id: string;
  /** The key's fingerprint (`sha256:…`); null in development mode and for the service itself (expiry). */
  actor: string | null;
  action: string;
  target_type: 'rule' | 'override' | 'processor' | 'config' | 'webhook' | 'onboarding' | 'shadow_report';
  target_id: string | null;
  before: unknown;
  after: unknown;
}

export type AuditChange = Pick<AuditEntry, 'action' | 'target_type' | 'target_id' | 'before' | 'after'>;

/** Refused audit entries kept for a retry; beyond it the oldest are dropped (logged). */
export const MAX_UNSAVED_AUDIT = 10_000;

export class AuditTrail {
  readonly entries: Log<AuditEntry>;
  private readonly retention: EventRetention;

  constructor(store: Store, private readonly now: () => number = Date.now) {
    this.entries = store.log<AuditEntry>('audit');
    this.retention = new EventRetention(this.entries as Log<unknown>, { now });
  }

  /**
   * Records a change made by the request's key. Never rejects: the change itself is already
   * committed, so a refused audit append (full disk) must not turn its answer into an error
   * (the client would retry a write that happened); the entry is kept and appended again
   * with the next one (see `unsaved`).
   */
  /** `ctx`: the request's (an http Ctx), of which only the key's grant is read. */
  record(ctx: { readonly grant: KeyGrant }, change: AuditChange): Promise<void> {
    return this.append(ctx.grant.tenantId, ctx.grant.keyFingerprint ?? null, change);
  }

  /** Records a change the service made by itself (an override that expired). */
  recordSystem(tenantId: string, change: AuditChange): void {
    void this.append(tenantId, null, change);
  }

  /** Entries whose append was refused, oldest first, appended again before the next entry. */
  private unsaved: AuditEntry[] = [];

  private async append(tenantId: string, actor: string | null, change: AuditChange): Promise<void> {
    const atMs = this.now();
    const entry: AuditEntry = { timestamp: new Date(atMs).toISOString(), tenant_id: tenantId, actor, ...change };
    const batch = this.unsaved.length > 0 ? [...this.unsaved.splice(0), entry] : [entry];
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i];
      try {
        await this.entries.append(e.tenant_id, Date.parse(e.timestamp), e);
      } catch (err) {
        this.unsaved.push(...batch.slice(i));
        if (this.unsaved.length > MAX_UNSAVED_AUDIT) this.unsaved.splice(0, this.unsaved.length - MAX_UNSAVED_AUDIT);
        log.error('audit entry not stored yet; appended again with the next one', { tenant: tenantId, waiting: this.unsaved.length, err: String((err as Error)?.message ?? err) });
        return;
      }
    }
    let appended = 0;
    for (const e of batch) if (e.tenant_id === tenantId) appended++;
    const pruning = this.retention.maybePrune(tenantId, appended);
    if (pruning !== null) pruning.catch((e) => log.error('audit pruning failed', { tenant: tenantId, err: String(e) }));
  }
}
