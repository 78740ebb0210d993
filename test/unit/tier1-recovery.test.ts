/**
 * Recovery scenarios at virtual time: probes, hysteresis, the shift back, re-trips and the
 * probe back-off, secondaries and self-fallback rules.
 */
import { describe, expect, it } from 'vitest';
import { PF_STATUS } from '../../src/shared/layout.js';
import { Sim, countEvents, type Model } from './tier1-harness.js';

/** Primary error rate by phase: [until, err] pairs, then `after`. */
function phases(list: [number, number][], after: number): Model {
  return (k, t) => {
    if (k === 1) return { err: 0.01 };
    for (const [until, err] of list) if (t < until) return { err };
    return { err: after };
  };
}

describe('recovery', () => {
  it('probes get at most 2% of traffic; 8% errors do not recover (hysteresis), 1% does', () => {
    const s = new Sim({ seed: 11 });
    const model = phases([[60_000, 0.01], [300_000, 1], [1_500_000, 0.08]], 0.01);
    let routedAtFailover = [0, 0];
    let maxShare = 0;
    s.run(3_000_000, {
      rate: 20,
      model,
      onEval: () => {
        if (s.status(0) !== 'failed_over') return;
        maxShare = Math.max(maxShare, s.share());
        if (routedAtFailover[0] === 0 && routedAtFailover[1] === 0) routedAtFailover = [...s.routed];
      },
    });
    const f = s.first('failover.triggered')!;
    const r = s.first('failover.recovered')!;
    expect(maxShare).toBeLessThanOrEqual(0.02);
    // Still failed over through 20 minutes of 8% errors, then recovered on 1%.
    expect(s.when(r)).toBeGreaterThan(1_500_000);
    const h = s.first('processor.healthy')!;
    expect(h.atMs).toBe(r.atMs);
    expect(s.transitions.indexOf(h)).toBe(s.transitions.indexOf(r) + 1);
    expect(r).toMatchObject({ from: 'failed_over', to: 'healthy', threshold: 0.05 });
    expect(r.reason).toMatch(/^probe error rate \d+\.\d% below recovery threshold 5\.0% \(n=\d+\)$/);
    console.log(
      `recovery: failed over at ${s.when(f) / 1000} s, 8% phase until 1500 s kept it failed over, ` +
        `recovered at ${s.when(r) / 1000} s (${r.reason}); events`,
      countEvents(s.transitions),
    );
    expect(countEvents(s.transitions)).toEqual({
      'failover.triggered[0]': 1,
      'failover.recovered[0]': 1,
      'processor.healthy[0]': 1,
    });
  });

  it('shifts traffic back linearly from 10% to the configured weight over 60 s', () => {
    const s = new Sim({ seed: 11 });
    const samples: [number, number][] = [];
    s.run(1_500_000, {
      rate: 20,
      model: phases([[60_000, 0.01], [200_000, 1]], 0.01),
      onEval: (t) => samples.push([t, s.share()]),
    });
    const r = s.when(s.first('failover.recovered')!);
    for (const [t, share] of samples) {
      if (t < r) continue;
      const expected = t < r + 60_000 ? 0.1 + (0.8 * (t - r)) / 60_000 : 0.9;
      expect(share).toBeCloseTo(expected, 9);
    }
    expect(samples.some(([t]) => t > r + 10_000 && t < r + 50_000)).toBe(true);
    expect(s.state(0).rampStartMs).toBe(0); // done
  });

  it('a re-trip during the shift back aborts it and suspends probes for longer', () => {
    const s = new Sim({ seed: 11 });
    // An outage; healthy long enough to recover; a second outage 20 s into the shift back.
    let recoveredAt = Infinity;
    let tripsAtRecovery = 0;
    let atRetrip: { trips: number; suspendMs: number; rampStartMs: number; share: number } | undefined;
    const model: Model = (k, t) => ({
      err: k === 0 && ((t >= 60_000 && t < 200_000) || t >= recoveredAt + 20_000) ? 1 : 0.01,
    });
    s.run(1_500_000, {
      rate: 20,
      model,
      onEval: () => {
        const st = s.state(0);
        if (recoveredAt === Infinity && s.first('failover.recovered') !== undefined) {
          recoveredAt = s.when(s.first('failover.recovered')!);
          tripsAtRecovery = st.trips;
        }
        const trips = s.transitions.filter((t) => t.event === 'failover.triggered');
        if (trips.length === 2 && atRetrip === undefined) {
          atRetrip = { trips: st.trips, suspendMs: st.probeResumeMs - st.lastTripMs, rampStartMs: st.rampStartMs, share: s.share() };
        }
      },
    });
    const retrip = s.transitions.filter((t) => t.event === 'failover.triggered')[1];
    // 20 s into the shift back the primary has ~37% of 20 tx/s: 10 failures take ~1.4 s.
    expect(s.when(retrip) - (recoveredAt + 20_000)).toBeLessThanOrEqual(2000);
    expect(retrip.from).toBe('healthy');
    expect(atRetrip!.rampStartMs).toBe(0);
    expect(atRetrip!.share).toBe(0);
    expect(atRetrip!.trips).toBe(tripsAtRecovery + 1);
    expect(atRetrip!.suspendMs).toBe(Math.min(10_000 * 2 ** tripsAtRecovery, 320_000));
    console.log(
      `re-trip ${(s.when(retrip) - recoveredAt) / 1000} s into the shift back: streak ${tripsAtRecovery} → ` +
        `${atRetrip!.trips}, probes suspended ${atRetrip!.suspendMs / 1000} s`,
    );
  });

  it('backs off probing exponentially while the outage lasts: 10, 20, 40 … 320 s', () => {
    const s = new Sim({ seed: 11 });
    const suspensions: number[] = [];
    let lastTrip = 0;
    let routedAtFailover = 0;
    s.run(1_800_000, {
      rate: 20,
      model: phases([[60_000, 0.01]], 1),
      onEval: () => {
        const st = s.state(0);
        if (st.lastTripMs !== lastTrip) {
          lastTrip = st.lastTripMs;
          suspensions.push((st.probeResumeMs - st.lastTripMs) / 1000);
          if (routedAtFailover === 0) routedAtFailover = s.routed[0];
        }
      },
    });
    console.log(`probe suspensions during a 29-minute outage (s): ${suspensions.join(', ')}`);
    expect(suspensions.slice(0, 7)).toEqual([10, 20, 40, 80, 160, 320, 320]);
    const probes = s.routed[0] - routedAtFailover;
    const total = 20 * (1_800_000 - 60_000) / 1000;
    console.log(`probes sent to the failed primary: ${probes} of ${total} (${((100 * probes) / total).toFixed(2)}%)`);
    expect(probes / total).toBeLessThan(0.005);
    expect(countEvents(s.transitions)).toEqual({ 'failover.triggered[0]': 1 });
  });
});

describe('secondaries and self-fallback rules', () => {
  it('a failed secondary is flagged without a failover; the primary takes all but its probes', () => {
    const s = new Sim({ seed: 13 });
    s.run(1_500_000, { rate: 20, model: (k, t) => ({ err: k === 1 && t >= 60_000 && t < 200_000 ? 1 : 0.01 }) });
    const down = s.transitions.find((t) => t.processor === 1 && t.to === 'failed_over')!;
    expect(down.event).toBe('processor.degraded');
    expect(s.transitions.filter((t) => t.event.startsWith('failover.'))).toEqual([]);
    const up = s.first('processor.healthy', 1)!;
    expect(up.from).toBe('failed_over');
    expect(s.share()).toBeCloseTo(0.9, 12); // no ramp: the primary never lost its traffic
  });

  it('keeps the configured weight… until the secondary fails, then gives the primary 1 - probes', () => {
    const s = new Sim({ seed: 13 });
    const shares = new Set<number>();
    s.run(400_000, {
      rate: 20,
      model: (k, t) => ({ err: k === 1 && t >= 60_000 ? 1 : 0.01 }),
      onEval: () => {
        if (s.status(1) === 'failed_over') shares.add(s.share());
      },
    });
    expect([...shares].sort()).toEqual([0.98, 1]); // 1 while its probes are suspended
  });

  it('both failed over: traffic stays on the one with the lower error rate', () => {
    const s = new Sim({ seed: 13 });
    const shares: number[] = [];
    s.run(400_000, {
      rate: 20,
      model: (k, t) => ({ err: t < 60_000 ? 0.01 : k === 0 ? 1 : t >= 120_000 ? 0.5 : 0.01 }),
      onEval: () => {
        if (s.status(0) === 'failed_over' && s.status(1) === 'failed_over') shares.push(s.share());
      },
    });
    expect(shares.length).toBeGreaterThan(0);
    for (const share of shares) expect(share).toBeLessThanOrEqual(0.02); // the secondary's 50% beats 100%
  });

  it('a self-fallback rule always routes to its processor but still changes status', () => {
    const s = new Sim({ seed: 17, sameProcessor: true });
    const shares = new Set<number>();
    s.run(1_500_000, {
      rate: 20,
      model: (_k, t) => ({ err: t >= 60_000 && t < 200_000 ? 1 : 0.01 }),
      onEval: () => shares.add(s.share()),
    });
    expect([...shares]).toEqual([1]);
    expect(s.routed[1]).toBe(0);
    expect(s.transitions.map((t) => [t.processor, t.event, t.from, t.to])).toEqual([
      [0, 'processor.degraded', 'healthy', 'failed_over'],
      [0, 'processor.healthy', 'failed_over', 'healthy'],
    ]);
    // The secondary row mirrors the one processor.
    expect(s.field(1, PF_STATUS)).toBe(s.field(0, PF_STATUS));
    console.log(`self-fallback outage 60-200 s: back to healthy at ${s.when(s.transitions[1]) / 1000} s`);
  });
});
