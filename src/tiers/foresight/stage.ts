/**
 * Tier 2 (Foresight) as a rule stage (the contract: src/tiers/stage.ts), run after Tier 1 on
 * every rule of every evaluation:
 *
 * - prediction enabled: advance both processors' GRUs (one step per STEP_MS, see state.ts),
 *   publish their calibrated failure probabilities (PF_FAILURE_PROB and the decision's
 *   probabilities), and cut the primary share in proportion to the primary's risk and the
 *   secondary's advantage as policy.ts describes, with decision source `prediction`. When
 *   Tier 1 overrides (a processor failed_over, its slow-start recovery included, a
 *   self-fallback rule) the probabilities are still published but no cut is proposed (the
 *   pipeline keeps Tier 1's share regardless).
 * - prediction disabled: the probabilities are NaN (null in the API) and the stage's state is
 *   cleared, so re-enabling starts cold; the decision is untouched, i.e. exactly Tier 1.
 *
 * The stage runs for every rule (it has no `enabled` hook) so that switching prediction off at
 * runtime also clears the published probabilities; when off it costs two comparisons per rule.
 */
import { DecisionSource, G_STEPS, PF_ERROR_RATE, PF_FAILURE_PROB, PF_SAMPLE_COUNT, WINDOW_MASK } from '../../shm/layout.js';
import type { DecisionFields } from '../../shm/decision.js';
import type { ProcessorContext, RuleStage, RuleStageContext } from '../stage.js';
import { newGruScratch, type GruScratch } from './gru-kernel.js';
import { loadModel, type ForesightModel } from './model.js';
import { predictedShare } from './policy.js';
import { riseEvidence } from './rise.js';
import { clearForesightState, heldProbability, trustOf } from './state.js';
import { advanceProcessor, newStepResult, type StepResult } from './step.js';

export interface StepObservation {
  processor: 0 | 1;
  nowMs: number;
  step: Readonly<StepResult>;
  ctx: Readonly<RuleStageContext>;
}

export interface ForesightStageOptions {
  /** Default: `models/foresight-gru.json`, loaded on first use. */
  model?: ForesightModel;
  /** Called after each GRU step (evaluation and tests; not used by the service). */
  onStep?: (o: StepObservation) => void;
}

export function createForesightStage(opts: ForesightStageOptions = {}): RuleStage {
  let model = opts.model;
  let scratch: GruScratch | undefined;
  const results = [newStepResult(), newStepResult()];
  const obs: StepObservation = { processor: 0, nowMs: 0, step: results[0], ctx: undefined as unknown as RuleStageContext };

  function advance(ctx: RuleStageContext, k: 0 | 1, p: ProcessorContext, m: ForesightModel): StepResult {
    const r = advanceProcessor(m, scratch ?? null, ctx.rules.procF64, p.row, p.window, p.windowIndex, ctx.nowMs, results[k]);
    if (r.stepped && opts.onStep !== undefined) {
      obs.processor = k;
      obs.nowMs = ctx.nowMs;
      obs.step = r;
      obs.ctx = ctx;
      opts.onStep(obs);
    }
    return r;
  }

  return {
    name: 'foresight',
    apply(ctx: RuleStageContext, decision: DecisionFields): void {
      const procF64 = ctx.rules.procF64;
      const cfg = ctx.config;
      if (!cfg.predictionEnabled) {
        disable(procF64, ctx.primary.row);
        disable(procF64, ctx.secondary.row);
        return;
      }
      const m = (model ??= loadModel());
      scratch ??= newGruScratch(m);
      const rp = advance(ctx, 0, ctx.primary, m);
      // A self-fallback rule has one processor: its row pair mirrors one state.
      const rs = ctx.sameProcessor ? rp : advance(ctx, 1, ctx.secondary, m);
      procF64[ctx.primary.row + PF_FAILURE_PROB] = rp.prob;
      procF64[ctx.secondary.row + PF_FAILURE_PROB] = rs.prob;
      decision.failProbPrimary = rp.prob;
      decision.failProbSecondary = rs.prob;
      // No cut to propose while Tier 1 overrides: runStages would discard it, and Tier 3 must not see it as a cap.
      if (ctx.tier1Override) return;
      // Act on the primary's risk (over confirmSteps, default the current step; held one step)
      // against the secondary's current one.
      const fc = cfg.foresight;
      const risk = heldProbability(procF64, ctx.primary.row, fc.confirmSteps);
      // Only worth reading the window when the policy may act at all.
      const rise =
        risk > fc.actionThreshold
          ? riseEvidence(procF64, ctx.primary.row, ctx.primary.window, ctx.primary.windowIndex & WINDOW_MASK, ctx.nowMs, cfg.tier1.failoverThreshold)
          : 0;
      const share = predictedShare(
        ctx.configWeight,
        risk,
        rs.prob,
        fc,
        procF64[ctx.primary.row + PF_ERROR_RATE],
        procF64[ctx.secondary.row + PF_ERROR_RATE],
        procF64[ctx.primary.row + PF_SAMPLE_COUNT] + (ctx.sameProcessor ? 0 : procF64[ctx.secondary.row + PF_SAMPLE_COUNT]),
        trustOf(procF64, ctx.primary.row),
        rise,
      );
      if (share < decision.primaryShare) {
        decision.primaryShare = share;
        decision.source = DecisionSource.Prediction;
      }
    },
  };
}

/** Prediction off: NaN probability and a cold state (written only when not already so). */
function disable(procF64: Float64Array, row: number): void {
  if (procF64[row + G_STEPS] !== 0 || !Number.isNaN(procF64[row + PF_FAILURE_PROB])) {
    clearForesightState(procF64, row);
    procF64[row + PF_FAILURE_PROB] = NaN;
  }
}

/** The stage the worker pipeline registers (model loaded on the first enabled rule). */
export const foresightStage: RuleStage = createForesightStage();
