/**
 * Rise evidence: how sure Foresight can be that a processor's error rate of the last 15 s is
 * above its own usual rate, the discriminator between a ramp starting and a noisy stretch.
 *
 * At 20 tx/s the model's probability cannot tell the two apart on its own: 20 s into a 120 s
 * ramp from 2% (true rate 12%) it gives 0.2-0.35, and a random run of errors on a processor
 * at a steady 10% reaches 0.4 about once in 15 simulated hours. What differs is the rise
 * against the processor's own past: the ramp's last 15 s (~300 outcomes at 8-10%) sit far
 * above its usual 2%, the noisy stretch only a couple of standard errors above its usual
 * 10%. So the policy scales its cut by
 *
 *   rise = P(error rate of the last 15 s > m | k errors in n outcomes),  Beta(1 + k, 1 + n − k)
 *   m = min(RISE_FACTOR · b + RISE_MARGIN, (b + failover threshold) / 2)
 *
 * where b is the usual rate: decayed sums of the technical errors and outcomes of every GRU
 * step (10-minute half-life, so a 2-minute incident moves it by a few percent of its size;
 * a weak 2% prior until there is data). m is "clearly above usual": 5% for a 2% processor,
 * 17% for a 10% one, never above half-way to the failover threshold (a processor usually at
 * 20% still gets a lead before 30%).
 *
 * A degradation can show in latency before errors (a saturating processor slows down, then
 * times out): p95 latency of the last 15 s at LATENCY_RISE_FROM (2x) its trailing baseline (the
 * one the model's lp95 feature uses) or more is a rise too, full at 4x. Healthy jitter (±30%)
 * stays far below.
 *
 *   rise = max(error rise, clamp((log(p95 / baseline) − log 2) / log 2, 0, 1))
 *
 * Called by step.ts (the baseline, once per GRU step) and stage.ts (the evidence, only
 * when the primary's probability is above the action threshold).
 */
import { G_ERR_DEN, G_ERR_NUM, G_P95_DEN, G_P95_NUM, type WindowSegmentViews } from '../../shm/layout.js';
import { emptyCounts, newLatencySnapshot, percentile, readCounts, readLatency } from '../../shm/window.js';
import { probAbove } from '../tier1/beta.js';

/** Half-life of the usual error rate. */
export const BASELINE_HALF_LIFE_MS = 600_000;
/** The recent window the rise is judged on. */
export const RECENT_MS = 15_000;
/** "Clearly above usual": m = RISE_FACTOR · b + RISE_MARGIN (capped, see above). */
export const RISE_FACTOR = 1.5;
export const RISE_MARGIN = 0.02;
/** The baseline's prior: 0.2 errors in 10 outcomes (2%), outweighed within seconds of traffic. */
const PRIOR_ERRORS = 0.2;
const PRIOR_OUTCOMES = 10;

/** p95 over its baseline at which latency starts to count as a rise (log scale), and the span to full. */
const LATENCY_RISE_FROM = Math.log(2);
const LATENCY_RISE_SPAN = Math.log(2);
/** Latency samples the recent p95 needs. */
const MIN_LATENCY_SAMPLES = 20;

const counts = emptyCounts();
const latency = newLatencySnapshot();

/**
 * Folds the outcomes of the last `dtMs` (the time since the previous step, one step's
 * worth when unknown) into the processor's usual error rate.
 */
export function updateErrorBaseline(
  procF64: Float64Array,
  row: number,
  window: WindowSegmentViews | undefined,
  w: number,
  nowMs: number,
  dtMs: number,
): void {
  if (window === undefined || !(dtMs > 0)) return;
  readCounts(window, w, nowMs, dtMs, counts);
  const decay = 2 ** (-dtMs / BASELINE_HALF_LIFE_MS);
  procF64[row + G_ERR_NUM] = procF64[row + G_ERR_NUM] * decay + counts.tech;
  procF64[row + G_ERR_DEN] = procF64[row + G_ERR_DEN] * decay + counts.success + counts.decline + counts.tech;
}

/** The processor's usual technical error rate (the prior's 2% before any outcome). */
export function usualErrorRate(procF64: Float64Array, row: number): number {
  return (procF64[row + G_ERR_NUM] + PRIOR_ERRORS) / (procF64[row + G_ERR_DEN] + PRIOR_OUTCOMES);
}

/** The rate the last 15 s must credibly exceed to count as a rise, for usual rate `b`. */
export function riseLevel(b: number, failoverThreshold: number): number {
  return Math.min(RISE_FACTOR * b + RISE_MARGIN, (b + failoverThreshold) / 2);
}

/** The larger of the error-rate rise and the latency rise (0 to 1). */
export function riseEvidence(
  procF64: Float64Array,
  row: number,
  window: WindowSegmentViews | undefined,
  w: number,
  nowMs: number,
  failoverThreshold: number,
): number {
  if (window === undefined) return 0;
  return Math.max(errorRise(procF64, row, window, w, nowMs, failoverThreshold), latencyRise(procF64, row, window, w, nowMs));
}

/** How far the last 15 s's p95 latency is above the processor's trailing baseline, 0 to 1. */
export function latencyRise(procF64: Float64Array, row: number, window: WindowSegmentViews, w: number, nowMs: number): number {
  const den = procF64[row + G_P95_DEN];
  if (!(den > 0)) return 0;
  readLatency(window, w, nowMs, RECENT_MS, latency);
  if (latency.count < MIN_LATENCY_SAMPLES) return 0;
  const excess = Math.log(percentile(latency, 0.95)) - procF64[row + G_P95_NUM] / den - LATENCY_RISE_FROM;
  return Math.min(1, Math.max(0, excess / LATENCY_RISE_SPAN));
}

/** P(the last 15 s's error rate is above the rise level); 0 with no outcomes. */
export function errorRise(
  procF64: Float64Array,
  row: number,
  window: WindowSegmentViews,
  w: number,
  nowMs: number,
  failoverThreshold: number,
): number {
  readCounts(window, w, nowMs, RECENT_MS, counts);
  const n = counts.success + counts.decline + counts.tech;
  if (n === 0) return 0;
  return probAbove(riseLevel(usualErrorRate(procF64, row), failoverThreshold), counts.tech, n);
}
