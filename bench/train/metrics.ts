/**
 * Scoring of step-level predictions: PR-AUC (average precision), expected calibration error,
 * Brier score and log loss, plus the trend-extrapolation baseline the GRU must beat.
 */
import { FEATURE_NAMES } from '../../src/tiers/foresight/features.js';

/** Average precision: Σ (R_k − R_{k−1}) · P_k over score thresholds, ties taken together. */
export function averagePrecision(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  const idx = Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => scores[b] - scores[a]);
  let pos = 0;
  for (let i = 0; i < labels.length; i++) pos += labels[i];
  if (pos === 0) return NaN;
  let tp = 0;
  let seen = 0;
  let ap = 0;
  let prevRecall = 0;
  for (let i = 0; i < idx.length; ) {
    const s = scores[idx[i]];
    while (i < idx.length && scores[idx[i]] === s) {
      tp += labels[idx[i]];
      seen++;
      i++;
    }
    const recall = tp / pos;
    ap += (recall - prevRecall) * (tp / seen);
    prevRecall = recall;
  }
  return ap;
}

/** Expected calibration error over `bins` equal-width probability bins. */
export function expectedCalibrationError(probs: ArrayLike<number>, labels: ArrayLike<number>, bins = 10): number {
  const n = new Float64Array(bins);
  const sp = new Float64Array(bins);
  const sy = new Float64Array(bins);
  for (let i = 0; i < probs.length; i++) {
    const b = Math.min(bins - 1, Math.floor(probs[i] * bins));
    n[b]++;
    sp[b] += probs[i];
    sy[b] += labels[i];
  }
  let ece = 0;
  for (let b = 0; b < bins; b++) if (n[b] > 0) ece += (n[b] / probs.length) * Math.abs(sp[b] / n[b] - sy[b] / n[b]);
  return ece;
}

export function brier(probs: ArrayLike<number>, labels: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < probs.length; i++) s += (probs[i] - labels[i]) ** 2;
  return s / probs.length;
}

export function logLoss(probs: ArrayLike<number>, labels: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < probs.length; i++) {
    const p = Math.min(1 - 1e-7, Math.max(1e-7, probs[i]));
    s -= labels[i] ? Math.log(p) : Math.log(1 - p);
  }
  return s / probs.length;
}

const ERR30 = FEATURE_NAMES.indexOf('err30');
const SLOPE60 = FEATURE_NAMES.indexOf('slope60');

/**
 * The simple trend-extrapolation baseline: the error rate of the last 30 s carried 60 s ahead
 * along its 60-second slope (rises only). A ranking score, so PR-AUC needs no calibration.
 */
export function trendScore(raw: ArrayLike<number>, offset: number): number {
  return raw[offset + ERR30] + Math.max(0, raw[offset + SLOPE60]) * (60 / 60);
}
