/**
 * Writes a tenant's engine checkpoints (checkpoint.ts) without holding the front thread, and
 * writes only what changed. A rule's snapshot (~1 KB) costs ~1 µs to take and 5-20 µs of
 * front-thread time to hand to the store. Taken for every rule in one loop after an
 * evaluation, 20,000 rules with traffic held the front thread for 20-70 ms a cycle (and a
 * 21 MB copy); at 100,000 rules the writes outlasted the cycle. Now:
 * - the rules are walked in slices of at most SLICE_MS, each in a turn of the event loop of its
 *   own (front-turns.ts: one background slice per turn, so the checkpoints of several tenants
 *   evaluated one after another take turns instead of writing a slice each in the same turn),
 *   the first one too: request() is called in the turn that delivered the evaluation, which
 *   already held the pool's message and the transitions;
 * - the writer's slices, all tenants together, start at least SLICE_GAP_MS after the previous
 *   one ended: on a saturated front thread (every turn full of routes) a checkpoint takes at
 *   most a fifth of it, however many rules changed, and a large one takes longer instead;
 * - a rule's snapshot is taken in its slice, while no evaluation task runs on the tenant's
 *   shard (the slice waits for a running one: `whenIdle`), so each is consistent; it is copied
 *   into one scratch buffer, not into a copy of the whole tenant;
 * - a rule is written again only when its snapshot changed (checkpoint.snapshotHash: all of
 *   it but the evaluation time), and then at once when a processor's status or the decision's
 *   source changed (checkpoint.snapshotStatusKey), otherwise once its stored snapshot is
 *   MAX_AGE_MS old: under Tier 2 and 3 every rule with traffic changes at every evaluation
 *   (the bandit's counts decay, the sequence model steps), and 100,000 rules rewritten each
 *   cycle were ~100 MB of writes and most of a second of the front thread per cycle. A rule
 *   without new outcomes under Tier 1 keeps its snapshot and is not written at all. What was
 *   stored counts only once its write succeeded, so a write the store refused is retried at
 *   the next checkpoint; a stop writes every change (writeNow);
 * - at most one checkpoint of a tenant every `minGapMs` and never two at once: early
 *   evaluations (every 250 ms during an outage) no longer rewrite every rule each time. On a
 *   crash (a stop writes everything: writeNow) the store lags the engine's statuses by at most
 *   minGapMs plus one checkpoint's walk, its model state by at most MAX_AGE_MS more.
 * A rule deleted or replaced (PATCH) before its slice is not written (the walk follows the
 * tenant's rule map as it is), so a stale snapshot never lands after its checkpoint was removed.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { yieldTurn } from '../front-turns.js';
import { RI_WINDOW_PRIMARY, RI_WINDOW_SECONDARY } from '../shm/layout.js';
import { ruleI32Base, ruleSegment } from '../shm/slots.js';
import type { SharedTables } from '../shm/tables.js';
import type { Collection } from '../store/store.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { CHECKPOINT_LENGTH, snapshotHash, snapshotRuleInto, snapshotStatusKey, storedCheckpoint, type StoredCheckpoint } from './checkpoint.js';

/** Longest run of snapshots and writes between two turns of the event loop. */
export const SLICE_MS = 0.5;
/** Least time from the end of one of the writer's slices to the start of the next (any tenant's). */
export const SLICE_GAP_MS = 2;
/** How old a rule's stored snapshot may grow while only its model state (not a status, not the decision's source) changed. */
export const MAX_AGE_MS = 60_000;

export interface CheckpointWriterOptions {
  tables: SharedTables;
  checkpoints: Collection<StoredCheckpoint>;
  /** Takes each write's promise (the engine logs failures once per episode and awaits them at stop). */
  track: (p: Promise<unknown>) => void;
  /** Least time between the starts of two checkpoints of one tenant. */
  minGapMs: number;
  /**
   * While an evaluation task runs on the tenant's shard (it writes the rules' rows), a promise
   * of its end; null when none runs. Default: never busy (tests without a scheduler).
   */
  whenIdle?: (tenantId: string) => Promise<void> | null;
  /** Default SLICE_GAP_MS; the start-up warm-up, which runs before any route, takes 0. */
  sliceGapMs?: number;
  now?: () => number;
}

/** What this writer last stored for a rule. */
interface Stored {
  hash: number;
  statusKey: number;
  atMs: number;
}

interface Job {
  tenant: Tenant;
  /** Written whatever its age (writeNow). */
  everyChange: boolean;
  /** The tenant's rules still to walk (the live map's iterator: rules removed meanwhile are not met). */
  rules: Iterator<LiveRule>;
  cancelled: boolean;
}

export interface CheckpointWriterStats {
  /** Slices run, and the longest (ms). */
  slices: number;
  longestSliceMs: number;
  /** Checkpoints not started: one of the tenant was running or began less than minGapMs before. */
  skipped: number;
  /** Rules with traffic not written again: their snapshot was the one last stored. */
  unchanged: number;
  /** Rules whose model state changed, not written yet: their stored snapshot is younger than MAX_AGE_MS and their statuses are the same. */
  deferred: number;
  /** Snapshots handed to the store. */
  written: number;
  /** Slices put off because an evaluation task was running on the tenant's shard. */
  waitedForTask: number;
}

export class CheckpointWriter {
  private readonly jobs = new Map<string, Job>();
  private readonly lastStartMs = new Map<string, number>();
  private readonly now: () => number;
  /** What was last stored per rule (a replaced rule is a new object: written again). */
  private readonly stored = new WeakMap<LiveRule, Stored>();
  private readonly scratch = new Float64Array(CHECKPOINT_LENGTH);
  private readonly scratchWords = new Int32Array(this.scratch.buffer);
  /** performance.now() before which no slice starts (SLICE_GAP_MS after the last one). */
  private nextSliceAt = 0;
  /** The bench and tests read them. */
  readonly stats: CheckpointWriterStats = { slices: 0, longestSliceMs: 0, skipped: 0, unchanged: 0, deferred: 0, written: 0, waitedForTask: 0 };

  private readonly sliceGapMs: number;
  // The options' fields, kept as the writer's own: writeFrom then reads them from one object
  // shape whoever made the writer (the start-up warm-up's options are another shape than the
  // engine's, and V8 deoptimised writeFrom at the engine's first checkpoint for it).
  private readonly tables: SharedTables;
  private readonly checkpoints: Collection<StoredCheckpoint>;
  private readonly track: (p: Promise<unknown>) => void;
  private readonly minGapMs: number;
  private readonly whenIdle: ((tenantId: string) => Promise<void> | null) | undefined;

  constructor(o: CheckpointWriterOptions) {
    this.tables = o.tables;
    this.checkpoints = o.checkpoints;
    this.track = o.track;
    this.minGapMs = o.minGapMs;
    this.whenIdle = o.whenIdle;
    this.now = o.now ?? Date.now;
    this.sliceGapMs = o.sliceGapMs ?? SLICE_GAP_MS;
  }

  /**
   * Checkpoints the tenant's rules that have seen traffic and changed, in slices, unless one is
   * being written or the last began less than minGapMs ago (then false).
   */
  request(tenant: Tenant): boolean {
    const last = this.lastStartMs.get(tenant.id);
    const now = this.now();
    if (this.jobs.has(tenant.id) || (last !== undefined && now - last < this.minGapMs)) {
      this.stats.skipped++;
      return false;
    }
    this.lastStartMs.set(tenant.id, now);
    if (tenant.rules.size === 0) return true;
    const job: Job = { tenant, everyChange: false, rules: tenant.rules.values(), cancelled: false };
    this.jobs.set(tenant.id, job);
    void this.run(job);
    return true;
  }

  /** Every changed rule of the tenant with traffic, written now in one go, whatever its age (stop: no task runs); replaces a running job. */
  writeNow(tenant: Tenant): void {
    this.cancel(tenant.id);
    this.writeFrom({ tenant, everyChange: true, rules: tenant.rules.values(), cancelled: false }, Infinity);
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

  private async run(job: Job): Promise<void> {
    try {
      for (;;) {
        await this.sliceTurn();
        if (job.cancelled) break;
        const task = this.whenIdle?.(job.tenant.id) ?? null;
        if (task !== null) {
          this.stats.waitedForTask++;
          await task.catch(() => {});
          continue;
        }
        const t0 = performance.now();
        const done = this.writeFrom(job, t0 + SLICE_MS);
        const t1 = performance.now();
        this.nextSliceAt = t1 + this.sliceGapMs;
        this.stats.slices++;
        if (t1 - t0 > this.stats.longestSliceMs) this.stats.longestSliceMs = t1 - t0;
        if (done) break;
      }
    } finally {
      if (this.jobs.get(job.tenant.id) === job) this.jobs.delete(job.tenant.id);
    }
  }

  /** Resolves in a turn of the event loop where a slice may start: a later turn, and SLICE_GAP_MS after the writer's last slice. */
  private async sliceTurn(): Promise<void> {
    for (;;) {
      await yieldTurn();
      const waitMs = this.nextSliceAt - performance.now();
      if (waitMs <= 0) return;
      await sleep(waitMs);
    }
  }

  /**
   * Walks the job's rules until all are walked (true) or `untilMs` (performance.now) has passed
   * (false), writing each changed snapshot of a rule with traffic.
   */
  private writeFrom(job: Job, untilMs: number): boolean {
    const { tables } = this;
    const { tenant } = job;
    const { scratch, scratchWords } = this;
    const writes: Promise<unknown>[] = [];
    const wrote: LiveRule[] = [];
    const versions: Stored[] = [];
    const nowMs = this.now();
    const oldestKept = job.everyChange ? Infinity : nowMs - MAX_AGE_MS;
    let done = false;
    let walked = 0;
    for (;;) {
      const next = job.rules.next();
      if (next.done === true) {
        done = true;
        break;
      }
      const rule = next.value;
      const seg = ruleSegment(tables.ruleSegs, rule.slot);
      const ib = ruleI32Base(rule.slot);
      // A rule without outcomes has nothing to keep (a fresh slot is all zero). Tens of ns
      // each: the clock is read every 64 of them.
      if (seg.ruleI32[ib + RI_WINDOW_PRIMARY] < 0 && seg.ruleI32[ib + RI_WINDOW_SECONDARY] < 0) {
        if ((++walked & 63) === 0 && performance.now() >= untilMs) break;
        continue;
      }
      snapshotRuleInto(tables, rule.slot, scratch, 0);
      const hash = snapshotHash(scratchWords);
      const statusKey = snapshotStatusKey(scratch);
      const stored = this.stored.get(rule);
      if (stored !== undefined && stored.hash === hash) this.stats.unchanged++;
      else if (stored !== undefined && stored.statusKey === statusKey && stored.atMs > oldestKept) this.stats.deferred++;
      else {
        // The values' bytes (checkpoint.ts): a plain array of numbers, as checkpoints were
        // stored before, cost twice the front-thread time per put.
        writes.push(this.checkpoints.put(tenant.id, rule.record.rule_id, storedCheckpoint(scratch)));
        wrote.push(rule);
        versions.push({ hash, statusKey, atMs: nowMs });
      }
      if (performance.now() >= untilMs) break; // a snapshot costs ~1 µs, a put 5-20: the clock is cheap beside them
    }
    if (writes.length > 0) {
      this.stats.written += writes.length;
      const all = Promise.all(writes);
      this.track(all);
      // Stored: the next checkpoints go by it. Refused: written again at the next one.
      all.then(() => {
        for (let i = 0; i < wrote.length; i++) this.stored.set(wrote[i], versions[i]);
      }, () => {});
    }
    return done;
  }
}
