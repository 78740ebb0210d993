/**
 * Slot → segment arithmetic, written once. A rule slot lives in segment `slot >> RULE_SHIFT`
 * at index `slot & RULE_MASK`; its Int32 and Float64 fields start at the index times their
 * stride, and its two processor rows follow each other in `procF64`. Outcome windows are
 * addressed the same way. All are plain functions over numbers (inlined by the JIT): the hot
 * path calls them per request.
 */
import {
  PROC_F64_STRIDE,
  PROCS_PER_RULE,
  RULE_F64_STRIDE,
  RULE_I32_STRIDE,
  RULE_MASK,
  RULE_SHIFT,
  WINDOW_MASK,
  WINDOW_SHIFT,
  type RuleSegmentViews,
  type WindowSegmentViews,
} from './layout.js';

/** The number of the segment holding rule `slot` (its place in a segment list and in the decision epochs). */
export function ruleSegmentNumber(slot: number): number {
  return slot >> RULE_SHIFT;
}

/** The segment holding rule `slot`, from a segment list (SharedTables.ruleSegs, a worker's views). */
export function ruleSegment(segs: readonly RuleSegmentViews[], slot: number): RuleSegmentViews {
  return segs[ruleSegmentNumber(slot)];
}

/** The rule's index inside its segment (what publishDecision / readDecision take). */
export function ruleIndex(slot: number): number {
  return slot & RULE_MASK;
}

/** Offset of the rule's first Int32 field (RI_*) in `ruleI32`. */
export function ruleI32Base(slot: number): number {
  return (slot & RULE_MASK) * RULE_I32_STRIDE;
}

/** Offset of the rule's first Float64 field (RF_*) in `ruleF64`. */
export function ruleF64Base(slot: number): number {
  return (slot & RULE_MASK) * RULE_F64_STRIDE;
}

/** Offset of processor `k`'s row (0 primary, 1 secondary) in the segment's `procF64`. */
export function processorRowOffset(slot: number, k: number): number {
  return ((slot & RULE_MASK) * PROCS_PER_RULE + k) * PROC_F64_STRIDE;
}

/** The segment holding outcome window `w` (undefined when the list predates the window). */
export function windowSegment(segs: readonly WindowSegmentViews[], w: number): WindowSegmentViews {
  return segs[w >> WINDOW_SHIFT];
}

/** The window's index inside its segment. */
export function windowIndex(w: number): number {
  return w & WINDOW_MASK;
}
