/**
 * Typed views over the task's segments, cached per worker so a task does not re-wrap every
 * SharedArrayBuffer. Keyed by (tablesId, segment index): a posted SharedArrayBuffer is a new
 * object in the receiving thread each time, so a WeakMap keyed by it would never hit.
 */
import {
  ruleSegmentViews,
  windowSegmentViews,
  type RuleSegmentViews,
  type WindowSegmentViews,
} from '../../shm/layout.js';
import type { TableSegments } from '../../shm/tables.js';

export interface TableViews {
  rules: RuleSegmentViews[];
  windows: WindowSegmentViews[];
}

const cache = new Map<number, TableViews>();

export function viewsFor(tablesId: number, segments: TableSegments): TableViews {
  const v = cache.get(tablesId);
  if (v !== undefined && v.rules.length === segments.rules.length && v.windows.length === segments.windows.length) return v;
  return madeViews(tablesId, segments);
}

/**
 * Views of every segment, made again whenever the tables have more (rare: a rule segment holds
 * 1,024 rules). Whole arrays, not pushed onto the cached ones: the pushes' array shapes
 * differed between the warm-up's tables and the first real ones, and the first real task
 * deoptimised the shard loop this is inlined into.
 */
function madeViews(tablesId: number, segments: TableSegments): TableViews {
  const epochs = new Int32Array(segments.decisionEpochs);
  const v: TableViews = { rules: segments.rules.map((s, i) => ruleSegmentViews(s, i, epochs)), windows: segments.windows.map((s) => windowSegmentViews(s)) };
  cache.set(tablesId, v);
  return v;
}

/** Drops the cached views of `tablesId` (tables that will never be seen again: the warm-up's). */
export function forgetViews(tablesId: number): void {
  cache.delete(tablesId);
}
