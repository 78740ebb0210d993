/**
 * Advancing one processor's Foresight state at an evaluation: decide whether a GRU step is
 * due, compute the features, step the GRU and calibrate. Shared by the worker stage and by
 * the training-trace recorder (with no model), so the traces the model learns from are cut
 * on exactly the schedule, and with exactly the features, that the service later feeds it.
 */
import { G_HIDDEN, G_LAST_STEP_MS, G_PROB, WINDOW_MASK, type WindowSegmentViews } from '../../shm/layout.js';
import { computeFeatures, N_FEATURES } from './features.js';
import { calibratedProbability, denseLogit, gruStep, normalise, type GruScratch } from './gru-kernel.js';
import type { ForesightModel } from './model.js';
import { updateErrorBaseline } from './rise.js';
import { markStepped, pushProbability, resetHidden, STEP_MS, stepAction, StepAction } from './state.js';

export interface StepResult {
  /** A GRU step was taken at this evaluation (false: too soon, the last probability stands). */
  stepped: boolean;
  /** Raw features of the step (valid when stepped). */
  readonly raw: Float64Array;
  /** Dense logit before calibration; NaN without a model or when not stepped. */
  logit: number;
  /** Calibrated probability now in force; NaN without a model. */
  prob: number;
}

export function newStepResult(): StepResult {
  return { stepped: false, raw: new Float64Array(N_FEATURES), logit: NaN, prob: NaN };
}

/**
 * `row` is the processor's offset in `procF64`; `window`/`windowIndex` its outcome window
 * (undefined / -1 before its first outcome). `model` null: features and schedule only.
 */
export function advanceProcessor(
  model: ForesightModel | null,
  scratch: GruScratch | null,
  procF64: Float64Array,
  row: number,
  window: WindowSegmentViews | undefined,
  windowIndex: number,
  nowMs: number,
  out: StepResult,
): StepResult {
  const action = stepAction(procF64, row, nowMs);
  out.logit = NaN;
  if (action === StepAction.Skip) {
    out.stepped = false;
    out.prob = model === null ? NaN : procF64[row + G_PROB];
    return out;
  }
  // The outcomes since the last step go into the usual error rate (one step's worth after a reset).
  const sinceMs = action === StepAction.Step ? nowMs - procF64[row + G_LAST_STEP_MS] : STEP_MS;
  updateErrorBaseline(procF64, row, window, windowIndex & WINDOW_MASK, nowMs, sinceMs);
  if (action === StepAction.ResetAndStep) resetHidden(procF64, row);
  computeFeatures(window, windowIndex & WINDOW_MASK, nowMs, procF64, row, out.raw);
  out.stepped = true;
  out.prob = NaN;
  if (model !== null && scratch !== null) {
    normalise(model, out.raw, scratch.x);
    gruStep(model, scratch.x, procF64, row + G_HIDDEN, scratch);
    out.logit = denseLogit(model, procF64, row + G_HIDDEN);
    out.prob = calibratedProbability(model, out.logit);
    pushProbability(procF64, row, out.prob);
  }
  markStepped(procF64, row, nowMs);
  return out;
}
