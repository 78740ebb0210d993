/**
 * A single GRU step in plain typed-array math, with Keras semantics (gate order z, r, h):
 *
 *   z  = σ(x·Wz + bz + h·Uz [+ rbz])
 *   r  = σ(x·Wr + br + h·Ur [+ rbr])
 *   reset_after = false (TensorFlow.js):  ĥ = tanh(x·Wh + bh + (r ⊙ h)·Uh)
 *   reset_after = true  (Keras default):  ĥ = tanh(x·Wh + bh + r ⊙ (h·Uh + rbh))
 *   h' = z ⊙ h + (1 − z) ⊙ ĥ
 *
 * followed by the dense logit w·h' + b and Platt calibration. The hidden state lives in the
 * processor row (Float64Array, offset `off`) and is updated in place, so a step is a few
 * thousand multiply-adds and no allocation: microseconds per processor per cycle.
 */
import type { ForesightModel } from './model.js';

export interface GruScratch {
  x: Float64Array;
  /** x·W + b, per gate. */
  gx: Float64Array;
  /** h·U (+ recurrent bias), per gate. */
  gh: Float64Array;
  /** r ⊙ h (reset_after = false). */
  rh: Float64Array;
}

export function newGruScratch(m: ForesightModel): GruScratch {
  return {
    x: new Float64Array(m.inputSize),
    gx: new Float64Array(3 * m.units),
    gh: new Float64Array(3 * m.units),
    rh: new Float64Array(m.units),
  };
}

const sigmoid = (v: number): number => 1 / (1 + Math.exp(-v));
/** TensorFlow.js / Keras 2 hard sigmoid. */
const hardSigmoid = (v: number): number => Math.max(0, Math.min(1, 0.2 * v + 0.5));

/** Standardises raw features with the model's constants into `out`, clipped to ±clip. */
export function normalise(m: ForesightModel, raw: ArrayLike<number>, out: Float64Array): Float64Array {
  for (let i = 0; i < m.inputSize; i++) {
    const v = (raw[i] - m.mean[i]) * m.invStd[i];
    out[i] = v > m.clip ? m.clip : v < -m.clip ? -m.clip : Number.isNaN(v) ? 0 : v;
  }
  return out;
}

/** One step: h (state[off .. off+units)) ← GRU(x, h). `x` is already normalised. */
export function gruStep(m: ForesightModel, x: ArrayLike<number>, state: Float64Array, off: number, s: GruScratch): void {
  const H = m.units;
  const H3 = 3 * H;
  const { kernel: W, recurrentKernel: U, bias, recurrentBias } = m;
  const { gx, gh } = s;
  for (let j = 0; j < H3; j++) {
    gx[j] = bias[j];
    gh[j] = recurrentBias[j];
  }
  for (let i = 0; i < m.inputSize; i++) {
    const xi = x[i];
    if (xi === 0) continue;
    const base = i * H3;
    for (let j = 0; j < H3; j++) gx[j] += xi * W[base + j];
  }
  // h·U for the z and r gates, and for the h gate too when the reset is applied after it.
  const upto = m.resetAfter ? H3 : 2 * H;
  for (let i = 0; i < H; i++) {
    const hi = state[off + i];
    if (hi === 0) continue;
    const base = i * H3;
    for (let j = 0; j < upto; j++) gh[j] += hi * U[base + j];
  }
  const act = m.hardSigmoid ? hardSigmoid : sigmoid;
  if (!m.resetAfter) {
    const rh = s.rh;
    for (let j = 0; j < H; j++) rh[j] = act(gx[H + j] + gh[H + j]) * state[off + j];
    for (let i = 0; i < H; i++) {
      const ri = rh[i];
      if (ri === 0) continue;
      const base = i * H3 + 2 * H;
      for (let j = 0; j < H; j++) gh[2 * H + j] += ri * U[base + j];
    }
    for (let j = 0; j < H; j++) {
      const z = act(gx[j] + gh[j]);
      const hh = Math.tanh(gx[2 * H + j] + gh[2 * H + j]);
      state[off + j] = z * state[off + j] + (1 - z) * hh;
    }
  } else {
    for (let j = 0; j < H; j++) {
      const z = act(gx[j] + gh[j]);
      const r = act(gx[H + j] + gh[H + j]);
      const hh = Math.tanh(gx[2 * H + j] + r * gh[2 * H + j]);
      state[off + j] = z * state[off + j] + (1 - z) * hh;
    }
  }
}

/** Dense output before the sigmoid. */
export function denseLogit(m: ForesightModel, state: Float64Array, off: number): number {
  let z = m.denseBias;
  for (let j = 0; j < m.units; j++) z += m.denseKernel[j] * state[off + j];
  return z;
}

/** The model's raw (uncalibrated, class-weighted) probability. */
export function rawProbability(logit: number): number {
  return sigmoid(logit);
}

/** Platt-calibrated probability of a Tier 1 failover within the model's horizon. */
export function calibratedProbability(m: ForesightModel, logit: number): number {
  return sigmoid(m.plattA * logit + m.plattB);
}
