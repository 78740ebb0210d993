/**
 * The TensorFlow.js twin of the service's kernel: GRU (returnSequences) + time-distributed
 * dense logit. Weights are initialised from our own seeded RNG (so training is reproducible
 * without relying on tfjs's initializer seeding) and exported in Keras layout to the model
 * JSON; `importWeights` goes the other way (parity test). Training-side only: the service
 * never loads TensorFlow.js.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../sim/rng.js';
import type { ForesightModelJson } from '../../src/tiers/foresight/model.js';

export function buildTfModel(inputs: number, units: number): tf.Sequential {
  const model = tf.sequential();
  model.add(
    tf.layers.gru({
      units,
      returnSequences: true,
      // tfjs defaults to hard sigmoid; Keras 2+ and the kernel's default path use sigmoid.
      recurrentActivation: 'sigmoid',
      inputShape: [null, inputs],
    }),
  );
  model.add(tf.layers.timeDistributed({ layer: tf.layers.dense({ units: 1 }) }));
  return model;
}

/** Glorot-uniform input kernels, orthogonal recurrent blocks, zero biases; `priorLogit` on the output bias. */
export function initWeights(model: tf.Sequential, inputs: number, units: number, rng: Rng, priorLogit: number): void {
  const glorot = (rows: number, cols: number): Float32Array => {
    const lim = Math.sqrt(6 / (rows + cols));
    return Float32Array.from({ length: rows * cols }, () => (2 * rng.next() - 1) * lim);
  };
  const recurrent = new Float32Array(units * 3 * units);
  for (let g = 0; g < 3; g++) {
    const q = orthogonal(units, rng);
    for (let i = 0; i < units; i++) for (let j = 0; j < units; j++) recurrent[i * 3 * units + g * units + j] = q[i * units + j];
  }
  model.setWeights([
    tf.tensor2d(glorot(inputs, 3 * units), [inputs, 3 * units]),
    tf.tensor2d(recurrent, [units, 3 * units]),
    tf.zeros([3 * units]),
    tf.tensor2d(glorot(units, 1), [units, 1]),
    tf.tensor1d([priorLogit]),
  ]);
}

/** A random orthogonal n×n matrix (Gram-Schmidt on Gaussian columns), row-major. */
function orthogonal(n: number, rng: Rng): Float32Array {
  const cols: Float64Array[] = [];
  for (let c = 0; c < n; c++) {
    const v = Float64Array.from({ length: n }, () => rng.normal());
    for (const u of cols) {
      let d = 0;
      for (let i = 0; i < n; i++) d += v[i] * u[i];
      for (let i = 0; i < n; i++) v[i] -= d * u[i];
    }
    let norm = 0;
    for (let i = 0; i < n; i++) norm += v[i] * v[i];
    norm = Math.sqrt(norm);
    for (let i = 0; i < n; i++) v[i] /= norm;
    cols.push(v);
  }
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[i * n + j] = cols[j][i];
  return out;
}

/** Rounded to float32 precision as decimal (8 significant digits round-trip a float32). */
const f32 = (a: Float32Array | Int32Array | Uint8Array): number[] => Array.from(a, (v) => Number(v.toPrecision(9)));

export function exportWeights(model: tf.Sequential): Pick<ForesightModelJson, 'gru' | 'dense'> {
  const [k, rk, b, dk, db] = model.getWeights().map((w) => w.dataSync() as Float32Array);
  return {
    gru: {
      units: Math.round(Math.sqrt(rk.length / 3)), // the recurrent kernel is H × 3H
      resetAfter: false,
      recurrentActivation: 'sigmoid',
      kernel: f32(k),
      recurrentKernel: f32(rk),
      bias: f32(b),
    },
    dense: { kernel: f32(dk), bias: Number(db[0].toPrecision(9)) },
  };
}

export function importWeights(model: tf.Sequential, json: Pick<ForesightModelJson, 'gru' | 'dense'>, inputs: number): void {
  const H = json.gru.units;
  model.setWeights([
    tf.tensor2d(json.gru.kernel, [inputs, 3 * H]),
    tf.tensor2d(json.gru.recurrentKernel, [H, 3 * H]),
    tf.tensor1d(json.gru.bias),
    tf.tensor2d(json.dense.kernel, [H, 1]),
    tf.tensor1d([json.dense.bias]),
  ]);
}
