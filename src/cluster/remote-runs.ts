/**
 * The other replicas' current runs of consecutive technical failures, per processor window.
 * Each outcome delta carries its sender's run; the sum over the other replicas is written into
 * the rule row (RI_REMOTE_RUN_*, front thread, Atomics), and the worker judges local + remote,
 * so three replicas seeing 4 + 3 + 3 failures in a row trip like one process seeing 10.
 * Only non-zero runs are kept, and a run not refreshed for REMOTE_RUN_TTL_MS stops counting (a
 * replica that died mid-run must not inflate runs forever).
 */
import { FAST_PATH_RUN } from '../tiers/tier1/config.js';
import { RI_REMOTE_RUN_PRIMARY, RI_REMOTE_RUN_SECONDARY, RI_RUN_PRIMARY, RI_RUN_SECONDARY } from '../shm/layout.js';
import { ruleI32Base, ruleSegment } from '../shm/slots.js';
import type { SharedTables } from '../shm/tables.js';
import type { WindowRef } from './cluster-index.js';

export const REMOTE_RUN_TTL_MS = 10_000;

interface Reported {
  run: number;
  atMs: number;
}

export class RemoteRuns {
  private readonly byWindow = new Map<number, Map<string, Reported>>();

  constructor(
    private readonly tables: SharedTables,
    /** The window's rule, if it still holds that key (rules come and go). */
    private readonly resolve: (key: number) => WindowRef | undefined,
  ) {}

  /**
   * Another replica's run for a window, as its delta reported it. True when the cluster-wide
   * run (ours + the others') has reached the fast-path length: the leader evaluates now.
   */
  note(key: number, ref: WindowRef, replicaId: string, run: number, nowMs: number): boolean {
    let byReplica = this.byWindow.get(key);
    if (run === 0) {
      if (byReplica === undefined || !byReplica.delete(replicaId)) return false;
      if (byReplica.size === 0) this.byWindow.delete(key);
    } else {
      if (byReplica === undefined) this.byWindow.set(key, (byReplica = new Map()));
      byReplica.set(replicaId, { run, atMs: nowMs });
    }
    const total = this.write(ref, byReplica, nowMs);
    return run > 0 && total >= FAST_PATH_RUN;
  }

  /** Drops runs not refreshed for REMOTE_RUN_TTL_MS and rewrites the sums they were part of. */
  expire(nowMs: number): void {
    for (const [key, byReplica] of this.byWindow) {
      let expired = false;
      for (const [id, v] of byReplica) {
        if (nowMs - v.atMs > REMOTE_RUN_TTL_MS) {
          byReplica.delete(id);
          expired = true;
        }
      }
      if (!expired) continue;
      if (byReplica.size === 0) this.byWindow.delete(key);
      const ref = this.resolve(key);
      if (ref) this.write(ref, byReplica, nowMs);
    }
  }

  /** Writes the others' sum into the row; returns local + remote. */
  private write(ref: WindowRef, byReplica: Map<string, Reported> | undefined, nowMs: number): number {
    let sum = 0;
    if (byReplica) for (const v of byReplica.values()) if (nowMs - v.atMs <= REMOTE_RUN_TTL_MS) sum += v.run;
    const rule = ref.rule;
    const seg = ruleSegment(this.tables.ruleSegs, rule.slot);
    const ib = ruleI32Base(rule.slot);
    // A self-fallback rule has one processor under both names: the worker reads either.
    const same = rule.record.primary_id === rule.record.secondary_id;
    if (ref.k === 0 || same) Atomics.store(seg.ruleI32, ib + RI_REMOTE_RUN_PRIMARY, sum);
    if (ref.k === 1 || same) Atomics.store(seg.ruleI32, ib + RI_REMOTE_RUN_SECONDARY, sum);
    return sum + Atomics.load(seg.ruleI32, ib + (ref.k === 0 ? RI_RUN_PRIMARY : RI_RUN_SECONDARY));
  }
}
