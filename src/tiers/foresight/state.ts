/**
 * Foresight's per-processor state inside the processor row's reserved PF_GRU_* fields
 * (PF_GRU_LEN = 34 float64; the G_* offsets are in src/shm/layout.ts): step bookkeeping, the latency baselines the features are
 * normalised by, the last published probability and the GRU hidden state. `allocRule`
 * zero-fills the row, so all zeros means "cold": no step yet, no baseline.
 *
 * Step schedule: the model was trained on one step per STEP_MS of wall time. Evaluations
 * normally come every ~5 s, but early evaluations add some and a busy pool skips some,
 * so a step is taken only when at least STEP_MS - STEP_TOLERANCE_MS has passed since the
 * last one (an early evaluation in between republishes the last probability), and a gap
 * longer than MAX_GAP_MS restarts the hidden state (its history no longer describes now).
 */
import { G_HIDDEN, G_LAST_STEP_MS, G_PROB, G_STEPS, MAX_HIDDEN, PF_GRU_BASE, PF_GRU_LEN, PROB_HISTORY } from '../../shm/layout.js';

/** Wall time one GRU step stands for; also the training traces' step. */
export const STEP_MS = 5000;
/** Evaluations this close to a due step still take it (timer jitter, early dispatch). */
export const STEP_TOLERANCE_MS = 500;
/** After this long without a step the hidden state is reset. */
export const MAX_GAP_MS = 60_000;
/**
 * Steps after a (re)start before the policy may act: the 30 s features are still filling, and
 * a filling window looks like a rising error rate (timeouts arrive only after 15 s). The
 * probability is published meanwhile.
 */
export const WARMUP_STEPS = 6;
/**
 * Steps (3 minutes) until the policy trusts the probability fully: from WARMUP_STEPS on, the
 * cut is scaled by the trust (trustOf). A cold GRU over windows and
 * latency baselines still settling reads steady noise as a rising risk for its first couple
 * of minutes (the training incidents start at 2 minutes or later), and a new rule should not
 * begin its life by moving traffic.
 */
export const TRUST_STEPS = 36;

export const enum StepAction {
  /** Too soon after the last step: republish G_PROB. */
  Skip = 0,
  Step = 1,
  /** Cold or stale: zero the hidden state, then step. */
  ResetAndStep = 2,
}

export function stepAction(procF64: Float64Array, row: number, nowMs: number): StepAction {
  if (procF64[row + G_STEPS] === 0) return StepAction.ResetAndStep;
  const gap = nowMs - procF64[row + G_LAST_STEP_MS];
  if (gap > MAX_GAP_MS || gap < 0) return StepAction.ResetAndStep;
  return gap >= STEP_MS - STEP_TOLERANCE_MS ? StepAction.Step : StepAction.Skip;
}

/**
 * Zeroes the hidden state, the probability history and the step count; the latency and
 * error-rate baselines survive (still valid).
 */
export function resetHidden(procF64: Float64Array, row: number): void {
  procF64.fill(0, row + G_PROB, row + G_HIDDEN + MAX_HIDDEN);
  procF64[row + G_STEPS] = 0;
}

/** Pushes this step's probability into the history (newest first). */
export function pushProbability(procF64: Float64Array, row: number, p: number): void {
  for (let i = PROB_HISTORY - 1; i > 0; i--) procF64[row + G_PROB + i] = procF64[row + G_PROB + i - 1];
  procF64[row + G_PROB] = p;
}

/**
 * The risk sustained over the last `steps` steps (their minimum), or 0 during the warm-up after
 * a (re)start and before `steps` steps exist.
 */
export function sustainedProbability(procF64: Float64Array, row: number, steps: number): number {
  if (procF64[row + G_STEPS] < Math.max(WARMUP_STEPS, steps)) return 0;
  let m = procF64[row + G_PROB];
  for (let i = 1; i < steps; i++) m = Math.min(m, procF64[row + G_PROB + i]);
  return m;
}

/**
 * The risk the policy acts on: the sustained probability of this step or, if higher, of the
 * step before (one step of hold). The onset is not delayed, but a single low step does not
 * hand the traffic back: with most of its traffic moved away the primary's outcomes thin out
 * and the probability can dip for a step in the middle of a ramp (on a 120 s ramp at 50 tx/s
 * it fell from 0.49 to 0.06 and back to 0.63 at 29% errors, and the whole share came back
 * for those 5 s). The hold keeps a cut at most 5 s longer once the risk has really passed.
 */
export function heldProbability(procF64: Float64Array, row: number, steps: number): number {
  const now = sustainedProbability(procF64, row, steps);
  if (steps >= PROB_HISTORY || procF64[row + G_STEPS] < Math.max(WARMUP_STEPS, steps) + 1) return now;
  let before = procF64[row + G_PROB + 1];
  for (let i = 2; i <= steps; i++) before = Math.min(before, procF64[row + G_PROB + i]);
  return Math.max(now, before);
}

/**
 * How far the policy trusts the probability of the processor in `row`: 0 until WARMUP_STEPS,
 * 1 from TRUST_STEPS, quadratic in between (a cold model's spikes come early: at half-way the
 * trust is a quarter).
 */
export function trustOf(procF64: Float64Array, row: number): number {
  const f = Math.min(1, Math.max(0, (procF64[row + G_STEPS] - WARMUP_STEPS) / (TRUST_STEPS - WARMUP_STEPS)));
  return f * f;
}

export function markStepped(procF64: Float64Array, row: number, nowMs: number): void {
  procF64[row + G_STEPS] += 1;
  procF64[row + G_LAST_STEP_MS] = nowMs;
}

/** Back to all zeros (prediction switched off): the next enable starts cold. */
export function clearForesightState(procF64: Float64Array, row: number): void {
  procF64.fill(0, row + PF_GRU_BASE, row + PF_GRU_BASE + PF_GRU_LEN);
}
