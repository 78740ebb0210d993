/**
 * How Foresight turns the primary's calibrated failure probability into a primary share: in
 * proportion to the risk, not behind a confirmation delay. A share moved early to a healthy,
 * comparably good secondary costs almost nothing; a late shift costs failed payments.
 *
 *   risk r = clamp((p − thr) / (1 − thr), 0, 1)        p: the primary's probability (min over
 *                                                      the last `confirmSteps` steps, default 1)
 *   advantage a = (1 − pS / p) · q                      how much safer the secondary is now
 *   evidence c = V / (V + EVIDENCE_HALF)               V: the rule's outcomes over the last minute
 *   rise e                                              how sure the primary's error rate (or p95
 *                                                      latency) is above its own usual (rise.ts)
 *   cut = min(1, gain · r) · a · c · e · trust          trust: 0 → 1 over the model's first 3 minutes
 *   share = max(floor, configured · (1 − cut))         (`prediction` when it is below configured)
 *
 * e is what lets the gain be high (5): at 20 tx/s a ramp starting from 2% and a noisy stretch
 * of a processor usually at 10% get the same probability (0.2-0.4), but only the ramp is far
 * above its own usual rate. Without a rise there is no cut, whatever the probability.
 *
 * c is how much the probability can be trusted to tell a real trend from noise: at 2 tx/s a
 * minute holds 120 outcomes and a random run of errors looks like the start of a ramp (on steady
 * 3% noise the probability reaches 0.8 there), so the cut stays small (c = 0.17, at most 17%);
 * at 20 tx/s c = 0.67, at 50 tx/s 0.83. It is the rule's volume (both processors), not the
 * primary's, so a cut does not weaken its own evidence.
 *
 * q scales the advantage down when the secondary's own error rate over the last minute is
 * above the primary's (1 at or below it, 0 when it is ERROR_MARGIN higher): moving traffic to
 * a processor that currently fails more buys nothing. The cut grows with p and with the
 * secondary's advantage and shrinks as either falls; it is a function of the current values
 * only, so traffic returns as the risk passes with no state to unwind. A cut under MIN_CUT
 * is not applied, so steady noise leaves the decision alone.
 *
 * The probability is "the error rate exceeds the failover threshold within 60 s" (see
 * models/MODEL_CARD.md), so it rises while a ramp is still well below the threshold, and also
 * on the way up a harmless bump (a bump's crest cannot be told from a ramp passing the same
 * level until it turns): some movement on bumps is the price of the lead. Raise `thr` or
 * lower `gain` to trade lead for less movement. No action during the first WARMUP_STEPS
 * (30 s) after the model (re)starts on a processor, and the cut is scaled by the trust that
 * builds up over its first 3 minutes (state.ts TRUST_STEPS). The floor keeps a trickle on the primary
 * so that its outcomes stay observable: Tier 1 can still fail it over, or the risk be seen to
 * pass.
 */
import { tierConfigError } from '../tier-config-error.js';
import { PROB_HISTORY } from '../../shm/layout.js';

export interface ForesightConfig {
  /** Calibrated probability above which traffic starts to move (the dead zone). */
  readonly actionThreshold: number;
  /** Slope of the cut: the fraction of the configured share removed is min(1, gain · risk) · advantage. */
  readonly shiftGain: number;
  /** The primary's share never goes below this because of a prediction. */
  readonly minPrimaryShare: number;
  /** GRU steps (5 s each) the probability is taken over (their minimum): 1 acts on the current one. */
  readonly confirmSteps: number;
}

export const DEFAULT_FORESIGHT_CONFIG: ForesightConfig = Object.freeze({
  actionThreshold: 0.2,
  shiftGain: 5,
  minPrimaryShare: 0.1,
  confirmSteps: 1,
});

/** Defaults overlaid with `overrides`, validated; throws a TierConfigError naming the field. */
export function resolveForesightConfig(overrides: Partial<ForesightConfig> = {}): ForesightConfig {
  const c = { ...DEFAULT_FORESIGHT_CONFIG, ...overrides };
  const check = (field: keyof ForesightConfig, ok: boolean): void => {
    if (!ok) throw tierConfigError('foresight', field);
  };
  check('actionThreshold', c.actionThreshold > 0 && c.actionThreshold < 1);
  check('shiftGain', c.shiftGain > 0 && c.shiftGain <= 1000);
  check('minPrimaryShare', c.minPrimaryShare >= 0 && c.minPrimaryShare <= 1);
  check('confirmSteps', Number.isInteger(c.confirmSteps) && c.confirmSteps >= 1 && c.confirmSteps <= PROB_HISTORY);
  return Object.freeze(c);
}

/** A secondary this much (error rate, last minute) worse than the primary gets no traffic from Foresight. */
export const ERROR_MARGIN = 0.1;
/** Cuts smaller than this fraction of the configured share are not applied. */
export const MIN_CUT = 0.01;
/** Rule outcomes per minute at which the evidence factor is 1/2 (10 tx/s). */
export const EVIDENCE_HALF = 600;

/** The evidence factor c for `volume` outcomes over the last minute on the rule. */
export function evidenceFactor(volume: number): number {
  return volume > 0 ? volume / (volume + EVIDENCE_HALF) : 0;
}

/**
 * The primary share Foresight wants, or NaN when it does not act (p at or below the
 * threshold, p unknown, the secondary no safer, or a cut under MIN_CUT). Never above
 * `configured`. `errPrimary` / `errSecondary`: error rates over the last minute (NaN: unknown,
 * no penalty); `volume`: the rule's outcomes over the last minute (default: ample); `trust`:
 * how long the model has run on the primary (state.ts trustOf, default 1).
 */
export function predictedShare(
  configured: number,
  pPrimary: number,
  pSecondary: number,
  cfg: ForesightConfig,
  errPrimary = NaN,
  errSecondary = NaN,
  volume = Infinity,
  trust = 1,
  rise = 1,
): number {
  const thr = cfg.actionThreshold;
  if (!(pPrimary > thr)) return NaN;
  const risk = Math.min(1, (pPrimary - thr) / (1 - thr));
  const safer = Number.isNaN(pSecondary) ? 1 : Math.max(0, 1 - pSecondary / pPrimary);
  const excess = errSecondary - errPrimary;
  const q = excess > 0 ? Math.max(0, 1 - excess / ERROR_MARGIN) : 1;
  const evidence = volume === Infinity ? 1 : evidenceFactor(volume);
  const cut = Math.min(1, cfg.shiftGain * risk) * safer * q * evidence * trust * rise;
  if (!(cut >= MIN_CUT)) return NaN;
  return Math.min(configured, Math.max(cfg.minPrimaryShare, configured * (1 - cut)));
}
