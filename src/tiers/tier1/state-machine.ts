/**
 * The Tier 1 state machine of one processor (spec section 3). Pure: it reads the signals,
 * updates the state record and appends status changes; the caller maps state to and from
 * shared memory and turns changes into transitions.
 *
 *   healthy ──(error rate credibly > degrade, or p95 ≫ own baseline)──► degraded
 *   healthy | degraded ──(error rate credibly > failover, or a run of N tech errors)──► failed_over
 *   degraded ──(last minute credibly < degradedExit, p95 back near baseline)──► healthy
 *   failed_over ──(probe traffic credibly < recovery)──► healthy
 *
 * While failed_over, the processor is judged on its probe traffic only, in "probe phases"
 * that start after a suspension (back-off). A phase is a slow start (share.ts PROBE_LADDER):
 * each step needs a small batch of `minProbeSamples` probe outcomes without a burst to move
 * the probe share up a step; a burst (isBurst), a first probe that fails, or a phase
 * credibly above the failover threshold is a failed round: back to the bottom step, probes
 * suspended with the back-off. A processor that failed again after a recovery (a flapper)
 * must first stay clean at the bottom step through a probation (probationMs). At the top step
 * the whole phase's evidence decides: credibly below the recovery threshold is a recovery
 * (the configured weight is handed back at once), credibly above it (a processor still
 * failing too often to be trusted) a failed round.
 */
import { COUNT_BUCKET_MS, ProcessorStatus } from '../../shm/layout.js';
import type { TransitionEvent } from './events.js';
import { probAbove, probBelow } from './beta.js';
import type { Tier1Config } from './config.js';
import type { HorizonCounts, Signals } from './signals.js';
import type { ProcState } from './state.js';
import { TOP_PROBE_STEP } from './share.js';
import { failedRoundMs, flappedInRound, inProbation, isPartialOutage, markFlapper, suspensionMs } from './backoff.js';
import { watchMinSamples } from './watch.js';

export const enum Role {
  /** Primary of a rule with a distinct secondary: its failover moves traffic. */
  Primary = 0,
  Secondary = 1,
  /** Primary and secondary are the same processor: nothing to move traffic to. */
  Sole = 2,
}

export interface StatusChange {
  event: TransitionEvent;
  from: ProcessorStatus;
  to: ProcessorStatus;
  reason: string;
  triggerValue: number;
  threshold: number;
}

/** Advances `st` to `nowMs`, appending any status changes to `out`. */
export function stepProcessor(
  st: ProcState,
  sig: Signals,
  role: Role,
  cfg: Tier1Config,
  nowMs: number,
  out: StatusChange[],
): void {
  const dtMs = st.lastEvalMs > 0 ? Math.max(0, nowMs - st.lastEvalMs) : 0;
  st.lastEvalMs = nowMs;

  if (st.status === ProcessorStatus.FailedOver) {
    stepFailedOver(st, sig, role, cfg, nowMs, out);
    return;
  }
  const fail = failoverTrip(sig, cfg) ?? watchTrip(sig, cfg, watchMinSamples(st, cfg, nowMs));
  if (fail !== null) {
    enterFailedOver(st, fail, role, cfg, nowMs, sig, out);
    return;
  }
  const degrade = degradeTrip(st, sig, cfg);
  if (st.status === ProcessorStatus.Healthy) {
    if (degrade !== null) {
      move(st, ProcessorStatus.Degraded, 'processor.degraded', degrade, nowMs, out);
    } else {
      updateBaseline(st, sig, dtMs, cfg);
    }
  } else if (degrade === null) {
    const exit = degradedExit(st, sig, cfg);
    if (exit !== null) move(st, ProcessorStatus.Healthy, 'processor.healthy', exit, nowMs, out);
  }
}

// ── triggers ────────────────────────────────────────────────────────────────────────────

interface Trigger {
  reason: string;
  triggerValue: number;
  threshold: number;
}

function failoverTrip(sig: Signals, cfg: Tier1Config): Trigger | null {
  if (sig.run >= cfg.runLength) {
    // Spec 2.7: trigger_value is the observed value that exceeded `threshold`. Over the run
    // the technical error rate is 1 (every outcome failed), above any failover threshold
    // (always < 1); the run length goes in the reason.
    return {
      reason: `${sig.run} consecutive technical failures (error rate 100% over the run) reached the failover run length ${cfg.runLength}; failover threshold ${pct(cfg.failoverThreshold)}`,
      triggerValue: 1,
      threshold: cfg.failoverThreshold,
    };
  }
  return rateTrip(sig.horizons, cfg.failoverThreshold, cfg.failoverConfidence, 'failover', cfg.minSamples);
}

/**
 * On the watch after a recovery (watch.ts): a watch horizon credibly above the degrade
 * threshold, at the failover confidence, on as few as `minSamples` outcomes (watch.ts
 * watchMinSamples; readSignals leaves the watch horizons empty off watch).
 */
function watchTrip(sig: Signals, cfg: Tier1Config, minSamples: number): Trigger | null {
  return rateTrip(sig.watch, cfg.degradeThreshold, cfg.failoverConfidence, 'degradation', minSamples, ' on the watch after a recovery');
}

function degradeTrip(st: ProcState, sig: Signals, cfg: Tier1Config): Trigger | null {
  return (
    rateTrip(sig.horizons, cfg.degradeThreshold, cfg.degradeConfidence, 'degradation', cfg.minSamples) ??
    latencyTrip(st, sig, cfg)
  );
}

/** The first horizon (shortest first) whose error rate is credibly above `thr`. */
function rateTrip(
  hs: HorizonCounts[],
  thr: number,
  confidence: number,
  name: string,
  minSamples: number,
  context = '',
): Trigger | null {
  for (const h of hs) {
    if (h.n < minSamples) continue;
    if (probAbove(thr, h.errors, h.n) >= confidence) {
      const rate = h.errors / h.n;
      return {
        reason: `error rate ${pct(rate)} exceeds ${name} threshold ${pct(thr)}${context} (n=${h.n} over ${secs(h.horizonMs)})`,
        triggerValue: rate,
        threshold: thr,
      };
    }
  }
  return null;
}

function baselineReady(st: ProcState, cfg: Tier1Config): boolean {
  return st.latBaseline > 0 && st.baselineAgeMs >= cfg.baselineWarmupMs;
}

/** p95 above which latency degrades the processor: far above its own baseline, in ratio and in ms. */
function latencyLimit(st: ProcState, cfg: Tier1Config): number {
  return Math.max(cfg.latencyFactor * st.latBaseline, st.latBaseline + cfg.latencyMinDeltaMs);
}

function latencyTrip(st: ProcState, sig: Signals, cfg: Tier1Config): Trigger | null {
  if (!baselineReady(st, cfg) || !(sig.p95Recent > latencyLimit(st, cfg))) return null;
  const limit = latencyLimit(st, cfg);
  return {
    reason:
      `p95 latency ${ms(sig.p95Recent)} exceeds ${cfg.latencyFactor}x baseline ${ms(st.latBaseline)} ` +
      `(threshold ${ms(limit)}, n=${sig.p95RecentCount})`,
    triggerValue: sig.p95Recent,
    threshold: limit,
  };
}

/**
 * degraded → healthy: the last minute credibly below the exit threshold, and p95 (when
 * measurable) back under the latency limit scaled by exitFactor/factor (hysteresis in both).
 */
function degradedExit(st: ProcState, sig: Signals, cfg: Tier1Config): Trigger | null {
  const long = sig.horizons[sig.horizons.length - 1];
  if (long.n < cfg.minSamples) return null;
  if (probBelow(cfg.degradedExitThreshold, long.errors, long.n) < cfg.recoveryConfidence) return null;
  let latency = '';
  if (baselineReady(st, cfg) && !Number.isNaN(sig.p95Recent)) {
    const exitLimit = latencyLimit(st, cfg) * (cfg.latencyExitFactor / cfg.latencyFactor);
    if (sig.p95Recent > exitLimit) return null;
    latency = `, p95 latency ${ms(sig.p95Recent)} within ${ms(exitLimit)}`;
  }
  const rate = long.errors / long.n;
  return {
    reason: `error rate ${pct(rate)} below ${pct(cfg.degradedExitThreshold)} (n=${long.n} over ${secs(long.horizonMs)})${latency}`,
    triggerValue: rate,
    threshold: cfg.degradedExitThreshold,
  };
}

// ── failed_over ─────────────────────────────────────────────────────────────────────────

function enterFailedOver(
  st: ProcState,
  trig: Trigger,
  role: Role,
  cfg: Tier1Config,
  nowMs: number,
  sig: Signals,
  out: StatusChange[],
): void {
  // Only a distinct primary's failure moves traffic; for the others it is a processor gone bad.
  const event = role === Role.Primary ? 'failover.triggered' : 'processor.degraded';
  move(st, ProcessorStatus.FailedOver, event, trig, nowMs, out);
  registerTrip(st, cfg, nowMs, sig.completedEpoch, isPartialOutage(trig.triggerValue));
}

/**
 * Counts a trip in the back-off streak and suspends probing: base, 2·base, 4·base … capped;
 * the streak restarts when trips are further apart than backoffResetMs. Trips are failovers
 * of a processor that had its traffic (the first one, and every flap after a recovery), so a
 * flapping processor waits longer and longer before it is trusted again. A failover on a
 * `partial` outage (backoff.ts isPartialOutage) counts at least 2: a flapper from the start.
 */
export function registerTrip(st: ProcState, cfg: Tier1Config, nowMs: number, completedEpoch: number, partial = false): void {
  st.trips = st.trips > 0 && nowMs - st.lastTripMs <= cfg.backoffResetMs ? st.trips + 1 : 1;
  if (partial) st.trips = Math.max(st.trips, 2);
  st.lastTripMs = nowMs;
  suspendProbes(st, cfg, nowMs, completedEpoch);
}

/**
 * A failed probe round (a burst, a first probe that fails, or a phase not good enough at the
 * top step): back to the bottom of the ladder and the streak's current suspension again,
 * without growing it. A round costs one or two failed payments, so an outage that simply goes
 * on is probed at the same pace throughout, and its end is seen within one suspension.
 */
function failRound(st: ProcState, cfg: Tier1Config, nowMs: number, sig: Signals, flapped = false): void {
  if (flapped) markFlapper(st, nowMs);
  // On a quiet rule, stretched so failed probes stay within their budget (backoff.ts).
  suspendProbes(st, cfg, nowMs, sig.completedEpoch, failedRoundMs(st, cfg, sig.ruleRate));
}

/**
 * Suspends probing for the streak's back-off and starts a fresh probe phase, which credits
 * only buckets after the suspension (this also keeps out the late outcomes of payments
 * routed before the trip).
 */
function suspendProbes(st: ProcState, cfg: Tier1Config, nowMs: number, completedEpoch: number, minMs = 0): void {
  st.probeResumeMs = nowMs + Math.max(suspensionMs(st, cfg), minMs);
  st.probeOk = st.probeTech = 0;
  st.probeStep = st.stepOkBase = st.stepTechBase = 0;
  // Credit from the bucket the probes resume in (the primary got no traffic in it before
  // then), never the bucket being written now: leaving the resume bucket out cost a second.
  st.probeEpoch = Math.max(completedEpoch + 1, Math.floor(st.probeResumeMs / COUNT_BUCKET_MS) - 1);
}

/**
 * A burst in the current step: at least `probeBurst` technical errors, making up more than
 * the recovery threshold's share of the step's outcomes (a step no recovery could follow).
 * In a 3-outcome batch any 2 errors are a burst (as before); at the top step or during a
 * probation, which collect dozens of outcomes, 2 stray errors of a healthy processor (2% of
 * 40 outcomes often holds 2) are not, while a processor going down again still shows as a
 * burst within a bucket.
 */
function isBurst(stepTech: number, stepN: number, cfg: Tier1Config): boolean {
  return stepTech >= cfg.probeBurst && stepTech > cfg.recoveryThreshold * stepN;
}

function stepFailedOver(
  st: ProcState,
  sig: Signals,
  role: Role,
  cfg: Tier1Config,
  nowMs: number,
  out: StatusChange[],
): void {
  if (sig.completedEpoch > st.probeEpoch) {
    st.probeOk += sig.newOk;
    st.probeTech += sig.newTech;
    st.probeEpoch = sig.completedEpoch;
  }
  const n = st.probeOk + st.probeTech;
  const k = st.probeTech;
  const stepTech = k - st.stepTechBase;
  const stepN = st.probeOk - st.stepOkBase + stepTech;
  const failing = n >= cfg.minProbeSamples && probAbove(cfg.failoverThreshold, k, n) >= cfg.failoverConfidence;
  // A phase whose first outcome is a technical error meets a processor still down: end the
  // round at once (a healthy one fails its first probe 2% of the time, and loses one round).
  const deadOnArrival = k > 0 && st.probeOk === 0;
  if (deadOnArrival || isBurst(stepTech, stepN, cfg) || failing) {
    // A round that showed the processor up and down marks a flapper (backoff.ts
    // flappedInRound). Two stray errors early in the top step (a healthy processor's burst)
    // are not that evidence.
    const flapped = flappedInRound(st, cfg, stepTech, stepN, sig.run, sig.newOk);
    failRound(st, cfg, nowMs, sig, flapped); // a burst: drop back, suspend again
    return;
  }
  if (stepN < cfg.minProbeSamples) return;
  if (st.probeStep === 0 && inProbation(st, cfg, nowMs)) return; // a flapper's probation
  if (st.probeStep < TOP_PROBE_STEP) {
    // A clean batch: one step up the ladder; the next batch is what arrives at the new share.
    st.probeStep += 1;
    st.stepOkBase = st.probeOk;
    st.stepTechBase = st.probeTech;
    return;
  }
  if (probBelow(cfg.recoveryThreshold, k, n) >= cfg.recoveryConfidence) {
    const trig: Trigger = {
      reason: `probe error rate ${pct(k / n)} below recovery threshold ${pct(cfg.recoveryThreshold)} (n=${n})`,
      triggerValue: k / n,
      threshold: cfg.recoveryThreshold,
    };
    if (role === Role.Primary) out.push({ event: 'failover.recovered', from: st.status, to: ProcessorStatus.Healthy, ...trig });
    move(st, ProcessorStatus.Healthy, 'processor.healthy', trig, nowMs, out);
    st.recoveredAtMs = nowMs;
    st.probeStep = st.stepOkBase = st.stepTechBase = 0;
    return;
  }
  if (probAbove(cfg.recoveryThreshold, k, n) >= cfg.failoverConfidence) {
    // Not failing over, but credibly worse than the recovery threshold: not trusted with its
    // traffic (hysteresis). Drop back like any failed round.
    failRound(st, cfg, nowMs, sig);
  }
}

// ── helpers ─────────────────────────────────────────────────────────────────────────────

function move(
  st: ProcState,
  to: ProcessorStatus,
  event: TransitionEvent,
  trig: Trigger,
  nowMs: number,
  out: StatusChange[],
): void {
  out.push({ event, from: st.status, to, ...trig });
  st.status = to;
  st.statusSinceMs = nowMs;
}

/**
 * EWMA of the healthy-period p95 with a half-life in time (evaluations may be irregular);
 * warm-up time accumulates only while the p95 is measurable.
 */
function updateBaseline(st: ProcState, sig: Signals, dtMs: number, cfg: Tier1Config): void {
  if (Number.isNaN(sig.p95Recent)) return;
  if (st.latBaseline > 0) {
    const alpha = 1 - 2 ** (-dtMs / cfg.baselineHalfLifeMs);
    st.latBaseline += alpha * (sig.p95Recent - st.latBaseline);
    st.baselineAgeMs = Math.min(st.baselineAgeMs + dtMs, cfg.baselineWarmupMs);
  } else {
    st.latBaseline = sig.p95Recent;
    st.baselineAgeMs = 0;
  }
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function ms(x: number): string {
  return `${Math.round(x)} ms`;
}

function secs(x: number): string {
  return `${Math.round(x / 1000)} s`;
}
