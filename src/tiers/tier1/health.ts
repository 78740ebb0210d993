/**
 * Published health of a processor (spec 2.5): rates and latency percentiles over the last
 * minute of its outcome window, written into the processor row for the health API and the
 * metrics gauges to read (NaN is shown as null).
 *
 * Rates are over all outcomes: success_rate = successes / n, error_rate = technical errors / n
 * (issuer declines lower the success rate but are not processor errors).
 */
import {
  PF_AVG_LATENCY,
  PF_DECLINE_RATE,
  PF_ERROR_RATE,
  PF_P95_LATENCY,
  PF_P99_LATENCY,
  PF_SAMPLE_COUNT,
  PF_SUCCESS_RATE,
  type WindowSegmentViews,
} from '../../shm/layout.js';
import {
  emptyCounts,
  newLatencySnapshot,
  percentile,
  readCounts,
  readLatency,
} from '../../shm/window.js';

/** The horizon of published health: the whole latency window. */
export const HEALTH_HORIZON_MS = 60_000;

export interface ProcHealth {
  successRate: number;
  errorRate: number;
  declineRate: number;
  avgLatencyMs: number;
  p95LatencyMs: number;
  p99LatencyMs: number;
  sampleCount: number;
  techErrors: number;
}

export function newProcHealth(): ProcHealth {
  return {
    successRate: NaN,
    errorRate: NaN,
    declineRate: NaN,
    avgLatencyMs: NaN,
    p95LatencyMs: NaN,
    p99LatencyMs: NaN,
    sampleCount: 0,
    techErrors: 0,
  };
}

// Scratch reused across calls: a worker evaluates one rule at a time.
const counts = emptyCounts();
const latency = newLatencySnapshot();

/** `seg` is undefined while the processor has no window (no outcome reported yet). */
export function readHealth(
  seg: WindowSegmentViews | undefined,
  w: number,
  nowMs: number,
  out: ProcHealth,
): ProcHealth {
  if (seg === undefined) {
    Object.assign(out, newProcHealth());
    return out;
  }
  readCounts(seg, w, nowMs, HEALTH_HORIZON_MS, counts);
  const n = counts.success + counts.decline + counts.tech;
  out.sampleCount = n;
  out.techErrors = counts.tech;
  out.successRate = n > 0 ? counts.success / n : NaN;
  out.errorRate = n > 0 ? counts.tech / n : NaN;
  out.declineRate = n > 0 ? counts.decline / n : NaN;
  readLatency(seg, w, nowMs, HEALTH_HORIZON_MS, latency);
  out.avgLatencyMs = latency.count > 0 ? latency.sum / latency.count : NaN;
  // Published for display whatever the count (the spec types them as floats; sample_count says
  // how far to trust them). Detection keeps its own minimum (signals.ts, latencyMinSamples).
  out.p95LatencyMs = latency.count > 0 ? percentile(latency, 0.95) : NaN;
  out.p99LatencyMs = latency.count > 0 ? percentile(latency, 0.99) : NaN;
  return out;
}

/** `o` is the row's offset in `procF64`. */
export function writeHealth(procF64: Float64Array, o: number, h: ProcHealth): void {
  procF64[o + PF_SUCCESS_RATE] = h.successRate;
  procF64[o + PF_ERROR_RATE] = h.errorRate;
  procF64[o + PF_DECLINE_RATE] = h.declineRate;
  procF64[o + PF_AVG_LATENCY] = h.avgLatencyMs;
  procF64[o + PF_P95_LATENCY] = h.p95LatencyMs;
  procF64[o + PF_P99_LATENCY] = h.p99LatencyMs;
  procF64[o + PF_SAMPLE_COUNT] = h.sampleCount;
}
