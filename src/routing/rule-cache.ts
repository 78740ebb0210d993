/**
 * What a route or an outcome of one rule reads and counts, kept together in one object made at
 * the rule's first route or outcome: the rule's decision fields as last read from its
 * shared-memory rows (override applied), the segment's decision epoch they were read at, the
 * replies written from them; the processor ids an outcome is checked against, its processors'
 * outcome windows and whether their runs of technical failures are at 0; and the routes and
 * outcomes counted since the counts were last added to the rows. The tenants' trie memo
 * answers this object (routing/trie.ts), and so does the tenant's map of the rules that had
 * outcomes (Tenant.outcomeCache), so neither a route nor a successful outcome reads the rule
 * (LiveRule, its record, its id strings) or its rows; an outcome writes its window.
 *
 * Why: at 100,000 rules, each route's reads of its rule's LiveRule and two rows were first
 * touches of three pages no cache or TLB entry still held (profiles of issue 20's twentieth
 * pass), and an outcome's reads of the rule map's entry, the LiveRule, its record and its id
 * strings, and its increment of the row's counter, as many more (1.09× the CPU of an outcome at
 * 10 rules, against 1.04× for a route; twenty-ninth pass). Made at the first route or outcome,
 * the caches of the rules that take traffic sit side by side in memory. A route reads its
 * rule's rows again only when the segment's decision epoch moved (shm/layout.ts: a publish
 * into any rule of the segment moves it, right after the seqlock closes, so a worker's publish
 * is seen by the next route as before); routes and outcomes add their counts to the rows in a
 * batch (shm/rule-counts.ts).
 *
 * `R` is the rule (LiveRule: tenants/tenant.ts, which imports this module). Every field holds
 * its final kind from the start (fractions as NaN, not 1 or 0), so the first change under load
 * does not change the object's layout and deoptimise the route handler.
 */
import { Buffer } from 'node:buffer';
import type { DecisionSource } from '../shm/layout.js';
import type { RuleTally } from '../shm/rule-counts.js';

const NO_BYTES = Buffer.alloc(0);

/** An epoch no segment ever has (decisionEpoch() is never negative): the next route reads the rows. */
export const STALE_EPOCH = -1;

export class RuleCache<R> implements RuleTally {
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
  // RuleTally: routes and outcomes not yet added to the rule's row.
  /** The slot's RI_GENERATION, read when the tally is queued (shm/rule-counts.ts). */
  generation = 0;
  routedPrimary = 0;
  routedSecondary = 0;
  /** OUTCOME_COUNTS (6) zeros: a literal, so that the array holds small integers packed (no holes). */
  readonly outcomes: number[] = [0, 0, 0, 0, 0, 0];
  queued = false;
  /**
   * The ids an outcome's processor_id is compared with (0 primary, 1 secondary): the rule's, until
   * an outcome names one, then that outcome's string, which the body decoder's cache gives again
   * for the same bytes (http/json-bytes.ts asciiString), so that the next compare is of one
   * string with itself and reads no characters.
   */
  primaryId: string;
  secondaryId: string;
  /** The rule's processors are one (its primary is its own fallback): one outcome window. */
  readonly selfFallback: boolean;
  /**
   * The outcome windows of the primary and the secondary (-1 until the first outcome asks the
   * tables): a live rule's windows never move (a PATCH that carries them makes a new rule, and a
   * new cache), so an outcome reads them here and not in the rule's Int32 row.
   */
  windowPrimary = -1;
  windowSecondary = -1;
  /**
   * The processor's run of technical failures in the row is known to be 0: this path read or
   * wrote 0 there last. Only an outcome through this cache makes a run non-zero (a PATCH's
   * carried run is in a new rule's slot, with a new cache; the recover command only writes 0),
   * so a successful outcome while it holds reads nothing of the row.
   */
  runPrimaryAtZero = false;
  runSecondaryAtZero = false;

  constructor(
    /** The rule, read only when the rows are (its override) and for a reply or decision record written anew. */
    readonly rule: R,
    /** The rule's slot, kept here although the rule has it: a route reads this object and not the rule (see above). */
    readonly slot: number,
    primaryId: string,
    secondaryId: string,
  ) {
    this.primaryId = primaryId;
    this.secondaryId = secondaryId;
    this.selfFallback = primaryId === secondaryId;
  }
}
