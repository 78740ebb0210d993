/**
 * One Tier 3 allocation: posteriors + Tier 1 status + Tier 2 failure probability → weights.
 *
 * Why probability-of-best rather than one Thompson draw per routed payment: the route path must
 * stay a few shared-memory reads and one random number, so sampling happens here, once per rule
 * per cycle, and the front thread picks by weight. Routing each payment to arm i with probability
 * P(i is best) is exactly what per-payment Thompson sampling does in expectation, and averaging
 * `samples` draws keeps the weights from jumping between cycles.
 *
 * Then the hard constraints (see waterfill.ts):
 * - a failed_over arm gets exactly `probeShare` (a cap it never exceeds, and also the trickle
 *   Tier 1 needs to detect recovery: its posterior is stale by construction, so the probe must not
 *   depend on it). `probeShare` 0 suspends probes;
 * - every other arm (healthy or degraded) gets at least `explorationFloor`, so a losing processor
 *   keeps being measured and a drift in its favour is noticed;
 * - what is left is shared in proportion to the probability of being best among those arms,
 *   pulled toward the operator's configured weights (`preferred`) as far as the evidence is
 *   weak: with s the separation of the arms' credible intervals (0 while they overlap,
 *   1 once the gap is as wide as the overlap margin; evidenceStrength), the score is
 *   (1 − s) · preferred + s · P(best). Two equally good processors keep the configured split;
 *   a clearly better one takes the traffic as before.
 */
import type { ArmStatus } from './arms.js';
import type { BanditConfig } from './config.js';
import { DEFAULT_BANDIT_CONFIG } from './config.js';
import { isValidPosterior, type Posterior } from './posterior.js';
import { Sampler, type Rng } from './sampling.js';
import { waterFill } from './waterfill.js';

export interface ArmInput {
  /** Posterior already decayed to now (`observe` or `decay` do that). */
  readonly posterior: Posterior;
  readonly status: ArmStatus;
  /** Tier 2 failure probability in [0, 1]; null/undefined/NaN when Tier 2 is off (counts as 0). */
  readonly failureProbability?: number | null;
}

export interface AllocateOptions {
  /**
   * Arm that carries the traffic when every arm is failed_over. Tier 1 policy sends traffic to
   * the secondary, so the default is index 1 (index 0 for a single-arm rule).
   */
  readonly fallbackIndex?: number;
  /** Reuse this array instead of allocating one; its length MUST equal arms.length. */
  readonly out?: Float64Array;
  /**
   * The operator's configured weights in arm order (e.g. primary_weight, 1 − primary_weight):
   * the allocation when the evidence does not separate the arms. Absent: no preference.
   */
  readonly preferred?: ArrayLike<number>;
}

/** Credible intervals compared for a tie: mean ± CI_Z standard deviations (68 %). */
export const CI_Z = 1;

/**
 * How clearly the posteriors separate the live arms, in [0, 1]: 0 while the credible intervals
 * (mean ± CI_Z sd, Tier 2's risk folded in as in the draws) of the two best-separated arms
 * overlap (the bandit cannot tell them apart), rising linearly to 1 when the gap between the
 * intervals is as wide as the overlap margin itself.
 */
export function evidenceStrength(
  arms: readonly ArmInput[],
  live: ArrayLike<boolean>,
  cfg: Pick<BanditConfig, 'priorAlpha' | 'priorBeta' | 'failingPrior'>,
): number {
  let best = 0;
  for (let i = 0; i < arms.length; i++) {
    if (!live[i]) continue;
    for (let j = i + 1; j < arms.length; j++) {
      if (!live[j]) continue;
      const [mi, si] = riskAdjustedMeanSd(arms[i], cfg);
      const [mj, sj] = riskAdjustedMeanSd(arms[j], cfg);
      const margin = CI_Z * (si + sj);
      const s = margin > 0 ? (Math.abs(mi - mj) - margin) / margin : 1;
      if (s > best) best = s;
    }
  }
  return Math.min(1, best);
}

/** Mean and sd of the arm's approval posterior with Tier 2's failure probability folded in, as the draws are. */
function riskAdjustedMeanSd(arm: ArmInput, cfg: Pick<BanditConfig, 'priorAlpha' | 'priorBeta' | 'failingPrior'>): [number, number] {
  const p = arm.posterior;
  const ok = isValidPosterior(p);
  const a = ok ? p.alpha : cfg.priorAlpha;
  const b = ok ? p.beta : cfg.priorBeta;
  const n = a + b;
  const q = clamp01(arm.failureProbability);
  const sd = Math.sqrt((a * b) / (n * n * (n + 1)));
  return [riskAdjusted(a / n, q, clamp01(cfg.failingPrior)), sd * (1 - q)];
}

/**
 * Blends `score` (probabilities of being best over the `live` arms) with the preferred weights
 * by the strength of the evidence s: (1 − s) · preferred + s · score. In place.
 */
export function preferOnTies(score: Float64Array, live: ArrayLike<boolean>, preferred: ArrayLike<number>, s: number): Float64Array {
  const prefSum = preferenceSum(live, preferred);
  if (!(prefSum > 0)) return score;
  const k = Math.min(1, Math.max(0, s));
  for (let i = 0; i < score.length; i++) {
    if (!live[i]) continue;
    const pref = (preferred[i] > 0 ? preferred[i] : 0) / prefSum;
    score[i] = (1 - k) * pref + k * score[i];
  }
  return score;
}

/** The preferred weights' sum over the live arms; 0 when fewer than two arms are live (nothing to prefer between). */
function preferenceSum(live: ArrayLike<boolean>, preferred: ArrayLike<number>): number {
  let prefSum = 0;
  let count = 0;
  for (let i = 0; i < live.length; i++) {
    if (!live[i]) continue;
    count++;
    prefSum += preferred[i] > 0 ? preferred[i] : 0;
  }
  return count < 2 ? 0 : prefSum;
}

/** Tier 2 risk folded into a sampled approval rate: a processor that fails approves ~failingPrior. */
export function riskAdjusted(approval: number, failureProbability: number, failingPrior: number): number {
  return approval * (1 - failureProbability) + failingPrior * failureProbability;
}

/**
 * Monte Carlo estimate of P(arm i has the highest risk-adjusted approval rate), over the arms
 * where `eligible[i]` is true (others get 0). A tie splits the win. With no samples, or fewer than
 * two eligible arms, every eligible arm gets an equal share. Draw order: sample-major, arm order.
 */
export function probabilityOfBest(
  arms: readonly ArmInput[],
  eligible: ArrayLike<boolean>,
  rng: Rng,
  cfg: Pick<BanditConfig, 'samples' | 'failingPrior' | 'priorAlpha' | 'priorBeta'> = DEFAULT_BANDIT_CONFIG,
  out: Float64Array = new Float64Array(arms.length),
): Float64Array {
  const n = arms.length;
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  const q = new Float64Array(n);
  const draw = new Float64Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    out[i] = 0;
    if (!eligible[i]) continue;
    count++;
    const p = arms[i].posterior;
    const ok = isValidPosterior(p);
    a[i] = ok ? p.alpha : cfg.priorAlpha;
    b[i] = ok ? p.beta : cfg.priorBeta;
    q[i] = clamp01(arms[i].failureProbability);
  }
  const samples = cfg.samples > 0 ? Math.floor(cfg.samples) : 0;
  if (count === 0) return out;
  if (count === 1 || samples === 0) {
    for (let i = 0; i < n; i++) if (eligible[i]) out[i] = 1 / count;
    return out;
  }
  const fp = clamp01(cfg.failingPrior);
  const leader = clearLeader(arms, eligible, cfg);
  if (leader >= 0) {
    out[leader] = 1;
    return out;
  }
  const sampler = new Sampler(rng);
  for (let k = 0; k < samples; k++) {
    let best = -Infinity;
    let ties = 0;
    for (let i = 0; i < n; i++) {
      if (!eligible[i]) continue;
      // q = 1 makes the draw irrelevant; skip it (saves two Gamma draws).
      const v = q[i] === 1 ? fp : riskAdjusted(sampler.beta(a[i], b[i]), q[i], fp);
      draw[i] = v;
      if (v > best) {
        best = v;
        ties = 1;
      } else if (v === best) ties++;
    }
    const credit = 1 / ties;
    for (let i = 0; i < n; i++) if (eligible[i] && draw[i] === best) out[i] += credit;
  }
  for (let i = 0; i < n; i++) out[i] /= samples;
  return out;
}

/**
 * Separation (in standard deviations of the difference) past which the draws are skipped: the
 * leading arm's mean is this far above every other eligible arm's. A draw in which another arm
 * wins then needs a deviation no Beta posterior a service holds reaches in practice (even for
 * the most skewed, Beta(a, 1), a crossing is about 1 in 10⁴ per draw at 8 sd, and one crossing
 * among `samples` draws moves the estimate by 1/samples), so the draws would give the leader
 * all or nearly all of the credit: 1 is what is returned, with no random number taken.
 */
export const CLEAR_LEAD_SD = 8;

/**
 * The eligible arm whose risk-adjusted mean is at least CLEAR_LEAD_SD standard deviations of
 * the difference above every other eligible arm's, or -1. Why: at Tier 3 most of a cycle's
 * time was these draws (about 40 µs a rule at 256 samples), and with outcomes flowing most
 * rules' processors are far apart (a failing one, or Tier 2's risk on one of them).
 */
function clearLeader(arms: readonly ArmInput[], eligible: ArrayLike<boolean>, cfg: Pick<BanditConfig, 'priorAlpha' | 'priorBeta' | 'failingPrior'>): number {
  let leader = -1;
  let lead: [number, number] = [-Infinity, 0];
  for (let i = 0; i < arms.length; i++) {
    if (!eligible[i]) continue;
    const meanSd = riskAdjustedMeanSd(arms[i], cfg);
    if (meanSd[0] > lead[0]) {
      lead = meanSd;
      leader = i;
    }
  }
  for (let j = 0; j < arms.length; j++) {
    if (!eligible[j] || j === leader) continue;
    const [mean, sd] = riskAdjustedMeanSd(arms[j], cfg);
    if (!(lead[0] - mean > CLEAR_LEAD_SD * Math.hypot(lead[1], sd))) return -1;
  }
  return leader;
}

/**
 * Traffic weights in arm order, summing to 1. Deterministic given `rng` and the inputs.
 * - no arms: empty; one arm: [1] whatever its status (there is nowhere else to send traffic);
 * - every arm failed_over: the fallback arm (see AllocateOptions) takes the traffic, the others
 *   keep their recovery probe;
 * - bounds that cannot all be met (absurd floors for many arms) degrade as waterfill.ts documents.
 */
export function allocate(
  arms: readonly ArmInput[],
  rng: Rng,
  cfg: BanditConfig = DEFAULT_BANDIT_CONFIG,
  options: AllocateOptions = {},
): Float64Array {
  const n = arms.length;
  const out = options.out ?? new Float64Array(n);
  if (out.length !== n) throw new RangeError('allocate: options.out must have one element per arm');
  if (n <= 1) {
    if (n === 1) out[0] = 1;
    return out;
  }
  const floor = clamp01(cfg.explorationFloor);
  const probe = clamp01(cfg.probeShare);
  const live: boolean[] = new Array<boolean>(n);
  const lo = new Float64Array(n);
  const hi = new Float64Array(n);
  let liveCount = 0;
  for (let i = 0; i < n; i++) {
    live[i] = arms[i].status !== 'failed_over';
    if (live[i]) liveCount++;
    lo[i] = live[i] ? floor : probe;
    hi[i] = live[i] ? 1 : probe;
  }
  const score = new Float64Array(n);
  if (liveCount === 0) {
    const fb = Math.min(Math.max(Math.trunc(options.fallbackIndex ?? 1) || 0, 0), n - 1);
    lo[fb] = 0;
    hi[fb] = 1;
    score[fb] = 1;
  } else {
    const preferred = options.preferred;
    const s = preferred === undefined ? NaN : evidenceStrength(arms, live, cfg);
    // When the evidence does not separate the arms (s = 0), preferOnTies replaces every live
    // arm's score by its preferred share and the draws would be thrown away: skip them. Same
    // weights, and most of a cycle's Tier 3 time saved on rules whose processors are alike.
    if (!(s <= 0 && preferred !== undefined && preferenceSum(live, preferred) > 0)) probabilityOfBest(arms, live, rng, cfg, score);
    if (preferred !== undefined) preferOnTies(score, live, preferred, s);
  }
  return waterFill(score, lo, hi, 1, out);
}

function clamp01(v: number | null | undefined): number {
  return v != null && v > 0 ? (v < 1 ? v : 1) : 0; // null, undefined, NaN, negatives → 0
}
