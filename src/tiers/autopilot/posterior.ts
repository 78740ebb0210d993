/**
 * Beta–Bernoulli posterior of one arm (one processor of one rule), with time-based discounting.
 *
 * Reward = the payment was approved. Every failure counts against the arm, issuer declines
 * included: the bandit maximises approvals, and processors differ in how often issuers decline.
 *
 * Why discount by time rather than by traffic (a sliding window of N outcomes, or a per-update
 * factor): processors drift on a wall-clock scale (incidents, issuer-side changes), and the engine
 * runs on a ~5 s cycle that sometimes fires early. With a factor 0.5^(elapsed / halfLife), memory
 * is the same at 2 tx/s and at 2000 tx/s, and it composes exactly:
 * 0.5^(a/h) · 0.5^(b/h) = 0.5^((a+b)/h), so the result does not depend on how often we run.
 * An arm that stops receiving traffic (a failed_over processor) relaxes back to its prior, so its
 * uncertainty grows and it is explored again.
 *
 * Only the evidence (alpha − priorAlpha, beta − priorBeta) decays; the prior is never forgotten.
 * The new state is a convex combination of the old one and the prior, so it stays positive even
 * if the prior was changed since the state was written.
 */
import type { BanditConfig } from './config.js';
import { DEFAULT_BANDIT_CONFIG } from './config.js';

export interface Posterior {
  readonly alpha: number;
  readonly beta: number;
}

export interface ArmState extends Posterior {
  /** Clock time (ms) the evidence was last decayed to. */
  readonly updatedAtMs: number;
}

export type PriorConfig = Pick<BanditConfig, 'priorAlpha' | 'priorBeta'>;
export type DecayConfig = Pick<BanditConfig, 'priorAlpha' | 'priorBeta' | 'halfLifeMs'>;

/** A fresh arm: the prior alone. */
export function createArm(nowMs: number, cfg: PriorConfig = DEFAULT_BANDIT_CONFIG): ArmState {
  return { alpha: cfg.priorAlpha, beta: cfg.priorBeta, updatedAtMs: nowMs };
}

/** Fraction of evidence kept after `elapsedMs`; 1 for no (or negative, or unknown) elapsed time. */
export function retention(elapsedMs: number, halfLifeMs: number): number {
  if (!(elapsedMs > 0)) return 1; // clock went backwards or NaN: never inflate or lose evidence
  const f = 0.5 ** (elapsedMs / halfLifeMs); // halfLifeMs = Infinity gives 1 (no forgetting)
  return f >= 0 && f <= 1 ? f : 1;
}

/**
 * The arm's evidence decayed to `nowMs`. A clock that moved backwards (or a NaN clock) decays
 * nothing and keeps the later timestamp, so evidence is never counted twice when it catches up.
 */
export function decay(arm: ArmState, nowMs: number, cfg: DecayConfig = DEFAULT_BANDIT_CONFIG): ArmState {
  const f = retention(nowMs - arm.updatedAtMs, cfg.halfLifeMs);
  if (f === 1) return nowMs > arm.updatedAtMs ? { ...arm, updatedAtMs: nowMs } : arm;
  return {
    alpha: cfg.priorAlpha + (arm.alpha - cfg.priorAlpha) * f,
    beta: cfg.priorBeta + (arm.beta - cfg.priorBeta) * f,
    updatedAtMs: nowMs,
  };
}

/**
 * Decay to `nowMs`, then add this cycle's outcomes. Counts that are negative or not finite are
 * ignored (treated as 0). Outcomes are credited at `nowMs`: within one ~5 s cycle the error of
 * not decaying each outcome from its own timestamp is under 0.6 % of its weight at the default
 * half-life.
 */
export function observe(
  arm: ArmState,
  successes: number,
  failures: number,
  nowMs: number,
  cfg: DecayConfig = DEFAULT_BANDIT_CONFIG,
): ArmState {
  const d = decay(arm, nowMs, cfg);
  return {
    alpha: d.alpha + (successes > 0 && successes < Infinity ? successes : 0),
    beta: d.beta + (failures > 0 && failures < Infinity ? failures : 0),
    updatedAtMs: d.updatedAtMs,
  };
}

/** Posterior mean approval rate. */
export function posteriorMean(p: Posterior): number {
  return p.alpha / (p.alpha + p.beta);
}

/** Posterior variance of the approval rate. */
export function posteriorVariance(p: Posterior): number {
  const s = p.alpha + p.beta;
  return (p.alpha * p.beta) / (s * s * (s + 1));
}

/** True when both parameters are usable (finite and > 0); state read from storage may not be. */
export function isValidPosterior(p: Posterior): boolean {
  return p.alpha > 0 && p.beta > 0 && p.alpha < Infinity && p.beta < Infinity;
}
