/**
 * The contract between the rule pipeline (src/engine/worker/rule.ts) and the tiers after
 * Tier 1. Per rule and evaluation, Tier 1 (tier1/stage.ts) judges both processors and sets
 * its primary share; then each stage, in order, may adjust the decision (share, source,
 * failure probabilities) and write its own state in the processor rows (PF_GRU_*,
 * PF_BANDIT_*, PF_FAILURE_PROB, PF_BANDIT_WEIGHT). `runStages` is the one place that enforces
 * "Tier 1 always wins": when Tier 1 overrides (a processor failed_over, its slow-start
 * recovery included, a self-fallback rule) or a stage left an invalid share, Tier 1's share
 * and the `rules` source are restored after the stages.
 */
import { DecisionSource, type RuleSegmentViews, type WindowSegmentViews } from '../shm/layout.js';
import type { DecisionFields } from '../shm/decision.js';
import type { TierConfig } from './config.js';
import type { ProcState } from './tier1/state.js';

export interface ProcessorContext {
  /** Offset of the processor's row in `rules.procF64`. */
  row: number;
  /** Its outcome window, undefined until its first outcome. */
  window: WindowSegmentViews | undefined;
  windowIndex: number;
  /** Tier 1 state after this evaluation (read only). */
  tier1: Readonly<ProcState>;
}

/** One rule being evaluated; the object is reused from rule to rule, do not keep it. */
export interface RuleStageContext {
  slot: number;
  /** The rule's segment and index in it. */
  rules: RuleSegmentViews;
  index: number;
  nowMs: number;
  config: TierConfig;
  configWeight: number;
  sameProcessor: boolean;
  primary: ProcessorContext;
  secondary: ProcessorContext;
  /** Tier 1's primary share, and whether Tier 1 overrides (then the stages' shares are discarded). */
  tier1Share: number;
  tier1Override: boolean;
  /**
   * Tier 2's cut: the primary share Foresight lowered the decision to (a decision left with
   * source `prediction`) before the stage now running, NaN when it did not cut. Tier 3 never
   * gives the primary more than this. Set by `runStages`; stages read it.
   */
  foresightCap: number;
}

export interface RuleStage {
  readonly name: string;
  /**
   * Optional: false skips the stage for the tenant. The tiers' own stages have none: they run
   * for every rule, so that switching a tier off at runtime also clears what it published.
   */
  enabled?(config: TierConfig): boolean;
  apply(ctx: RuleStageContext, decision: DecisionFields): void;
}

/**
 * Runs `stages` over a decision that holds Tier 1's share (ctx.tier1Share), then enforces that
 * Tier 1 wins when it overrides and that the share published is a probability.
 */
export function runStages(ctx: RuleStageContext, stages: readonly RuleStage[], decision: DecisionFields): void {
  decision.primaryShare = ctx.tier1Share;
  decision.source = DecisionSource.Rules;
  decision.failProbPrimary = NaN;
  decision.failProbSecondary = NaN;
  ctx.foresightCap = NaN;
  for (const stage of stages) {
    if (stage.enabled !== undefined && !stage.enabled(ctx.config)) continue;
    stage.apply(ctx, decision);
    // (a stage rewrote the source; the cast undoes the narrowing from the assignment above)
    ctx.foresightCap = (decision.source as DecisionSource) === DecisionSource.Prediction ? decision.primaryShare : NaN;
  }
  if (ctx.tier1Override || !(decision.primaryShare >= 0 && decision.primaryShare <= 1)) {
    decision.primaryShare = ctx.tier1Share;
    decision.source = DecisionSource.Rules;
  }
}
