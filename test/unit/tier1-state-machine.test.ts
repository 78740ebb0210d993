import { describe, expect, it } from 'vitest';
import { ProcessorStatus } from '../../src/shared/layout.js';
import { resolveTier1Config } from '../../src/engine/tier1/config.js';
import { newProcHealth } from '../../src/engine/tier1/health.js';
import { tier1Overrides, tier1Share } from '../../src/engine/tier1/share.js';
import { newSignals, type Signals } from '../../src/engine/tier1/signals.js';
import { Role, stepProcessor, type StatusChange } from '../../src/engine/tier1/state-machine.js';
import { newProcState, type ProcState } from '../../src/engine/tier1/state.js';

const cfg = resolveTier1Config();
const T0 = 1_700_000_000_000;

/** Signals with the same counts on every horizon. */
function sig(o: { n?: number; errors?: number; run?: number; newOk?: number; newTech?: number; nowMs?: number; p95?: number }): Signals {
  const s = newSignals();
  s.horizons = cfg.horizonsMs.map((h) => ({ horizonMs: h, n: o.n ?? 0, errors: o.errors ?? 0 }));
  s.run = o.run ?? 0;
  s.newOk = o.newOk ?? 0;
  s.newTech = o.newTech ?? 0;
  s.completedEpoch = Math.floor((o.nowMs ?? T0) / 1000) - 1;
  s.p95Recent = o.p95 ?? NaN;
  s.p95RecentCount = Number.isNaN(s.p95Recent) ? 0 : 100;
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

  it('a recovered primary emits failover.recovered then processor.healthy; a secondary only the latter', () => {
    for (const [role, events] of [
      [Role.Primary, ['failover.recovered', 'processor.healthy']],
      [Role.Secondary, ['processor.healthy']],
    ] as const) {
      const st = newProcState();
      step(st, sig({ run: 10 }), role, T0);
      const later = T0 + 60_000;
      const out = step(st, sig({ newOk: 60, nowMs: later }), role, later);
      expect(out.map((c) => c.event)).toEqual(events);
      expect(st.rampStartMs).toBe(role === Role.Primary ? later : 0);
      expect(st.recoveredAtMs).toBe(later);
    }
  });

  it('restarts a probe phase that is credibly above the recovery threshold but not failing', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    const t1 = T0 + 60_000;
    expect(step(st, sig({ newOk: 180, newTech: 20, nowMs: t1 }), Role.Primary, t1)).toEqual([]);
    expect([st.probeOk, st.probeTech]).toEqual([0, 0]); // 10% is not a recovery, not a failure
    expect(st.trips).toBe(1); // and no back-off
    const t2 = t1 + 200_000;
    expect(step(st, sig({ newOk: 60, nowMs: t2 }), Role.Primary, t2).map((c) => c.event)).toContain('failover.recovered');
  });

  it('a failed probe round suspends probes for twice as long; a trip after a quiet 10 minutes starts over', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    expect(st.probeResumeMs - T0).toBe(10_000);
    const t1 = T0 + 30_000;
    step(st, sig({ newTech: 10, nowMs: t1 }), Role.Primary, t1);
    expect([st.trips, st.probeResumeMs - t1]).toEqual([2, 20_000]);
    // Recover, stay healthy for > backoffResetMs, trip again: the streak restarts.
    const t2 = t1 + 100_000;
    step(st, sig({ newOk: 60, nowMs: t2 }), Role.Primary, t2);
    expect(st.status).toBe(ProcessorStatus.Healthy);
    const t3 = t1 + cfg.backoffResetMs + 1;
    step(st, sig({ run: 10, nowMs: t3 }), Role.Primary, t3);
    expect([st.trips, st.probeResumeMs - t3]).toEqual([1, 10_000]);
  });

  it('probe outcomes during the suspension are not credited', () => {
    const st = newProcState();
    step(st, sig({ run: 10 }), Role.Primary, T0);
    expect(st.probeEpoch).toBe(Math.floor((T0 + 10_000) / 1000));
    const t1 = T0 + 5000; // outcomes arriving now are late results of payments routed before the trip
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

  it('probes only (0 while suspended) for a failed primary', () => {
    const up = state(ProcessorStatus.Healthy);
    expect(tier1Share(state(ProcessorStatus.FailedOver, { probeResumeMs: now }), up, h(0, 0), h(0, 0), 0.9, false, cfg, now)).toBe(0.02);
    expect(tier1Share(state(ProcessorStatus.FailedOver, { probeResumeMs: now + 1 }), up, h(0, 0), h(0, 0), 0.9, false, cfg, now)).toBe(0);
  });

  it('both failed: the lower posterior-mean error rate wins; a tie goes to the secondary', () => {
    const p = state(ProcessorStatus.FailedOver);
    const s = state(ProcessorStatus.FailedOver);
    expect(tier1Share(p, s, h(100, 40), h(100, 60), 0.9, false, cfg, now)).toBe(0.98);
    expect(tier1Share(p, s, h(100, 60), h(100, 40), 0.9, false, cfg, now)).toBe(0.02);
    expect(tier1Share(p, s, h(0, 0), h(0, 0), 0.9, false, cfg, now)).toBe(0.02);
    // 1 error in 2 probes (mean 0.5) is not better than 40 in 100 (mean ~0.40).
    expect(tier1Share(p, s, h(2, 1), h(100, 40), 0.9, false, cfg, now)).toBe(0.02);
  });

  it('ramps linearly from min(10%, weight) and overrides meanwhile', () => {
    const p = state(ProcessorStatus.Healthy, { rampStartMs: now - 15_000 });
    const s = state(ProcessorStatus.Healthy);
    expect(tier1Share(p, s, h(0, 0), h(0, 0), 0.9, false, cfg, now)).toBeCloseTo(0.3, 12);
    expect(tier1Overrides(p, s, false, cfg, now)).toBe(true);
    expect(tier1Share(p, s, h(0, 0), h(0, 0), 0.05, false, cfg, now)).toBeCloseTo(0.05, 12);
  });

  it('a self-fallback rule always routes to its processor', () => {
    const p = state(ProcessorStatus.FailedOver);
    expect(tier1Share(p, p, h(0, 0), h(0, 0), 0.9, true, cfg, now)).toBe(1);
    expect(tier1Overrides(p, p, true, cfg, now)).toBe(true);
  });
});
