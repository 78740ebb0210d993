/**
 * Runs sequences through the service's own GRU kernel (not TensorFlow.js), so held-out
 * metrics describe exactly what the engine will compute.
 */
import { N_FEATURES } from '../../src/tiers/foresight/features.js';
import { denseLogit, gruStep, newGruScratch, normalise } from '../../src/tiers/foresight/gru-kernel.js';
import type { ForesightModel } from '../../src/tiers/foresight/model.js';
import { trendScore } from './metrics.js';
import type { Sequence } from './traces.js';

/** Masked steps of many sequences, flattened. */
export interface StepSet {
  logits: Float64Array;
  trend: Float64Array;
  labels: Uint8Array;
  /** Index of the sequence each step came from. */
  seq: Uint32Array;
}

export function scoreSequences(m: ForesightModel, seqs: readonly Sequence[]): StepSet {
  let n = 0;
  for (const s of seqs) for (let i = 0; i < s.mask.length; i++) n += s.mask[i];
  const out: StepSet = { logits: new Float64Array(n), trend: new Float64Array(n), labels: new Uint8Array(n), seq: new Uint32Array(n) };
  const scratch = newGruScratch(m);
  const h = new Float64Array(m.units);
  let j = 0;
  seqs.forEach((s, si) => {
    h.fill(0);
    for (let i = 0; i < s.t.length; i++) {
      const raw = s.x.subarray(i * N_FEATURES, (i + 1) * N_FEATURES);
      normalise(m, raw, scratch.x);
      gruStep(m, scratch.x, h, 0, scratch);
      if (!s.mask[i]) continue;
      out.logits[j] = denseLogit(m, h, 0);
      out.trend[j] = trendScore(s.x, i * N_FEATURES);
      out.labels[j] = s.y[i];
      out.seq[j] = si;
      j++;
    }
  });
  return out;
}
