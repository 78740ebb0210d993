/**
 * The piscina worker's entry (the scheduler loads it as ./worker/entry.js beside its own
 * compiled file): evaluate one shard (a tenant's rule slots) over shared memory and return
 * only the status transitions. Synchronous: the task touches nothing but shared memory.
 * The per-rule pipeline is rule.ts, the stage list stages.ts. On a pool thread a long task
 * runs in short bursts with a brief sleep between them (bursts.ts), so that on a shared core
 * the front thread never waits a whole scheduler time slice for it; a task of a few rules (an
 * early evaluation) ends within its first burst.
 */
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { workerData } from 'piscina';
import type { Transition } from '../transitions.js';
import { YIELD_ASKED, YIELD_NONE, YIELD_STARTED, type EvaluateResult, type EvaluateTask } from '../protocol.js';
import type { PoolThreadData } from '../worker-pool.js';
import { evaluateRule, refreshHealth, RuleVisit, takeFollowUp } from './rule.js';
import type { RuleStage } from '../../tiers/stage.js';
import { STAGES } from './stages.js';
import { forgetViews, viewsFor } from './views.js';
import { lowerThreadPriority } from './priority.js';
import { Bursts, TRIVIAL_PIECES_PER_CHECK } from './bursts.js';
import { announceThreadLoaded } from './loaded.js';
import { warmUp } from './warm-up.js';
import { log } from '../../log.js';

// In a pool thread only: benches and tests import this module on their main thread too,
// which must neither be reniced nor sleep.
if (!isMainThread) lowerThreadPriority((workerData as PoolThreadData | undefined)?.niceIncrement);
const bursts = isMainThread ? null : new Bursts();
/** Trivial pieces since the yield cell was last read (yieldAsked); declared before the warm-up below runs evaluate. */
let sinceYieldCheck = 0;
// The JIT warm-up (warm-up.ts), part of this thread's load: piscina gives it no task before.
if (!isMainThread && (workerData as PoolThreadData | undefined)?.warmUp === true) {
  try {
    const r = warmUp(evaluate, forgetViews);
    log.info('evaluation thread warmed up', { ms: Math.round(r.ms), evaluations: r.evaluations, transitions: r.transitions });
  } catch (e) {
    log.warn('evaluation thread warm-up failed; the first cycles compile instead', { error: String(e) });
  }
}
// Once this load is over, the pool may end this thread (loaded.ts).
announceThreadLoaded();

/**
 * The burst's bookkeeping after one slot: a rule judged takes microseconds, an idle or empty
 * slot tens of nanoseconds, so the clock is read after every judged rule and after every
 * TRIVIAL_PIECES_PER_CHECK-th other one (bursts.ts).
 */
function pauseAfter(visit: RuleVisit): void {
  if (visit === RuleVisit.Judged) bursts?.pause();
  else bursts?.pauseAfterTrivial();
}

/**
 * Whether the scheduler has asked this routine task to stop (an early evaluation of its shard
 * waits for it): read after every judged rule and every TRIVIAL_PIECES_PER_CHECK-th other one,
 * as the clock is (an Atomics.load per empty slot would be a tenth of a 100,000-rule walk).
 */
function yieldAsked(cell: Int32Array | undefined, visit: RuleVisit): boolean {
  if (cell === undefined) return false;
  if (visit !== RuleVisit.Judged && ++sinceYieldCheck < TRIVIAL_PIECES_PER_CHECK) return false;
  sinceYieldCheck = 0;
  return Atomics.load(cell, 0) === YIELD_ASKED;
}

export default function evaluate(task: EvaluateTask): EvaluateResult {
  return evaluateWith(task, STAGES);
}

/** `evaluate` with an explicit stage list (tests, and the place later tiers plug in). */
export function evaluateWith(task: EvaluateTask, stages: readonly RuleStage[]): EvaluateResult {
  const t0 = performance.now();
  bursts?.begin();
  const pausesBefore = bursts?.pauses ?? 0;
  const views = viewsFor(task.tablesId, task.segments);
  const cell = task.yieldCell;
  sinceYieldCheck = 0;
  // Claim the shard; asked to yield before this, the task touches nothing: an early evaluation
  // holds the shard already (the scheduler gave it over when its ask found the task unclaimed).
  let yielded = cell !== undefined && Atomics.compareExchange(cell, 0, YIELD_NONE, YIELD_STARTED) !== YIELD_NONE;
  if (task.healthOnly === true) {
    let n = 0;
    for (let j = 0; j < task.slots.length && !yielded; j++) {
      const visit = refreshHealth(views, task.slots[j], task.nowMs);
      if (visit !== RuleVisit.Empty) n++;
      pauseAfter(visit);
      yielded = j + 1 < task.slots.length && yieldAsked(cell, visit);
    }
    return {
      transitions: [],
      evaluatedSlots: n,
      durationMs: performance.now() - t0,
      healthOnly: true,
      ...(bursts !== null && { pauses: bursts.pauses - pausesBefore }),
      ...(yielded && { yielded }),
    };
  }
  const transitions: Transition[] = [];
  let evaluatedSlots = 0;
  takeFollowUp(); // nothing left over from an earlier task that threw
  for (let j = 0; j < task.slots.length && !yielded; j++) {
    const visit = evaluateRule(views, task.slots[j], task.nowMs, task.config, stages, transitions);
    if (visit !== RuleVisit.Empty) evaluatedSlots++;
    pauseAfter(visit);
    yielded = j + 1 < task.slots.length && yieldAsked(cell, visit);
  }
  const followUpAtMs = takeFollowUp();
  return {
    transitions,
    evaluatedSlots,
    durationMs: performance.now() - t0,
    ...(bursts !== null && { pauses: bursts.pauses - pausesBefore }),
    ...(followUpAtMs !== Infinity && { followUpAtMs }),
    ...(yielded && { yielded }),
  };
}
