/**
 * Compact windows (shm/window-ring.ts): a window keeps its last outcomes as a ring of events
 * until it is busy, then is promoted to dense buckets. Whatever form a window is in, readers
 * must see what the outcomes say: checked against the outcomes themselves and against a window
 * promoted before its first outcome, for counts, per-second series and latency histograms.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { COUNT_BUCKETS, LAT_BINS, LAT_BUCKET_MS, RH_COUNT, RH_STRIDE, RH_WRITING, RING_EVENTS, latencyBin, windowSegmentBytes, windowSegmentViews } from '../../src/shm/layout.js';
import {
  clearWindow,
  emptyCounts,
  newLatencySnapshot,
  OutcomeKind,
  readCounts,
  readCountSeries,
  readLatency,
  recordOutcome,
} from '../../src/shm/window.js';
import { isDense, promote } from '../../src/shm/window-ring.js';

const BASE_MS = 1_700_000_000_000;

interface Outcome {
  atMs: number;
  kind: OutcomeKind;
  latencyMs: number;
}

const newSegment = () => windowSegmentViews(new SharedArrayBuffer(windowSegmentBytes()));

/** What the outcomes say for the count horizon of n seconds ending at `nowMs`'s second. */
function expectedCounts(outcomes: readonly Outcome[], nowMs: number, n: number) {
  const current = Math.floor(nowMs / 1000);
  const c = { success: 0, decline: 0, tech: 0, timeout: 0 };
  for (const o of outcomes) {
    const e = Math.floor(o.atMs / 1000);
    if (e <= current - n || e > current) continue;
    if (o.kind === OutcomeKind.Success) c.success++;
    else if (o.kind === OutcomeKind.Decline) c.decline++;
    else {
      c.tech++;
      if (o.kind === OutcomeKind.Timeout) c.timeout++;
    }
  }
  return c;
}

/** What the outcomes say for the latency horizon of n 5-second buckets ending at `nowMs`'s. */
function expectedLatency(outcomes: readonly Outcome[], nowMs: number, n: number) {
  const current = Math.floor(nowMs / LAT_BUCKET_MS);
  const bins = new Float64Array(LAT_BINS);
  let count = 0;
  let sum = 0;
  for (const o of outcomes) {
    const e = Math.floor(o.atMs / LAT_BUCKET_MS);
    if (o.kind === OutcomeKind.Timeout || e <= current - n || e > current) continue;
    bins[latencyBin(o.latencyMs)]++;
    count++;
    sum += o.latencyMs;
  }
  return { bins: Array.from(bins), count, sum };
}

const outcomeArb = (spanMs: number) =>
  fc.record({
    atMs: fc.integer({ min: 0, max: spanMs }),
    kind: fc.constantFrom(OutcomeKind.Success, OutcomeKind.Decline, OutcomeKind.TechError, OutcomeKind.Timeout),
    latencyMs: fc.double({ min: 0, max: 60_000, noNaN: true }),
  });

describe('a window, compact or promoted', () => {
  it('reads what its outcomes say, and the same as a window promoted from the start (property)', () => {
    fc.assert(
      fc.property(
        fc.array(outcomeArb(200_000), { maxLength: 400, size: 'max' }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 10_000 }),
        (raw, w, afterMs) => {
          const outcomes = raw.map((o) => ({ ...o, atMs: BASE_MS + o.atMs })).sort((a, b) => a.atMs - b.atMs);
          const compact = newSegment();
          const dense = newSegment();
          promote(dense, w, Math.floor(BASE_MS / 1000));
          for (const o of outcomes) {
            recordOutcome(compact, w, o.atMs, o.kind, o.latencyMs);
            recordOutcome(dense, w, o.atMs, o.kind, o.latencyMs);
          }
          const nowMs = (outcomes.at(-1)?.atMs ?? BASE_MS) + afterMs;
          for (const horizonS of [1, 5, 15, 30, 60, 64]) {
            const want = expectedCounts(outcomes, nowMs, horizonS);
            expect(readCounts(compact, w, nowMs, horizonS * 1000, emptyCounts())).toEqual(want);
            expect(readCounts(dense, w, nowMs, horizonS * 1000, emptyCounts())).toEqual(want);
          }
          for (const horizonMs of [5_000, 15_000, 60_000]) {
            const want = expectedLatency(outcomes, nowMs, horizonMs / LAT_BUCKET_MS);
            for (const seg of [compact, dense]) {
              const got = readLatency(seg, w, nowMs, horizonMs, newLatencySnapshot());
              expect(Array.from(got.bins)).toEqual(want.bins);
              expect(got.count).toBe(want.count);
              expect(got.sum).toBeCloseTo(want.sum, 6);
            }
          }
          const last = Math.floor(nowMs / 1000);
          const series = readCountSeries(compact, w, last, 60, new Int32Array(240));
          expect(Array.from(series)).toEqual(Array.from(readCountSeries(dense, w, last, 60, new Int32Array(240))));
          for (const x of [0, 30, 59]) {
            const c = expectedCounts(outcomes, (last - 59 + x) * 1000, 1);
            expect(Array.from(series.subarray(4 * x, 4 * x + 4))).toEqual([c.success, c.decline, c.tech, c.timeout]);
          }
        },
      ),
      { numRuns: 300, seed: 11 },
    );
  });

  it('reads every outcome of the last minute whatever order they were recorded in (property)', () => {
    fc.assert(
      fc.property(fc.array(outcomeArb(59_000), { maxLength: 200, size: 'max' }), fc.integer({ min: 0, max: 900 }), (raw, afterMs) => {
        // Unsorted: a clock stepped back, or a remote replica's delta for an earlier second.
        const outcomes = raw.map((o) => ({ ...o, atMs: BASE_MS + o.atMs }));
        const seg = newSegment();
        for (const o of outcomes) recordOutcome(seg, 0, o.atMs, o.kind, o.latencyMs);
        const nowMs = BASE_MS + 59_000 + afterMs;
        expect(readCounts(seg, 0, nowMs, 64_000, emptyCounts())).toEqual(expectedCounts(outcomes, nowMs, 64));
        const want = expectedLatency(outcomes, nowMs, 12);
        const got = readLatency(seg, 0, nowMs, 60_000, newLatencySnapshot());
        expect([Array.from(got.bins), got.count]).toEqual([want.bins, want.count]);
      }),
      { numRuns: 200, seed: 5 },
    );
  });

  it('holds exactly RING_EVENTS outcomes compact, every one counted', () => {
    const seg = newSegment();
    for (let i = 0; i < RING_EVENTS; i++) recordOutcome(seg, 5, BASE_MS + i, OutcomeKind.Success, 10);
    expect(isDense(seg, 5)).toBe(false);
    expect(readCounts(seg, 5, BASE_MS, 1000, emptyCounts()).success).toBe(RING_EVENTS);
    expect(readLatency(seg, 5, BASE_MS, 5000, newLatencySnapshot()).count).toBe(RING_EVENTS);
    recordOutcome(seg, 5, BASE_MS + 500, OutcomeKind.Success, 10);
    expect(isDense(seg, 5)).toBe(true);
    expect(readCounts(seg, 5, BASE_MS, 1000, emptyCounts()).success).toBe(RING_EVENTS + 1);
  });

  it('drops, while the writer is reusing a slot, the oldest event (the one in that slot) and no other', () => {
    const seg = newSegment();
    // Seconds 0-63, one outcome each: a decline first, then successes. The ring is full.
    for (let i = 0; i < RING_EVENTS; i++) recordOutcome(seg, 6, BASE_MS + i * 1000, i === 0 ? OutcomeKind.Decline : OutcomeKind.Success, 10);
    const now = BASE_MS + 63_000;
    expect(readCounts(seg, 6, now, 64_000, emptyCounts())).toEqual({ success: RING_EVENTS - 1, decline: 1, tech: 0, timeout: 0 });
    // A writer in the middle of appending the next outcome: it has claimed the decline's slot.
    const rb = 6 * RH_STRIDE;
    seg.ringHdr[rb + RH_WRITING] = seg.ringHdr[rb + RH_COUNT] + 1;
    expect(readCounts(seg, 6, now, 64_000, emptyCounts())).toEqual({ success: RING_EVENTS - 1, decline: 0, tech: 0, timeout: 0 });
  });

  it('stays compact at up to one outcome a second, however long, and is promoted past it', () => {
    const seg = newSegment();
    // One outcome every 1.05 s for ten minutes: never RING_EVENTS in the 64 s horizon.
    let t = BASE_MS;
    for (let i = 0; i < 570; i++, t += 1050) recordOutcome(seg, 0, t, OutcomeKind.Success, 100);
    expect(isDense(seg, 0)).toBe(false);
    expect(readCounts(seg, 0, t, 60_000, emptyCounts()).success).toBe(expectedCounts(Array.from({ length: 570 }, (_, i) => ({ atMs: BASE_MS + i * 1050, kind: OutcomeKind.Success, latencyMs: 100 })), t, 60).success);
    // A burst: RING_EVENTS outcomes in one second, while the ring still holds the last minute's.
    for (let i = 0; i < RING_EVENTS; i++) recordOutcome(seg, 0, t, OutcomeKind.TechError, 300);
    expect(isDense(seg, 0)).toBe(true);
    const c = readCounts(seg, 0, t, 1000, emptyCounts());
    expect(c.tech).toBe(RING_EVENTS);
    // The minute before the burst was replayed into the dense buckets.
    expect(readCounts(seg, 0, t, 60_000, emptyCounts()).success).toBeGreaterThanOrEqual(56);
    expect(readLatency(seg, 0, t, 5_000, newLatencySnapshot()).count).toBeGreaterThan(RING_EVENTS);
  });

  it('is promoted with its whole horizon: the oldest second counted, latencies of reused buckets not', () => {
    const seg = newSegment();
    // One outcome a second for 64 s (seconds 0-63, BASE_MS on a 5 s boundary), then one more at
    // second 63: the ring is full and its oldest event (second 0) still counts, so it promotes.
    const outcomes: Outcome[] = [];
    for (let i = 0; i < RING_EVENTS; i++) outcomes.push({ atMs: BASE_MS + i * 1000, kind: OutcomeKind.Success, latencyMs: 100 + i });
    outcomes.push({ atMs: BASE_MS + 63_500, kind: OutcomeKind.Decline, latencyMs: 900 });
    for (const o of outcomes) recordOutcome(seg, 0, o.atMs, o.kind, o.latencyMs);
    expect(isDense(seg, 0)).toBe(true);
    const now = BASE_MS + 63_900;
    expect(readCounts(seg, 0, now, 64_000, emptyCounts())).toEqual(expectedCounts(outcomes, now, 64));
    // Seconds 0-4 share their latency bucket with seconds 60-64: only the latter are in it.
    const got = readLatency(seg, 0, now, 60_000, newLatencySnapshot());
    const want = expectedLatency(outcomes, now, 12);
    expect(Array.from(got.bins)).toEqual(want.bins);
    expect(got.count).toBe(want.count);
  });

  it('does not read a week-old outcome as a recent one (seconds are kept modulo 2^19)', () => {
    const seg = newSegment();
    for (let i = 0; i < 10; i++) recordOutcome(seg, 0, BASE_MS + i * 1000, OutcomeKind.TechError, 100);
    const later = BASE_MS + 2 ** 19 * 1000 + 5_000; // the same second modulo 2^19, six days on
    recordOutcome(seg, 0, later, OutcomeKind.Success, 100);
    expect(readCounts(seg, 0, later, 64_000, emptyCounts())).toEqual({ success: 1, decline: 0, tech: 0, timeout: 0 });
    expect(readLatency(seg, 0, later, 60_000, newLatencySnapshot()).count).toBe(1);
  });

  it('forgets a quiet minute: after 64 s without outcomes the ring starts afresh, not promoted', () => {
    const seg = newSegment();
    for (let i = 0; i < RING_EVENTS; i++) recordOutcome(seg, 1, BASE_MS + i * 100, OutcomeKind.Decline, 50);
    const later = BASE_MS + 6_400 + COUNT_BUCKETS * 1000;
    recordOutcome(seg, 1, later, OutcomeKind.Success, 70);
    expect(isDense(seg, 1)).toBe(false);
    expect(readCounts(seg, 1, later, 64_000, emptyCounts())).toEqual({ success: 1, decline: 0, tech: 0, timeout: 0 });
    const lat = readLatency(seg, 1, later, 60_000, newLatencySnapshot());
    expect([lat.count, lat.sum]).toEqual([1, 70]);
  });

  it('is compact and empty again once cleared, its dense buckets zero', () => {
    const seg = newSegment();
    for (let i = 0; i < 3 * RING_EVENTS; i++) recordOutcome(seg, 2, BASE_MS, OutcomeKind.Success, 120);
    expect(isDense(seg, 2)).toBe(true);
    clearWindow(seg, 2);
    expect(isDense(seg, 2)).toBe(false);
    expect(readCounts(seg, 2, BASE_MS, 60_000, emptyCounts()).success).toBe(0);
    expect(seg.countHdr.some((v) => v !== 0)).toBe(false);
    expect(seg.latBins.some((v) => v !== 0)).toBe(false);
    recordOutcome(seg, 2, BASE_MS + 1000, OutcomeKind.Decline, 80);
    expect(readCounts(seg, 2, BASE_MS + 1000, 60_000, emptyCounts())).toEqual({ success: 0, decline: 1, tech: 0, timeout: 0 });
  });

  it('never writes a compact window’s dense buckets (their pages stay untouched)', () => {
    const seg = newSegment();
    for (let w = 0; w < 8; w++) for (let i = 0; i < 40; i++) recordOutcome(seg, w, BASE_MS + i * 1000, i % 7 === 0 ? OutcomeKind.Timeout : OutcomeKind.Success, 90 + i);
    for (let w = 0; w < 8; w++) expect(isDense(seg, w)).toBe(false);
    expect(seg.countHdr.some((v) => v !== 0)).toBe(false);
    expect(seg.latBins.some((v) => v !== 0)).toBe(false);
    const lat = readLatency(seg, 3, BASE_MS + 39_000, 60_000, newLatencySnapshot());
    expect(lat.count).toBe(34); // 40 outcomes, 6 of them timeouts
    expect(lat.sum).toBe(Array.from({ length: 40 }, (_, i) => (i % 7 === 0 ? 0 : 90 + i)).reduce((a, b) => a + b, 0));
  });
});

describe('a window read while another thread writes it', () => {
  it('counts neither less than was written before the read nor more than after it, through every promotion', async () => {
    const { Worker } = await import('node:worker_threads');
    const { join } = await import('node:path');
    const { REPO_ROOT } = await import('../helpers/server.js');
    const sab = new SharedArrayBuffer(windowSegmentBytes());
    const seg = windowSegmentViews(sab);
    // [w] outcomes written to window w, [CURRENT] the window being written, [STOP] 1 to stop, 2
    // when done, [SEEN_COMPACT] w + 1 once the reader has read window w while still compact.
    const CURRENT = 128;
    const STOP = 129;
    const SEEN_COMPACT = 130;
    const shared = new Int32Array(new SharedArrayBuffer(4 * 131));
    const perWindow = 3 * RING_EVENTS;
    const writer = new Worker(
      `const { workerData } = require('node:worker_threads');
       (async () => {
         const { recordOutcome } = await import(workerData.window);
         const { windowSegmentViews } = await import(workerData.layout);
         const seg = windowSegmentViews(workerData.sab);
         const shared = new Int32Array(workerData.shared);
         // Each window in turn: compact, promoted at its 65th outcome, then dense. Halfway through
         // the compact part the writer waits (up to 50 ms) for the reader to have read the window
         // compact: a compact part lasts ~0.1 ms, which a reader descheduled on a busy machine missed
         // for all 128 windows.
         for (let w = 0; w < 128 && Atomics.load(shared, 129) === 0; w++) {
           Atomics.store(shared, 128, w);
           for (let i = 0; i < workerData.perWindow; i++) {
             recordOutcome(seg, w, workerData.now, i % 3, 50 + i);
             Atomics.add(shared, w, 1);
             if (i === 31) {
               for (const until = Date.now() + 50; Atomics.load(shared, 130) <= w && Date.now() < until; ) Atomics.wait(shared, 130, Atomics.load(shared, 130), 1);
             }
             for (let k = 0; k < 200; k++) Math.sqrt(k);
           }
           Atomics.wait(shared, 129, 0, 1);
         }
         Atomics.store(shared, 129, 2);
       })();`,
      {
        eval: true,
        workerData: {
          sab,
          shared: shared.buffer,
          perWindow,
          now: BASE_MS + 500,
          window: join(REPO_ROOT, 'dist', 'src', 'shm', 'window.js'),
          layout: join(REPO_ROOT, 'dist', 'src', 'shm', 'layout.js'),
        },
      },
    );
    let reads = 0;
    let wrong = 0;
    let sawCompact = 0;
    let sawDense = 0;
    const counts = emptyCounts();
    const deadline = Date.now() + 20_000;
    while (Atomics.load(shared, STOP) !== 2 && Date.now() < deadline) {
      const w = Atomics.load(shared, CURRENT);
      const before = Atomics.load(shared, w);
      const dense = isDense(seg, w);
      const c = readCounts(seg, w, BASE_MS + 500, 60_000, counts);
      const after = Atomics.load(shared, w);
      const total = c.success + c.decline + c.tech;
      reads++;
      if (dense) sawDense++;
      else if (total > 0) {
        sawCompact++;
        if (Atomics.load(shared, SEEN_COMPACT) <= w) {
          Atomics.store(shared, SEEN_COMPACT, w + 1);
          Atomics.notify(shared, SEEN_COMPACT);
        }
      }
      // The writer counts an outcome just after recording it: a read may see one more than `after`.
      if (total < before || total > after + 1) wrong++;
      await Promise.resolve();
    }
    Atomics.store(shared, STOP, 1);
    await writer.terminate();
    expect(reads).toBeGreaterThan(1000);
    expect(sawCompact).toBeGreaterThan(0);
    expect(sawDense).toBeGreaterThan(0);
    expect(wrong).toBe(0);
  });
});
