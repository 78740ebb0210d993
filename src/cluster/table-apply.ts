/**
 * Follower: visits a table's rules in slices of at most `sliceMs` of the front thread, with
 * a yield to the event loop between slices, so a snapshot of 100,000 rules does not stall the
 * routes this replica serves meanwhile.
 */
import { newRuleEntry, TableRuleIterator, type readTableHeader, type RuleEntry } from './table-codec.js';
import { yieldTurn } from '../front-turns.js';

export interface SlicedVisit {
  /** False when `beforeSlice` stopped the visit part-way. */
  completed: boolean;
  /** Longest single slice of front-thread work (ms). */
  longestSliceMs: number;
}

const entry = newRuleEntry();

/**
 * Calls `visit` for each rule (the entry is reused: copy what you keep). `beforeSlice` runs
 * before the first slice and after every yield; it may wait (e.g. for an evaluation task to
 * end) and returns false to stop.
 */
export async function visitTableSliced(
  h: ReturnType<typeof readTableHeader>,
  sliceMs: number,
  beforeSlice: () => boolean | Promise<boolean>,
  visit: (e: RuleEntry) => void,
): Promise<SlicedVisit> {
  const it = new TableRuleIterator(h);
  let longest = 0;
  if (!(await beforeSlice())) return { completed: false, longestSliceMs: 0 };
  let sliceStart = performance.now();
  for (let i = 1; ; i++) {
    if ((i & 63) === 0) {
      const t = performance.now();
      if (t - sliceStart >= sliceMs) {
        longest = Math.max(longest, t - sliceStart);
        await yieldTurn();
        if (!(await beforeSlice())) return { completed: false, longestSliceMs: longest };
        sliceStart = performance.now();
      }
    }
    if (!it.next(entry)) break;
    visit(entry);
  }
  return { completed: true, longestSliceMs: Math.max(longest, performance.now() - sliceStart) };
}
