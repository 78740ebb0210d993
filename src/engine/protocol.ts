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
}

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
}

const ids = new WeakMap<SharedTables, number>();
let nextId = 1;

/** A process-unique id for `tables`, stable for its lifetime. */
export function tablesIdOf(tables: SharedTables): number {
  let id = ids.get(tables);
  if (id === undefined) ids.set(tables, (id = nextId++));
  return id;
}
