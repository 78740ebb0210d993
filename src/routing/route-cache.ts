/**
 * What a route of one rule reads, kept together in one object made at the rule's first route:
 * the rule's decision fields as last read from its shared-memory rows (override applied), the
 * segment's decision epoch they were read at, the replies written from them, and the routes
 * counted since the counts were last added to the rows.
 *
 * Why: at 100,000 rules, each route's reads of its rule's LiveRule and two rows were first
 * touches of three pages no cache or TLB entry still held (profiles of issue 20's twentieth
 * pass). Made at the first route, the caches of the rules that take traffic sit side by side in
 * memory; a route reads its rule's rows again only when the segment's decision epoch moved
 * (shm/layout.ts: a publish into any rule of the segment moves it), and adds its count to the
 * rows in a batch (shm/routed-counts.ts). A worker's publish is seen by the next route, as
 * before: the epoch moves right after the seqlock closes.
 *
 * Every field holds its final kind from the start (fractions as NaN, not 1 or 0), so the first
 * change under load does not change the object's layout and deoptimise the route handler.
 */
import { Buffer } from 'node:buffer';
import { decisionEpoch } from '../shm/decision.js';
import { RI_GENERATION, type DecisionSource, type RuleSegmentViews } from '../shm/layout.js';
import type { RoutedTally } from '../shm/routed-counts.js';
import { ruleI32Base, ruleIndex, ruleSegment } from '../shm/slots.js';
import type { SharedTables } from '../shm/tables.js';

const NO_BYTES = Buffer.alloc(0);

export class RouteCache implements RoutedTally {
  /**
   * The segment's decision epoch the fields below were read at. Any other value than the
   * segment's current epoch sends the next route to the rows (routing/decide.ts
   * forgetDecision sets one).
   */
  epoch: number;
  /** The decision fields (pickSide reads them, the override applied). */
  share = Number.NaN;
  source = -1 as DecisionSource;
  failProbPrimary = Number.NaN;
  failProbSecondary = Number.NaN;
  /** The replies below were written from the fields above under `predictionEnabled` (false: write them again). */
  repliesCurrent = false;
  /** The tenant's Tier 2 switch when the replies were written (failure_probability is null while off). */
  predictionEnabled = false;
  /** The reply taking the primary (side 0) and the secondary (side 1), UTF-8. */
  primary: Buffer = NO_BYTES;
  secondary: Buffer = NO_BYTES;
  // RoutedTally: routes not yet added to the rule's row.
  routedPrimary = 0;
  routedSecondary = 0;
  queued = false;
  readonly seg: RuleSegmentViews;
  readonly index: number;
  readonly generation: number;

  constructor(tables: SharedTables, slot: number) {
    this.seg = ruleSegment(tables.ruleSegs, slot);
    this.index = ruleIndex(slot);
    this.generation = Atomics.load(this.seg.ruleI32, ruleI32Base(slot) + RI_GENERATION);
    this.epoch = (decisionEpoch(this.seg) - 1) | 0;
  }
}
