/**
 * Messages between the front thread (EngineScheduler) and the evaluation workers: the leaf
 * both sides import (the scheduler, engine service and worker entry). SharedArrayBuffers
 * travel by reference; everything else is structured-cloned per task.
 */
import type { TierConfig } from '../tiers/config.js';
import type { Transition } from './transitions.js';
import type { SharedTables, TableSegments } from '../shm/tables.js';

/**
 * A tenant's engine settings, resolved and validated on the front thread when the tenant's
 * configuration is built (engineConfigFor), every tier's field filled: the worker never falls
 * back to defaults per rule. The type is the tiers' (src/tiers/config.ts), since the stages
 * read it and the tiers import nothing above them.
 */
export type TenantEngineConfig = TierConfig;

export interface EvaluateTask {
  /**
   * Identifies the SharedTables the segments belong to. A SharedArrayBuffer arrives as a new
   * object with every message, so workers cache their typed views by (tablesId, segment
   * index) instead: segments never move and are never replaced, only appended.
   */
  tablesId: number;
  segments: TableSegments;
  /** The shard's rule slots. */
  slots: Int32Array | number[];
  /** Evaluation time, epoch ms, from the scheduler's clock. */
  nowMs: number;
  config: TenantEngineConfig;
  /** Cluster follower: refresh published health only (the leader's table carries the rest). */
  healthOnly?: boolean;
  /**
   * Present on a task of the periodic cycle, and only there: such a task runs on the routine
   * threads (lower priority than the early evaluations' threads: worker-pool.ts) and may be
   * cut short through this cell. On a SharedArrayBuffer, one Int32 that the scheduler and the
   * worker both change with compare-and-swap: the worker claims it (YIELD_NONE → YIELD_STARTED)
   * as the task begins; the scheduler asks (→ YIELD_ASKED) when an early evaluation of the
   * shard is asked for. Asked before the claim, the task touches nothing and the scheduler
   * gives the shard to the early evaluation at once (a routine thread may still be loading, or
   * busy with another tenant); asked after it, the worker stops at its next pause point and
   * returns what it has judged (`yielded`), so an early evaluation never waits for a whole
   * cycle task.
   */
  yieldCell?: Int32Array;
}

/** yieldCell values. */
export const YIELD_NONE = 0;
export const YIELD_STARTED = 1;
export const YIELD_ASKED = 2;

export interface EvaluateResult {
  transitions: Transition[];
  /** Active rules evaluated (inactive slots are skipped). */
  evaluatedSlots: number;
  durationMs: number;
  /** Sleeps the pool thread took between bursts of the task (worker/bursts.ts); absent on the main thread. */
  pauses?: number;
  /**
   * Epoch ms at which the shard wants another evaluation ahead of the cycle (a processor in
   * slow-start recovery: its probe ladder moves one batch at a time); absent: the cycle will do.
   */
  followUpAtMs?: number;
  /** Echoes the task's healthOnly: nothing was decided. */
  healthOnly?: boolean;
  /**
   * The task stopped early because an early evaluation asked for the shard (yieldCell): only
   * the slots before the stop were evaluated; that early evaluation covers the whole shard.
   */
  yielded?: boolean;
}

const ids = new WeakMap<SharedTables, number>();
let nextId = 1;

/** A process-unique id for `tables`, stable for its lifetime. */
export function tablesIdOf(tables: SharedTables): number {
  let id = ids.get(tables);
  if (id === undefined) ids.set(tables, (id = nextId++));
  return id;
}
