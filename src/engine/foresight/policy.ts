/**
 * How Foresight turns the primary's calibrated failure probability into a primary share.
 *
 * The risk acted on is sustained: p = the minimum of the primary's probability over its last
 * `confirmSteps` GRU steps (5 s each), so an isolated noisy step, or the crest of a short
 * harmless bump, moves no traffic; each extra step costs up to 5 s of lead. No action during
 * the first WARMUP_STEPS (30 s) after the model (re)starts on a processor.
 *
 *   p ≤ thr:  share = configured                                   (decision source stays `rules`)
 *   p > thr:  share = max(floor, configured · (1 − gain · (p − thr) / (1 − thr)))   (`prediction`)
 *
 * With the defaults (thr 0.6, gain 1, floor 0.1, 4 steps) and a configured weight of 0.9:
 * p = 0.7 → 0.675, p = 0.8 → 0.45, p = 0.9 → 0.225, p ≥ 0.956 → 0.1. The share is a function of
 * the current sustained p only, so traffic moves back as the risk falls with no state to
 * unwind. The floor keeps a trickle on the primary so that its outcomes stay observable: Tier 1
 * can still fail it over (and then take over the decision) or the risk can be seen to pass.
 *
 * Why thr 0.6 held for 4 steps (15 s), chosen on validation seeds (models/MODEL_CARD.md has the
 * whole trade-off table): the label is "Tier 1 fails over within 60 s", and at the crest of a
 * 20 % bump a ramp at the same level is usually less than 60 s from failover, so a calibrated p
 * of 0.5-0.9 there is honest and a bump's crest cannot be told from a ramp passing the same
 * level until the bump turns. A moderate threshold held for 15 s keeps most of the lead on
 * ramps and latency-led incidents, no shift on steady noise, and only part of the harmless
 * bumps shifting (and then mostly partially). Raise the threshold (0.8-0.9) to shift on fewer
 * bumps at the cost of lead; lower it for more lead.
 *
 * No shift when the secondary is at least as likely to fail as the primary: moving traffic
 * toward an equally doomed processor buys nothing.
 */
import { PROB_HISTORY } from './state.js';

export interface ForesightConfig {
  /** Calibrated probability above which traffic starts to move. */
  readonly actionThreshold: number;
  /** Fraction of the configured share removed as p goes from the threshold to 1. */
  readonly shiftGain: number;
  /** The primary's share never goes below this because of a prediction. */
  readonly minPrimaryShare: number;
  /** Consecutive GRU steps (5 s each) the probability must stay above the threshold: 1-4. */
  readonly confirmSteps: number;
}

export const DEFAULT_FORESIGHT_CONFIG: ForesightConfig = Object.freeze({
  actionThreshold: 0.6,
  shiftGain: 1,
  minPrimaryShare: 0.1,
  confirmSteps: 4,
});

/** Defaults overlaid with `overrides`, validated; throws a RangeError naming the field. */
export function resolveForesightConfig(overrides: Partial<ForesightConfig> = {}): ForesightConfig {
  const c = { ...DEFAULT_FORESIGHT_CONFIG, ...overrides };
  const check = (field: keyof ForesightConfig, ok: boolean): void => {
    if (!ok) throw new RangeError(`invalid foresight config: ${field}`);
  };
  check('actionThreshold', c.actionThreshold > 0 && c.actionThreshold < 1);
  check('shiftGain', c.shiftGain > 0 && c.shiftGain <= 1 / (1 - 0.999));
  check('minPrimaryShare', c.minPrimaryShare >= 0 && c.minPrimaryShare <= 1);
  check('confirmSteps', Number.isInteger(c.confirmSteps) && c.confirmSteps >= 1 && c.confirmSteps <= PROB_HISTORY);
  return Object.freeze(c);
}

/**
 * The primary share Foresight wants, or NaN when it does not act (p at or below the
 * threshold, p unknown, or the secondary no safer). Never above `configured`.
 */
export function predictedShare(configured: number, pPrimary: number, pSecondary: number, cfg: ForesightConfig): number {
  const thr = cfg.actionThreshold;
  if (!(pPrimary > thr)) return NaN;
  if (pSecondary >= pPrimary) return NaN;
  const cut = (cfg.shiftGain * (pPrimary - thr)) / (1 - thr);
  const share = configured * (1 - cut);
  return Math.min(configured, Math.max(cfg.minPrimaryShare, share));
}
