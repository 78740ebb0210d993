/**
 * SharedTables.windowOf: a processor's outcome window is taken at its first outcome and kept;
 * a self-fallback rule's two sides share one window; other rules' sides get their own.
 */
import { describe, expect, it } from 'vitest';
import { RI_WINDOW_PRIMARY, RI_WINDOW_SECONDARY } from '../../src/shm/layout.js';
import { ruleI32Base, ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';

const windows = (t: SharedTables, slot: number) => {
  const { ruleI32 } = ruleSegment(t.ruleSegs, slot);
  return [ruleI32[ruleI32Base(slot) + RI_WINDOW_PRIMARY], ruleI32[ruleI32Base(slot) + RI_WINDOW_SECONDARY]];
};

describe('SharedTables.windowOf', () => {
  it('takes a window at the first outcome and keeps it; self-fallback sides share one', () => {
    const t = new SharedTables();
    const two = t.allocRule(0.9, false);
    const self = t.allocRule(1, true);
    expect(windows(t, two)).toEqual([-1, -1]);
    const p = t.windowOf(two, 0, false);
    expect(windows(t, two)).toEqual([p, -1]);
    expect(t.windowOf(two, 0, false)).toBe(p);
    const s = t.windowOf(two, 1, false);
    expect(s).not.toBe(p);
    expect(windows(t, two)).toEqual([p, s]);
    const shared = t.windowOf(self, 1, true);
    expect(windows(t, self)).toEqual([shared, shared]);
    expect(t.windowOf(self, 0, true)).toBe(shared);
    expect(new Set([p, s, shared]).size).toBe(3);
  });
});
