/**
 * The stages the worker runs after Tier 1, in pipeline order: Tier 2 before Tier 3, which
 * uses its predictions and its cut. The contract is src/tiers/stage.ts; a new tier adds its
 * stage here (see CONTRIBUTING.md).
 */
import { autopilotStage } from '../../tiers/autopilot/stage.js';
import { foresightStage } from '../../tiers/foresight/stage.js';
import type { RuleStage } from '../../tiers/stage.js';

export const STAGES: readonly RuleStage[] = [
  foresightStage, // Tier 2 (Foresight): writes PF_FAILURE_PROB and may cut the primary's share; src/tiers/foresight/stage.ts
  autopilotStage, // Tier 3 (Autopilot): reads Tier 2's probabilities and cut; src/tiers/autopilot/stage.ts
];
