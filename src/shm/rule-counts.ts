/**
 * The per-rule route and outcome counters (RF_ROUTED + side and RF_OUTCOMES + k *
 * OUTCOME_RESULTS + result, read by the metrics render thread), counted on the front thread in
 * each rule's RuleCache (routing/rule-cache.ts) and added to the rule's row in batches: before
 * every /metrics rendering and at every evaluation cycle. A route's or an outcome's increment
 * of its row was a write to a page of its own at 100,000 rules (issue 20: an outcome cost 1.09×
 * its CPU at 10 rules, a route 1.04×); the batch touches each counted rule's row once,
 * whatever its traffic.
 *
 * A tally whose slot has since been given to another rule (its generation moved) is dropped:
 * its rule is gone, and the slot's counters started again from zero.
 */
import { OUTCOME_RESULTS, PROCS_PER_RULE, RF_OUTCOMES, RF_ROUTED, RI_GENERATION, type RuleSegmentViews } from './layout.js';
import { ruleF64Base, ruleI32Base, ruleSegment } from './slots.js';

/** The outcome counts a tally holds: one per processor and result, in the row's order (RF_OUTCOMES). */
export const OUTCOME_COUNTS = PROCS_PER_RULE * OUTCOME_RESULTS;

/** One rule's routes and outcomes not yet added to its row. */
export interface RuleTally {
  readonly slot: number;
  /** The slot's RI_GENERATION when the tally was queued (set by queue()). */
  generation: number;
  routedPrimary: number;
  routedSecondary: number;
  /** OUTCOME_COUNTS counts, k * OUTCOME_RESULTS + result. */
  readonly outcomes: number[];
  /** In the pending list (counted since the last flush). */
  queued: boolean;
}

export class RuleCounts {
  private pending: RuleTally[] = [];

  /** `segs`: the tables' rule segments (the array itself, which grows with them). */
  constructor(private readonly segs: readonly RuleSegmentViews[]) {}

  /**
   * `tally` has counts to add (its first since the last flush), counted for the rule now in its
   * slot: the slot's generation is read here, once per tally and flush, so that the flush adds
   * them to that rule and to no rule given the slot since.
   */
  queue(tally: RuleTally): void {
    tally.generation = Atomics.load(ruleSegment(this.segs, tally.slot).ruleI32, ruleI32Base(tally.slot) + RI_GENERATION);
    tally.queued = true;
    this.pending.push(tally);
  }

  /** Adds every pending tally to its rule's row (front thread: the rows' only writer of these fields). */
  flush(): void {
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    for (const t of pending) {
      const { ruleI32, ruleF64 } = ruleSegment(this.segs, t.slot);
      const counts = t.outcomes;
      if (Atomics.load(ruleI32, ruleI32Base(t.slot) + RI_GENERATION) === t.generation) {
        const fb = ruleF64Base(t.slot);
        ruleF64[fb + RF_ROUTED] += t.routedPrimary;
        ruleF64[fb + RF_ROUTED + 1] += t.routedSecondary;
        for (let i = 0; i < OUTCOME_COUNTS; i++) if (counts[i] !== 0) ruleF64[fb + RF_OUTCOMES + i] += counts[i];
      }
      t.routedPrimary = 0;
      t.routedSecondary = 0;
      counts.fill(0);
      t.queued = false;
    }
  }
}
