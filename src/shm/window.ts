/**
 * Outcome windows: the front thread records each outcome into its processor's window; workers
 * read counts and latency histograms over trailing horizons. A window is compact (window-ring.ts)
 * until it sees more than ~1 outcome a second, then dense (window-dense.ts); layout.ts says why.
 * Callers see one window: every function here serves both forms.
 */
import {
  CB_STRIDE,
  COUNT_BUCKET_MS,
  COUNT_BUCKETS,
  EV_NO_LATENCY,
  LAT_BINS,
  LAT_BUCKET_MS,
  LAT_BUCKETS,
  RH_DENSE,
  RH_STRIDE,
  RING_EVENTS,
  latencyBin,
  binValue,
  type WindowSegmentViews,
} from './layout.js';
import {
  OutcomeKind,
  addCount,
  addToBin,
  countBucket,
  latencyBucket,
  readDenseCounts,
  readDenseCountSeries,
  readDenseLatency,
  type Counts,
  type LatencySnapshot,
} from './window-dense.js';
import { isDense, makeRoom, promote, pushEvent, readRingCounts, readRingCountSeries, readRingLatency } from './window-ring.js';

export { OutcomeKind, type Counts, type LatencySnapshot };

/** Empties window `w` for reuse (no task may be reading it: the engine frees rules between tasks). */
export function clearWindow(seg: WindowSegmentViews, w: number): void {
  // A promoted window's dense buckets are resident and must be zero again; a compact window's
  // were never written, and touching them would make their pages resident for nothing.
  if (seg.ringHdr[w * RH_STRIDE + RH_DENSE] === 1) {
    const cb = w * COUNT_BUCKETS * CB_STRIDE;
    seg.countHdr.fill(0, cb, cb + COUNT_BUCKETS * CB_STRIDE);
    seg.latBins.fill(0, w * LAT_BUCKETS * LAT_BINS, (w + 1) * LAT_BUCKETS * LAT_BINS);
  }
  seg.ringHdr.fill(0, w * RH_STRIDE, (w + 1) * RH_STRIDE);
  seg.ring.fill(0, w * RING_EVENTS, (w + 1) * RING_EVENTS);
  seg.latEpoch.fill(0, w * LAT_BUCKETS, (w + 1) * LAT_BUCKETS);
  seg.latSum.fill(0, w * LAT_BUCKETS, (w + 1) * LAT_BUCKETS);
}

/** Front thread: add one outcome. No allocation, no await. */
export function recordOutcome(
  seg: WindowSegmentViews,
  w: number,
  nowMs: number,
  kind: OutcomeKind,
  latencyMs: number,
): void {
  const sec = Math.floor(nowMs / COUNT_BUCKET_MS);
  // Latency describes answered requests: a timeout's "latency" is the client's timeout, not the
  // processor's, and it already counts as an error. Keeping timeouts out of the histograms stops
  // a few 15-30 s timeouts in steady noise from inflating p95 into a latency degradation.
  const timedOut = kind === OutcomeKind.Timeout;
  // RH_DENSE is this thread's own field: a plain read suffices.
  if (seg.ringHdr[w * RH_STRIDE + RH_DENSE] !== 1) {
    if (makeRoom(seg, w, sec, 1)) {
      if (!timedOut) seg.latSum[latencyBucket(seg, w, Math.floor(nowMs / LAT_BUCKET_MS), false)] += latencyMs;
      pushEvent(seg, w, sec, kind, timedOut ? EV_NO_LATENCY : latencyBin(latencyMs));
      return;
    }
    promote(seg, w, sec);
  }
  addCount(seg.countHdr, countBucket(seg, w, sec), kind, 1);
  if (timedOut) return;
  const lb = latencyBucket(seg, w, Math.floor(nowMs / LAT_BUCKET_MS), true);
  seg.latSum[lb] += latencyMs;
  addToBin(seg, lb, latencyBin(latencyMs), 1);
}

export function emptyCounts(): Counts {
  return { success: 0, decline: 0, tech: 0, timeout: 0 };
}

/**
 * Worker: sums the counts of the last `horizonMs` (whole 1 s buckets, the current partial one
 * included) into `out`. Buckets being reset, or from other epochs, are skipped.
 */
export function readCounts(
  seg: WindowSegmentViews,
  w: number,
  nowMs: number,
  horizonMs: number,
  out: Counts,
): Counts {
  out.success = out.decline = out.tech = out.timeout = 0;
  const current = Math.floor(nowMs / COUNT_BUCKET_MS);
  const n = Math.min(COUNT_BUCKETS, Math.max(1, Math.ceil(horizonMs / COUNT_BUCKET_MS)));
  if (!isDense(seg, w)) {
    readRingCounts(seg, w, current, n, out);
    if (!isDense(seg, w)) return out;
    // Promoted while we read: the dense buckets hold every outcome, the newest included.
    out.success = out.decline = out.tech = out.timeout = 0;
  }
  readDenseCounts(seg, w, current, n, out);
  return out;
}

/**
 * Worker: the counts of each second of the `n` seconds up to `lastEpoch` (count epochs, ≤ 64):
 * success, decline, technical, timeout at out[4·i .. 4·i + 3] for epoch lastEpoch − n + 1 + i.
 * One pass over the window where n calls of readCounts would read it n times.
 */
export function readCountSeries(seg: WindowSegmentViews, w: number, lastEpoch: number, n: number, out: Int32Array): Int32Array {
  out.fill(0, 0, 4 * n);
  if (!isDense(seg, w)) {
    readRingCountSeries(seg, w, lastEpoch, n, out);
    if (!isDense(seg, w)) return out;
    out.fill(0, 0, 4 * n);
  }
  readDenseCountSeries(seg, w, lastEpoch, n, out);
  return out;
}

export function newLatencySnapshot(): LatencySnapshot {
  return { bins: new Float64Array(LAT_BINS), count: 0, sum: 0 };
}

/** Worker: the merged latency histogram of the last `horizonMs` (whole 5 s buckets). */
export function readLatency(
  seg: WindowSegmentViews,
  w: number,
  nowMs: number,
  horizonMs: number,
  out: LatencySnapshot,
): LatencySnapshot {
  out.bins.fill(0);
  out.count = 0;
  out.sum = 0;
  const current = Math.floor(nowMs / LAT_BUCKET_MS);
  const n = Math.min(LAT_BUCKETS, Math.max(1, Math.ceil(horizonMs / LAT_BUCKET_MS)));
  if (!isDense(seg, w)) {
    readRingLatency(seg, w, current, n, out);
    if (!isDense(seg, w)) return out;
    out.bins.fill(0);
    out.count = 0;
    out.sum = 0;
  }
  readDenseLatency(seg, w, current, n, out);
  return out;
}

/**
 * Nearest-rank percentile (q in (0,1]) from a merged histogram: the representative value of
 * the bin holding the ceil(q·n)-th smallest sample. NaN when empty.
 */
export function percentile(snap: LatencySnapshot, q: number): number {
  if (snap.count <= 0) return NaN;
  const rank = Math.max(1, Math.ceil(q * snap.count));
  let seen = 0;
  for (let i = 0; i < LAT_BINS; i++) {
    seen += snap.bins[i];
    if (seen >= rank) return binValue(i);
  }
  return binValue(LAT_BINS - 1);
}
