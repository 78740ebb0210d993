/**
 * A promoted window's dense buckets (layout.ts, "outcome windows"): per-second count buckets and
 * per-5-second latency histograms, each reset in place when first written in a new epoch.
 *
 * Single writer (the front thread). A bucket that belongs to an older epoch is reset in place on
 * first write: its epoch is set to -1 (Atomics) while zeroing and to the new epoch after, so a
 * reader that sees the same valid epoch before and after reading a bucket has read a consistent
 * (if slightly old) snapshot.
 */
import {
  CB_DECLINE,
  CB_EPOCH,
  CB_STRIDE,
  CB_SUCCESS,
  CB_TECH_ERROR,
  CB_TIMEOUT,
  COUNT_BUCKETS,
  LAT_BINS,
  LAT_BUCKETS,
  type WindowSegmentViews,
} from './layout.js';

export const enum OutcomeKind {
  Success = 0,
  Decline = 1,
  TechError = 2,
  Timeout = 3, // a technical error that was a timeout
}

/** Counts over a trailing horizon. */
export interface Counts {
  success: number;
  decline: number;
  tech: number;
  timeout: number;
}

/** Merged latency histogram of the last `horizonMs`. */
export interface LatencySnapshot {
  bins: Float64Array; // length LAT_BINS; reused by the caller across slots
  count: number;
  sum: number;
}

/** Offset of count epoch `epoch`'s bucket in `countHdr`, reset first if it held an older epoch. */
export function countBucket(seg: WindowSegmentViews, w: number, epoch: number): number {
  const hdr = seg.countHdr;
  const cb = (w * COUNT_BUCKETS + (epoch % COUNT_BUCKETS)) * CB_STRIDE;
  if (hdr[cb + CB_EPOCH] !== epoch) {
    Atomics.store(hdr, cb + CB_EPOCH, -1);
    hdr[cb + CB_SUCCESS] = 0;
    hdr[cb + CB_DECLINE] = 0;
    hdr[cb + CB_TECH_ERROR] = 0;
    hdr[cb + CB_TIMEOUT] = 0;
    Atomics.store(hdr, cb + CB_EPOCH, epoch);
  }
  return cb;
}

/** Adds `n` outcomes of `kind` to the count bucket at `cb`. */
export function addCount(hdr: Int32Array, cb: number, kind: OutcomeKind, n: number): void {
  switch (kind) {
    case OutcomeKind.Success:
      hdr[cb + CB_SUCCESS] += n;
      break;
    case OutcomeKind.Decline:
      hdr[cb + CB_DECLINE] += n;
      break;
    case OutcomeKind.Timeout:
      hdr[cb + CB_TIMEOUT] += n;
      hdr[cb + CB_TECH_ERROR] += n;
      break;
    default:
      hdr[cb + CB_TECH_ERROR] += n;
  }
}

/**
 * Index of latency epoch `latEpoch`'s bucket (in latEpoch / latSum; its bins start at
 * index × LAT_BINS), reset first if it held an older epoch. `withBins`: a promoted window's
 * bucket, whose histogram is reset too; a compact window keeps only the sum here, and its dense
 * bins stay zero (and their pages untouched) until it is promoted.
 */
export function latencyBucket(seg: WindowSegmentViews, w: number, latEpoch: number, withBins: boolean): number {
  const lb = w * LAT_BUCKETS + (latEpoch % LAT_BUCKETS);
  if (seg.latEpoch[lb] !== latEpoch) {
    Atomics.store(seg.latEpoch, lb, -1);
    seg.latSum[lb] = 0;
    if (withBins) seg.latBins.fill(0, lb * LAT_BINS, (lb + 1) * LAT_BINS);
    Atomics.store(seg.latEpoch, lb, latEpoch);
  }
  return lb;
}

/** Adds `n` samples to bin `bin` of the latency bucket `lb`, saturating at 0xffff. */
export function addToBin(seg: WindowSegmentViews, lb: number, bin: number, n: number): void {
  const b = lb * LAT_BINS + bin;
  const v = seg.latBins[b] + n;
  seg.latBins[b] = v < 0xffff ? v : 0xffff;
}

/** Count bucket scratch: success, decline, technical, timeout of the bucket copyCountBucket read. */
const bucket = new Int32Array(4);

/**
 * Copies the count bucket of epoch `e` into `bucket`; false when the bucket holds another epoch
 * or was reset while we read.
 */
function copyCountBucket(hdr: Int32Array, w: number, e: number): boolean {
  const cb = (w * COUNT_BUCKETS + (e % COUNT_BUCKETS)) * CB_STRIDE;
  if (Atomics.load(hdr, cb + CB_EPOCH) !== e) return false;
  bucket[0] = hdr[cb + CB_SUCCESS];
  bucket[1] = hdr[cb + CB_DECLINE];
  bucket[2] = hdr[cb + CB_TECH_ERROR];
  bucket[3] = hdr[cb + CB_TIMEOUT];
  return Atomics.load(hdr, cb + CB_EPOCH) === e;
}

/**
 * Sums the count buckets of epochs (current − n, current] into `out` (which the caller zeroed).
 * Buckets being reset, or from other epochs, are skipped.
 */
export function readDenseCounts(seg: WindowSegmentViews, w: number, current: number, n: number, out: Counts): void {
  for (let e = current - n + 1; e <= current; e++) {
    if (!copyCountBucket(seg.countHdr, w, e)) continue;
    out.success += bucket[0];
    out.decline += bucket[1];
    out.tech += bucket[2];
    out.timeout += bucket[3];
  }
}

/** Words of two bins in a bucket (LAT_BINS is even). */
const LAT_WORDS = LAT_BINS / 2;
const scratch = new Uint32Array(LAT_WORDS);
/** In a word of latBins32, the lower-numbered bin is the low half on a little-endian machine. */
const LOW_HALF_FIRST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Adds the histograms and sums of latency epochs (current − n, current] to `out` (zeroed by the caller). */
export function readDenseLatency(seg: WindowSegmentViews, w: number, current: number, n: number, out: LatencySnapshot): void {
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
}

/** Per-second counts of epochs (last − n, last] into `out`, as readCountSeries (window.ts) lays them out. */
export function readDenseCountSeries(seg: WindowSegmentViews, w: number, last: number, n: number, out: Int32Array): void {
  const first = last - n + 1;
  for (let e = first; e <= last; e++) if (copyCountBucket(seg.countHdr, w, e)) out.set(bucket, 4 * (e - first));
}
