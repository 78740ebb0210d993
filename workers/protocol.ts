/**
 * Messages between the front thread (EngineScheduler) and the evaluation workers.
 * SharedArrayBuffers travel by reference; everything else is structured-cloned per task.
 */
import type { BanditConfig } from '../src/engine/bandit/config.js';
import type { ForesightConfig } from '../src/engine/foresight/policy.js';
import type { Tier1Config } from '../src/engine/tier1/config.js';
import type { Transition } from '../src/engine/transitions.js';
import type { SharedTables, TableSegments } from '../src/shared/tables.js';

/** A tenant's engine settings, resolved and validated on the front thread. */
export interface TenantEngineConfig {
  /** From `resolveTier1Config(overrides)`. */
  tier1: Tier1Config;
  predictionEnabled: boolean;
  banditEnabled: boolean;
  /**
   * Tier 3 settings, from `resolveBanditConfig` (defaults, the tenant's overrides, Tier 1's
   * probe share). Optional only so that configs built before Tier 3 still type-check; absent
   * means DEFAULT_BANDIT_CONFIG. EngineService.configOf always sets it.
   */
  bandit?: BanditConfig;
  /** Tier 2 settings; the stage uses its defaults when absent. */
  foresight?: ForesightConfig;
}

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
