/**
 * The decision fields the route path reads as one unit, published under the rule's seqlock.
 * Writer: the worker evaluating the rule's tenant. Reader: the front thread, when a route finds
 * the segment's decision epoch moved since it last read the rule (routing/rule-cache.ts).
 */
import {
  RF_FAILPROB_PRIMARY,
  RF_FAILPROB_SECONDARY,
  RF_PRIMARY_SHARE,
  RI_DECISION_SOURCE,
  RI_SEQ,
  RULE_F64_STRIDE,
  RULE_I32_STRIDE,
  type DecisionSource,
  type RuleSegmentViews,
} from './layout.js';

export interface DecisionFields {
  primaryShare: number;
  source: DecisionSource;
  failProbPrimary: number; // NaN = null
  failProbSecondary: number;
}

export function publishDecision(seg: RuleSegmentViews, i: number, d: DecisionFields): void {
  const ib = i * RULE_I32_STRIDE;
  const fb = i * RULE_F64_STRIDE;
  Atomics.add(seg.ruleI32, ib + RI_SEQ, 1); // odd: write in progress
  seg.ruleF64[fb + RF_PRIMARY_SHARE] = d.primaryShare;
  seg.ruleF64[fb + RF_FAILPROB_PRIMARY] = d.failProbPrimary;
  seg.ruleF64[fb + RF_FAILPROB_SECONDARY] = d.failProbSecondary;
  seg.ruleI32[ib + RI_DECISION_SOURCE] = d.source;
  Atomics.add(seg.ruleI32, ib + RI_SEQ, 1); // even: consistent
  Atomics.add(seg.decisionEpochs, seg.segment, 1); // route caches of the segment read their rows again (layout.ts)
}

/**
 * Segment `segment`'s decision epoch in `epochs` (SharedTables.decisionEpochs): it moves after
 * every publishDecision into the segment. Never negative (the counter's sign bit is dropped, so
 * a reader may keep a negative value for "not read yet"); it comes back to a value after 2^31
 * publishes into one segment, as the seqlock's own counter does.
 */
export function decisionEpoch(epochs: Int32Array, segment: number): number {
  // A plain read, not Atomics.load: V8 11 does not inline Atomics.load (a builtin call, ~100
  // instructions on every route), and this value orders nothing. A 32-bit element reads whole
  // (never torn); one a moment old only delays the re-read by a route, and the rows themselves
  // are read under their seqlock with Atomics (readDecision).
  return epochs[segment] & 0x7fffffff;
}

/** Reads a consistent snapshot into `out` (reused by the caller: no allocation per route). */
export function readDecision(seg: RuleSegmentViews, i: number, out: DecisionFields): DecisionFields {
  const ib = i * RULE_I32_STRIDE;
  const fb = i * RULE_F64_STRIDE;
  for (;;) {
    const v1 = Atomics.load(seg.ruleI32, ib + RI_SEQ);
    if ((v1 & 1) === 0) {
      out.primaryShare = seg.ruleF64[fb + RF_PRIMARY_SHARE];
      out.failProbPrimary = seg.ruleF64[fb + RF_FAILPROB_PRIMARY];
      out.failProbSecondary = seg.ruleF64[fb + RF_FAILPROB_SECONDARY];
      out.source = seg.ruleI32[ib + RI_DECISION_SOURCE] as DecisionSource;
      if (Atomics.load(seg.ruleI32, ib + RI_SEQ) === v1) return out;
    }
  }
}
