/**
 * The probe back-off of a failed_over processor: how long its probes are suspended after a
 * trip or a failed round, and the probation a flapper must sit out at the bottom of the
 * slow-start ladder before it may climb. Shared by the state machine (which steps) and the
 * share (which sets the probe share during the probation).
 */
import { probAbove } from './beta.js';
import type { Tier1Config } from './config.js';
import type { ProcState } from './state.js';

/** The streak's current suspension: base, 2·base, 4·base … capped. */
export function suspensionMs(st: ProcState, cfg: Tier1Config): number {
  return Math.min(cfg.probeBackoffBaseMs * 2 ** (Math.max(1, st.trips) - 1), cfg.probeBackoffMaxMs);
}

/**
 * How long a probe phase must stay clean at the bottom of the ladder before it may climb:
 * 0 after a first failover (an outage that ends should get its traffic back in seconds), the
 * streak's suspension times PROBATION_FACTOR once the processor is a flapper (trips ≥ 2: it
 * failed again after a recovery, went down again while probing, markFlapper, or failed over on
 * a partial outage, isPartialOutage): 40, 80, 160 s … (capped at probeBackoffMaxMs). A
 * flapping processor that climbed straight back met its next down period with its whole share
 * (a re-trip costs a run of failures, ~50 at 20 tx/s when it fails 60% of payments), while at
 * the bottom step a down period costs a failed probe or two; so it must first stay up for
 * longer than it flapped: with the default 5 s base, its first probation is 4 × 10 s = 40 s.
 */
export const PROBATION_FACTOR = 4;

export function probationMs(st: ProcState, cfg: Tier1Config): number {
  return st.trips >= 2 ? Math.min(PROBATION_FACTOR * suspensionMs(st, cfg), cfg.probeBackoffMaxMs) : 0;
}

/**
 * How much more thinly a flapper's failed probes are budgeted than those of an outage that
 * lasts (failedRoundMs). Chosen on the flapping benchmarks (bench/incident-cost.ts, 31 seeds).
 */
export const FLAPPER_BUDGET_FACTOR = 5;

/**
 * The least suspension after a failed round that ended with `st.probeTech` failed probes, on
 * a rule of `ruleRate` outcomes/s: on a quiet rule the probe rate floor makes each round's
 * probes a large share of the traffic (50% at 2 tx/s), so the suspension is stretched until
 * those failed probes are no more than `probeShare` of the rule's traffic, what the old
 * continuous 2% probes cost while an outage lasts (they failed all the time). A flapper's
 * (trips ≥ 2) are held to 1/FLAPPER_BUDGET_FACTOR of that: the old probes failed only in its
 * down periods, while each climb of the new ones that meets a down period costs 2-4 failed
 * probes at 1 probe/s; an outage that simply lasts, or ends, is not a flapper and keeps the
 * plain budget (so its end is still seen within ~25 s at 2 tx/s). 0 when the rule has no
 * traffic or probes are disabled.
 */
export function failedRoundMs(st: ProcState, cfg: Tier1Config, ruleRate: number): number {
  if (!(ruleRate > 0) || cfg.probeShare <= 0) return 0;
  const factor = st.trips >= 2 ? FLAPPER_BUDGET_FACTOR : 1;
  return Math.min((factor * 1000 * st.probeTech) / (cfg.probeShare * ruleRate), cfg.probeBackoffMaxMs);
}

/**
 * Whether the current probe phase is still in a flapper's probation (only meaningful while
 * failed_over at the bottom step). During it the probe share is the bare bottom step, without
 * the quiet-rule rate floor (share.ts): the probation is a time to wait out, not a batch to
 * collect, and on a quiet rule the floor (1 probe/s, 50% of the traffic at 2 tx/s) would put
 * a failed probe or two into every down period of a processor known to flap.
 */
export function inProbation(st: ProcState, cfg: Tier1Config, nowMs: number): boolean {
  return nowMs < st.probeResumeMs + probationMs(st, cfg);
}

/**
 * The error rate below which a failover is on a partial outage: the processor still completed
 * at least a tenth of the payments over the horizon that tripped it (a failover on a run of
 * consecutive failures, a total outage, has 1).
 */
export const PARTIAL_OUTAGE_RATE = 0.9;

/**
 * Whether a failover whose observed error rate (its trigger value) was `tripRate` is on a
 * partial outage. Such a processor flaps payment by payment: a probe that succeeds says little
 * (40% of them do at 60% errors), and a probe round that meets it does not end on its first
 * probe, as a total outage's does, but after a burst, 2-5 failed payments later at the probe
 * rate floor. It is a flapper from its first failover (registerTrip): a probation before it
 * climbs, and failed rounds budgeted FLAPPER_BUDGET_FACTOR times thinner on quiet rules. An
 * outage that ends after a run tripped it (the total outages the recovery targets are about)
 * keeps the fast recovery. Cost: on a quiet rule a partial outage that ends is trusted again
 * later (bench partial-recovery at 2 tx/s: healthy a median 177 s after its end instead of
 * 85 s, 31 seeds; unchanged at 20 and 50 tx/s), time on the secondary, not failed payments.
 */
export function isPartialOutage(tripRate: number): boolean {
  return tripRate < PARTIAL_OUTAGE_RATE;
}

/**
 * Confidence that a failed round's whole phase is above the degrade threshold, with successes
 * in it, for the round to show a processor up and down within it (flappedInRound). Lower than
 * the failover confidence: the phase's successes dilute it, and a healthy processor's phase
 * (2% errors) is never near it.
 */
export const PARTIAL_ROUND_CONFIDENCE = 0.95;

/**
 * Whether a failed probe round (it ended on a burst, a first failed probe or a phase credibly
 * failing) showed the processor coming back and going down again: evidence that it flaps
 * (markFlapper). `stepTech` / `stepN` are the current step's counts, `run` the front thread's
 * consecutive technical failures, `newOk` the successes credited in this evaluation. Any of:
 *
 * - it climbed (clean batches) and its step is credibly above the degrade threshold at the
 *   failover confidence: down again within the phase;
 * - it climbed and ended on a run of `probeBurst` failures with no success among the outcomes
 *   just credited: down again at that moment. A healthy processor's stray pair comes among
 *   successes (at 50 tx/s the top step's bucket holds a dozen probes); the step test misses
 *   this at the probe rate floor, where a step spans several seconds of clean probes;
 * - it had successes and the whole phase is credibly above the degrade threshold: up and down
 *   within one round (a partial outage, or a flap faster than a batch).
 *
 * A processor simply still down fails its rounds on their first probe and is none of these;
 * nor is a single outage that ends (its climb is clean).
 */
export function flappedInRound(st: ProcState, cfg: Tier1Config, stepTech: number, stepN: number, run: number, newOk: number): boolean {
  const climbed = st.probeStep > 0;
  if (climbed && probAbove(cfg.degradeThreshold, stepTech, stepN) >= cfg.failoverConfidence) return true;
  if (climbed && run >= cfg.probeBurst && newOk === 0) return true;
  return st.probeOk > 0 && probAbove(cfg.degradeThreshold, st.probeTech, st.probeOk + st.probeTech) >= PARTIAL_ROUND_CONFIDENCE;
}

/**
 * A failed probe round that showed the processor up and down (flappedInRound) marks it a
 * flapper (trips ≥ 2, so the suspension is at least 2·base and the probation applies) without
 * growing the streak further, and keeps the streak alive.
 */
export function markFlapper(st: ProcState, nowMs: number): void {
  st.trips = Math.max(st.trips, 2);
  st.lastTripMs = nowMs;
}
