/**
 * Trains the GRU with TensorFlow.js on whole sequences (the service runs it statefully from
 * a cold state, so training does too): masked, class-weighted binary cross-entropy summed
 * over every step, Adam, global-norm gradient clipping. tfjs-layers' `fit` has no per-step
 * sample weights, hence the explicit loop. Sequences are batched by length (sorted, then
 * cut), padded at the end (a causal GRU's earlier outputs do not see the padding, and padded
 * steps weigh 0); batch order is shuffled each epoch from the seed.
 */
import * as tf from '@tensorflow/tfjs';
import { N_FEATURES } from '../../src/tiers/foresight/features.js';
import type { ForesightModelJson } from '../../src/tiers/foresight/model.js';
import { Rng } from '../sim/rng.js';
import { buildTfModel, exportWeights, initWeights } from './gru-tf.js';
import type { Sequence } from './traces.js';

export interface FeatureStats {
  mean: number[];
  std: number[];
  clip: number;
}

/** Mean and standard deviation of each raw feature over all training steps. */
export function featureStats(seqs: readonly Sequence[], clip = 6): FeatureStats {
  const n = new Float64Array(N_FEATURES);
  const s = new Float64Array(N_FEATURES);
  const ss = new Float64Array(N_FEATURES);
  for (const q of seqs) {
    for (let i = 0; i < q.t.length; i++) {
      for (let f = 0; f < N_FEATURES; f++) {
        const v = q.x[i * N_FEATURES + f];
        n[f]++;
        s[f] += v;
        ss[f] += v * v;
      }
    }
  }
  const mean = Array.from(s, (v, f) => v / n[f]);
  const std = Array.from(ss, (v, f) => Math.max(1e-3, Math.sqrt(Math.max(0, v / n[f] - mean[f] ** 2))));
  return { mean: mean.map(round), std: std.map(round), clip };
}
const round = (v: number): number => Number(v.toPrecision(9));

export type Weights = Pick<ForesightModelJson, 'gru' | 'dense'>;

export interface FitOptions {
  units: number;
  epochs: number;
  batchSize: number;
  learningRate: number;
  seed: number;
  /** Loss weight of a positive step (negatives weigh 1). */
  posWeight: number;
  /** Scores the weights after an epoch (higher is better); the best epoch is returned. */
  evaluate: (w: Weights) => number;
  log: (line: string) => void;
}

interface Batch {
  x: tf.Tensor3D;
  y: tf.Tensor3D;
  w: tf.Tensor3D;
  wsum: number;
}

function makeBatches(seqs: readonly Sequence[], stats: FeatureStats, o: FitOptions): Batch[] {
  const order = seqs.map((_, i) => i).sort((a, b) => seqs[a].t.length - seqs[b].t.length || a - b);
  const batches: Batch[] = [];
  for (let start = 0; start < order.length; start += o.batchSize) {
    const ids = order.slice(start, start + o.batchSize);
    const T = Math.max(...ids.map((i) => seqs[i].t.length));
    const B = ids.length;
    const x = new Float32Array(B * T * N_FEATURES);
    const y = new Float32Array(B * T);
    const w = new Float32Array(B * T);
    let wsum = 0;
    ids.forEach((id, b) => {
      const q = seqs[id];
      for (let i = 0; i < q.t.length; i++) {
        for (let f = 0; f < N_FEATURES; f++) {
          const v = (q.x[i * N_FEATURES + f] - stats.mean[f]) / stats.std[f];
          x[(b * T + i) * N_FEATURES + f] = Math.max(-stats.clip, Math.min(stats.clip, Number.isNaN(v) ? 0 : v));
        }
        y[b * T + i] = q.y[i];
        const wt = q.mask[i] ? (q.y[i] ? o.posWeight : 1) : 0;
        w[b * T + i] = wt;
        wsum += wt;
      }
    });
    if (wsum === 0) continue;
    batches.push({ x: tf.tensor3d(x, [B, T, N_FEATURES]), y: tf.tensor3d(y, [B, T, 1]), w: tf.tensor3d(w, [B, T, 1]), wsum });
  }
  return batches;
}

export async function fit(train: readonly Sequence[], stats: FeatureStats, o: FitOptions): Promise<{ weights: Weights; bestEpoch: number; bestScore: number }> {
  const rng = new Rng(o.seed).fork('fit');
  let pos = 0;
  let neg = 0;
  for (const q of train) for (let i = 0; i < q.t.length; i++) if (q.mask[i]) q.y[i] ? pos++ : neg++;
  const model = buildTfModel(N_FEATURES, o.units);
  // Output bias at the weighted base rate: the first epochs need not learn it.
  initWeights(model, N_FEATURES, o.units, rng.fork('init'), Math.log((pos * o.posWeight) / Math.max(1, neg)));
  const batches = makeBatches(train, stats, o);
  const vars = model.trainableWeights.map((v) => v.read() as tf.Variable);
  const opt = tf.train.adam(o.learningRate);
  const shuffle = rng.fork('shuffle');
  let best = { weights: exportWeights(model), bestEpoch: 0, bestScore: -Infinity };
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    // Step decay for the last third: settle into the basin found at the full rate.
    (opt as unknown as { learningRate: number }).learningRate = epoch > (2 * o.epochs) / 3 ? o.learningRate / 4 : o.learningRate;
    const order = batches.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(shuffle.next() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    let lossSum = 0;
    for (const bi of order) {
      const b = batches[bi];
      const loss = tf.tidy(() => {
        const { value, grads } = tf.variableGrads(() => {
          const z = model.apply(b.x, { training: true }) as tf.Tensor3D;
          // Stable BCE with logits: max(z,0) − z·y + log(1 + e^−|z|).
          const bce = tf.relu(z).sub(z.mul(b.y)).add(tf.log1p(tf.exp(tf.neg(tf.abs(z)))));
          return bce.mul(b.w).sum().div(b.wsum) as tf.Scalar;
        }, vars);
        const names = Object.keys(grads);
        const norm = Math.sqrt(names.reduce((acc, k) => acc + (tf.sum(tf.square(grads[k])).dataSync()[0] as number), 0));
        const scale = norm > 1 ? 1 / norm : 1;
        opt.applyGradients(Object.fromEntries(names.map((k) => [k, grads[k].mul(scale)])) as Parameters<typeof opt.applyGradients>[0]);
        return value.dataSync()[0] as number;
      });
      lossSum += loss * b.wsum;
    }
    const weights = exportWeights(model);
    const score = o.evaluate(weights);
    const totalW = batches.reduce((a, b) => a + b.wsum, 0);
    o.log(`epoch ${String(epoch).padStart(2)}  train loss ${(lossSum / totalW).toFixed(4)}  calib score ${score.toFixed(4)}${score > best.bestScore ? '  *' : ''}`);
    if (score > best.bestScore) best = { weights, bestEpoch: epoch, bestScore: score };
  }
  for (const b of batches) tf.dispose([b.x, b.y, b.w]);
  opt.dispose();
  model.dispose();
  return best;
}
