/**
 * The route replies last written for one rule, one per side, and the decision values they show
 * (http/json-writers.ts's routeReplyBytes fills and reads it). A rule's weights and failure
 * probabilities move once per evaluation cycle, not per request, so nearly every route of a
 * rule sends the bytes the one before sent.
 *
 * Made on the rule's first route, not with the rule: the rules that take traffic then have
 * their replies side by side in memory, where a route reads them, instead of one per page
 * among all the rules loaded at start (at 100,000 rules the route path's extra cost over
 * 1,000 was in such scattered reads). A route that finds its values unchanged reads the
 * LiveRule (its slot, override and this object), this object and the rule's two shared-memory
 * rows: not the rule's record, not its id strings.
 *
 * Every field holds its final kind from the start (fractions as NaN, not 1 or 0), so the first
 * change under load does not change the object's layout and deoptimise the route handler.
 */
import { Buffer } from 'node:buffer';

const NO_BYTES = Buffer.alloc(0);

export class RuleReplies {
  /** The decision fields the replies were written from (pickSide's `picked`, override applied). */
  share = Number.NaN;
  source = -1;
  failProbPrimary = Number.NaN;
  failProbSecondary = Number.NaN;
  /** The tenant's Tier 2 switch when they were written (failure_probability is null while off). */
  predictionEnabled = false;
  /** The reply taking the primary (side 0) and the secondary (side 1), UTF-8. */
  primary: Buffer = NO_BYTES;
  secondary: Buffer = NO_BYTES;
}
