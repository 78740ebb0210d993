/**
 * Rule slots that an evaluation judges (each with an outcome window holding a few recent
 * successes), for tests of the evaluation pool and its worker loop.
 */
import { RI_WINDOW_PRIMARY } from '../../src/shm/layout.js';
import type { SharedTables } from '../../src/shm/tables.js';
import { ruleI32Base, ruleSegment, windowIndex, windowSegment } from '../../src/shm/slots.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';

/** Allocates `n` rules on `tables`, each with 5 successes just before `nowMs` on its primary; returns their slots. */
export function judgedRules(tables: SharedTables, n: number, nowMs: number): number[] {
  const slots: number[] = [];
  for (let r = 0; r < n; r++) {
    const slot = tables.allocRule(0.9, false);
    const w = tables.allocWindow();
    ruleSegment(tables.ruleSegs, slot).ruleI32[ruleI32Base(slot) + RI_WINDOW_PRIMARY] = w;
    for (let i = 0; i < 5; i++) recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), nowMs - i, OutcomeKind.Success, 100);
    slots.push(slot);
  }
  return slots;
}
