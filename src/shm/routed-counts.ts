/**
 * The per-rule route counters (RF_ROUTED + side, read by the metrics render thread), counted on
 * the front thread in each routed rule's RouteCache (routing/route-cache.ts) and added to the
 * rule's row in batches: before every /metrics rendering and at every evaluation cycle. A
 * route's increment of its row was a write to a page of its own at 100,000 rules; the batch
 * touches each routed rule's row once, whatever its traffic.
 *
 * A tally whose slot has since been given to another rule (its generation moved) is dropped:
 * its rule is gone, and the slot's counters started again from zero.
 */
import { RF_ROUTED, RI_GENERATION, type RuleSegmentViews } from './layout.js';
import { ruleF64Base, ruleI32Base, ruleSegment } from './slots.js';

/** One rule's routes not yet added to its row. */
export interface RoutedTally {
  readonly slot: number;
  /** The slot's RI_GENERATION when the routes were counted. */
  readonly generation: number;
  routedPrimary: number;
  routedSecondary: number;
  /** In the pending list (routes since the last flush). */
  queued: boolean;
}

export class RoutedCounts {
  private pending: RoutedTally[] = [];

  /** `segs`: the tables' rule segments (the array itself, which grows with them). */
  constructor(private readonly segs: readonly RuleSegmentViews[]) {}

  /** `tally` has routes to add (its first since the last flush). */
  queue(tally: RoutedTally): void {
    tally.queued = true;
    this.pending.push(tally);
  }

  /** Adds every pending tally to its rule's row (front thread: the rows' only writer of RF_ROUTED). */
  flush(): void {
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    for (const t of pending) {
      const { ruleI32, ruleF64 } = ruleSegment(this.segs, t.slot);
      if (Atomics.load(ruleI32, ruleI32Base(t.slot) + RI_GENERATION) === t.generation) {
        const fb = ruleF64Base(t.slot) + RF_ROUTED;
        ruleF64[fb] += t.routedPrimary;
        ruleF64[fb + 1] += t.routedSecondary;
      }
      t.routedPrimary = 0;
      t.routedSecondary = 0;
      t.queued = false;
    }
  }
}
