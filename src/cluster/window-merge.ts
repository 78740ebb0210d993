/**
 * Adds another replica's outcome delta to one of this replica's windows. Runs on the front
 * thread, the windows' single writer, and follows recordOutcome's protocol: a bucket of an
 * older epoch is reset in place (epoch -1 while zeroing, Atomics), so worker reads stay
 * consistent. A delta for a bucket already reused by a newer epoch is too old and dropped; one
 * more than a few seconds ahead of our clock is dropped too (it would overwrite live history).
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
  type WindowSegmentViews,
} from '../shm/layout.js';
import type { DeltaEntry } from './outcome-delta.js';

/** Seconds a remote clock may run ahead of ours before its deltas are refused. */
export const MAX_FUTURE_EPOCHS = 5;

export const enum MergeResult {
  Merged = 0,
  TooOld = 1,
  TooNew = 2,
}

export function mergeDelta(seg: WindowSegmentViews, w: number, e: DeltaEntry, nowMs: number): MergeResult {
  const current = Math.floor(nowMs / COUNT_BUCKET_MS);
  const epoch = e.countEpoch;
  if (epoch > current + MAX_FUTURE_EPOCHS) return MergeResult.TooNew;
  if (epoch <= current - COUNT_BUCKETS) return MergeResult.TooOld;
  const hdr = seg.countHdr;
  const cb = (w * COUNT_BUCKETS + (epoch % COUNT_BUCKETS)) * CB_STRIDE;
  const have = hdr[cb + CB_EPOCH];
  if (have > epoch) return MergeResult.TooOld;
  if (have !== epoch) {
    Atomics.store(hdr, cb + CB_EPOCH, -1);
    hdr[cb + CB_SUCCESS] = 0;
    hdr[cb + CB_DECLINE] = 0;
    hdr[cb + CB_TECH_ERROR] = 0;
    hdr[cb + CB_TIMEOUT] = 0;
    Atomics.store(hdr, cb + CB_EPOCH, epoch);
  }
  hdr[cb + CB_SUCCESS] += e.success;
  hdr[cb + CB_DECLINE] += e.decline;
  hdr[cb + CB_TECH_ERROR] += e.tech;
  hdr[cb + CB_TIMEOUT] += e.timeout;

  if (e.nBins === 0 && e.latSum === 0) return MergeResult.Merged;
  const latEpoch = Math.floor((epoch * COUNT_BUCKET_MS) / LAT_BUCKET_MS);
  const lb = w * LAT_BUCKETS + (latEpoch % LAT_BUCKETS);
  const haveLat = seg.latEpoch[lb];
  // The counts were merged; a latency bucket already reused by a newer epoch keeps its data.
  if (haveLat > latEpoch) return MergeResult.Merged;
  const bins = seg.latBins;
  const binBase = lb * LAT_BINS;
  if (haveLat !== latEpoch) {
    Atomics.store(seg.latEpoch, lb, -1);
    seg.latSum[lb] = 0;
    bins.fill(0, binBase, binBase + LAT_BINS);
    Atomics.store(seg.latEpoch, lb, latEpoch);
  }
  seg.latSum[lb] += e.latSum;
  for (let j = 0; j < e.nBins; j++) {
    const b = binBase + e.binIndex[j];
    bins[b] = Math.min(0xffff, bins[b] + e.binCount[j]);
  }
  return MergeResult.Merged;
}
