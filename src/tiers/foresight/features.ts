/**
 * One feature vector per processor per GRU step, read from the slot's outcome window.
 *
 * Every feature is measured over a fixed trailing horizon of wall time ending at `nowMs`,
 * never "since the last evaluation", so an evaluation that comes early (an early evaluation) or late
 * (skipped cycle) sees the same kind of numbers the model was trained on. Rates are
 * posterior means under weak priors, so a quiet processor (n = 0) gives finite, neutral
 * values instead of NaN; their uncertainty is a separate feature.
 *
 *  0 err5      technical error rate, last 5 s        Beta(0.1, 1.9) prior (mean 5 %)
 *  1 sd5       its posterior standard deviation
 *  2 err30     technical error rate, last 30 s
 *  3 sd30      its posterior standard deviation
 *  4 decl30    issuer declines / non-technical outcomes, last 30 s
 *  5 logvol    log(1 + outcomes per minute), last 30 s
 *  6 lp50      log p50 latency (15 s) minus its trailing baseline
 *  7 lp95      log p95 latency (15 s) minus its trailing baseline
 *  8 tshare30  timeouts / technical errors, last 30 s (prior 25 %, the usual mix)
 *  9 slope30   weighted least-squares slope of the error rate over 30 s, per minute
 * 10 slope60   the same over 60 s
 * 11 nt5       non-timeout technical error rate, last 5 s
 * 12 nt15      the same over 15 s
 * 13 ntslope30 slope of the non-timeout error rate over 30 s, per minute
 *
 * Why non-timeout errors separately: a timeout is reported when the client gives up (15 s in
 * the simulator), so the total error rate mixes errors of now with timeouts of 15 s ago. At the
 * crest of a harmless bump the total keeps rising for another 15 s on stale timeouts while the
 * errors of the moment already fall; the non-timeout rate shows the turn at once.
 *
 * Mean/std normalisation is not applied here: its constants live in the model file.
 */
import { COUNT_BUCKET_MS, G_LAST_STEP_MS, G_P50_DEN, G_P50_NUM, G_P95_DEN, G_P95_NUM, G_STEPS, type WindowSegmentViews } from '../../shm/layout.js';
import { newLatencySnapshot, percentile, readCountSeries, readLatency } from '../../shm/window.js';

export const FEATURE_NAMES = [
  'err5',
  'sd5',
  'err30',
  'sd30',
  'decl30',
  'logvol',
  'lp50',
  'lp95',
  'tshare30',
  'slope30',
  'slope60',
  'nt5',
  'nt15',
  'ntslope30',
] as const;
export const N_FEATURES = FEATURE_NAMES.length;

/** Error-rate prior: a few percent of technical errors is normal for a processor. */
const ERR_PRIOR_A = 0.1;
const ERR_PRIOR_B = 1.9;
const DECLINE_PRIOR_MEAN = 0.1;
const TIMEOUT_PRIOR_MEAN = 0.25;
const LAT_HORIZON_MS = 15_000;
/** Below this many latency samples the percentiles are noise: report "at baseline". */
const MIN_LAT_SAMPLES = 5;
/** Half-life of the latency baselines: slow enough that a minutes-long incident stays visible. */
const BASELINE_HALF_LIFE_MS = 600_000;
/** Each step moves the baseline by at most this much log-latency (a spike barely shifts it). */
const BASELINE_MAX_STEP = 0.2;
/** Slopes beyond this (error rate per minute) are noise at low volume. */
const MAX_SLOPE = 3;

/** Seconds of per-second counts the features look at (the 60 s slope's). */
const SERIES_SECONDS = 60;
/** Per-second counts, 4 a second (readCountSeries). */
const series = new Int32Array(4 * SERIES_SECONDS);
const latency = newLatencySnapshot();

interface Acc {
  n: number;
  tech: number;
  decline: number;
  timeout: number;
  sx: number;
  sxx: number;
  /** Σ x·errors, and the same for non-timeout errors. */
  sxy: number;
  sxyNt: number;
}
const acc5: Acc = newAcc();
const acc15: Acc = newAcc();
const acc30: Acc = newAcc();
const acc60: Acc = newAcc();

/**
 * The fields hold doubles from the start (0.5, then reset): sums of counts are small integers
 * in the JIT warm-up and may not stay so under real traffic, and a field that changes kind
 * makes V8 throw away the optimised code of every function reading it, on the pool thread at
 * the first real evaluation (test/unit/foresight-features-jit.test.ts).
 */
function newAcc(): Acc {
  const a = { n: 0.5, tech: 0.5, decline: 0.5, timeout: 0.5, sx: 0.5, sxx: 0.5, sxy: 0.5, sxyNt: 0.5 };
  resetAcc(a);
  return a;
}
function resetAcc(a: Acc): void {
  a.n = a.tech = a.decline = a.timeout = a.sx = a.sxx = a.sxy = a.sxyNt = 0;
}
function add(a: Acc, n: number, tech: number, decline: number, timeout: number, x: number): void {
  a.n += n;
  a.tech += tech;
  a.decline += decline;
  a.timeout += timeout;
  a.sx += n * x;
  a.sxx += n * x * x;
  a.sxy += tech * x;
  a.sxyNt += (tech - timeout) * x;
}

/**
 * Slope of the per-outcome error indicator (all technical errors, or non-timeout ones) against
 * time (s), each outcome weighted equally: the linear-probability fit over 1-second buckets.
 * Per minute; 0 when undetermined.
 */
function slopePerMin(a: Acc, nonTimeout: boolean): number {
  const den = a.n * a.sxx - a.sx * a.sx;
  if (a.n < 2 || den <= 1e-9) return 0;
  const sxy = nonTimeout ? a.sxyNt : a.sxy;
  const errors = nonTimeout ? a.tech - a.timeout : a.tech;
  const s = ((a.n * sxy - a.sx * errors) / den) * 60;
  return s > MAX_SLOPE ? MAX_SLOPE : s < -MAX_SLOPE ? -MAX_SLOPE : s;
}

function errMean(a: Acc): number {
  return (a.tech + ERR_PRIOR_A) / (a.n + ERR_PRIOR_A + ERR_PRIOR_B);
}
function nonTimeoutMean(a: Acc): number {
  return (a.tech - a.timeout + ERR_PRIOR_A) / (a.n + ERR_PRIOR_A + ERR_PRIOR_B);
}
function errSd(a: Acc): number {
  const m = errMean(a);
  return Math.sqrt((m * (1 - m)) / (a.n + ERR_PRIOR_A + ERR_PRIOR_B + 1));
}

/**
 * Fills `out` (length N_FEATURES) for the processor whose window is (`seg`, `w`) and whose
 * row starts at `row` in `procF64`, and folds this step's latency into the row's baselines.
 * Call once per GRU step (the baselines assume one update per step). `seg` is undefined while
 * the processor has no window.
 */
export function computeFeatures(
  seg: WindowSegmentViews | undefined,
  w: number,
  nowMs: number,
  procF64: Float64Array,
  row: number,
  out: Float64Array,
): Float64Array {
  resetAcc(acc5);
  resetAcc(acc15);
  resetAcc(acc30);
  resetAcc(acc60);
  const current = Math.floor(nowMs / COUNT_BUCKET_MS);
  if (seg !== undefined) {
    // x: the bucket's second relative to the current one, -59 to 0, counted up: it was -age,
    // minus zero for the current second, a double, which deoptimised this loop once traffic
    // reached the current second.
    // The slopes need per-second counts: all 60 seconds in one read of the window.
    readCountSeries(seg, w, current, SERIES_SECONDS, series);
    for (let x = -59; x <= 0; x++) {
      const o = 4 * (x + 59);
      const decline = series[o + 1];
      const tech = series[o + 2];
      const timeout = series[o + 3];
      const n = series[o] + decline + tech;
      if (n === 0) continue;
      add(acc60, n, tech, decline, timeout, x);
      if (x > -30) add(acc30, n, tech, decline, timeout, x);
      if (x > -15) add(acc15, n, tech, decline, timeout, x);
      if (x > -5) add(acc5, n, tech, decline, timeout, x);
    }
  }
  out[0] = errMean(acc5);
  out[1] = errSd(acc5);
  out[2] = errMean(acc30);
  out[3] = errSd(acc30);
  const nonTech30 = acc30.n - acc30.tech;
  out[4] = (acc30.decline + DECLINE_PRIOR_MEAN) / (nonTech30 + 1);
  out[5] = Math.log1p(acc30.n * (60_000 / 30_000));
  latencyFeatures(seg, w, nowMs, procF64, row, out);
  out[8] = (acc30.timeout + TIMEOUT_PRIOR_MEAN) / (acc30.tech + 1);
  out[9] = slopePerMin(acc30, false);
  out[10] = slopePerMin(acc60, false);
  out[11] = nonTimeoutMean(acc5);
  out[12] = nonTimeoutMean(acc15);
  out[13] = slopePerMin(acc30, true);
  return out;
}

/** out[6], out[7]: log p50 / log p95 relative to the baselines, then the baselines' update. */
function latencyFeatures(
  seg: WindowSegmentViews | undefined,
  w: number,
  nowMs: number,
  procF64: Float64Array,
  row: number,
  out: Float64Array,
): void {
  out[6] = out[7] = 0;
  if (seg === undefined) return;
  readLatency(seg, w, nowMs, LAT_HORIZON_MS, latency);
  if (latency.count < MIN_LAT_SAMPLES) return;
  const dtMs = procF64[row + G_STEPS] > 0 ? Math.max(0, nowMs - procF64[row + G_LAST_STEP_MS]) : 0;
  const decay = 2 ** (-dtMs / BASELINE_HALF_LIFE_MS);
  out[6] = deviationAndUpdate(procF64, row + G_P50_NUM, row + G_P50_DEN, Math.log(percentile(latency, 0.5)), decay);
  out[7] = deviationAndUpdate(procF64, row + G_P95_NUM, row + G_P95_DEN, Math.log(percentile(latency, 0.95)), decay);
}

/**
 * Deviation of `x` from the bias-corrected EWMA (num/den), measured before `x` is folded in.
 * The folded value is limited to BASELINE_MAX_STEP from the baseline, so an incident barely
 * drags the baseline while a lasting change of latency is still absorbed over time.
 */
function deviationAndUpdate(procF64: Float64Array, numAt: number, denAt: number, x: number, decay: number): number {
  const den = procF64[denAt];
  if (!(den > 0)) {
    procF64[numAt] = x;
    procF64[denAt] = 1;
    return 0;
  }
  const base = procF64[numAt] / den;
  const dev = x - base;
  const folded = base + Math.max(-BASELINE_MAX_STEP, Math.min(BASELINE_MAX_STEP, dev));
  procF64[numAt] = procF64[numAt] * decay + folded;
  procF64[denAt] = den * decay + 1;
  return dev;
}
