/**
 * A compact window (layout.ts, "outcome windows"): a ring of the window's last RING_EVENTS
 * outcomes, one 32-bit word each, from which readers derive the same counts and histograms the
 * dense buckets give. The front thread is the only writer.
 *
 *   ringHdr[w]: RH_COUNT    events appended (event i lives in slot i % RING_EVENTS)
 *               RH_WRITING  1 + the index of the event being written (RH_COUNT between writes)
 *               RH_START    first event that counts (a ring quiet for 64 s starts afresh)
 *               RH_DENSE    1 once promoted
 *   ring[w]:    | second mod 2^19 (13-31) | kind (10-12) | latency bin (0-9) |
 *
 * Protocol. To append event i the writer stores RH_WRITING = i + 1, stores the event's word in
 * its slot (that of event i − RING_EVENTS), then publishes it by storing RH_COUNT = i + 1
 * (Atomics). A reader loads RH_COUNT and RH_START, copies the events, then loads RH_WRITING: an
 * event whose slot the writer may have reused meanwhile (index < RH_WRITING − RING_EVENTS) is
 * dropped, and no other. The writer never reuses the slot of an event still inside the count horizon;
 * it promotes the window instead (promote), writing the dense buckets before it sets RH_DENSE,
 * so a reader that sees RH_DENSE finds every outcome there.
 */
import {
  COUNT_BUCKET_MS,
  COUNT_BUCKETS,
  EV_BIN_MASK,
  EV_KIND_MASK,
  EV_KIND_SHIFT,
  EV_LATENCY_ONLY,
  EV_NO_LATENCY,
  EV_SEC_MASK,
  EV_SEC_SHIFT,
  LAT_BUCKET_MS,
  LAT_BUCKETS,
  RH_COUNT,
  RH_DENSE,
  RH_LAST_SEC,
  RH_START,
  RH_STRIDE,
  RH_WRITING,
  RING_EVENTS,
  type WindowSegmentViews,
} from './layout.js';
import { addCount, addToBin, countBucket, OutcomeKind, type Counts, type LatencySnapshot } from './window-dense.js';

const RING_MASK = RING_EVENTS - 1;
/** Count epochs (seconds) in a latency epoch. */
const SECONDS_PER_LAT_BUCKET = LAT_BUCKET_MS / COUNT_BUCKET_MS;
/**
 * Seconds an event may be ahead of the writer's clock and still be recognised as recent when
 * the writer makes room: a remote replica's outcomes may be up to MAX_FUTURE_EPOCHS (5 s) ahead.
 */
const AHEAD_S = 8;

/** An event word (stored into a Uint32Array, which takes it modulo 2^32). */
export function eventWord(sec: number, kind: number, bin: number): number {
  return ((sec & EV_SEC_MASK) << EV_SEC_SHIFT) | (kind << EV_KIND_SHIFT) | bin;
}

/** The second event `word` was recorded in, recovered as the latest one at or before `ref` that matches. */
export function eventSecond(word: number, ref: number): number {
  return ref - ((ref - (word >>> EV_SEC_SHIFT)) & EV_SEC_MASK);
}

/** Whether window `w` was promoted to dense buckets (a reader's load). */
export function isDense(seg: WindowSegmentViews, w: number): boolean {
  return Atomics.load(seg.ringHdr, w * RH_STRIDE + RH_DENSE) === 1;
}

/**
 * Writer: whether `n` more events fit without reusing the slot of one still inside the count
 * horizon at second `nowSec`. A ring whose newest event is 64 s old first starts afresh, so a
 * ring never spans more than RING_EVENTS × 64 s and every second in it is recoverable.
 */
export function makeRoom(seg: WindowSegmentViews, w: number, nowSec: number, n: number): boolean {
  if (n > RING_EVENTS) return false;
  const hdr = seg.ringHdr;
  const rb = w * RH_STRIDE;
  const count = hdr[rb + RH_COUNT];
  let start = hdr[rb + RH_START];
  if (count > start && nowSec - hdr[rb + RH_LAST_SEC] >= COUNT_BUCKETS) {
    Atomics.store(hdr, rb + RH_START, count);
    start = count;
  }
  const ring = seg.ring;
  const base = w * RING_EVENTS;
  // Seconds are recovered relative to the newest the ring has seen: after the clock steps back,
  // the ring's newer outcomes are still recent, not six days old.
  const ref = Math.max(nowSec, hdr[rb + RH_LAST_SEC]) + AHEAD_S;
  const oldest = nowSec - COUNT_BUCKETS;
  for (let i = Math.max(start, count - RING_EVENTS); i < count + n - RING_EVENTS; i++) {
    if (eventSecond(ring[base + (i & RING_MASK)], ref) > oldest) return false;
  }
  return true;
}

/** Writer: appends an event (after makeRoom said it fits). */
export function pushEvent(seg: WindowSegmentViews, w: number, sec: number, kind: number, bin: number): void {
  const hdr = seg.ringHdr;
  const rb = w * RH_STRIDE;
  const count = hdr[rb + RH_COUNT];
  Atomics.store(hdr, rb + RH_WRITING, count + 1);
  seg.ring[w * RING_EVENTS + (count & RING_MASK)] = eventWord(sec, kind, bin);
  if (count === hdr[rb + RH_START] || sec > hdr[rb + RH_LAST_SEC]) hdr[rb + RH_LAST_SEC] = sec;
  Atomics.store(hdr, rb + RH_COUNT, count + 1);
}

/**
 * Writer: replays the ring's events of the last 64 s (up to `nowSec` or the newest event, if
 * later) into the dense buckets, then marks the window dense. The dense bins are zero (a
 * compact window never writes them, and clearWindow zeroes a promoted one's); the latency sums
 * are already in place.
 */
export function promote(seg: WindowSegmentViews, w: number, nowSec: number): void {
  const hdr = seg.ringHdr;
  const rb = w * RH_STRIDE;
  const count = hdr[rb + RH_COUNT];
  const base = w * RING_EVENTS;
  const newest = Math.max(nowSec, hdr[rb + RH_LAST_SEC]);
  const oldest = newest - COUNT_BUCKETS;
  for (let i = Math.max(hdr[rb + RH_START], count - RING_EVENTS); i < count; i++) {
    const word = seg.ring[base + (i & RING_MASK)];
    const e = eventSecond(word, newest + AHEAD_S);
    if (e <= oldest) continue;
    const kind = (word >>> EV_KIND_SHIFT) & EV_KIND_MASK;
    if (kind !== EV_LATENCY_ONLY) addCount(seg.countHdr, countBucket(seg, w, e), kind as OutcomeKind, 1);
    const bin = word & EV_BIN_MASK;
    if (bin === EV_NO_LATENCY) continue;
    const latEpoch = Math.floor(e / SECONDS_PER_LAT_BUCKET);
    const lb = w * LAT_BUCKETS + (latEpoch % LAT_BUCKETS);
    if (seg.latEpoch[lb] === latEpoch) addToBin(seg, lb, bin, 1);
  }
  Atomics.store(hdr, rb + RH_DENSE, 1);
}

// ── readers ──────────────────────────────────────────────────────────────────────────────
const copied = new Uint32Array(RING_EVENTS);

/**
 * Copies the window's counted events into `copied` and returns how many: those whose slot the
 * writer may have reused while we copied are dropped.
 */
function copyEvents(seg: WindowSegmentViews, w: number): number {
  const hdr = seg.ringHdr;
  const rb = w * RH_STRIDE;
  const count = Atomics.load(hdr, rb + RH_COUNT);
  const from = Math.max(Atomics.load(hdr, rb + RH_START), count - RING_EVENTS);
  const base = w * RING_EVENTS;
  let n = 0;
  for (let i = from; i < count; i++) copied[n++] = seg.ring[base + (i & RING_MASK)];
  const reused = Math.min(Atomics.load(hdr, rb + RH_WRITING) - RING_EVENTS - from, n);
  if (reused <= 0) return n;
  copied.copyWithin(0, reused, n);
  return n - reused;
}

/** Adds the counts of epochs (current − n, current] to `out` (zeroed by the caller). */
export function readRingCounts(seg: WindowSegmentViews, w: number, current: number, n: number, out: Counts): void {
  const end = copyEvents(seg, w);
  const oldest = current - n;
  for (let i = 0; i < end; i++) {
    const word = copied[i];
    if (eventSecond(word, current) <= oldest) continue;
    switch ((word >>> EV_KIND_SHIFT) & EV_KIND_MASK) {
      case OutcomeKind.Success:
        out.success++;
        break;
      case OutcomeKind.Decline:
        out.decline++;
        break;
      case OutcomeKind.TechError:
        out.tech++;
        break;
      case OutcomeKind.Timeout:
        out.tech++;
        out.timeout++;
        break;
      default: // EV_LATENCY_ONLY: no count
    }
  }
}

/**
 * Per-second counts of epochs (last − n, last] into `out`: success, decline, technical, timeout
 * at out[4·i .. 4·i + 3] for epoch last − n + 1 + i (zeroed by the caller).
 */
export function readRingCountSeries(seg: WindowSegmentViews, w: number, last: number, n: number, out: Int32Array): void {
  const end = copyEvents(seg, w);
  const first = last - n + 1;
  for (let i = 0; i < end; i++) {
    const word = copied[i];
    const x = eventSecond(word, last) - first;
    if (x < 0) continue;
    const kind = (word >>> EV_KIND_SHIFT) & EV_KIND_MASK;
    if (kind === EV_LATENCY_ONLY) continue;
    const o = 4 * x;
    if (kind === OutcomeKind.Timeout) {
      out[o + 2]++;
      out[o + 3]++;
    } else out[o + kind]++;
  }
}

/** Adds the histogram and sums of latency epochs (current − n, current] to `out` (zeroed by the caller). */
export function readRingLatency(seg: WindowSegmentViews, w: number, current: number, n: number, out: LatencySnapshot): void {
  const end = copyEvents(seg, w);
  // Relative to the current latency bucket's last second: the dense buckets count an outcome
  // of the current 5 s even when the writer's clock is a little ahead of the reader's.
  const ref = current * SECONDS_PER_LAT_BUCKET + SECONDS_PER_LAT_BUCKET - 1;
  const oldest = current - n;
  let c = 0;
  for (let i = 0; i < end; i++) {
    const word = copied[i];
    const bin = word & EV_BIN_MASK;
    if (bin === EV_NO_LATENCY) continue;
    if (Math.floor(eventSecond(word, ref) / SECONDS_PER_LAT_BUCKET) <= oldest) continue;
    out.bins[bin]++;
    c++;
  }
  out.count += c;
  for (let e = current - n + 1; e <= current; e++) {
    const lb = w * LAT_BUCKETS + (e % LAT_BUCKETS);
    if (Atomics.load(seg.latEpoch, lb) !== e) continue;
    const sum = seg.latSum[lb];
    if (Atomics.load(seg.latEpoch, lb) === e) out.sum += sum;
  }
}
