/**
 * The failure probability Tier 2 shows before it has evaluated a processor (a new rule, a
 * rule without traffic, prediction just switched on): the model's own answer for a processor
 * with no evidence, i.e. one GRU step from a cold state over an empty outcome window. The
 * spec types `failure_probability` as a float whenever Tier 2 is on, so a typed client must
 * never see null there; null means exactly "Tier 2 is off".
 *
 * Computed once per process (about 10 µs), from the same model file the workers load.
 */
import { PROC_F64_STRIDE } from '../../shm/layout.js';
import { newGruScratch } from './gru-kernel.js';
import { loadModel, type ForesightModel } from './model.js';
import { advanceProcessor, newStepResult } from './step.js';

let prior = NaN;

/** The model's probability for a processor with no outcomes. */
export function noEvidenceProbability(model?: ForesightModel): number {
  if (model === undefined && !Number.isNaN(prior)) return prior;
  const m = model ?? loadModel();
  const row = new Float64Array(PROC_F64_STRIDE);
  const p = advanceProcessor(m, newGruScratch(m), row, 0, undefined, -1, 0, newStepResult()).prob;
  if (model === undefined) prior = p;
  return p;
}

/**
 * What the API shows for a published probability (NaN = not evaluated yet): null when
 * prediction is off, else the published value or, before the first evaluation, the prior.
 */
export function shownFailureProbability(published: number, predictionEnabled: boolean): number | null {
  if (!predictionEnabled) return null;
  return Math.round((Number.isNaN(published) ? noEvidenceProbability() : published) * 10000) / 10000;
}
