/**
 * Engine state of one rule as a flat Float64Array, so the front thread can checkpoint it to
 * the store each cycle and restore it at start: statuses, Tier 1 bookkeeping, published
 * health, Tier 2/3 state (the whole processor rows) and the decision. Take a snapshot while
 * no task runs on the rule's shard (e.g. in EngineScheduler's onEvaluated) so it is
 * consistent. Restore after `allocRule` (which sets the configuration fields) and before
 * the scheduler starts; the next evaluation recomputes health from the (new, empty) windows.
 */
import { publishDecision, readDecision, type DecisionFields } from '../shm/decision.js';
import { DecisionSource, PROC_F64_STRIDE, PROCS_PER_RULE } from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import { processorRowOffset, ruleIndex, ruleSegment } from '../shm/slots.js';

/** Bumped whenever the layout of a snapshot changes; older snapshots are not restored. */
export const CHECKPOINT_VERSION = 1;
const ROWS = PROCS_PER_RULE * PROC_F64_STRIDE;
const HEADER = 5; // version, primary share, source, failure probabilities
export const CHECKPOINT_LENGTH = HEADER + ROWS;

/**
 * A checkpoint as stored. Written as the bytes of its Float64Array values (storedCheckpoint):
 * one copy, about half the front-thread time of encoding a plain array number by number, which
 * is how checkpoints of earlier versions were written (still read). The stores hand the bytes
 * back as a Uint8Array, which may be a view of a buffer LMDB reuses for its next read:
 * checkpointValues copies it at once.
 */
export type StoredCheckpoint = Uint8Array | number[];

/** The value to store for the snapshot at `offset` of `values` (CHECKPOINT_LENGTH values): their bytes, copied. */
export function storedCheckpoint(values: Float64Array, offset = 0): Buffer {
  return Buffer.copyBytesFrom(values, offset, CHECKPOINT_LENGTH);
}

/**
 * A stored checkpoint's values (a copy), whichever form it was stored in; null when the value
 * is none of them (a byte length that is not a whole number of values). The bytes are read in
 * this machine's byte order, the order they were written in (every platform this service runs
 * on is little-endian).
 */
export function checkpointValues(saved: StoredCheckpoint): Float64Array | null {
  if (saved instanceof Uint8Array) {
    if (saved.byteLength % Float64Array.BYTES_PER_ELEMENT !== 0) return null;
    // Uint8Array's slice copies (a Buffer's own slice would be a view), and the copy's buffer
    // starts at 0, as a Float64Array over it must.
    return new Float64Array(Uint8Array.prototype.slice.call(saved).buffer);
  }
  return Array.isArray(saved) ? Float64Array.from(saved) : null;
}

export function snapshotRule(tables: SharedTables, slot: number): Float64Array {
  const out = new Float64Array(CHECKPOINT_LENGTH);
  snapshotRuleInto(tables, slot, out, 0);
  return out;
}

/** snapshotRule into `out` from `offset` (CHECKPOINT_LENGTH values): many rules in one buffer. */
export function snapshotRuleInto(tables: SharedTables, slot: number, out: Float64Array, offset: number): void {
  const seg = ruleSegment(tables.ruleSegs, slot);
  const i = ruleIndex(slot);
  const d = readDecision(seg, i, scratch);
  out[offset] = CHECKPOINT_VERSION;
  out[offset + 1] = d.primaryShare;
  out[offset + 2] = d.source;
  out[offset + 3] = d.failProbPrimary;
  out[offset + 4] = d.failProbSecondary;
  const pb = processorRowOffset(slot, 0);
  out.set(seg.procF64.subarray(pb, pb + ROWS), offset + HEADER);
}

const scratch: DecisionFields = { primaryShare: 0, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };

/** Returns false (and changes nothing) when `data` is not a snapshot of this version. */
export function restoreRule(tables: SharedTables, slot: number, data: Float64Array): boolean {
  if (data.length !== CHECKPOINT_LENGTH || data[0] !== CHECKPOINT_VERSION) return false;
  const seg = ruleSegment(tables.ruleSegs, slot);
  const i = ruleIndex(slot);
  seg.procF64.set(data.subarray(HEADER), processorRowOffset(slot, 0));
  const d: DecisionFields = {
    primaryShare: data[1],
    source: data[2] as DecisionSource,
    failProbPrimary: data[3],
    failProbSecondary: data[4],
  };
  publishDecision(seg, i, d);
  return true;
}
