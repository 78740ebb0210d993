/**
 * The shipped Foresight model (`models/foresight-gru.json`): GRU and dense weights in Keras
 * layout, the feature normalisation and the calibration, as written by `bench/train`.
 * Loaded with plain fs + JSON (no TensorFlow.js on the service side) and validated once:
 * a model trained on other features, or too large for the row's reserved fields, is refused.
 */
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FEATURE_NAMES, N_FEATURES } from './features.js';
import { STEP_MS } from './state.js';
import { MAX_HIDDEN } from '../../shm/layout.js';

export const MODEL_FORMAT = 'foresight-gru/1';
export const DEFAULT_MODEL_FILE = 'models/foresight-gru.json';

/** The JSON document. Arrays are flattened row-major in Keras's shapes. */
export interface ForesightModelJson {
  format: typeof MODEL_FORMAT;
  stepMs: number;
  /** What the output predicts: the error rate exceeds the failover threshold within this horizon. */
  horizonMs: number;
  features: { names: string[]; mean: number[]; std: number[]; clip: number };
  gru: {
    units: number;
    /** Keras `reset_after`; TensorFlow.js trains only `false`, the kernel runs both. */
    resetAfter: boolean;
    recurrentActivation: 'sigmoid' | 'hard_sigmoid';
    /** [inputs][3·units], gates z | r | h. */
    kernel: number[];
    /** [units][3·units]. */
    recurrentKernel: number[];
    /** [3·units], or [2][3·units] (input bias, recurrent bias) when resetAfter. */
    bias: number[];
  };
  dense: { kernel: number[]; bias: number };
  /** Platt scaling of the dense logit z: p = sigmoid(a·z + b). */
  calibration: { method: 'platt'; a: number; b: number };
  /** Provenance and held-out metrics, informational. */
  meta?: Record<string, unknown>;
}

/** The model as the kernel uses it. */
export interface ForesightModel {
  inputSize: number;
  units: number;
  resetAfter: boolean;
  hardSigmoid: boolean;
  kernel: Float32Array;
  recurrentKernel: Float32Array;
  /** Input bias [3·units]. */
  bias: Float32Array;
  /** Recurrent bias [3·units] (zeros unless resetAfter). */
  recurrentBias: Float32Array;
  denseKernel: Float32Array;
  denseBias: number;
  mean: Float64Array;
  /** 1/std, so normalising is a multiply. */
  invStd: Float64Array;
  clip: number;
  plattA: number;
  plattB: number;
}

export function parseModel(json: ForesightModelJson): ForesightModel {
  const fail = (what: string): never => {
    throw new Error(`foresight model: ${what}`);
  };
  if (json.format !== MODEL_FORMAT) fail(`format ${String(json.format)}, expected ${MODEL_FORMAT}`);
  if (json.stepMs !== STEP_MS) fail(`trained with step ${json.stepMs} ms, the engine steps every ${STEP_MS} ms`);
  const names = json.features?.names ?? [];
  if (names.length !== N_FEATURES || names.some((n, i) => n !== FEATURE_NAMES[i])) {
    fail(`features [${names.join(', ')}] differ from the engine's [${FEATURE_NAMES.join(', ')}]: retrain`);
  }
  const H = json.gru.units;
  if (!Number.isInteger(H) || H < 1 || H > MAX_HIDDEN) fail(`units ${H} outside 1..${MAX_HIDDEN}`);
  const F = N_FEATURES;
  const arr = (name: string, v: number[] | undefined, len: number): Float32Array => {
    if (!Array.isArray(v) || v.length !== len || !v.every(Number.isFinite)) fail(`${name} must be ${len} finite numbers`);
    return Float32Array.from(v as number[]);
  };
  const biasLen = json.gru.resetAfter ? 6 * H : 3 * H;
  const bias = arr('gru.bias', json.gru.bias, biasLen);
  const std = arr('features.std', json.features.std, F);
  if (!std.every((s) => s > 0)) fail('features.std must be positive');
  const { a, b } = json.calibration ?? {};
  if (json.calibration?.method !== 'platt' || !Number.isFinite(a) || !Number.isFinite(b)) fail('calibration must be platt with finite a, b');
  if (!Number.isFinite(json.dense?.bias)) fail('dense.bias must be finite');
  const act = json.gru.recurrentActivation;
  if (act !== 'sigmoid' && act !== 'hard_sigmoid') fail(`recurrentActivation ${String(act)}`);
  return {
    inputSize: F,
    units: H,
    resetAfter: json.gru.resetAfter === true,
    hardSigmoid: act === 'hard_sigmoid',
    kernel: arr('gru.kernel', json.gru.kernel, F * 3 * H),
    recurrentKernel: arr('gru.recurrentKernel', json.gru.recurrentKernel, H * 3 * H),
    bias: bias.subarray(0, 3 * H),
    recurrentBias: json.gru.resetAfter ? bias.subarray(3 * H) : new Float32Array(3 * H),
    denseKernel: arr('dense.kernel', json.dense.kernel, H),
    denseBias: json.dense.bias,
    mean: Float64Array.from(arr('features.mean', json.features.mean, F)),
    invStd: Float64Array.from(std, (s) => 1 / s),
    clip: json.features.clip > 0 ? json.features.clip : fail('features.clip must be positive'),
    plattA: a,
    plattB: b,
  };
}

/**
 * The repository's `models/` file, found by walking up from this module: the same code runs
 * from `src/` (tests) and from `dist/src/` (service), and the image ships `models/` at its root.
 */
export function defaultModelPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, DEFAULT_MODEL_FILE);
    if (existsSync(candidate)) return candidate;
    dir = resolve(dir, '..');
  }
  throw new Error(`foresight model: ${DEFAULT_MODEL_FILE} not found above ${fileURLToPath(import.meta.url)}`);
}

export function loadModel(path: string = defaultModelPath()): ForesightModel {
  return parseModel(JSON.parse(readFileSync(path, 'utf8')) as ForesightModelJson);
}
