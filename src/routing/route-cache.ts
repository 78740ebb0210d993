/**
 * What a route of one rule reads, kept together in one object made when a tuple first finds the
 * rule: the rule's decision fields as last read from its shared-memory rows (override applied),
 * the segment's decision epoch they were read at, the replies written from them, and the routes
 * counted since the counts were last added to the rows. The tenants' trie memo answers this
 * object (routing/trie.ts), so a route reads neither the rule nor its rows.
 *
 * Why: at 100,000 rules, each route's reads of its rule's LiveRule and two rows were first
 * touches of three pages no cache or TLB entry still held (profiles of issue 20's twentieth
 * pass). Made at the first route, the caches of the rules that take traffic sit side by side in
 * memory. A route reads its rule's rows again only when the segment's decision epoch moved
 * (shm/layout.ts: a publish into any rule of the segment moves it, right after the seqlock
 * closes, so a worker's publish is seen by the next route as before), and adds its count to the
 * rows in a batch (shm/routed-counts.ts).
 *
 * `R` is the rule (LiveRule: tenants/tenant.ts, which imports this module). Every field holds
 * its final kind from the start (fractions as NaN, not 1 or 0), so the first change under load
 * does not change the object's layout and deoptimise the route handler.
 */
import { Buffer } from 'node:buffer';
import type { DecisionSource } from '../shm/layout.js';
import type { RoutedTally } from '../shm/routed-counts.js';

const NO_BYTES = Buffer.alloc(0);

/** An epoch no segment ever has (decisionEpoch() is never negative): the next route reads the rows. */
export const STALE_EPOCH = -1;

export class RouteCache<R> implements RoutedTally {
  /** The segment's decision epoch the fields below were read at (STALE_EPOCH: read them at the next route). */
  epoch = STALE_EPOCH;
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
  /** The slot's RI_GENERATION, read with the rows (a tally is only added to the rule it counted). */
  generation = 0;
  routedPrimary = 0;
  routedSecondary = 0;
  queued = false;

  constructor(
    /** The rule, read only when the rows are (its override) and for a reply or decision record written anew. */
    readonly rule: R,
    /** The rule's slot, kept here although the rule has it: a route reads this object and not the rule (see above). */
    readonly slot: number,
  ) {}
}
