/** Outcome deltas: encode on one replica, merge on another, the windows agree. */
import { describe, expect, it } from 'vitest';
import { decodeDeltas, DeltaRecorder } from '../../src/cluster/outcome-delta.js';
import { MergeResult, mergeDelta } from '../../src/cluster/window-merge.js';
import { COUNT_BUCKETS, WINDOW_MASK, WINDOW_SHIFT } from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { isDense } from '../../src/shm/window-ring.js';
import { emptyCounts, newLatencySnapshot, OutcomeKind, readCounts, readLatency, recordOutcome } from '../../src/shm/window.js';

function windowOf(t: SharedTables) {
  const w = t.allocWindow();
  return { seg: t.windowSegs[w >> WINDOW_SHIFT], w: w & WINDOW_MASK, index: w };
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('outcome deltas', () => {
  it.each([
    { traffic: 'busy (dense windows)', outcomes: 5000, maxGapMs: 12, batchEvery: 97, dense: true },
    { traffic: 'quiet (compact windows)', outcomes: 400, maxGapMs: 3000, batchEvery: 5, dense: false },
  ])('two replicas recording halves of the traffic each end with the whole, equal to one window that saw everything: $traffic', ({ outcomes, maxGapMs, batchEvery, dense }) => {
    const a = new SharedTables();
    const b = new SharedTables();
    const all = new SharedTables();
    const wa = windowOf(a);
    const wb = windowOf(b);
    const wall = windowOf(all);
    const ra = new DeltaRecorder();
    const rb = new DeltaRecorder();
    const key = 123456789012345;
    const rand = rng(7);
    const t0 = 1_800_000_000_000;
    const kinds = [OutcomeKind.Success, OutcomeKind.Decline, OutcomeKind.TechError, OutcomeKind.Timeout];
    let t = t0;
    for (let i = 0; i < outcomes; i++) {
      t += Math.floor(rand() * maxGapMs); // ~60 s of busy traffic, or ten minutes of ~0.7 a second
      const kind = kinds[Math.floor(rand() * 4)];
      const lat = 1 + rand() * 3000;
      recordOutcome(wall.seg, wall.w, t, kind, lat);
      const [seg, w, rec, idx] = i % 2 === 0 ? [wa.seg, wa.w, ra, wa.index] : [wb.seg, wb.w, rb, wb.index];
      recordOutcome(seg, w, t, kind, lat);
      rec.record(key, idx, t, kind, lat);
      if (i % batchEvery === 0) {
        // A batch: each merges the other's.
        const da = ra.take();
        const db = rb.take();
        if (da) decodeDeltas(da, (e) => expect(mergeDelta(wb.seg, wb.w, e, t)).toBe(MergeResult.Merged));
        if (db) decodeDeltas(db, (e) => expect(mergeDelta(wa.seg, wa.w, e, t)).toBe(MergeResult.Merged));
      }
    }
    const da = ra.take();
    const db = rb.take();
    if (da) decodeDeltas(da, (e) => mergeDelta(wb.seg, wb.w, e, t));
    if (db) decodeDeltas(db, (e) => mergeDelta(wa.seg, wa.w, e, t));
    for (const x of [wa, wb, wall]) expect(isDense(x.seg, x.w)).toBe(dense);
    for (const horizon of [1000, 5000, 30_000, 60_000]) {
      const want = readCounts(wall.seg, wall.w, t, horizon, emptyCounts());
      expect(want.success + want.decline + want.tech).toBeGreaterThan(0);
      expect(readCounts(wa.seg, wa.w, t, horizon, emptyCounts())).toEqual(want);
      expect(readCounts(wb.seg, wb.w, t, horizon, emptyCounts())).toEqual(want);
      const wantLat = readLatency(wall.seg, wall.w, t, horizon, newLatencySnapshot());
      for (const x of [wa, wb]) {
        const got = readLatency(x.seg, x.w, t, horizon, newLatencySnapshot());
        expect(got.count).toBe(wantLat.count);
        expect(Array.from(got.bins)).toEqual(Array.from(wantLat.bins));
        expect(got.sum).toBeCloseTo(wantLat.sum, 3);
      }
    }
  });

  it('a batch is compact: bytes grow with the windows touched, not with the outcomes', () => {
    const r = new DeltaRecorder();
    const t = 1_800_000_000_000;
    for (let i = 0; i < 10_000; i++) r.record(42, 0, t + (i % 200), OutcomeKind.Success, 200 + (i % 5));
    const buf = r.take()!;
    expect(buf.length).toBeLessThan(60);
    expect(r.take()).toBeNull();
    let n = 0;
    decodeDeltas(buf, (e) => {
      n++;
      expect(e.success).toBe(10_000);
    });
    expect(n).toBe(1);
  });

  it('deltas too old for the window, or too far ahead of our clock, are refused', () => {
    const t = new SharedTables();
    const x = windowOf(t);
    const r = new DeltaRecorder();
    const now = 1_800_000_000_000;
    r.record(1, 0, now - (COUNT_BUCKETS + 1) * 1000, OutcomeKind.Success, 10);
    r.record(1, 0, now + 60_000, OutcomeKind.Success, 10);
    const got: MergeResult[] = [];
    decodeDeltas(r.take()!, (e) => got.push(mergeDelta(x.seg, x.w, e, now)));
    expect(got).toEqual([MergeResult.TooOld, MergeResult.TooNew]);
  });

  it('a truncated or foreign message is a format error, not a crash', () => {
    const r = new DeltaRecorder();
    r.record(1, 0, 1_800_000_000_000, OutcomeKind.TechError, 10);
    const buf = r.take()!;
    expect(() => decodeDeltas(buf.subarray(0, buf.length - 3), () => {})).toThrow(/truncated/);
    expect(() => decodeDeltas(Buffer.from([9, 0, 0]), () => {})).toThrow(/format/);
  });
});
