/**
 * Whether a rule's processor rows hold state, and where a reader should look for them.
 *
 * A fresh slot's rows are all zero, which reads as: healthy, never evaluated, no samples. They
 * stay unwritten until the rule's first evaluation with outcomes (or a restore, a carried
 * PATCH, the cluster's table), so a rule that takes no traffic costs no memory for its 1 KB of
 * engine state. Not reading them matters as much as not writing them: some kernels (seen on a
 * Firecracker guest, 6.18) back a read of an untouched anonymous page with a page of its own
 * rather than the shared zero page, and one cycle that read every rule's PF_LAST_EVAL_MS made
 * ~100 MB resident at 100,000 rules. So whatever goes over every rule asks `rowsInUse` (the
 * rule's Int32 fields, resident anyway) and reads UNUSED_ROWS in place of rows never written.
 */
import { PF_STATUS, PROC_F64_STRIDE, PROCS_PER_RULE, ProcessorStatus, RI_ROWS_IN_USE, type RuleSegmentViews } from './layout.js';
import { processorRowOffset, ruleI32Base, ruleSegment } from './slots.js';

/** Both processor rows of a rule whose rows were never written: what they hold. Read it, never write it. */
const UNUSED_ROWS = new Float64Array(PROCS_PER_RULE * PROC_F64_STRIDE);

/**
 * True once rule `slot`'s processor rows hold state. A plain read: the flag goes from 0 to 1
 * once in a slot's life, set before the rows are written (under the health seqlock when the
 * worker writes them), so a read a moment old sees the rows as they were a moment ago.
 */
export function rowsInUse(seg: RuleSegmentViews, slot: number): boolean {
  return seg.ruleI32[ruleI32Base(slot) + RI_ROWS_IN_USE] === 1;
}

/** Every writer of a rule's processor rows calls this first (clearRows undoes it). */
export function markRowsInUse(seg: RuleSegmentViews, slot: number): void {
  const at = ruleI32Base(slot) + RI_ROWS_IN_USE;
  if (seg.ruleI32[at] !== 1) Atomics.store(seg.ruleI32, at, 1);
}

/**
 * A reused slot's rows back to what a fresh slot's are (allocRule): zeros, not in use. Wiped
 * only if its last rule wrote them, so a slot that never had traffic stays untouched.
 */
export function clearRows(seg: RuleSegmentViews, slot: number): void {
  const at = ruleI32Base(slot) + RI_ROWS_IN_USE;
  if (seg.ruleI32[at] !== 1) return;
  const pb = processorRowOffset(slot, 0);
  seg.procF64.fill(0, pb, pb + PROCS_PER_RULE * PROC_F64_STRIDE);
  Atomics.store(seg.ruleI32, at, 0);
}

/** The array to read rule `slot`'s processor rows from: its segment's rows, or UNUSED_ROWS. */
export function readableRows(seg: RuleSegmentViews, slot: number): Float64Array {
  return rowsInUse(seg, slot) ? seg.procF64 : UNUSED_ROWS;
}

/** Offset of processor k's row in `rows`, the array readableRows gave for rule `slot`. */
export function readableRowOffset(rows: Float64Array, slot: number, k: number): number {
  return rows === UNUSED_ROWS ? k * PROC_F64_STRIDE : processorRowOffset(slot, k);
}

/** Processor k's status (0 primary, 1 secondary) in rule `slot` of `segs`: Healthy while its rows were never written. */
export function processorStatus(segs: readonly RuleSegmentViews[], slot: number, k: number): ProcessorStatus {
  const seg = ruleSegment(segs, slot);
  return rowsInUse(seg, slot) ? (seg.procF64[processorRowOffset(slot, k) + PF_STATUS] as ProcessorStatus) : ProcessorStatus.Healthy;
}
