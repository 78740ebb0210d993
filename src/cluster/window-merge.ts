/**
 * Adds another replica's outcome delta to one of this replica's windows. Runs on the front
 * thread, the windows' single writer, and follows recordOutcome's protocol (shm/window.ts): a
 * dense bucket of an older epoch is reset in place, a compact window takes the delta as events,
 * so worker reads stay consistent. A delta for a bucket already reused by a newer epoch is too
 * old and dropped; one more than a few seconds ahead of our clock is dropped too (it would
 * overwrite live history).
 */
import {
  CB_EPOCH,
  CB_STRIDE,
  COUNT_BUCKET_MS,
  COUNT_BUCKETS,
  EV_LATENCY_ONLY,
  EV_NO_LATENCY,
  LAT_BUCKET_MS,
  LAT_BUCKETS,
  RH_COUNT,
  RH_DENSE,
  RH_LAST_SEC,
  RH_START,
  RH_STRIDE,
  type WindowSegmentViews,
} from '../shm/layout.js';
import { addCount, addToBin, countBucket, latencyBucket, OutcomeKind } from '../shm/window-dense.js';
import { makeRoom, promote, pushEvent } from '../shm/window-ring.js';
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
  const latEpoch = latEpochOf(epoch);
  // The counts are merged either way; a latency bucket already reused by a newer epoch keeps its data.
  const withLatency = (e.nBins > 0 || e.latSum !== 0) && !(seg.latEpoch[w * LAT_BUCKETS + (latEpoch % LAT_BUCKETS)] > latEpoch);
  if (seg.ringHdr[w * RH_STRIDE + RH_DENSE] !== 1) {
    const merged = mergeIntoRing(seg, w, e, current, withLatency ? latEpoch : -1);
    if (merged !== undefined) return merged;
    promote(seg, w, current);
  }
  const hdr = seg.countHdr;
  if (hdr[(w * COUNT_BUCKETS + (epoch % COUNT_BUCKETS)) * CB_STRIDE + CB_EPOCH] > epoch) return MergeResult.TooOld;
  const cb = countBucket(seg, w, epoch);
  addCount(hdr, cb, OutcomeKind.Success, e.success);
  addCount(hdr, cb, OutcomeKind.Decline, e.decline);
  // Technical errors, of which `timeout` were timeouts (Timeout adds to both counts).
  const timeouts = Math.min(e.timeout, e.tech);
  addCount(hdr, cb, OutcomeKind.Timeout, timeouts);
  addCount(hdr, cb, OutcomeKind.TechError, e.tech - timeouts);

  if (!withLatency) return MergeResult.Merged;
  const lb = latencyBucket(seg, w, latEpoch, true);
  seg.latSum[lb] += e.latSum;
  for (let j = 0; j < e.nBins; j++) addToBin(seg, lb, e.binIndex[j], e.binCount[j]);
  return MergeResult.Merged;
}

/**
 * A compact window takes the delta as events (`latEpoch`: the latency bucket its latencies go
 * to, -1 to leave them out): each latency bin paired with a count of a kind that
 * has latencies (success, decline, a technical error that was not a timeout), the rest as count-
 * or latency-only events. Undefined when they do not fit: the caller promotes the window.
 */
function mergeIntoRing(seg: WindowSegmentViews, w: number, e: DeltaEntry, current: number, latEpoch: number): MergeResult | undefined {
  const epoch = e.countEpoch;
  const rb = w * RH_STRIDE;
  // Older than the window's newest outcome by the whole horizon: dead on arrival, as a dense bucket reused since.
  if (seg.ringHdr[rb + RH_COUNT] > seg.ringHdr[rb + RH_START] && epoch <= seg.ringHdr[rb + RH_LAST_SEC] - COUNT_BUCKETS) return MergeResult.TooOld;
  const timeouts = Math.min(e.timeout, e.tech);
  const kinds = e.success + e.decline + (e.tech - timeouts);
  // Without latency (latEpoch -1: its bucket was reused by a newer epoch) the bins are not taken.
  const nBins = latEpoch >= 0 ? e.nBins : 0;
  let bins = 0;
  for (let j = 0; j < nBins; j++) bins += e.binCount[j];
  if (!makeRoom(seg, w, current, Math.max(kinds, bins) + timeouts)) return undefined;

  let j = 0;
  let left = nBins > 0 ? e.binCount[0] : 0;
  for (let k = OutcomeKind.Success; k <= OutcomeKind.TechError; k++) {
    const n = k === OutcomeKind.Success ? e.success : k === OutcomeKind.Decline ? e.decline : e.tech - timeouts;
    for (let i = 0; i < n; i++) {
      while (left === 0 && j + 1 < nBins) left = e.binCount[++j];
      const bin = left > 0 ? e.binIndex[j] : EV_NO_LATENCY;
      if (left > 0) left--;
      pushEvent(seg, w, epoch, k, bin);
    }
  }
  for (let i = 0; i < timeouts; i++) pushEvent(seg, w, epoch, OutcomeKind.Timeout, EV_NO_LATENCY);
  for (;;) {
    while (left === 0 && j + 1 < nBins) left = e.binCount[++j];
    if (left === 0) break;
    left--;
    pushEvent(seg, w, epoch, EV_LATENCY_ONLY, e.binIndex[j]);
  }
  if (latEpoch >= 0) seg.latSum[latencyBucket(seg, w, latEpoch, false)] += e.latSum;
  return MergeResult.Merged;
}

function latEpochOf(countEpoch: number): number {
  return Math.floor((countEpoch * COUNT_BUCKET_MS) / LAT_BUCKET_MS);
}
