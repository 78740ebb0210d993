/**
 * How much of Tier 2's calibrated failure probability enters the bandit's sampled reward.
 *
 * Tier 2 publishes q = P(this processor's error rate exceeds the failover threshold within a minute).
 * allocate.ts folds a probability into each sampled approval rate as a mixture with a failing
 * processor: approval · (1 − q) + failingPrior · q, so every point of q costs the arm ~0.9
 * points of approval. A healthy processor's q is not 0 but a small, fluctuating base rate
 * (0.00–0.03 in the simulator's steady scenarios): fed in raw, that noise alone outweighs the
 * 1–3 point approval differences the bandit exists to exploit, and a 0.95 processor with
 * q = 0.025 "loses" to a 0.93 one with q = 0 (measured: 28 % of traffic on the worse processor
 * over 10 minutes). So the base rate is cut off and the rest rescaled to [0, 1]:
 *
 *   q_eff = max(0, (q − floor) / (1 − floor))
 *
 * With the default floor 0.1: q ≤ 0.1 is ignored; q = 0.3 weighs 0.22 (the arm's sampled
 * approval drops ~20 points, so traffic leaves unless the other processor is as risky); q = 0.5
 * weighs 0.44; q = 1 weighs 1.
 */

/** Below this, a failure probability is treated as the healthy base rate and ignored. */
export const DEFAULT_RISK_FLOOR = 0.1;

/** The failure probability allocate() should use; NaN/null/undefined (Tier 2 off) → 0. */
export function effectiveRisk(q: number | null | undefined, floor: number = DEFAULT_RISK_FLOOR): number {
  if (q == null || !(q > floor)) return 0;
  if (q >= 1) return 1;
  return floor > 0 ? (q - floor) / (1 - floor) : q;
}
