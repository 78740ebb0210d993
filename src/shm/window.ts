/**
 * Outcome windows: the front thread records each outcome into the processor's current
 * 1-second count bucket and 5-second latency bucket; a worker reads and merges them.
 *
 * Single writer (the front thread). A bucket that belongs to an older epoch is reset in
 * place on first write: its epoch is set to -1 (Atomics) while zeroing and to the new
 * epoch after, so a reader that sees the same valid epoch before and after reading a
 * bucket has read a consistent (if slightly old) snapshot.
 */
import {
  CB_DECLINE,
  CB_EPOCH,
  CB_STRIDE,
  CB_SUCCESS,
  CB_TECH_ERROR,
  CB_TIMEOUT,
  COUNT_BUCKET_MS,
  COUNT_BUCKETS,
  LAT_BINS,
  LAT_BUCKET_MS,
  LAT_BUCKETS,
  latencyBin,
  binValue,
  type WindowSegmentViews,
} from './layout.js';

export const enum OutcomeKind {
  Success = 0,
  Decline = 1,
  TechError = 2,
  Timeout = 3, // a technical error that was a timeout
}

export function clearWindow(seg: WindowSegmentViews, w: number): void {
  const cb = w * COUNT_BUCKETS * CB_STRIDE;
  seg.countHdr.fill(0, cb, cb + COUNT_BUCKETS * CB_STRIDE);
  seg.latEpoch.fill(0, w * LAT_BUCKETS, (w + 1) * LAT_BUCKETS);
  seg.latSum.fill(0, w * LAT_BUCKETS, (w + 1) * LAT_BUCKETS);
  seg.latBins.fill(0, w * LAT_BUCKETS * LAT_BINS, (w + 1) * LAT_BUCKETS * LAT_BINS);
}

/** Front thread: add one outcome. No allocation, no await. */
export function recordOutcome(
  seg: WindowSegmentViews,
  w: number,
  nowMs: number,
  kind: OutcomeKind,
  latencyMs: number,
): void {
  const countEpoch = Math.floor(nowMs / COUNT_BUCKET_MS);
  const hdr = seg.countHdr;
  const cb = (w * COUNT_BUCKETS + (countEpoch % COUNT_BUCKETS)) * CB_STRIDE;
  if (hdr[cb + CB_EPOCH] !== countEpoch) {
    Atomics.store(hdr, cb + CB_EPOCH, -1);
    hdr[cb + CB_SUCCESS] = 0;
    hdr[cb + CB_DECLINE] = 0;
    hdr[cb + CB_TECH_ERROR] = 0;
    hdr[cb + CB_TIMEOUT] = 0;
    Atomics.store(hdr, cb + CB_EPOCH, countEpoch);
  }
  switch (kind) {
    case OutcomeKind.Success:
      hdr[cb + CB_SUCCESS]++;
      break;
    case OutcomeKind.Decline:
      hdr[cb + CB_DECLINE]++;
      break;
    case OutcomeKind.Timeout:
      hdr[cb + CB_TIMEOUT]++;
      hdr[cb + CB_TECH_ERROR]++;
      break;
    default:
      hdr[cb + CB_TECH_ERROR]++;
  }

  // Latency describes answered requests: a timeout's "latency" is the client's timeout, not the
  // processor's, and it already counts as an error. Keeping timeouts out of the sketch stops a
  // few 15-30 s timeouts in steady noise from inflating p95 into a latency degradation.
  if (kind === OutcomeKind.Timeout) return;
  const latEpoch = Math.floor(nowMs / LAT_BUCKET_MS);
  const lb = w * LAT_BUCKETS + (latEpoch % LAT_BUCKETS);
  const bins = seg.latBins;
  const binBase = lb * LAT_BINS;
  if (seg.latEpoch[lb] !== latEpoch) {
    Atomics.store(seg.latEpoch, lb, -1);
    seg.latSum[lb] = 0;
    bins.fill(0, binBase, binBase + LAT_BINS);
    Atomics.store(seg.latEpoch, lb, latEpoch);
  }
  seg.latSum[lb] += latencyMs;
  const b = binBase + latencyBin(latencyMs);
  if (bins[b] < 0xffff) bins[b]++;
}

/** Counts over a trailing horizon. */
export interface Counts {
  success: number;
  decline: number;
  tech: number;
  timeout: number;
}

export function emptyCounts(): Counts {
  return { success: 0, decline: 0, tech: 0, timeout: 0 };
}

/**
 * Worker: sums the count buckets of the last `horizonMs` (whole buckets, the current
 * partial one included) into `out`. Buckets being reset, or from other epochs, are skipped.
 */
export function readCounts(
  seg: WindowSegmentViews,
  w: number,
  nowMs: number,
  horizonMs: number,
  out: Counts,
): Counts {
  out.success = out.decline = out.tech = out.timeout = 0;
  const hdr = seg.countHdr;
  const current = Math.floor(nowMs / COUNT_BUCKET_MS);
  const n = Math.min(COUNT_BUCKETS, Math.max(1, Math.ceil(horizonMs / COUNT_BUCKET_MS)));
  for (let e = current - n + 1; e <= current; e++) {
    const cb = (w * COUNT_BUCKETS + (e % COUNT_BUCKETS)) * CB_STRIDE;
    if (Atomics.load(hdr, cb + CB_EPOCH) !== e) continue;
    const s = hdr[cb + CB_SUCCESS];
    const d = hdr[cb + CB_DECLINE];
    const t = hdr[cb + CB_TECH_ERROR];
    const to = hdr[cb + CB_TIMEOUT];
    if (Atomics.load(hdr, cb + CB_EPOCH) !== e) continue;
    out.success += s;
    out.decline += d;
    out.tech += t;
    out.timeout += to;
  }
  return out;
}

/** Merged latency histogram of the last `horizonMs`. */
export interface LatencySnapshot {
  bins: Float64Array; // length LAT_BINS; reused by the caller across slots
  count: number;
  sum: number;
}

export function newLatencySnapshot(): LatencySnapshot {
  return { bins: new Float64Array(LAT_BINS), count: 0, sum: 0 };
}

/** Words of two bins in a bucket (LAT_BINS is even). */
const LAT_WORDS = LAT_BINS / 2;
const scratch = new Uint32Array(LAT_WORDS);
/** In a word of latBins32, the lower-numbered bin is the low half on a little-endian machine. */
const LOW_HALF_FIRST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

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
  for (let e = current - n + 1; e <= current; e++) {
    const lb = w * LAT_BUCKETS + (e % LAT_BUCKETS);
    if (Atomics.load(seg.latEpoch, lb) !== e) continue;
    // Copy first, then confirm the bucket was not reset while we copied. A word at a time:
    // most of a bucket's bins are empty, and this is the largest part of an evaluation.
    const words = seg.latBins32;
    const base = lb * LAT_WORDS;
    for (let i = 0; i < LAT_WORDS; i++) scratch[i] = words[base + i];
    const sum = seg.latSum[lb];
    if (Atomics.load(seg.latEpoch, lb) !== e) continue;
    let c = 0;
    for (let i = 0; i < LAT_WORDS; i++) {
      const v = scratch[i];
      if (v === 0) continue;
      const low = v & 0xffff;
      const high = v >>> 16;
      out.bins[2 * i] += LOW_HALF_FIRST ? low : high;
      out.bins[2 * i + 1] += LOW_HALF_FIRST ? high : low;
      c += low + high;
    }
    out.count += c;
    out.sum += sum;
  }
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
