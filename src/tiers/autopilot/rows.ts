/**
 * The bandit's state in the shared processor rows (PF_BANDIT_BASE .. + PF_BANDIT_LEN, six
 * float64 per processor), written only by the worker evaluating the rule's tenant and
 * checkpointed with the rows (src/engine/checkpoint.ts), so it survives a restart.
 *
 * The offsets (B_* per arm, BP_* primary row only, BS_* secondary row only) and their picture
 * are in src/shm/layout.ts.
 *
 * `allocRule` zero-fills the row: alpha = beta = 0 is not a valid posterior and reads as a
 * fresh arm (the prior), and bucket 0 as "nothing observed yet".
 *
 * Outcomes come from the rule's count window (1 s buckets, src/shm/window.ts). Each cycle
 * the arm consumes the complete buckets after the last one it observed, up to the one before
 * the current (still filling) bucket, so every outcome is counted once: none twice when
 * evaluations come early or close together, none missed between cycles. The window holds 64 s;
 * after a longer gap (the bandit switched off, a stalled pool) only what it still holds counts.
 */
import {
  B_ALPHA,
  B_BETA,
  B_UPDATED_MS,
  COUNT_BUCKET_MS,
  COUNT_BUCKETS,
  type WindowSegmentViews,
} from '../../shm/layout.js';
import { readCounts, type Counts } from '../../shm/window.js';
import { isValidPosterior, type ArmState, type PriorConfig } from './posterior.js';

/** The arm's posterior as stored; a fresh (or corrupt) row reads as the prior at `nowMs`. */
export function readArm(procF64: Float64Array, row: number, nowMs: number, prior: PriorConfig): ArmState {
  const arm = { alpha: procF64[row + B_ALPHA], beta: procF64[row + B_BETA], updatedAtMs: procF64[row + B_UPDATED_MS] };
  if (!isValidPosterior(arm) || !Number.isFinite(arm.updatedAtMs)) {
    return { alpha: prior.priorAlpha, beta: prior.priorBeta, updatedAtMs: nowMs };
  }
  return arm;
}

export function writeArm(procF64: Float64Array, row: number, arm: ArmState): void {
  procF64[row + B_ALPHA] = arm.alpha;
  procF64[row + B_BETA] = arm.beta;
  procF64[row + B_UPDATED_MS] = arm.updatedAtMs;
}

/**
 * Approvals and failures (declines included: the bandit maximises approvals) in the complete
 * count buckets after `lastBucket`, written to `out`; returns the new last-observed bucket.
 * `window` undefined with `windowIndex` < 0: the processor has no outcomes yet, nothing is
 * pending. With `windowIndex` >= 0 but no view (a window segment newer than the task), the
 * cursor does not move, so the outcomes are counted at the next evaluation.
 */
export function countsSince(
  window: WindowSegmentViews | undefined,
  w: number,
  windowIndex: number,
  lastBucket: number,
  nowMs: number,
  out: Counts,
): number {
  out.success = out.decline = out.tech = out.timeout = 0;
  const current = Math.floor(nowMs / COUNT_BUCKET_MS);
  const last = current - 1; // the current bucket is still filling
  const cursor = Number.isFinite(lastBucket) ? lastBucket : 0;
  if (!(last > cursor)) return cursor; // nothing complete since (or the clock went back)
  if (window === undefined) return windowIndex >= 0 ? cursor : last;
  // The ring holds buckets current-63..current; skip the oldest, which the front thread may be
  // resetting for the next second while we read.
  const from = Math.max(cursor + 1, current - (COUNT_BUCKETS - 2));
  readCounts(window, w, last * COUNT_BUCKET_MS, (last - from + 1) * COUNT_BUCKET_MS, out);
  return last;
}
