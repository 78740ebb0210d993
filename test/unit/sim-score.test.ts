import { describe, expect, it } from 'vitest';
import { windows } from '../../bench/sim/curves.js';
import type { TxEvent } from '../../bench/sim/driver.js';
import { makeProcessor, type OutcomeKind } from '../../bench/sim/processor.js';
import type { Scenario } from '../../bench/sim/scenarios.js';
import { ANTICIPATION_WINDOW_MS, awayEpisodes, score } from '../../bench/sim/score.js';

/**
 * Hand-built scenario: A is down in [10 s, 20 s) and approves 0.90 otherwise; B always
 * approves 0.95. Events arrive every 100 ms (10 per 1 s window) from 0 to 39.9 s.
 */
const A = makeProcessor({ id: 'A', errorRate: windows(0, [{ startMs: 10_000, endMs: 20_000, value: 1 }]), declineRate: 0.1 });
const B = makeProcessor({ id: 'B', errorRate: 0, declineRate: 0.05 });

function scenarioWith(incident: Scenario['incident']): Scenario {
  return {
    name: 'hand-built',
    description: '',
    durationMs: 40_000,
    primary: A,
    secondary: B,
    ...(incident && { incident }),
    expectFailover: incident !== undefined,
    phases: [{ startMs: 0, name: 'all' }],
  };
}
const withIncident = scenarioWith({ startMs: 10_000, endMs: 20_000 });

function ev(t: number, processorId: string, kind: OutcomeKind = 'approved'): TxEvent {
  return {
    t,
    decision: { processorId },
    outcome: { success: kind === 'approved', latency_ms: 100, error_code: kind === 'approved' ? null : 'x', kind },
  };
}

/** One event every 100 ms in [0, 40 s), routed by `choose`. */
function stream(choose: (t: number) => string, kind: (t: number, id: string) => OutcomeKind = () => 'approved'): TxEvent[] {
  return Array.from({ length: 400 }, (_, i) => {
    const t = i * 100;
    const id = choose(t);
    return ev(t, id, kind(t, id));
  });
}

/**
 * The engine leaves A at 12 s (2 s into the incident), returns at 25 s (5 s after it),
 * and leaves again for no reason during [30 s, 31 s). A fails technically during the
 * incident; two payments on B are declined at 15 s and 15.1 s.
 */
const engineRun = stream(
  (t) => ((t >= 12_000 && t < 25_000) || (t >= 30_000 && t < 31_000) ? 'B' : 'A'),
  (t, id) => (id === 'A' && t >= 10_000 && t < 20_000 ? 'technical_error' : t === 15_000 || t === 15_100 ? 'declined' : 'approved'),
);

describe('awayEpisodes', () => {
  it('starts an episode when the 1 s share of the primary drops below 50 % and ends it at 50 % or more', () => {
    // At 12.4 s the window (11.4 s, 12.4 s] holds 5 A and 5 B (share 0.5): still on A.
    // At 12.5 s it holds 4 A and 6 B: away. Symmetrically back at 25.4 s and 31.4 s.
    expect(awayEpisodes(engineRun, 'A')).toEqual([
      { startMs: 12_500, endMs: 25_400 },
      { startMs: 30_500, endMs: 31_400 },
    ]);
  });

  it('does not depend on event order and evaluates simultaneous events together', () => {
    expect(awayEpisodes([...engineRun].reverse(), 'A')).toEqual(awayEpisodes(engineRun, 'A'));
    // Two events at the same instant: share 1/2 is not below 50 %, whichever comes first.
    expect(awayEpisodes([ev(0, 'B'), ev(0, 'A')], 'A')).toEqual([]);
    expect(awayEpisodes([ev(0, 'B')], 'A')).toEqual([{ startMs: 0, endMs: null }]);
  });
});

describe('score', () => {
  const r = score(engineRun, withIncident);

  it('measures detection and return times from the incident window', () => {
    expect(r.detectionMs).toBe(2_500);
    expect(r.returnToPrimaryMs).toBe(5_400);
  });

  it('counts failures and oracle-saved payments during the incident', () => {
    // [10 s, 20 s): 20 technical errors on A (10.0-11.9 s) and 2 declines on B.
    expect(r.failedDuringIncident).toBe(22);
    // Each of A's 20 technical failures would have succeeded on B with probability 0.95.
    expect(r.oracleSavedPayments).toBeCloseTo(19, 12);
  });

  it('counts the unprompted departure after the incident as one false failover', () => {
    expect(r.falseFailovers).toBe(1);
  });

  it('computes regret against the better processor of each instant', () => {
    // B (0.95) is always at least as good. A was chosen 240 times outside the incident
    // (regret 0.05 each) and 20 times during it (0.95 each): (12 + 19) / 400.
    expect(r.regret).toBeCloseTo(31 / 400, 12);
    expect(r.transactions).toBe(400);
    expect(r.primaryShare).toBe(260 / 400);
    expect(r.approvalRate).toBe(378 / 400);
  });

  it('without an incident, every departure is false and there is nothing to detect', () => {
    const s = score(engineRun, scenarioWith(undefined));
    expect(s.falseFailovers).toBe(2);
    expect(s.detectionMs).toBeNull();
    expect(s.returnToPrimaryMs).toBeNull();
    expect(s.failedDuringIncident).toBe(0);
    expect(s.oracleSavedPayments).toBe(0);
  });

  it('treats leaving shortly before the incident as anticipation, with a negative detection time', () => {
    const early = stream((t) => (t >= 5_000 && t < 22_000 ? 'B' : 'A'));
    const s = score(early, withIncident);
    expect(s.detectionMs).toBe(5_500 - 10_000);
    expect(s.falseFailovers).toBe(0);
    expect(s.returnToPrimaryMs).toBe(22_400 - 20_000);
  });

  it('counts departures more than ANTICIPATION_WINDOW_MS ahead as false, and needs the engine away during the incident', () => {
    const incidentAt = 10_000 + ANTICIPATION_WINDOW_MS;
    const s = score(
      stream((t) => ((t >= 5_000 && t < 6_000) || (t >= 10_000 && t < 11_000) ? 'B' : 'A')),
      scenarioWith({ startMs: incidentAt }),
    );
    // Episodes start at 5.5 s (before the window opens at 10 s: false) and 10.5 s (inside it).
    expect(s.awayEpisodes.map((e) => e.startMs)).toEqual([5_500, 10_500]);
    expect(s.falseFailovers).toBe(1);
    // Both ended long before the incident: it was never detected.
    expect(s.detectionMs).toBeNull();
  });

  it('reports no detection and a zero return time when traffic never leaves', () => {
    const s = score(
      stream(() => 'A'),
      withIncident,
    );
    expect(s.detectionMs).toBeNull();
    expect(s.returnToPrimaryMs).toBe(0);
    expect(s.falseFailovers).toBe(0);
  });

  it('reports a null return time when traffic never comes back', () => {
    const s = score(
      stream((t) => (t >= 12_000 ? 'B' : 'A')),
      withIncident,
    );
    expect(s.detectionMs).toBe(2_500);
    expect(s.returnToPrimaryMs).toBeNull();
  });

  it('ignores a return-and-leave-again inside the incident for detection', () => {
    const s = score(
      stream((t) => ((t >= 11_000 && t < 14_000) || t >= 16_000 ? 'B' : 'A')),
      withIncident,
    );
    expect(s.detectionMs).toBe(1_500);
    expect(s.falseFailovers).toBe(0);
  });

  it('handles no events and rejects unknown processors', () => {
    expect(score([], withIncident)).toMatchObject({ transactions: 0, regret: 0, approvalRate: 0, detectionMs: null });
    expect(() => score([ev(0, 'C')], withIncident)).toThrow(/unknown processor "C"/);
  });
});
