/**
 * `npm run train`: rebuilds models/foresight-gru.json from a seed.
 *
 *   node dist/bench/train/train.js [--seed 1] [--tiny] [--out PATH] [--epochs N] [--hidden H] [--threads N]
 *
 * 1. traces: simulator scenarios through the real engine, labelled by Tier 1 (traces.ts),
 *    split train / calibration / held-out test by seed (dataset.ts);
 * 2. normalisation constants from the training steps;
 * 3. GRU training with TensorFlow.js (WASM backend; cpu if WASM cannot start), model selection
 *    by calibration-set PR-AUC;
 * 4. Platt scaling on the calibration set;
 * 5. held-out metrics (PR-AUC vs the trend baseline, ECE, Brier) computed with the service's
 *    own kernel, stored in the model's `meta`.
 *
 * --tiny: a few traces at 20 tx/s and 8 epochs, end to end in well under a minute (CI); it
 * writes to the OS temp dir unless --out is given, never over the shipped model.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from '../lib/cli.js';
import { FEATURE_NAMES } from '../../src/tiers/foresight/features.js';
import { MODEL_FORMAT, parseModel, type ForesightModelJson } from '../../src/tiers/foresight/model.js';
import { STEP_MS } from '../../src/tiers/foresight/state.js';
import { FULL_SIZE, TINY_SIZE, heldOutSpecs, trainSpecs, type DatasetSize } from './dataset.js';
import { featureStats, fit, type FeatureStats, type Weights } from './fit.js';
import { generateAll } from './generate.js';
import { averagePrecision, brier, expectedCalibrationError, logLoss } from './metrics.js';
import { fitPlatt } from './platt.js';
import { scoreSequences } from './score-seqs.js';
import { initTf } from './tf-setup.js';
import { HORIZON_MS, type Sequence } from './traces.js';

export interface TrainOptions {
  seed: number;
  tiny: boolean;
  out: string;
  epochs?: number;
  hidden?: number;
  threads?: number;
  batchSize?: number;
  learningRate?: number;
  /** Seeds per named scenario and rate in the training set (default FULL_SIZE's). */
  trainSeeds?: number;
  /** Loss weight of positive steps (default POSITIVE_WEIGHT). */
  posWeight?: number;
  log?: (line: string) => void;
}

export interface HeldOutMetrics {
  steps: number;
  positives: number;
  prAucGru: number;
  prAucTrend: number;
  ece: number;
  brier: number;
  logLoss: number;
}

export interface TrainResult {
  json: ForesightModelJson;
  test: HeldOutMetrics;
  backend: string;
  seconds: number;
}

const POSITIVE_WEIGHT = 4;
const sigmoid = (v: number): number => 1 / (1 + Math.exp(-v));
const r4 = (v: number): number => Number(v.toFixed(4));

function modelJson(w: Weights, stats: FeatureStats, platt: { a: number; b: number }, meta: Record<string, unknown>): ForesightModelJson {
  return {
    format: MODEL_FORMAT,
    stepMs: STEP_MS,
    horizonMs: HORIZON_MS,
    features: { names: [...FEATURE_NAMES], ...stats },
    gru: w.gru,
    dense: w.dense,
    calibration: { method: 'platt', a: Number(platt.a.toPrecision(9)), b: Number(platt.b.toPrecision(9)) },
    meta,
  };
}

export function heldOutMetrics(json: ForesightModelJson, seqs: readonly Sequence[]): HeldOutMetrics {
  const m = parseModel(json);
  const s = scoreSequences(m, seqs);
  const probs = Array.from(s.logits, (z) => sigmoid(m.plattA * z + m.plattB));
  return {
    steps: s.labels.length,
    positives: s.labels.reduce((a, b) => a + b, 0),
    prAucGru: r4(averagePrecision(s.logits, s.labels)),
    prAucTrend: r4(averagePrecision(s.trend, s.labels)),
    ece: r4(expectedCalibrationError(probs, s.labels)),
    brier: r4(brier(probs, s.labels)),
    logLoss: r4(logLoss(probs, s.labels)),
  };
}

export async function train(o: TrainOptions): Promise<TrainResult> {
  const log = o.log ?? ((l: string) => console.log(l));
  const t0 = performance.now();
  const size: DatasetSize = o.tiny ? TINY_SIZE : { ...FULL_SIZE, ...(o.trainSeeds !== undefined && { trainSeeds: o.trainSeeds }) };
  const units = o.hidden ?? (o.tiny ? 8 : 16);
  const epochs = o.epochs ?? (o.tiny ? 8 : 36);
  const backend = await initTf();
  log(`foresight training: seed ${o.seed}, ${o.tiny ? 'tiny' : 'full'} data, GRU ${units}, ${epochs} epochs, tfjs backend ${backend}`);

  const gen = async (name: string, specs: Parameters<typeof generateAll>[0]): Promise<Sequence[]> => {
    const t = performance.now();
    const seqs = (await generateAll(specs, o.threads)).flat();
    const steps = seqs.reduce((a, s) => a + s.t.length, 0);
    log(`  ${name}: ${specs.length} runs, ${seqs.length} sequences, ${steps} steps (${((performance.now() - t) / 1000).toFixed(1)} s)`);
    return seqs;
  };
  const trainSeqs = await gen('train', trainSpecs(o.seed, size));
  const calibSeqs = await gen('calibration', heldOutSpecs('calib', size));
  const testSeqs = await gen('test', heldOutSpecs('test', size));

  const stats = featureStats(trainSeqs);
  let pos = 0;
  let neg = 0;
  for (const q of trainSeqs) for (let i = 0; i < q.t.length; i++) if (q.mask[i]) q.y[i] ? pos++ : neg++;
  // Class weighting: positives (~3 % of labelled steps) count POSITIVE_WEIGHT times. Not the
  // fully balanced ~30: that pushes every ambiguous state (a bump's crest, where ramps passing
  // the same level mostly do fail over) into the sigmoid's flat top, where the ranking the
  // action threshold relies on is lost; 4 gave the better lead / needless-shift trade-off.
  const posWeight = o.posWeight ?? POSITIVE_WEIGHT;
  log(`  labelled steps: ${pos} positive, ${neg} negative; positive weight ${posWeight.toFixed(2)}`);

  const unit = { a: 1, b: 0 };
  const calibAp = (w: Weights): number => {
    const s = scoreSequences(parseModel(modelJson(w, stats, unit, {})), calibSeqs);
    const ap = averagePrecision(s.logits, s.labels);
    return Number.isNaN(ap) ? 0 : ap;
  };
  const tFit = performance.now();
  const best = await fit(trainSeqs, stats, {
    units,
    epochs,
    batchSize: o.batchSize ?? 64,
    learningRate: o.learningRate ?? 0.008,
    seed: o.seed,
    posWeight,
    evaluate: calibAp,
    log: (l) => log(`  ${l}`),
  });
  const fitSeconds = (performance.now() - tFit) / 1000;
  log(`  best epoch ${best.bestEpoch} (calibration PR-AUC ${best.bestScore.toFixed(4)}), fit ${fitSeconds.toFixed(0)} s`);

  const calibScores = scoreSequences(parseModel(modelJson(best.weights, stats, unit, {})), calibSeqs);
  const platt = fitPlatt(calibScores.logits, calibScores.labels);
  log(`  Platt scaling: a ${platt.a.toFixed(4)}, b ${platt.b.toFixed(4)}`);

  const draft = modelJson(best.weights, stats, platt, {});
  const test = heldOutMetrics(draft, testSeqs);
  const meta = {
    trainedBy: 'npm run train (bench/train/train.ts)',
    seed: o.seed,
    mode: o.tiny ? 'tiny' : 'full',
    hidden: units,
    epochs,
    bestEpoch: best.bestEpoch,
    positiveWeight: r4(posWeight),
    data: {
      trainSequences: trainSeqs.length,
      calibrationSequences: calibSeqs.length,
      testSequences: testSeqs.length,
      trainLabelledSteps: pos + neg,
      trainPositiveSteps: pos,
    },
    heldOut: test,
  };
  const json = modelJson(best.weights, stats, platt, meta);
  mkdirSync(dirname(o.out), { recursive: true });
  writeFileSync(o.out, `${JSON.stringify(json)}\n`);
  const seconds = (performance.now() - t0) / 1000;
  log(
    `  held-out: PR-AUC GRU ${test.prAucGru} vs trend ${test.prAucTrend}, ECE ${test.ece}, Brier ${test.brier} ` +
      `(${test.steps} steps, ${test.positives} positive)`,
  );
  log(`wrote ${o.out} in ${seconds.toFixed(0)} s`);
  return { json, test, backend, seconds };
}

const repoRoot = (): string => {
  // dist/bench/train/train.js or bench/train/train.ts → repository root.
  const here = dirname(fileURLToPath(import.meta.url));
  return here.includes(`${join('dist', 'bench')}`) ? resolve(here, '../../..') : resolve(here, '../..');
};

async function main(): Promise<void> {
  const values = parseCli({
    usage: 'npm run train -- [options]',
    summary:
      'Trains the Foresight (Tier 2) GRU on simulator traces labelled by the real Tier 1, calibrates it (Platt) and writes ' +
      'the model JSON (default models/foresight-gru.json). Prints progress per epoch. A full run takes tens of minutes; --tiny is a smoke run.',
    options: {
      seed: { type: 'string', default: '1' },
      tiny: { type: 'boolean', default: false },
      out: { type: 'string' },
      epochs: { type: 'string' },
      hidden: { type: 'string' },
      threads: { type: 'string' },
      'pos-weight': { type: 'string' },
      'train-seeds': { type: 'string' },
      batch: { type: 'string' },
      lr: { type: 'string' },
    },
    help: {
      seed: 'random seed',
      tiny: 'a small, fast run (model written to the temp directory unless --out)',
      out: 'model file to write',
      epochs: 'training epochs',
      hidden: 'GRU hidden units',
      threads: 'trace-generation worker threads',
      'pos-weight': 'weight of positive (failure) examples in the loss',
      'train-seeds': 'simulator seeds used for training',
      batch: 'batch size',
      lr: 'learning rate',
    },
  });
  const int = (name: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got "${v}"`);
    return n;
  };
  const tiny = values.tiny === true;
  const out = values.out ?? (tiny ? join(tmpdir(), 'foresight-gru-tiny.json') : join(repoRoot(), 'models', 'foresight-gru.json'));
  await train({
    seed: int('seed', values.seed) ?? 1,
    tiny,
    out,
    ...(values.epochs !== undefined && { epochs: int('epochs', values.epochs) }),
    ...(values.hidden !== undefined && { hidden: int('hidden', values.hidden) }),
    ...(values.threads !== undefined && { threads: int('threads', values.threads) }),
    ...(values['pos-weight'] !== undefined && { posWeight: Number(values['pos-weight']) }),
    ...(values['train-seeds'] !== undefined && { trainSeeds: int('train-seeds', values['train-seeds']) }),
    ...(values.batch !== undefined && { batchSize: int('batch', values.batch) }),
    ...(values.lr !== undefined && { learningRate: Number(values.lr) }),
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
