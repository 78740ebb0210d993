/**
 * The service's Float32Array GRU kernel against TensorFlow.js (loaded here, in the test only):
 * per-step outputs must agree within 1e-4.
 *
 * - reset_after = false (what tfjs-layers implements and trains): tf.layers.gru, with the
 *   sigmoid and hard-sigmoid recurrent activations, random weights, and the shipped model;
 * - reset_after = true (Keras's default, which tfjs-layers refuses): the Keras cell written
 *   out in tf ops, so models exported from Keras run in the same kernel.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FEATURE_NAMES, N_FEATURES } from '../../src/tiers/foresight/features.js';
import { denseLogit, gruStep, newGruScratch, normalise } from '../../src/tiers/foresight/gru-kernel.js';
import { readFileSync } from 'node:fs';
import { defaultModelPath, loadModel, parseModel, type ForesightModelJson } from '../../src/tiers/foresight/model.js';
import { importWeights } from '../../bench/train/gru-tf.js';
import { Rng } from '../../bench/sim/rng.js';
import { MAX_HIDDEN } from '../../src/shm/layout.js';

const T = 60;
const TOL = 1e-4;

beforeAll(async () => {
  await tf.setBackend('cpu');
  await tf.ready();
});

function randomJson(units: number, seed: number, resetAfter = false, act: 'sigmoid' | 'hard_sigmoid' = 'sigmoid'): ForesightModelJson {
  const rng = new Rng(seed);
  const u = (n: number, scale: number): number[] => Array.from({ length: n }, () => (2 * rng.next() - 1) * scale);
  return {
    format: 'foresight-gru/1',
    stepMs: 5000,
    horizonMs: 60_000,
    features: { names: [...FEATURE_NAMES], mean: new Array(N_FEATURES).fill(0), std: new Array(N_FEATURES).fill(1), clip: 1e9 },
    gru: {
      units,
      resetAfter,
      recurrentActivation: act,
      kernel: u(N_FEATURES * 3 * units, 0.6),
      recurrentKernel: u(units * 3 * units, 0.6),
      bias: u((resetAfter ? 6 : 3) * units, 0.3),
    },
    dense: { kernel: u(units, 1), bias: 0.1 },
    calibration: { method: 'platt', a: 1, b: 0 },
  };
}

function randomInputs(seed: number): Float32Array {
  const rng = new Rng(seed);
  return Float32Array.from({ length: T * N_FEATURES }, () => rng.normal() * 1.5);
}

/** Kernel logits, stepping one input at a time from a zero state. */
function kernelLogits(json: ForesightModelJson, x: Float32Array, normaliseInputs = false): number[] {
  const m = parseModel(json);
  const s = newGruScratch(m);
  const h = new Float64Array(m.units);
  const out: number[] = [];
  for (let t = 0; t < T; t++) {
    const xt = x.subarray(t * N_FEATURES, (t + 1) * N_FEATURES);
    const input = normaliseInputs ? normalise(m, xt, s.x) : xt;
    gruStep(m, input, h, 0, s);
    out.push(denseLogit(m, h, 0));
  }
  return out;
}

function tfLayersLogits(json: ForesightModelJson, x: Float32Array): number[] {
  const model = tf.sequential();
  model.add(
    tf.layers.gru({
      units: json.gru.units,
      returnSequences: true,
      recurrentActivation: json.gru.recurrentActivation === 'sigmoid' ? 'sigmoid' : 'hardSigmoid',
      inputShape: [null, N_FEATURES],
    }),
  );
  model.add(tf.layers.timeDistributed({ layer: tf.layers.dense({ units: 1 }) }));
  importWeights(model, json, N_FEATURES);
  const y = tf.tidy(() => (model.predict(tf.tensor3d(x, [1, T, N_FEATURES])) as tf.Tensor).dataSync());
  model.dispose();
  return Array.from(y);
}

/** Keras GRUCell with reset_after = true, in tf ops (bias rows: input, recurrent). */
function tfResetAfterLogits(json: ForesightModelJson, x: Float32Array): number[] {
  const H = json.gru.units;
  return tf.tidy(() => {
    const W = tf.tensor2d(json.gru.kernel, [N_FEATURES, 3 * H]);
    const U = tf.tensor2d(json.gru.recurrentKernel, [H, 3 * H]);
    const bias = tf.tensor2d(json.gru.bias, [2, 3 * H]);
    const [bi, br] = tf.split(bias, 2, 0);
    const dk = tf.tensor2d(json.dense.kernel, [H, 1]);
    let h = tf.zeros([1, H]);
    const out: number[] = [];
    for (let t = 0; t < T; t++) {
      const xt = tf.tensor2d(x.subarray(t * N_FEATURES, (t + 1) * N_FEATURES), [1, N_FEATURES]);
      const mx = tf.add(tf.matMul(xt, W), bi);
      const mh = tf.add(tf.matMul(h, U), br);
      const [xz, xr, xh] = tf.split(mx, 3, 1);
      const [hz, hr, hh] = tf.split(mh, 3, 1);
      const z = tf.sigmoid(tf.add(xz, hz));
      const r = tf.sigmoid(tf.add(xr, hr));
      const cand = tf.tanh(tf.add(xh, tf.mul(r, hh)));
      h = tf.add(tf.mul(z, h), tf.mul(tf.sub(1, z), cand));
      out.push(tf.add(tf.matMul(h, dk), json.dense.bias).dataSync()[0]);
    }
    return out;
  });
}

function maxDiff(a: number[], b: number[]): number {
  expect(a.length).toBe(b.length);
  // Outputs that barely move would make agreement meaningless.
  expect(Math.max(...a) - Math.min(...a)).toBeGreaterThan(0.5);
  return Math.max(...a.map((v, i) => Math.abs(v - b[i])));
}

describe('GRU kernel parity with TensorFlow.js', () => {
  it.each([
    [16, 'sigmoid'],
    [MAX_HIDDEN, 'sigmoid'], // the largest hidden state the processor row holds
    [8, 'hard_sigmoid'],
  ] as const)('reset_after=false, %i units, %s: tf.layers.gru', (units, act) => {
    const json = randomJson(units, 100 + units, false, act);
    const x = randomInputs(7 + units);
    expect(maxDiff(kernelLogits(json, x), tfLayersLogits(json, x))).toBeLessThan(TOL);
  });

  it('reset_after=true (Keras default): the Keras cell in tf ops', () => {
    const json = randomJson(16, 42, true);
    const x = randomInputs(43);
    expect(maxDiff(kernelLogits(json, x), tfResetAfterLogits(json, x))).toBeLessThan(TOL);
  });

  it('the shipped model, normalisation included', () => {
    const json = JSON.parse(readFileSync(defaultModelPath(), 'utf8')) as ForesightModelJson;
    loadModel(); // validates
    const rng = new Rng(5);
    // Raw feature values around the training distribution.
    const raw = Float32Array.from({ length: T * N_FEATURES }, (_, i) => json.features.mean[i % N_FEATURES] + rng.normal() * json.features.std[i % N_FEATURES] * 2);
    const m = parseModel(json);
    const norm = new Float32Array(raw.length);
    const tmp = new Float64Array(N_FEATURES);
    for (let t = 0; t < T; t++) {
      normalise(m, raw.subarray(t * N_FEATURES, (t + 1) * N_FEATURES), tmp);
      norm.set(tmp, t * N_FEATURES);
    }
    expect(maxDiff(kernelLogits(json, raw, true), tfLayersLogits(json, norm))).toBeLessThan(TOL);
  });
});
