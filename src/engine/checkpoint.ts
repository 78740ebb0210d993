/**
 * Engine state of one rule as a flat Float64Array, so the front thread can checkpoint it to
 * the store each cycle and restore it at start: statuses, Tier 1 bookkeeping, published
 * health, Tier 2/3 state (the whole processor rows) and the decision. Take a snapshot while
 * no task runs on the rule's shard (e.g. in EngineScheduler's onEvaluated) so it is
 * consistent. Restore after `allocRule` (which sets the configuration fields) and before
 * the scheduler starts; the next evaluation recomputes health from the (new, empty) windows.
 */
import { publishDecision, readDecision, type DecisionFields } from '../shm/decision.js';
import { DecisionSource, PF_LAST_EVAL_MS, PF_STATUS, PROC_F64_STRIDE, PROCS_PER_RULE } from '../shm/layout.js';
import { fmix32 } from '../shm/hash.js';
import type { SharedTables } from '../shm/tables.js';
import { markRowsInUse, readableRowOffset, readableRows } from '../shm/processor-rows.js';
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
  const rows = readableRows(seg, slot);
  const pb = readableRowOffset(rows, slot, 0);
  out.set(rows.subarray(pb, pb + ROWS), offset + HEADER);
}

/**
 * A 32-bit hash of a snapshot, given as an Int32Array over its bytes (CHECKPOINT_LENGTH × 2
 * words; a view the caller keeps, so hashing allocates nothing). Each processor row's
 * PF_LAST_EVAL_MS is left out: every evaluation moves it, and restored it only says
 * "evaluated" (it is > 0 either way), so a rule whose state is otherwise the same need not be
 * written again. MurmurHash3's mixing over the 32-bit halves of the values. Snapshots with the
 * same hash are taken as the same: a changed one goes unwritten with a chance of 2^-32 per rule
 * and checkpoint, until its next change.
 */
export function snapshotHash(words: Int32Array): number {
  let h = 0x9747b28c;
  for (let v = 0; v < CHECKPOINT_LENGTH; v++) {
    if (v >= HEADER && (v - HEADER) % PROC_F64_STRIDE === PF_LAST_EVAL_MS) continue;
    h = mix(h, words[2 * v]);
    h = mix(h, words[2 * v + 1]);
  }
  return fmix32(h) >>> 0;
}

/**
 * What a snapshot says to the routes that a restart must not lose: each processor's status and
 * where the decision comes from, as one number. The rest (rates, the bandit's counts, the
 * sequence model's state) moves at every evaluation under Tier 2 and 3 (the bandit's counts
 * decay with time), and a minute-old copy of it restores a model that relearns within minutes.
 */
export function snapshotStatusKey(values: Float64Array): number {
  let key = values[2]; // the decision's source
  for (let p = 0; p < PROCS_PER_RULE; p++) key = key * 8 + values[HEADER + p * PROC_F64_STRIDE + PF_STATUS];
  return key;
}

function mix(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

const scratch: DecisionFields = { primaryShare: 0, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };

/** Returns false (and changes nothing) when `data` is not a snapshot of this version. */
export function restoreRule(tables: SharedTables, slot: number, data: Float64Array): boolean {
  if (data.length !== CHECKPOINT_LENGTH || data[0] !== CHECKPOINT_VERSION) return false;
  const seg = ruleSegment(tables.ruleSegs, slot);
  const i = ruleIndex(slot);
  markRowsInUse(seg, slot);
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
