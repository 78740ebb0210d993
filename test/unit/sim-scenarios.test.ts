import { describe, expect, it } from 'vitest';
import { INCIDENT_ERROR_RATE, findIncident } from '../../bench/sim/incident.js';
import { piecewise } from '../../bench/sim/curves.js';
import { successProbability } from '../../bench/sim/processor.js';
import { SCENARIOS, getScenario, listScenarios, phaseAt, truncateScenario } from '../../bench/sim/scenarios.js';

const REQUIRED = [
  'steady',
  'steady-noise-10',
  'steady-noise-15',
  'sudden-outage',
  'partial-outage',
  'ramp-60',
  'ramp-120',
  'latency-degradation',
  'flapping',
  'benign-bump',
  'recovery',
  'secondary-better',
  'drift',
  'steady-pair-95-93',
];

/** Primary technical error rate of a scenario at the given times. */
const errorsAt = (name: string, ...ts: number[]): number[] => ts.map((t) => getScenario(name).primary.errorRate(t));

describe('scenario catalogue', () => {
  it('lists every required scenario', () => {
    expect(listScenarios()).toEqual(expect.arrayContaining(REQUIRED));
    expect(Object.keys(SCENARIOS)).toEqual(listScenarios());
  });

  it.each(listScenarios())('%s is well formed', (name) => {
    const s = getScenario(name);
    expect(s.name).toBe(name);
    expect(s.primary.id).not.toBe(s.secondary.id);
    expect(s.durationMs).toBeGreaterThan(0);
    expect(s.expectFailover).toBe(s.incident !== undefined);
    expect(s.phases[0].startMs).toBe(0);
    for (let i = 1; i < s.phases.length; i++) expect(s.phases[i].startMs).toBeGreaterThanOrEqual(s.phases[i - 1].startMs);
    if (s.incident) {
      expect(s.incident.startMs).toBeLessThan(s.durationMs);
      expect(s.incident.endMs ?? s.durationMs).toBeGreaterThan(s.incident.startMs);
    }
    // The secondary is the healthy alternative in every scenario.
    for (let t = 0; t < s.durationMs; t += 5_000) expect(s.secondary.errorRate(t)).toBeLessThanOrEqual(0.15);
  });

  it('rejects unknown names with the list of known ones', () => {
    expect(() => getScenario('nope')).toThrow(/steady/);
    expect(() => getScenario('toString')).toThrow(/unknown scenario/);
  });
});

describe('scenario shapes', () => {
  it('steady: 2 % errors, 8 % declines on both, no incident', () => {
    const s = getScenario('steady');
    for (const p of [s.primary, s.secondary]) {
      expect([p.errorRate(0), p.errorRate(300_000), p.declineRate(300_000)]).toEqual([0.02, 0.02, 0.08]);
    }
    expect(s.incident).toBeUndefined();
    expect(s.expectFailover).toBe(false);
  });

  it('steady noise stays below the incident threshold', () => {
    expect(errorsAt('steady-noise-10', 0, 500_000)).toEqual([0.1, 0.1]);
    expect(errorsAt('steady-noise-15', 0, 500_000)).toEqual([0.15, 0.15]);
    expect(getScenario('steady-noise-10').expectFailover).toBe(false);
    expect(getScenario('steady-noise-15').incident).toBeUndefined();
  });

  it('sudden-outage: 100 % errors from 60 s, with no end', () => {
    expect(errorsAt('sudden-outage', 59_999, 60_000, 200_000)).toEqual([0.02, 1, 1]);
    expect(getScenario('sudden-outage').incident).toEqual({ startMs: 60_000 });
  });

  it('partial-outage: 60 % errors from 60 s', () => {
    expect(errorsAt('partial-outage', 59_999, 60_000, 200_000)).toEqual([0.02, 0.6, 0.6]);
    expect(getScenario('partial-outage').incident).toEqual({ startMs: 60_000 });
  });

  it('ramps rise linearly from 2 % to 60 % and the incident starts at the 25 % crossing', () => {
    const r60 = errorsAt('ramp-60', 60_000, 90_000, 120_000, 200_000);
    expect(r60.map((x) => +x.toFixed(6))).toEqual([0.02, 0.31, 0.6, 0.6]);
    const r120 = errorsAt('ramp-120', 60_000, 120_000, 180_000);
    expect(r120.map((x) => +x.toFixed(6))).toEqual([0.02, 0.31, 0.6]);
    // 0.02 + 0.58 (t − 60 s) / ramp > 0.25  ⇔  t > 60 s + ramp · 23/58
    expect(getScenario('ramp-60').incident).toEqual({ startMs: 83_794 });
    expect(getScenario('ramp-120').incident).toEqual({ startMs: 107_587 });
  });

  it('latency-degradation: p95 climbs 10x over 60 s before errors rise', () => {
    const { primary, incident } = getScenario('latency-degradation');
    expect(primary.latencyP95Ms(60_000)).toBe(700);
    expect(primary.latencyP95Ms(120_000) / primary.latencyP95Ms(60_000)).toBe(10);
    expect(primary.errorRate(120_000)).toBe(0.02);
    expect(primary.errorRate(150_000)).toBe(0.5);
    expect(primary.errorMix(150_000).find(([c]) => c === 'timeout')?.[1]).toBeGreaterThan(0.5);
    expect(incident!.startMs).toBeGreaterThan(120_000);
  });

  it('flapping: alternating bad and good periods of 20-40 s, one incident across them', () => {
    const s = getScenario('flapping');
    const flaps = s.phases.filter((p) => p.name.startsWith('flap-'));
    expect(flaps.length).toBeGreaterThanOrEqual(5);
    flaps.forEach((p, i) => {
      expect(p.name).toBe(i % 2 === 0 ? 'flap-bad' : 'flap-good');
      const next = s.phases[s.phases.indexOf(p) + 1];
      expect(next.startMs - p.startMs).toBeGreaterThanOrEqual(20_000);
      expect(next.startMs - p.startMs).toBeLessThanOrEqual(40_000);
      expect(s.primary.errorRate(p.startMs + 10_000)).toBe(i % 2 === 0 ? 0.6 : 0.02);
    });
    expect(s.incident).toEqual({ startMs: 60_000, endMs: 270_000 });
  });

  it('benign-bump: rises to 20 % over 30 s and recedes, no incident', () => {
    expect(errorsAt('benign-bump', 60_000, 90_000, 120_000).map((x) => +x.toFixed(6))).toEqual([0.02, 0.2, 0.02]);
    expect(getScenario('benign-bump').incident).toBeUndefined();
  });

  it('recovery: outage from 60 s to 180 s, then healthy', () => {
    expect(errorsAt('recovery', 59_999, 60_000, 179_999, 180_000)).toEqual([0.02, 1, 1, 0.02]);
    expect(getScenario('recovery').incident).toEqual({ startMs: 60_000, endMs: 180_000 });
  });

  it('secondary-better: approval 0.90 vs 0.96 through declines only', () => {
    const s = getScenario('secondary-better');
    expect(successProbability(s.primary, 1000)).toBeCloseTo(0.9, 12);
    expect(successProbability(s.secondary, 1000)).toBeCloseTo(0.96, 12);
    expect(s.primary.errorRate(1000)).toBe(s.secondary.errorRate(1000));
    expect(s.incident).toBeUndefined();
  });

  it('drift: approval rates cross half-way through 30 minutes', () => {
    const s = getScenario('drift');
    expect(s.durationMs).toBe(1_800_000);
    const p = (t: number): number[] => [successProbability(s.primary, t), successProbability(s.secondary, t)].map((x) => +x.toFixed(9));
    expect(p(0)).toEqual([0.95, 0.89]);
    expect(p(900_000)).toEqual([0.92, 0.92]);
    expect(p(1_800_000)).toEqual([0.89, 0.95]);
    expect(s.incident).toBeUndefined();
  });

  it('steady-pair-95-93: approval 0.95 vs 0.93', () => {
    const s = getScenario('steady-pair-95-93');
    expect(successProbability(s.primary, 0)).toBeCloseTo(0.95, 12);
    expect(successProbability(s.secondary, 0)).toBeCloseTo(0.93, 12);
  });
});

describe('scenario options', () => {
  it('moves the disturbance with incidentAtMs and overrides the duration', () => {
    const s = getScenario('sudden-outage', { incidentAtMs: 15_000, durationMs: 90_000 });
    expect(s.durationMs).toBe(90_000);
    expect(s.incident).toEqual({ startMs: 15_000 });
    expect(s.primary.errorRate(14_999)).toBe(0.02);
    expect(getScenario('recovery', { incidentAtMs: 15_000 }).incident).toEqual({ startMs: 15_000, endMs: 135_000 });
  });

  it('scales drift to the requested duration', () => {
    const s = getScenario('drift', { durationMs: 600_000 });
    expect(successProbability(s.primary, 300_000)).toBeCloseTo(successProbability(s.secondary, 300_000), 12);
  });

  it('truncates a scenario to the time actually run', () => {
    const s = getScenario('recovery');
    expect(truncateScenario(s, 100_000)).toMatchObject({ durationMs: 100_000, incident: { startMs: 60_000 }, expectFailover: true });
    expect(truncateScenario(s, 100_000).incident?.endMs).toBeUndefined();
    expect(truncateScenario(s, 30_000).incident).toBeUndefined();
    expect(truncateScenario(s, 30_000).expectFailover).toBe(false);
    expect(truncateScenario(s, 10 * s.durationMs)).toEqual(s);
  });

  it('names the phase in effect', () => {
    const s = getScenario('recovery');
    expect([phaseAt(s, 0), phaseAt(s, 60_000), phaseAt(s, 179_999), phaseAt(s, 180_000)]).toEqual([
      'baseline',
      'outage',
      'outage',
      'recovered',
    ]);
  });
});

describe('findIncident', () => {
  it('finds the first crossing above the threshold and the last return below it, to the ms', () => {
    const f = piecewise([
      [0, 0],
      [1000, 0],
      [1000, 1],
      [2000, 1],
      [2000, 0],
      [3000, 0],
      [3000, 1],
      [4000, 1],
      [4000, 0],
    ]);
    expect(findIncident(f, 10_000)).toEqual({ startMs: 1000, endMs: 4000 });
    expect(findIncident(() => INCIDENT_ERROR_RATE, 10_000)).toBeUndefined();
    expect(findIncident(() => 1, 10_000)).toEqual({ startMs: 0 });
  });
});
