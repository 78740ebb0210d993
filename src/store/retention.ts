/**
 * Retention of the failover audit trail: a tenant keeps its newest FAILOVER_EVENTS_KEPT events
 * and none older than FAILOVER_EVENTS_MAX_AGE_MS. Applied at checkpoint time (after an
 * evaluation), at most once per RETENTION_CHECK_MS per tenant, so a flapping processor cannot
 * grow the store without bound and the route path never pays for it.
 *
 * A trail written in bursts (the change audit: 100,000 rules created through the API in a
 * minute) is also pruned once a tenth of `keep` entries were appended since the last pruning:
 * the once-a-minute bound alone let it reach ~90,000 entries before the first pruning, and LMDB
 * keeps the pages they took (free for reuse, but in the file and resident).
 */
import type { Log } from './store.js';

export const FAILOVER_EVENTS_KEPT = 10_000;
export const FAILOVER_EVENTS_MAX_AGE_MS = 90 * 24 * 3600 * 1000;
export const RETENTION_CHECK_MS = 60_000;

export interface RetentionOptions {
  keep?: number;
  maxAgeMs?: number;
  everyMs?: number;
  now?: () => number;
}

export class EventRetention {
  private readonly lastRun = new Map<string, number>();
  /** Entries appended since the tenant's last pruning (as its callers report them). */
  private readonly sinceRun = new Map<string, number>();
  private readonly keep: number;
  /** Appends after which a tenant's trail is pruned within the interval: a tenth of `keep`. */
  private readonly pruneAfterAppends: number;
  private readonly maxAgeMs: number;
  private readonly everyMs: number;
  private readonly now: () => number;

  constructor(
    private readonly log: Log<unknown>,
    o: RetentionOptions = {},
  ) {
    this.keep = o.keep ?? FAILOVER_EVENTS_KEPT;
    this.maxAgeMs = o.maxAgeMs ?? FAILOVER_EVENTS_MAX_AGE_MS;
    this.everyMs = o.everyMs ?? RETENTION_CHECK_MS;
    this.now = o.now ?? Date.now;
    this.pruneAfterAppends = Math.max(1, Math.floor(this.keep / 10));
  }

  /**
   * Prunes the tenant's trail if it was not pruned in the last `everyMs`, or if a tenth of `keep`
   * entries were appended since (`appended`: how many the caller appended since its last call);
   * resolves with how many events went.
   */
  maybePrune(tenantId: string, appended = 0): Promise<number> | null {
    const now = this.now();
    const last = this.lastRun.get(tenantId);
    const since = (this.sinceRun.get(tenantId) ?? 0) + appended;
    if (last !== undefined && now - last < this.everyMs && since < this.pruneAfterAppends) {
      this.sinceRun.set(tenantId, since);
      return null;
    }
    this.lastRun.set(tenantId, now);
    this.sinceRun.set(tenantId, 0);
    return this.prune(tenantId, now);
  }

  async prune(tenantId: string, now = this.now()): Promise<number> {
    const old = await this.log.prune(tenantId, now - this.maxAgeMs);
    const beyond = await this.log.pruneBeyond(tenantId, this.keep);
    return old + beyond;
  }
}
