/**
 * The probe back-off of a failed_over processor: how long its probes are suspended after a
 * trip or a failed round, and the probation a flapper must sit out at the bottom of the
 * slow-start ladder before it may climb. Shared by the state machine (which steps) and the
 * share (which sets the probe share during the probation).
 */
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
 * failed again after a recovery, or went down again while climbing, markFlapper): 40,
 * 80, 160 s … (capped at probeBackoffMaxMs). A flapping processor that climbed straight back
 * met its next down period with its whole share (a re-trip costs a run of failures, ~50 at
 * 20 tx/s when it fails 60% of payments), while at the bottom step a down period costs a
 * failed probe or two; so it must first stay up for longer than it flapped. With twice the
 * suspension, 30-40 s up periods still let it back in (and out).
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
 * A probe round that failed after climbing at least one step (clean batches), on a step
 * credibly above the degrade threshold (the watch's test, watch.ts: a bucket of 3 technical
 * errors, not 2 stray ones among a healthy processor's probes), met a processor that came back
 * and went down again within one phase: count it a flapper (trips ≥ 2, so the suspension is
 * at least 2·base and the probation applies) without growing the streak further, and keep
 * the streak alive. A processor simply still down fails its rounds at the bottom step and is
 * not marked; nor is a single outage that ends (its climb is clean).
 */
export function markFlapper(st: ProcState, nowMs: number): void {
  st.trips = Math.max(st.trips, 2);
  st.lastTripMs = nowMs;
}
