/**
 * Writes a tenant's engine checkpoints (checkpoint.ts) without holding the front thread.
 * Encoding and handing a rule's ~1 KB snapshot to the store costs 10-40 µs of front-thread
 * time, which, written in one loop after every evaluation, paused routing for ~8 ms per
 * 200-rule tenant and ~0.6 s per 20,000-rule tenant. Now:
 * - the snapshots are copied at once, while no task runs on the tenant's shard (the caller is
 *   the scheduler's onEvaluated), so each is consistent — a memory copy, ~1 µs a rule;
 * - they are encoded and written in slices of at most SLICE_MS, each in a turn of the event
 *   loop of its own (front-turns.ts: one background slice per turn, so the checkpoints of
 *   several tenants evaluated one after another take turns instead of writing a slice each in
 *   the same turn), the first one too: request() is called in the turn that delivered the
 *   evaluation, which already held the pool's message and the transitions. One promise per
 *   slice is tracked, not one per rule. Every route that arrives during a slice waits for it:
 *   at saturation with 1,000 rules a cycle's checkpoints were ~30 slices of 1 ms, and the
 *   route p99 rose with them; half a millisecond halves that wait for twice as many turns;
 * - at most one checkpoint of a tenant every `minGapMs` and never two at once: early
 *   evaluations (every 250 ms during an outage) no longer rewrite every rule each time. The
 *   store then lags the engine by at most minGapMs plus one write, on a crash only (a stop
 *   writes everything: writeNow).
 * A rule deleted or replaced (PATCH) while its tenant's checkpoint is being written is
 * skipped, so a stale snapshot never lands after the rule's checkpoint was removed.
 */
import { performance } from 'node:perf_hooks';
import { yieldTurn } from '../front-turns.js';
import { RI_WINDOW_PRIMARY, RI_WINDOW_SECONDARY } from '../shm/layout.js';
import { ruleI32Base, ruleSegment } from '../shm/slots.js';
import type { SharedTables } from '../shm/tables.js';
import type { Collection } from '../store/store.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { CHECKPOINT_LENGTH, snapshotRuleInto, storedCheckpoint, type StoredCheckpoint } from './checkpoint.js';

/** Longest run of encoding and writing between two turns of the event loop. */
export const SLICE_MS = 0.5;

export interface CheckpointWriterOptions {
  tables: SharedTables;
  checkpoints: Collection<StoredCheckpoint>;
  /** Takes each write's promise (the engine logs failures once per episode and awaits them at stop). */
  track: (p: Promise<unknown>) => void;
  /** Least time between the starts of two checkpoints of one tenant. */
  minGapMs: number;
  now?: () => number;
}

interface Job {
  tenant: Tenant;
  rules: LiveRule[];
  data: Float64Array;
  cancelled: boolean;
}

export class CheckpointWriter {
  private readonly jobs = new Map<string, Job>();
  private readonly lastStartMs = new Map<string, number>();
  private readonly now: () => number;
  /** Slices written, and the longest one (ms): the bench and tests read them. */
  readonly stats = { slices: 0, longestSliceMs: 0, skipped: 0 };

  constructor(private readonly o: CheckpointWriterOptions) {
    this.now = o.now ?? Date.now;
  }

  /**
   * Checkpoints the tenant's rules that have seen traffic, in slices, unless one is being
   * written or the last began less than minGapMs ago (then false). Call with the shard idle.
   */
  request(tenant: Tenant): boolean {
    const last = this.lastStartMs.get(tenant.id);
    const now = this.now();
    if (this.jobs.has(tenant.id) || (last !== undefined && now - last < this.o.minGapMs)) {
      this.stats.skipped++;
      return false;
    }
    this.lastStartMs.set(tenant.id, now);
    const job = this.copy(tenant);
    if (job.rules.length === 0) return true;
    this.jobs.set(tenant.id, job);
    void this.run(job);
    return true;
  }

  /** Every rule of the tenant with traffic, written now in one go (stop); replaces a running job. */
  writeNow(tenant: Tenant): void {
    this.cancel(tenant.id);
    const job = this.copy(tenant);
    this.writeFrom(job, 0, Infinity);
  }

  /** Stops the tenant's running job (its remaining rules are not written). */
  cancel(tenantId: string): void {
    const job = this.jobs.get(tenantId);
    if (job) job.cancelled = true;
    this.jobs.delete(tenantId);
  }

  /** Whether a checkpoint of the tenant is being written (tests). */
  writing(tenantId: string): boolean {
    return this.jobs.has(tenantId);
  }

  private copy(tenant: Tenant): Job {
    const { tables } = this.o;
    const rules: LiveRule[] = [];
    for (const rule of tenant.rules.values()) {
      const seg = ruleSegment(tables.ruleSegs, rule.slot);
      const ib = ruleI32Base(rule.slot);
      // A rule without outcomes has nothing to keep (a fresh slot is all zero).
      if (seg.ruleI32[ib + RI_WINDOW_PRIMARY] < 0 && seg.ruleI32[ib + RI_WINDOW_SECONDARY] < 0) continue;
      rules.push(rule);
    }
    const data = new Float64Array(rules.length * CHECKPOINT_LENGTH);
    for (let i = 0; i < rules.length; i++) snapshotRuleInto(tables, rules[i].slot, data, i * CHECKPOINT_LENGTH);
    return { tenant, rules, data, cancelled: false };
  }

  private async run(job: Job): Promise<void> {
    let i = 0;
    while (i < job.rules.length) {
      await yieldTurn();
      if (job.cancelled) break;
      const t0 = performance.now();
      i = this.writeFrom(job, i, t0 + SLICE_MS);
      const ms = performance.now() - t0;
      this.stats.slices++;
      if (ms > this.stats.longestSliceMs) this.stats.longestSliceMs = ms;
    }
    if (this.jobs.get(job.tenant.id) === job) this.jobs.delete(job.tenant.id);
  }

  /** Writes rules from `from` until done or `untilMs` (performance.now) has passed; returns where it stopped. */
  private writeFrom(job: Job, from: number, untilMs: number): number {
    const { tenant, rules, data } = job;
    const writes: Promise<unknown>[] = [];
    let i = from;
    while (i < rules.length) {
      const rule = rules[i];
      // Deleted or replaced since the copy: its checkpoint is removed or rewritten by the engine.
      if (tenant.rules.get(rule.record.rule_id) === rule) {
        // The values' bytes (checkpoint.ts): a plain array of numbers, as checkpoints were
        // stored before, cost twice the front-thread time per put.
        writes.push(this.o.checkpoints.put(tenant.id, rule.record.rule_id, storedCheckpoint(data, i * CHECKPOINT_LENGTH)));
      }
      i++;
      if (performance.now() >= untilMs) break; // a put costs 5-20 µs: the clock is cheap beside it
    }
    if (writes.length > 0) this.o.track(Promise.all(writes));
    return i;
  }
}
