/**
 * Tier 1's primary share (the probability that a route picks the primary) from the two
 * processors' states. Tier 1 "overrides" when a processor is failed_over (which includes its
 * slow-start recovery) and for a self-fallback rule; later tiers may only adjust the share
 * when it does not.
 *
 * - primary failed_over: the primary gets its probe share (0 while probes are suspended);
 * - secondary failed_over: the primary gets everything but the secondary's probes;
 * - both failed_over: the one with the lower error rate over the last minute (posterior
 *   mean, so a processor with few samples is not judged perfect) gets everything but the
 *   other's probes; a tie goes to the secondary, since the primary failed first.
 *
 * Slow start: a failed_over processor's probe share climbs the PROBE_LADDER (probeShare → 5%
 * → 10% → 25%) one step per clean batch of probes (the state machine moves the step); the
 * recovery at the top step hands the configured weight back at once. Each step's share is
 * at least `minProbeRate` outcomes per second of the rule's traffic, so a quiet rule
 * collects its batches in seconds too (the floor capped at PROBE_FLOOR_CAP: 50% at 2 tx/s).
 */
import { COUNT_BUCKET_MS, ProcessorStatus } from '../../shm/layout.js';
import type { Tier1Config } from './config.js';
import type { ProcHealth } from './health.js';
import type { ProcState } from './state.js';
import { HEALTH_HORIZON_MS } from './health.js';
import { onHold, onWatch } from './watch.js';
import { inProbation } from './backoff.js';

/** Probe shares of the slow-start steps above the bottom one (which is `probeShare`). */
export const PROBE_LADDER: readonly number[] = Object.freeze([0.05, 0.1, 0.25]);
/**
 * The highest share the probe rate floor may raise a step to. At 2 tx/s a floor of 1 probe/s
 * is half the traffic: the ~30 clean probes the recovery test needs then take half a minute,
 * not a minute, which leaves room to space failed rounds out (state-machine.ts failRound).
 */
export const PROBE_FLOOR_CAP = 0.5;
/** The top step: the recovery test runs there. */
export const TOP_PROBE_STEP = PROBE_LADDER.length;
/**
 * While a processor is probing, its rule is evaluated again just after each 1-second count
 * bucket completes (instead of every cycle), so a ladder step takes about as long as its
 * batch takes to arrive; this margin lets the bucket's last outcomes land first.
 */
export const FOLLOW_UP_MARGIN_MS = 50;

/** The share of the ladder step `step` (0 = probeShare), before the rate floor. */
export function ladderShare(step: number, cfg: Tier1Config): number {
  return step <= 0 ? cfg.probeShare : PROBE_LADDER[Math.min(step, TOP_PROBE_STEP) - 1];
}

/**
 * The probe share of a failed_over processor now: its ladder step's share, raised to the
 * probe rate floor on a quiet rule (`ruleRate` outcomes/s over both processors), capped at
 * the top step; 0 while probes are suspended or disabled.
 */
export function probeShareOf(st: ProcState, cfg: Tier1Config, nowMs: number, ruleRate: number): number {
  if (nowMs < st.probeResumeMs || cfg.probeShare <= 0) return 0;
  const step = ladderShare(st.probeStep, cfg);
  if (st.probeStep === 0 && inProbation(st, cfg, nowMs)) return step; // a flapper: no rate floor (backoff.ts)
  const floor = ruleRate > 0 ? cfg.minProbeRate / ruleRate : 0;
  return Math.max(step, Math.min(floor, PROBE_FLOOR_CAP));
}

/** Outcomes per second on the rule over the last minute (both processors). */
export function ruleRateOf(hp: ProcHealth, hs: ProcHealth, sameProcessor: boolean): number {
  const n = sameProcessor ? hp.sampleCount : hp.sampleCount + hs.sampleCount;
  return n / (HEALTH_HORIZON_MS / 1000);
}

export function tier1Overrides(p: ProcState, s: ProcState, sameProcessor: boolean, cfg: Tier1Config, nowMs: number): boolean {
  return (
    sameProcessor ||
    p.status === ProcessorStatus.FailedOver ||
    s.status === ProcessorStatus.FailedOver ||
    onHold(p, cfg, nowMs) ||
    onHold(s, cfg, nowMs)
  );
}

export function tier1Share(
  p: ProcState,
  s: ProcState,
  hp: ProcHealth,
  hs: ProcHealth,
  configWeight: number,
  sameProcessor: boolean,
  cfg: Tier1Config,
  nowMs: number,
): number {
  if (sameProcessor) return 1;
  const pDown = p.status === ProcessorStatus.FailedOver;
  const sDown = s.status === ProcessorStatus.FailedOver;
  if (!pDown && !sDown) return heldShare(p, s, configWeight, cfg, nowMs);
  const rate = ruleRateOf(hp, hs, false);
  if (pDown && sDown) {
    return errorMean(hp) < errorMean(hs) ? 1 - probeShareOf(s, cfg, nowMs, rate) : probeShareOf(p, cfg, nowMs, rate);
  }
  if (pDown) return Math.min(configWeight, probeShareOf(p, cfg, nowMs, rate));
  return 1 - probeShareOf(s, cfg, nowMs, rate);
}

/**
 * Neither processor failed_over: the configured split, except that a processor in the hold
 * after its recovery (watch.ts onHold) gets `recoveryHoldShare` of its configured share and
 * the other the rest. Both on hold (both recovered within the hold): the configured split.
 */
function heldShare(p: ProcState, s: ProcState, configWeight: number, cfg: Tier1Config, nowMs: number): number {
  const pHeld = onHold(p, cfg, nowMs);
  const sHeld = onHold(s, cfg, nowMs);
  if (pHeld === sHeld) return configWeight;
  return pHeld ? configWeight * cfg.recoveryHoldShare : 1 - (1 - configWeight) * cfg.recoveryHoldShare;
}

/**
 * When this processor wants its rule evaluated again ahead of the cycle (epoch ms), or
 * Infinity: while probing, and on the watch after a recovery (watch.ts), just after the
 * current 1-second bucket completes; while probes are suspended, when they resume (so the
 * suspension ends on time, not at the next cycle).
 */
export function followUpAt(st: ProcState, cfg: Tier1Config, nowMs: number): number {
  if (onWatch(st, cfg, nowMs)) return nextBucketMs(nowMs);
  if (st.status !== ProcessorStatus.FailedOver || cfg.probeShare <= 0) return Infinity;
  if (nowMs < st.probeResumeMs) return st.probeResumeMs;
  return nextBucketMs(nowMs);
}

/** Just after the current 1-second count bucket completes. */
function nextBucketMs(nowMs: number): number {
  return (Math.floor(nowMs / COUNT_BUCKET_MS) + 1) * COUNT_BUCKET_MS + FOLLOW_UP_MARGIN_MS;
}

function errorMean(h: ProcHealth): number {
  return (h.techErrors + 1) / (h.sampleCount + 2);
}
