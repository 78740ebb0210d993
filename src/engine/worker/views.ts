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
  let v = cache.get(tablesId);
  if (v === undefined) cache.set(tablesId, (v = { rules: [], windows: [] }));
  for (let i = v.rules.length; i < segments.rules.length; i++) v.rules.push(ruleSegmentViews(segments.rules[i]));
  for (let i = v.windows.length; i < segments.windows.length; i++) v.windows.push(windowSegmentViews(segments.windows[i]));
  return v;
}

/** Drops the cached views of `tablesId` (tables that will never be seen again: the warm-up's). */
export function forgetViews(tablesId: number): void {
  cache.delete(tablesId);
}
