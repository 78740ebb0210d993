/**
 * The hook for later tiers. After Tier 1 has set statuses and its primary share, each enabled
 * stage may adjust the decision (share, source, failure probabilities) and write its own
 * state in the processor rows (PF_GRU_*, PF_BANDIT_*, PF_FAILURE_PROB, PF_BANDIT_WEIGHT).
 * When Tier 1 overrides (a processor failed_over, its slow-start recovery included, a self-fallback
 * rule), its share and the `rules` source are restored after the stages: Tier 1 always wins.
 */
import type { DecisionFields } from '../src/shared/decision.js';
import type { RuleSegmentViews, WindowSegmentViews } from '../src/shared/layout.js';
import type { ProcState } from '../src/engine/tier1/state.js';
import type { TenantEngineConfig } from './protocol.js';
import { autopilotStage } from './autopilot-stage.js';
import { foresightStage } from '../src/engine/foresight/stage.js';

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
  config: TenantEngineConfig;
  configWeight: number;
  sameProcessor: boolean;
  primary: ProcessorContext;
  secondary: ProcessorContext;
  tier1Share: number;
  tier1Override: boolean;
}

export interface RuleStage {
  readonly name: string;
  enabled(config: TenantEngineConfig): boolean;
  apply(ctx: RuleStageContext, decision: DecisionFields): void;
}

/** Stages in pipeline order (Tier 2 before Tier 3, which uses its predictions). */
export const STAGES: readonly RuleStage[] = [
  foresightStage, // Tier 2 (Foresight): writes PF_FAILURE_PROB and may cut the primary's share; see src/engine/foresight/stage.ts
  autopilotStage, // Tier 3 (Autopilot): reads Tier 2's probabilities and cut; see workers/autopilot-stage.ts
];
