import { describe, expect, it } from 'vitest';
import { ManualCommand, ProcessorStatus } from '../../src/shm/layout.js';
import { applyManualCommand } from '../../src/tiers/tier1/manual.js';
import { resolveTier1Config } from '../../src/tiers/tier1/config.js';
import { newProcHealth } from '../../src/tiers/tier1/health.js';
import { FOLLOW_UP_MARGIN_MS, TOP_PROBE_STEP, followUpAt, tier1Overrides, tier1Share } from '../../src/tiers/tier1/share.js';
import { newSignals, type Signals } from '../../src/tiers/tier1/signals.js';
import { Role, stepProcessor, type StatusChange } from '../../src/tiers/tier1/state-machine.js';
import { FLAPPER_BUDGET_FACTOR, PARTIAL_OUTAGE_RATE, PROBATION_FACTOR, failedRoundMs, isPartialOutage, probationMs, suspensionMs } from '../../src/tiers/tier1/backoff.js';
import { newProcState, type ProcState } from '../../src/tiers/tier1/state.js';

const cfg = resolveTier1Config();
const T0 = 1_700_000_000_000;

/** Signals with the same counts on every horizon. */
function sig(o: { n?: number; errors?: number; run?: number; newOk?: number; newTech?: number; nowMs?: number; p95?: number; ruleRate?: number }): Signals {
  const s = newSignals();
  s.horizons = cfg.horizonsMs.map((h) => ({ horizonMs: h, n: o.n ?? 0, errors: o.errors ?? 0 }));
  s.run = o.run ?? 0;
  s.newOk = o.newOk ?? 0;
  s.newTech = o.newTech ?? 0;
  s.completedEpoch = Math.floor((o.nowMs ?? T0) / 1000) - 1;
  s.p95Recent = o.p95 ?? NaN;
  s.p95RecentCount = Number.isNaN(s.p95Recent) ? 0 : 100;
  s.ruleRate = o.ruleRate ?? 0;
  return s;
}

function step(st: ProcState, s: Signals, role: Role, nowMs: number): StatusChange[] {
  const out: StatusChange[] = [];
  stepProcessor(st, s, role, cfg, nowMs, out);
  return out;
}

describe('state machine', () => {
  it.each([
    [Role.Primary, 'failover.triggered'],
    [Role.Secondary, 'processor.degraded'],
    [Role.Sole, 'processor.degraded'],
  ])('a run of %s failures moves role %s to failed_over with event %s', (role, event) => {
    const st = newProcState();
    const out = step(st, sig({ run: 10 }), role, T0);
    expect(out).toEqual([
      {
        event,
        from: ProcessorStatus.Healthy,
        to: ProcessorStatus.FailedOver,
        reason: '10 consecutive technical failures (error rate 100% over the run) reached the failover run length 10; failover threshold 30.0%',
        triggerValue: 1,
        threshold: 0.3,
      },
    ]);
    expect(st.statusSinceMs).toBe(T0);
    expect(step(newProcState(), sig({ run: 9 }), role, T0)).toEqual([]);
  });

  it('degraded → failed_over, not back through healthy', () => {
    const st = newProcState();
    expect(step(st, sig({ n: 300, errors: 66 }), Role.Primary, T0).map((c) => c.event)).toEqual(['processor.degraded']);
    const out = step(st, sig({ n: 300, errors: 150 }), Role.Primary, T0 + 5000);
    expect(out).toMatchObject([{ event: 'failover.triggered', from: ProcessorStatus.Degraded, to: ProcessorStatus.FailedOver }]);
  });

  it('needs minSamples before testing a rate', () => {
    expect(step(newProcState(), sig({ n: 49, errors: 49 }), Role.Primary, T0)).toEqual([]);
    expect(step(newProcState(), sig({ n: 50, errors: 50 }), Role.Primary, T0)).toHaveLength(1);
  });

  /** Credits `ok`/`tech` new probe outcomes one evaluation later (whole buckets after the last credited one). */
  function probe(st: ProcState, role: Role, t: number, ok: number, tech = 0, ruleRate = 0): StatusChange[] {
    return step(st, sig({ newOk: ok, newTech: tech, nowMs: t, ruleRate }), role, t);
  }

  it('slow start: each clean batch moves the probe share one step up; the top step recovers on the whole phase', () => {
    for (const [role, events] of [
      [Role.Primary, ['failover.recovered', 'processor.healthy']],
      [Role.Secondary, ['processor.healthy']],
    ] as const) {
      const st = newProcState();
      step(st, sig({ run: 10 }), role, T0);
      let t = st.probeResumeMs + 2000;
      const steps: number[] = [];
      for (let i = 0; i < TOP_PROBE_STEP; i++) {
        expect(probe(st, role, t, cfg.minProbeSamples)).toEqual([]);
        steps.push(st.probeStep);
        t += 1000;
      }
      expect(steps).toEqual([1, 2, 3]);
      expect(st.status).toBe(ProcessorStatus.FailedOver);
      // At the top step the recovery test needs the whole phase credibly below 10%: ~28 clean outcomes.
      expect(probe(st, role, t, 5)).toEqual([]);
      t += 1000;
      const out = probe(st, role, t, 20);
      expect(out.map((c) => c.event)).toEqual(events);
      expect(out[0].reason).toMatch(/^probe error rate 0\.0% below recovery threshold 10\.0% \(n=34\)$/);
      expect(st.recoveredAtMs).toBe(t);
      expect(st.probeStep).toBe(0);
    }
  });

  it('a burst within a step drops back to the bottom and suspends probes again without growing the streak', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    let t = st.probeResumeMs + 2000;
    probe(st, Role.Primary, t, cfg.minProbeSamples);
    t += 1000;
    probe(st, Role.Primary, t, cfg.minProbeSamples);
    expect(st.probeStep).toBe(2);
    // One error in a batch is not a burst...
    t += 1000;
    probe(st, Role.Primary, t, cfg.minProbeSamples - 1, 1);
    expect(st.probeStep).toBe(3);
    // ...two are: back to the bottom, suspended for the streak's current back-off. 2 in 3 is
    // not credibly above the degrade threshold (a healthy processor's stray pair): no flapper.
    t += 1000;
    expect(probe(st, Role.Primary, t, 1, cfg.probeBurst)).toEqual([]);
    expect(st.status).toBe(ProcessorStatus.FailedOver);
    expect([st.probeStep, st.probeOk, st.probeTech, st.trips]).toEqual([0, 0, 0, 1]);
    expect(st.probeResumeMs - t).toBe(cfg.probeBackoffBaseMs);
    expect(probationMs(st, cfg)).toBe(0);
  });

  it('a step credibly down again after climbing marks a flapper: 2·base suspension and a probation, not a longer streak', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    let t = st.probeResumeMs + 2000;
    probe(st, Role.Primary, t, cfg.minProbeSamples);
    expect(st.probeStep).toBe(1);
    // The next bucket holds 3 technical errors and nothing else: it came back and went down
    // again within the phase. A flapper (trips 2), suspended for 2·base, and it must sit out a
    // probation before it climbs again.
    t += 1000;
    expect(probe(st, Role.Primary, t, 0, 3)).toEqual([]);
    expect(st.status).toBe(ProcessorStatus.FailedOver);
    expect([st.probeStep, st.probeOk, st.probeTech, st.trips, st.lastTripMs]).toEqual([0, 0, 0, 2, t]);
    expect(st.probeResumeMs - t).toBe(2 * cfg.probeBackoffBaseMs);
    expect(probationMs(st, cfg)).toBe(PROBATION_FACTOR * 2 * cfg.probeBackoffBaseMs);
    // A second failed climb does not grow the streak further (a long partial outage whose
    // probes sometimes pass a batch by luck must not push its recovery minutes away).
    t = st.probeResumeMs + probationMs(st, cfg) + 2000;
    probe(st, Role.Primary, t, cfg.minProbeSamples);
    t += 1000;
    probe(st, Role.Primary, t, cfg.minProbeSamples);
    expect(st.probeStep).toBe(2);
    t += 1000;
    probe(st, Role.Primary, t, 0, 3);
    expect([st.probeStep, st.trips]).toEqual([0, 2]);
    expect(st.probeResumeMs - t).toBe(2 * cfg.probeBackoffBaseMs);
  });

  it('a failover on a partial outage (a rate below 90% errors) makes a flapper from the start; a total outage does not', () => {
    const base = cfg.probeBackoffBaseMs;
    expect(PARTIAL_OUTAGE_RATE).toBe(0.9);
    expect([isPartialOutage(0.45), isPartialOutage(0.89), isPartialOutage(0.9), isPartialOutage(1)]).toEqual([true, true, false, false]);
    // 50% technical errors over every horizon: it still completes half its payments.
    const partial = newProcState();
    expect(step(partial, sig({ n: 300, errors: 150 }), Role.Primary, T0)).toMatchObject([{ event: 'failover.triggered', triggerValue: 0.5 }]);
    expect([partial.trips, partial.lastTripMs, partial.probeResumeMs - T0]).toEqual([2, T0, 2 * base]);
    expect(probationMs(partial, cfg)).toBe(PROBATION_FACTOR * 2 * base);
    // A run of failures, or a rate trip at ≥ 90%: a total outage, probed at once and without a probation.
    const run = newProcState();
    step(run, sig({ run: 10 }), Role.Primary, T0);
    const total = newProcState();
    expect(step(total, sig({ n: 100, errors: 95 }), Role.Primary, T0)).toMatchObject([{ event: 'failover.triggered', triggerValue: 0.95 }]);
    for (const st of [run, total]) expect([st.trips, st.probeResumeMs - T0, probationMs(st, cfg)]).toEqual([1, base, 0]);
    // A partial outage that ends later: its next failover in the streak counts 3, as a flapper's would.
    partial.status = ProcessorStatus.Healthy;
    step(partial, sig({ n: 300, errors: 150, nowMs: T0 + 60_000 }), Role.Primary, T0 + 60_000);
    expect(partial.trips).toBe(3);
  });

  it('a climb that ends on a run of failures with no success just credited marks a flapper; a stray pair among successes does not', () => {
    const climbThenFail = (lastOk: number, run: number): ProcState => {
      const st = newProcState();
      step(st, sig({ run: 10 }), Role.Primary, T0);
      let t = st.probeResumeMs + 2000;
      probe(st, Role.Primary, t, cfg.minProbeSamples);
      expect(st.probeStep).toBe(1);
      // Two clean probes in the new step (at the quiet-rule floor a step spans seconds)...
      t += 1000;
      probe(st, Role.Primary, t, 2);
      // ...then the bucket that ends the round: 2 technical errors, with or without a success.
      t += 1000;
      expect(step(st, sig({ newOk: lastOk, newTech: 2, run, nowMs: t }), Role.Primary, t)).toEqual([]);
      expect([st.probeStep, st.probeResumeMs > t]).toEqual([0, true]);
      return st;
    };
    // 2 of 4 in the step and 2 of 7 in the phase are not credibly above 15%: the run decides.
    expect(climbThenFail(0, 2).trips).toBe(2);
    expect(climbThenFail(1, 2).trips).toBe(1);
    expect(climbThenFail(0, 1).trips).toBe(1);
  });

  it('a round with successes whose whole phase is credibly above the degrade threshold marks a flapper, even before it climbs', () => {
    // One success and two technical errors in the first bucket: up and down within the round.
    const mixed = newProcState();
    step(mixed, sig({ run: 10 }), Role.Primary, T0);
    const t = mixed.probeResumeMs + 2000;
    probe(mixed, Role.Primary, t, 1, 2);
    expect([mixed.probeStep, mixed.trips, mixed.probeResumeMs - t]).toEqual([0, 2, 2 * cfg.probeBackoffBaseMs]);
    // Two technical errors and no success: a processor simply still down, not a flapper.
    const down = newProcState();
    step(down, sig({ run: 10 }), Role.Primary, T0);
    probe(down, Role.Primary, t, 0, 2);
    expect([down.trips, down.probeResumeMs - t]).toEqual([1, cfg.probeBackoffBaseMs]);
  });

  it('at the top step, 2 stray errors among many clean probes are no burst; more than the recovery threshold is', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    let t = st.probeResumeMs + 2000;
    for (let i = 0; i < TOP_PROBE_STEP; i++, t += 1000) probe(st, Role.Primary, t, cfg.minProbeSamples);
    // 2 errors in 25 outcomes (8%): not a burst, and not yet credibly below 10% either: keep probing.
    expect(probe(st, Role.Primary, t, 23, 2)).toEqual([]);
    expect([st.status, st.probeStep]).toEqual([ProcessorStatus.FailedOver, TOP_PROBE_STEP]);
    // The processor goes down again: a bucket of errors makes the step's share 24% > 10%: a failed round.
    t += 1000;
    expect(probe(st, Role.Primary, t, 0, 6)).toEqual([]);
    expect([st.status, st.probeStep, st.probeTech]).toEqual([ProcessorStatus.FailedOver, 0, 0]);
    expect(st.probeResumeMs - t).toBe(cfg.probeBackoffBaseMs); // 8 in 31: not credibly down again, no flapper
  });

  it('at the top step, a phase credibly above the recovery threshold without any burst is a failed round (hysteresis)', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    let t = st.probeResumeMs + 2000;
    // One error per lower step (never 2: no burst) ...
    for (let i = 0; i < TOP_PROBE_STEP; i++, t += 1000) probe(st, Role.Primary, t, cfg.minProbeSamples - 1, 1);
    expect([st.probeStep, st.probeTech]).toEqual([TOP_PROBE_STEP, 3]);
    // ... and one in the top step's batch (still no burst): 4 in 12 is credibly above 10%.
    expect(probe(st, Role.Primary, t, cfg.minProbeSamples - 1, 1)).toEqual([]);
    expect([st.status, st.probeStep, st.probeTech]).toEqual([ProcessorStatus.FailedOver, 0, 0]);
    expect(st.probeResumeMs - t).toBe(cfg.probeBackoffBaseMs); // too many errors to trust, not a flap
  });

  it('a phase whose first outcome is a technical error ends at once (dead on arrival); one after a success does not', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    let t = st.probeResumeMs + 1000;
    expect(probe(st, Role.Primary, t, 0, 1)).toEqual([]);
    expect([st.probeStep, st.probeTech]).toEqual([0, 0]);
    expect(st.probeResumeMs - t).toBe(cfg.probeBackoffBaseMs);
    t = st.probeResumeMs + 1000;
    probe(st, Role.Primary, t, 1);
    t += 1000;
    probe(st, Role.Primary, t, 0, 1);
    expect([st.probeOk, st.probeTech, st.probeResumeMs < t]).toEqual([1, 1, true]);
    t += 1000;
    probe(st, Role.Primary, t, 1);
    expect(st.probeStep).toBe(1);
  });

  it('on a quiet rule a failed round suspends until its failed probes are probeShare of the traffic', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    // Rounds that meet a processor still down (no success: not a flapper, backoff.ts flappedInRound).
    let t = st.probeResumeMs + 1000;
    // 2 tx/s: 3 failed probes are 2% of 75 s of traffic (150 payments).
    probe(st, Role.Primary, t, 0, 3, 2);
    expect([st.probeStep, st.trips]).toEqual([0, 1]);
    expect(st.probeResumeMs - t).toBe(75_000);
    // 50 tx/s: 3 failed probes are 2% of 3 s, less than the streak's suspension, which applies.
    t = st.probeResumeMs + 1000;
    probe(st, Role.Primary, t, 0, 3, 50);
    expect(st.probeResumeMs - t).toBe(cfg.probeBackoffBaseMs);
    // Never longer than the longest back-off.
    t = st.probeResumeMs + 1000;
    probe(st, Role.Primary, t, 0, 3, 0.1);
    expect(st.probeResumeMs - t).toBe(cfg.probeBackoffMaxMs);
  });

  it('flaps grow the back-off: each failover of a recovered processor doubles the suspension; a quiet 10 minutes starts over', () => {
    const st = newProcState();
    const recover = (from: number): number => {
      let t = Math.max(from, st.probeResumeMs) + 2000;
      // A flapper (trips ≥ 2) must first stay clean at the bottom step through its probation.
      const climbFrom = st.probeResumeMs + probationMs(st, cfg);
      for (; t < climbFrom; t += 1000) {
        probe(st, Role.Primary, t, 1);
        expect(st.probeStep).toBe(0);
      }
      for (let i = 0; i < TOP_PROBE_STEP; i++, t += 1000) probe(st, Role.Primary, t, cfg.minProbeSamples);
      probe(st, Role.Primary, t, 30);
      expect(st.status).toBe(ProcessorStatus.Healthy);
      return t;
    };
    step(st, sig({ run: 10 }), Role.Primary, T0);
    expect(st.probeResumeMs - T0).toBe(cfg.probeBackoffBaseMs);
    expect(probationMs(st, cfg)).toBe(0);
    let t = recover(T0);
    const suspensions = [cfg.probeBackoffBaseMs];
    const probations = [0];
    for (let i = 0; i < 3; i++) {
      t += 5000;
      step(st, sig({ run: 10, nowMs: t }), Role.Primary, t);
      suspensions.push(st.probeResumeMs - t);
      probations.push(probationMs(st, cfg));
      t = recover(t);
    }
    const base = cfg.probeBackoffBaseMs;
    expect(suspensions).toEqual([base, 2 * base, 4 * base, 8 * base]);
    expect(probations).toEqual([0, 8 * base, 16 * base, 32 * base]);
    expect(suspensionMs(st, cfg)).toBe(8 * base);
    const later = t + cfg.backoffResetMs + 1;
    step(st, sig({ run: 10, nowMs: later }), Role.Primary, later);
    expect([st.trips, st.probeResumeMs - later, probationMs(st, cfg)]).toEqual([1, base, 0]);
  });

  it("a flapper's probation: a burst during it is a failed round, and it cannot climb before it ends", () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    st.status = ProcessorStatus.Healthy; // as after a recovery
    const t0 = T0 + 60_000;
    step(st, sig({ run: 10, nowMs: t0 }), Role.Primary, t0);
    expect(st.trips).toBe(2);
    const probation = probationMs(st, cfg);
    expect(probation).toBe(4 * suspensionMs(st, cfg));
    let t = st.probeResumeMs + 1000;
    for (let i = 0; i < 10; i++, t += 1000) probe(st, Role.Primary, t, 3);
    expect(st.probeStep).toBe(0);
    // 2 errors in a bucket after 30 clean probes: 6%, no burst; 5 more: a burst.
    probe(st, Role.Primary, t, 0, 2);
    expect(st.probeTech).toBe(2);
    t += 1000;
    probe(st, Role.Primary, t, 0, 3);
    expect([st.probeStep, st.probeTech, st.probeResumeMs > t]).toEqual([0, 0, true]);
    // A clean probation: the step moves only once it has lasted `probation`.
    const resume = st.probeResumeMs;
    for (t = resume + 1000; t < resume + probation; t += 1000) probe(st, Role.Primary, t, 1);
    expect(st.probeStep).toBe(0);
    probe(st, Role.Primary, resume + probation, 1);
    expect(st.probeStep).toBe(1);
  });

  it('on the watch after a recovery: a short horizon credibly above the degrade threshold fails over on as few as watchMinSamples', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    // As after a recovery 20 s ago (past the hold, whose watch asks for fewer outcomes: below).
    Object.assign(st, { status: ProcessorStatus.Healthy, recoveredAtMs: T0 + 5_000 });
    const watched = (n: number, errors: number): Signals => {
      const s = sig({ n, errors, nowMs: T0 + 25_000 });
      s.watch = cfg.watchHorizonsMs.map((horizonMs) => ({ horizonMs, n, errors }));
      return s;
    };
    // Below watchMinSamples, or not credibly above 15%: nothing (the normal tests need 50 outcomes).
    expect(step({ ...st }, watched(cfg.watchMinSamples - 1, cfg.watchMinSamples - 1), Role.Primary, T0 + 25_000)).toEqual([]);
    expect(step({ ...st }, watched(10, 3), Role.Primary, T0 + 25_000)).toEqual([]);
    // 5 in 10 is: a failover, named as the watch's, the error rate against the degrade threshold.
    const out = step(st, watched(10, 5), Role.Primary, T0 + 25_000);
    expect(out).toMatchObject([{ event: 'failover.triggered', from: ProcessorStatus.Healthy, to: ProcessorStatus.FailedOver, triggerValue: 0.5, threshold: cfg.degradeThreshold }]);
    expect(out[0].reason).toBe('error rate 50.0% exceeds degradation threshold 15.0% on the watch after a recovery (n=10 over 2 s)');
    expect(st.trips).toBe(2);
  });

  it('during the hold after a recovery the watch tests horizons of recoveryHoldShare × watchMinSamples outcomes (the held share collects that many)', () => {
    const recovered = (agoMs: number): ProcState => {
      const st = newProcState();
      step(st, sig({ run: 10 }), Role.Primary, T0);
      return Object.assign(st, { status: ProcessorStatus.Healthy, recoveredAtMs: T0 + 30_000 - agoMs, probeOk: 30 });
    };
    const watched = (n: number, errors: number): Signals => {
      const s = sig({ n, errors, nowMs: T0 + 30_000 });
      s.watch = cfg.watchHorizonsMs.map((horizonMs) => ({ horizonMs, n, errors }));
      return s;
    };
    const held = Math.round(cfg.watchMinSamples * cfg.recoveryHoldShare);
    expect(held).toBe(5);
    // 3 technical errors in 5 outcomes are credibly above 15% (0.994): a re-trip on the hold ...
    const out = step(recovered(5_000), watched(held, 3), Role.Primary, T0 + 30_000);
    expect(out).toMatchObject([{ event: 'failover.triggered', from: ProcessorStatus.Healthy, to: ProcessorStatus.FailedOver, triggerValue: 0.6 }]);
    expect(out[0].reason).toBe('error rate 60.0% exceeds degradation threshold 15.0% on the watch after a recovery (n=5 over 2 s)');
    // ... not once the hold is over (the watch's own 10 outcomes), nor on 2 errors in 5, nor on 4 outcomes.
    expect(step(recovered(cfg.recoveryHoldMs), watched(held, 3), Role.Primary, T0 + 30_000)).toEqual([]);
    expect(step(recovered(5_000), watched(held, 2), Role.Primary, T0 + 30_000)).toEqual([]);
    expect(step(recovered(5_000), watched(held - 1, held - 1), Role.Primary, T0 + 30_000)).toEqual([]);
  });

  it("a flapper's failed rounds on a quiet rule wait FLAPPER_BUDGET_FACTOR times longer than an outage's", () => {
    // 2 tx/s: a failed probe is 2% of 25 s of traffic; a flapper's, of 125 s.
    expect(failedRoundMs(Object.assign(newProcState(), { trips: 1, probeTech: 1 }), cfg, 2)).toBe(25_000);
    expect(FLAPPER_BUDGET_FACTOR).toBe(5);
    expect(failedRoundMs(Object.assign(newProcState(), { trips: 2, probeTech: 1 }), cfg, 2)).toBe(125_000);
    expect(failedRoundMs(Object.assign(newProcState(), { trips: 2, probeTech: 3 }), cfg, 2)).toBe(cfg.probeBackoffMaxMs);
    expect(failedRoundMs(Object.assign(newProcState(), { trips: 2, probeTech: 1 }), cfg, 0)).toBe(0);
    // Through the state machine: a first round that fails at 2 tx/s, then a flapper's.
    const round = (trips: number): number => {
      const st = newProcState();
      step(st, sig({ run: 10 }), Role.Primary, T0);
      st.trips = trips;
      const t = st.probeResumeMs + 1000;
      step(st, sig({ newTech: 1, nowMs: t, ruleRate: 2 }), Role.Primary, t);
      return st.probeResumeMs - t;
    };
    expect(round(1)).toBe(25_000);
    expect(round(2)).toBe(125_000);
  });

  it('probe outcomes during the suspension are not credited', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    // Credited from the bucket the probes resume in (no traffic before the resumption in it).
    expect(st.probeEpoch).toBe(Math.floor((T0 + cfg.probeBackoffBaseMs) / 1000) - 1);
    const t1 = T0 + cfg.probeBackoffBaseMs / 2; // outcomes arriving now are late results of payments routed before the trip
    step(st, sig({ newTech: 30, nowMs: t1 }), Role.Primary, t1);
    expect(st.probeTech).toBe(0);
  });

  it('judges latency only after the baseline warm-up', () => {
    const st = newProcState();
    for (let t = 0; t <= 55_000; t += 5000) expect(step(st, sig({ n: 300, p95: 100, nowMs: T0 + t }), Role.Primary, T0 + t)).toEqual([]);
    expect(st.baselineAgeMs).toBe(55_000);
    expect(step(st, sig({ n: 300, p95: 1000, nowMs: T0 + 60_000 }), Role.Primary, T0 + 60_000)).toEqual([]);
    step(st, sig({ n: 300, p95: 100, nowMs: T0 + 65_000 }), Role.Primary, T0 + 65_000);
    const out = step(st, sig({ n: 300, p95: 1000, nowMs: T0 + 70_000 }), Role.Primary, T0 + 70_000);
    expect(out).toMatchObject([{ event: 'processor.degraded', triggerValue: 1000 }]);
    // max(3 × baseline, baseline + 100 ms); the warm-up spike nudged the EWMA a little above 100.
    expect(out[0].threshold).toBeCloseTo(3 * st.latBaseline, 9);
    expect(st.latBaseline).toBeGreaterThan(100);
    expect(st.latBaseline).toBeLessThan(110);
  });
});

describe('tier 1 share', () => {
  const h = (n: number, errors: number) => Object.assign(newProcHealth(), { sampleCount: n, techErrors: errors });
  const state = (status: ProcessorStatus, patch: Partial<ProcState> = {}) => Object.assign(newProcState(), { status }, patch);
  const now = T0;

  it('configured weight when both are up, no override', () => {
    const p = state(ProcessorStatus.Degraded);
    const s = state(ProcessorStatus.Healthy);
    expect(tier1Share(p, s, h(0, 0), h(0, 0), 0.8, false, cfg, now)).toBe(0.8);
    expect(tier1Overrides(p, s, false, cfg, now)).toBe(false);
  });

  it('probes only (0 while suspended) for a failed primary, by ladder step, with a rate floor on quiet rules', () => {
    const up = state(ProcessorStatus.Healthy);
    const down = (patch: Partial<ProcState>) => state(ProcessorStatus.FailedOver, { probeResumeMs: now, ...patch });
    // 6000 outcomes a minute = 100 tx/s: the ladder's own shares.
    const busy = h(6000, 0);
    expect([0, 1, 2, 3].map((probeStep) => tier1Share(down({ probeStep }), up, busy, h(0, 0), 0.9, false, cfg, now))).toEqual([0.02, 0.05, 0.1, 0.25]);
    expect(tier1Share(down({ probeResumeMs: now + 1 }), up, busy, h(0, 0), 0.9, false, cfg, now)).toBe(0);
    // 20 tx/s: the bottom step is raised to 1 probe/s (5%); 2 tx/s: to the floor's cap, 50%.
    expect(tier1Share(down({}), up, h(100, 100), h(1100, 0), 0.9, false, cfg, now)).toBeCloseTo(0.05, 12);
    expect(tier1Share(down({}), up, h(20, 20), h(100, 0), 0.9, false, cfg, now)).toBe(0.5);
    expect(tier1Share(down({ probeStep: 3 }), up, h(20, 20), h(100, 0), 0.9, false, cfg, now)).toBe(0.5);
    // 10 tx/s: 10% at the bottom two steps, then the ladder's own 10% and 25%.
    expect([0, 1, 2, 3].map((probeStep) => tier1Share(down({ probeStep }), up, h(100, 100), h(500, 0), 0.9, false, cfg, now))).toEqual([
      0.1, 0.1, 0.1, 0.25,
    ]);
    // Never above the configured weight.
    expect(tier1Share(down({ probeStep: 3 }), up, busy, h(0, 0), 0.2, false, cfg, now)).toBe(0.2);
    expect(tier1Overrides(down({}), up, false, cfg, now)).toBe(true);
  });

  it("a flapper's probation probes at the bare bottom step, without the quiet-rule floor; the floor returns once it ends", () => {
    const up = state(ProcessorStatus.Healthy);
    const quiet = [h(20, 20), h(100, 0)] as const; // 2 tx/s: the floor would be 50%
    const first = state(ProcessorStatus.FailedOver, { probeResumeMs: now, trips: 1 });
    expect(tier1Share(first, up, ...quiet, 0.9, false, cfg, now)).toBe(0.5);
    const flapper = state(ProcessorStatus.FailedOver, { probeResumeMs: now, trips: 2 });
    const probation = probationMs(flapper, cfg);
    expect(probation).toBe(PROBATION_FACTOR * 2 * cfg.probeBackoffBaseMs);
    expect(tier1Share(flapper, up, ...quiet, 0.9, false, cfg, now)).toBe(cfg.probeShare);
    expect(tier1Share(flapper, up, ...quiet, 0.9, false, cfg, now + probation - 1)).toBe(cfg.probeShare);
    expect(tier1Share(flapper, up, ...quiet, 0.9, false, cfg, now + probation)).toBe(0.5);
  });

  it('follow-up evaluations: every bucket while probing and on the watch after a recovery, none otherwise', () => {
    const next = Math.floor(now / 1000) * 1000 + 1000 + FOLLOW_UP_MARGIN_MS;
    expect(followUpAt(state(ProcessorStatus.Healthy), cfg, now)).toBe(Infinity);
    expect(followUpAt(state(ProcessorStatus.FailedOver, { probeResumeMs: now + 3000 }), cfg, now)).toBe(now + 3000);
    expect(followUpAt(state(ProcessorStatus.FailedOver, { probeResumeMs: now }), cfg, now)).toBe(next);
    const recovered = (status: ProcessorStatus) => state(status, { recoveredAtMs: now - cfg.watchMs + 1 });
    expect(followUpAt(recovered(ProcessorStatus.Healthy), cfg, now)).toBe(next);
    expect(followUpAt(recovered(ProcessorStatus.Degraded), cfg, now)).toBe(next);
    expect(followUpAt(state(ProcessorStatus.Healthy, { recoveredAtMs: now - cfg.watchMs }), cfg, now)).toBe(Infinity);
    expect(followUpAt(recovered(ProcessorStatus.Healthy), resolveTier1Config({ watchMs: 0 }), now)).toBe(Infinity);
  });

  it('the hold after a recovery: recoveryHoldShare of the configured share for recoveryHoldMs, Tier 1 overriding; then the configured split', () => {
    const up = state(ProcessorStatus.Healthy);
    // Recovered on probes 1 s ago (their counts stay until the next trip).
    const justBack = state(ProcessorStatus.Healthy, { recoveredAtMs: now - 1000, probeOk: 30 });
    expect(cfg.recoveryHoldShare).toBe(0.5);
    expect(tier1Share(justBack, up, h(0, 0), h(0, 0), 0.8, false, cfg, now)).toBeCloseTo(0.4, 12);
    expect(tier1Overrides(justBack, up, false, cfg, now)).toBe(true);
    // A held secondary: it gets half its 20%, the primary the rest.
    expect(tier1Share(up, justBack, h(0, 0), h(0, 0), 0.8, false, cfg, now)).toBeCloseTo(0.9, 12);
    // Both held: the configured split.
    expect(tier1Share(justBack, justBack, h(0, 0), h(0, 0), 0.8, false, cfg, now)).toBe(0.8);
    // The hold ends recoveryHoldMs after the recovery (the watch goes on).
    const later = now + cfg.recoveryHoldMs - 1000;
    expect(tier1Share(justBack, up, h(0, 0), h(0, 0), 0.8, false, cfg, later - 1)).toBeCloseTo(0.4, 12);
    expect(tier1Share(justBack, up, h(0, 0), h(0, 0), 0.8, false, cfg, later)).toBe(0.8);
    expect(tier1Overrides(justBack, up, false, cfg, later)).toBe(false);
    // The hold is part of the watch: a shorter watch ends it.
    const shortWatch = resolveTier1Config({ watchMs: 500 });
    expect(tier1Share(justBack, up, h(0, 0), h(0, 0), 0.8, false, shortWatch, now)).toBe(0.8);
    // A manual recovery (no probe counts): not held.
    expect(tier1Share(state(ProcessorStatus.Healthy, { recoveredAtMs: now - 1000 }), up, h(0, 0), h(0, 0), 0.8, false, cfg, now)).toBe(0.8);
    // No hold configured, or failed over again: not held.
    const noHold = resolveTier1Config({ recoveryHoldMs: 0 });
    expect(tier1Share(justBack, up, h(0, 0), h(0, 0), 0.8, false, noHold, now)).toBe(0.8);
    expect(tier1Overrides(justBack, up, false, noHold, now)).toBe(false);
    const again = state(ProcessorStatus.FailedOver, { recoveredAtMs: now - 1000, probeResumeMs: now + 5000 });
    expect(tier1Share(again, up, h(6000, 0), h(0, 0), 0.8, false, cfg, now)).toBe(0);
  });

  it('a manual recovery is not held: the configured weight at once (the watch still applies)', () => {
    const up = state(ProcessorStatus.Healthy);
    const st = state(ProcessorStatus.FailedOver, { probeOk: 12, probeTech: 1, probeStep: 2, trips: 1 });
    const out: StatusChange[] = [];
    applyManualCommand(ManualCommand.Recover, st, Role.Primary, 0.05, cfg, now, out);
    expect(out.map((c) => c.event)).toEqual(['failover.recovered', 'processor.healthy']);
    expect(tier1Share(st, up, h(0, 0), h(0, 0), 0.8, false, cfg, now + 1000)).toBe(0.8);
    expect(tier1Overrides(st, up, false, cfg, now + 1000)).toBe(false);
    expect(followUpAt(st, cfg, now + 1000)).toBeLessThan(Infinity); // on the watch
  });

  it('both failed: the lower posterior-mean error rate wins; a tie goes to the secondary', () => {
    const p = state(ProcessorStatus.FailedOver);
    const s = state(ProcessorStatus.FailedOver);
    // 200 outcomes a minute in all (3.3 tx/s): the other's probes are at the floor, 1 probe/s (30%).
    expect(tier1Share(p, s, h(100, 40), h(100, 60), 0.9, false, cfg, now)).toBeCloseTo(0.7, 12);
    expect(tier1Share(p, s, h(100, 60), h(100, 40), 0.9, false, cfg, now)).toBeCloseTo(0.3, 12);
    expect(tier1Share(p, s, h(3000, 1200), h(3000, 1800), 0.9, false, cfg, now)).toBe(0.98);
    expect(tier1Share(p, s, h(0, 0), h(0, 0), 0.9, false, cfg, now)).toBe(0.02);
    // 1 error in 2 probes (mean 0.5) is not better than 40 in 100 (mean ~0.40).
    expect(tier1Share(p, s, h(2, 1), h(6000, 2400), 0.9, false, cfg, now)).toBe(0.02);
  });

  it('a self-fallback rule always routes to its processor', () => {
    const p = state(ProcessorStatus.FailedOver);
    expect(tier1Share(p, p, h(0, 0), h(0, 0), 0.9, true, cfg, now)).toBe(1);
    expect(tier1Overrides(p, p, true, cfg, now)).toBe(true);
  });
});
