/**
 * Outcome deltas: what this replica's outcomes added to its windows since the last batch,
 * per processor window and 1-second count bucket (counts by outcome kind, latency sum and
 * the touched latency sketch bins). The other replicas add them to their own windows, so
 * every window holds the whole cluster's outcomes.
 *
 * Only this replica's own outcomes are recorded here (the windows also hold merged remote
 * ones, so diffing the windows would ship those again). Recording is allocation-free in
 * steady state: entries and their bin arrays are pooled and reused batch after batch.
 *
 * Wire format (version 1), all varints unsigned LEB128 unless noted:
 *   u8 version, varint baseEpoch (count epoch, s), varint entries, then per entry:
 *   f64 window key (53-bit hash of tenant, rule, processor), svarint epoch - baseEpoch,
 *   varint success, decline, technical, timeout, varint run (the sender's consecutive
 *   technical failures of the processor after its last outcome in the entry), f64 latency
 *   sum (ms), varint bins, then per bin: varint bin index, varint count.
 * An entry is ~20 bytes plus ~3 per distinct latency bin.
 */
import { COUNT_BUCKET_MS, LAT_BINS, latencyBin } from '../shm/layout.js';
import { OutcomeKind } from '../shm/window.js';
import { ByteReader, ByteWriter, FormatError } from './bytes.js';

export const DELTA_FORMAT = 1;

interface PendingEntry {
  key: number;
  window: number;
  countEpoch: number;
  success: number;
  decline: number;
  tech: number;
  timeout: number;
  run: number;
  latSum: number;
  bins: Uint16Array;
  touched: Uint16Array;
  nTouched: number;
}

function newEntry(): PendingEntry {
  return {
    key: 0,
    window: -1,
    countEpoch: 0,
    success: 0,
    decline: 0,
    tech: 0,
    timeout: 0,
    run: 0,
    latSum: 0,
    bins: new Uint16Array(LAT_BINS),
    touched: new Uint16Array(LAT_BINS),
    nTouched: 0,
  };
}

export class DeltaRecorder {
  private readonly pool: PendingEntry[] = [];
  private used = 0;
  /** Window index → its entry of the current second in this batch. */
  private readonly byWindow = new Map<number, number>();
  private readonly writer = new ByteWriter(4096);
  /** When the oldest outcome of the pending batch was recorded (epoch ms), NaN when empty. */
  firstAtMs = NaN;

  /** Entries pending (distinct window × second). */
  size(): number {
    return this.used;
  }

  /**
   * Front thread, per outcome: no allocation once the pool has grown to the batch size.
   * `run` is the processor's run of consecutive technical failures on this replica after it.
   */
  record(key: number, window: number, nowMs: number, kind: OutcomeKind, latencyMs: number, run = 0): void {
    const epoch = Math.floor(nowMs / COUNT_BUCKET_MS);
    let idx = this.byWindow.get(window);
    let e = idx === undefined ? undefined : this.pool[idx];
    if (e === undefined || e.countEpoch !== epoch || e.key !== key) {
      idx = this.used++;
      if (idx === this.pool.length) this.pool.push(newEntry());
      e = this.pool[idx];
      e.key = key;
      e.window = window;
      e.countEpoch = epoch;
      e.success = e.decline = e.tech = e.timeout = 0;
      e.latSum = 0;
      e.nTouched = 0;
      this.byWindow.set(window, idx);
      if (this.used === 1) this.firstAtMs = nowMs;
    }
    e.run = run;
    switch (kind) {
      case OutcomeKind.Success:
        e.success++;
        break;
      case OutcomeKind.Decline:
        e.decline++;
        break;
      case OutcomeKind.Timeout:
        e.timeout++;
        e.tech++;
        return; // timeouts stay out of the latency sketch, as in recordOutcome
      default:
        e.tech++;
    }
    e.latSum += latencyMs;
    const b = latencyBin(latencyMs);
    if (e.bins[b] === 0) e.touched[e.nTouched++] = b;
    if (e.bins[b] < 0xffff) e.bins[b]++;
  }

  /** Encodes the pending batch and starts a new one; null when nothing is pending. */
  take(): Buffer | null {
    if (this.used === 0) return null;
    const w = this.writer;
    w.reset();
    w.u8(DELTA_FORMAT);
    let base = Infinity;
    for (let i = 0; i < this.used; i++) base = Math.min(base, this.pool[i].countEpoch);
    w.varint(base);
    w.varint(this.used);
    for (let i = 0; i < this.used; i++) {
      const e = this.pool[i];
      w.f64(e.key);
      w.svarint(e.countEpoch - base);
      w.varint(e.success);
      w.varint(e.decline);
      w.varint(e.tech);
      w.varint(e.timeout);
      w.varint(e.run);
      w.f64(e.latSum);
      w.varint(e.nTouched);
      for (let j = 0; j < e.nTouched; j++) {
        const b = e.touched[j];
        w.varint(b);
        w.varint(e.bins[b]);
        e.bins[b] = 0;
      }
      e.nTouched = 0;
    }
    this.used = 0;
    this.byWindow.clear();
    this.firstAtMs = NaN;
    return w.finish();
  }
}

/** One decoded entry; the decoder reuses it for every entry (copy what you keep). */
export interface DeltaEntry {
  key: number;
  countEpoch: number;
  success: number;
  decline: number;
  tech: number;
  timeout: number;
  run: number;
  latSum: number;
  nBins: number;
  binIndex: Uint16Array;
  binCount: Uint32Array;
}

const scratch: DeltaEntry = {
  key: 0,
  countEpoch: 0,
  success: 0,
  decline: 0,
  tech: 0,
  timeout: 0,
  run: 0,
  latSum: 0,
  nBins: 0,
  binIndex: new Uint16Array(LAT_BINS),
  binCount: new Uint32Array(LAT_BINS),
};

/** Calls `visit` for each entry of a batch; throws FormatError on a malformed one. Returns the entry count. */
export function decodeDeltas(buf: Buffer, visit: (e: DeltaEntry) => void): number {
  const r = new ByteReader(buf);
  const version = r.u8();
  if (version !== DELTA_FORMAT) throw new FormatError(`unknown delta format ${version}`);
  const base = r.varint();
  const n = r.varint();
  const e = scratch;
  for (let i = 0; i < n; i++) {
    e.key = r.f64();
    e.countEpoch = base + r.svarint();
    e.success = r.varint();
    e.decline = r.varint();
    e.tech = r.varint();
    e.timeout = r.varint();
    e.run = r.varint();
    e.latSum = r.f64();
    const nb = r.varint();
    if (nb > LAT_BINS) throw new FormatError('too many latency bins');
    for (let j = 0; j < nb; j++) {
      const b = r.varint();
      if (b >= LAT_BINS) throw new FormatError('latency bin out of range');
      e.binIndex[j] = b;
      e.binCount[j] = r.varint();
    }
    e.nBins = nb;
    visit(e);
  }
  return n;
}
