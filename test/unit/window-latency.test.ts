/**
 * readLatency merges a promoted window's latency buckets into one histogram, reading the shared
 * bins two at a time (32-bit words). Checked against the plain 16-bit reading, bin by bin, for both bins
 * of a word, the horizon's buckets only, and a bucket reused for a later epoch.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LAT_BINS, LAT_BUCKET_MS, LAT_BUCKETS, latencyBin, windowSegmentBytes, windowSegmentViews } from '../../src/shm/layout.js';
import { newLatencySnapshot, OutcomeKind, percentile, readLatency, recordOutcome } from '../../src/shm/window.js';
import { isDense, promote } from '../../src/shm/window-ring.js';

/**
 * The dense buckets' histogram of the buckets of epochs (now − n, now], read bin by bin from the
 * 16-bit view. Meaningful for a promoted window only: a compact one keeps no bins there.
 */
function denseReference(seg: ReturnType<typeof windowSegmentViews>, w: number, nowMs: number, horizonMs: number) {
  const bins = new Float64Array(LAT_BINS);
  let count = 0;
  const current = Math.floor(nowMs / LAT_BUCKET_MS);
  const n = Math.min(LAT_BUCKETS, Math.max(1, Math.ceil(horizonMs / LAT_BUCKET_MS)));
  for (let e = current - n + 1; e <= current; e++) {
    const lb = w * LAT_BUCKETS + (e % LAT_BUCKETS);
    if (seg.latEpoch[lb] !== e) continue;
    for (let i = 0; i < LAT_BINS; i++) {
      bins[i] += seg.latBins[lb * LAT_BINS + i];
      count += seg.latBins[lb * LAT_BINS + i];
    }
  }
  return { bins, count };
}

describe('readLatency', () => {
  it('of a promoted window equals the bin-by-bin reading for any outcomes, horizon and window (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ atMs: fc.integer({ min: 0, max: 90_000 }), latencyMs: fc.double({ min: 0, max: 120_000, noNaN: true }) }), { maxLength: 300 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 70_000 }),
        (outcomes, w, horizonMs) => {
          const seg = windowSegmentViews(new SharedArrayBuffer(windowSegmentBytes()));
          const base = 1_000_000_000;
          // Promoted before its first outcome: every outcome goes to the dense buckets.
          promote(seg, w, Math.floor(base / 1000));
          outcomes.sort((a, b) => a.atMs - b.atMs);
          for (const o of outcomes) recordOutcome(seg, w, base + o.atMs, OutcomeKind.Success, o.latencyMs);
          const nowMs = base + 90_000;
          const got = readLatency(seg, w, nowMs, horizonMs, newLatencySnapshot());
          const want = denseReference(seg, w, nowMs, horizonMs);
          expect(Array.from(got.bins)).toEqual(Array.from(want.bins));
          expect(got.count).toBe(want.count);
        },
      ),
      { numRuns: 200, seed: 7 },
    );
  });

  it('counts both bins of a word, and the p95 lands in the right one', () => {
    const seg = windowSegmentViews(new SharedArrayBuffer(windowSegmentBytes()));
    const now = 1_000_000_000;
    // Two latencies whose bins share a word (an even bin and the odd one after it).
    let even = 10;
    while (latencyBin(even) % 2 !== 0) even += 1;
    let odd = even;
    while (latencyBin(odd) === latencyBin(even)) odd *= 1.01;
    expect(latencyBin(odd)).toBe(latencyBin(even) + 1);
    for (let i = 0; i < 5; i++) recordOutcome(seg, 0, now, OutcomeKind.Success, even);
    for (let i = 0; i < 95; i++) recordOutcome(seg, 0, now, OutcomeKind.Success, odd);
    const snap = readLatency(seg, 0, now, 60_000, newLatencySnapshot());
    expect(isDense(seg, 0)).toBe(true); // 100 outcomes in a second: promoted
    expect(snap.count).toBe(100);
    expect(snap.bins[latencyBin(even)]).toBe(5);
    expect(snap.bins[latencyBin(odd)]).toBe(95);
    expect(latencyBin(percentile(snap, 0.95))).toBe(latencyBin(odd));
    expect(latencyBin(percentile(snap, 0.05))).toBe(latencyBin(even));
  });
});
