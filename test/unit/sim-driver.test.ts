import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../bench/sim/clock.js';
import { runScenario, type EngineAdapter, type RouteDecision } from '../../bench/sim/driver.js';
import type { Outcome } from '../../bench/sim/processor.js';
import { getScenario } from '../../bench/sim/scenarios.js';
import { score } from '../../bench/sim/score.js';

/** Always routes to one processor and records what the driver tells it. */
class FixedAdapter implements EngineAdapter {
  readonly outcomes: Array<{ now: number; processorId: string; outcome: Outcome }> = [];
  readonly ticks: number[] = [];
  constructor(private readonly processorId: string) {}
  route(): RouteDecision {
    return { processorId: this.processorId, decisionSource: 'fixed' };
  }
  outcome(now: number, processorId: string, outcome: Outcome): void {
    this.outcomes.push({ now, processorId, outcome });
  }
  tick(now: number): void {
    this.ticks.push(now);
  }
}

/** A minimal failover engine: leaves the primary after 5 technical errors in a row on it. */
class NaiveFailover implements EngineAdapter {
  private streak = 0;
  constructor(
    private readonly primary: string,
    private readonly secondary: string,
  ) {}
  route(): RouteDecision {
    return { processorId: this.streak >= 5 ? this.secondary : this.primary };
  }
  outcome(_now: number, processorId: string, outcome: Outcome): void {
    if (processorId === this.primary) this.streak = outcome.kind === 'technical_error' ? this.streak + 1 : 0;
  }
}

describe('runScenario', () => {
  it('runs an hour of virtual traffic in seconds, in order, with outcomes delivered after their latency', async () => {
    const scenario = getScenario('steady', { durationMs: 3_600_000 });
    const adapter = new FixedAdapter(scenario.primary.id);
    const routedAt = new Map<Outcome, number>();
    const started = performance.now();
    const events = await runScenario({ scenario, ratePerSec: 50, seed: 1, adapter });
    const wallMs = performance.now() - started;

    expect(wallMs).toBeLessThan(15_000); // a real-time run would take an hour
    expect(events.length).toBeGreaterThan(180_000 * 0.99);
    expect(events.length).toBeLessThan(180_000 * 1.01);
    for (let i = 1; i < events.length; i++) if (events[i].t < events[i - 1].t) throw new Error(`out of order at ${i}`);
    expect(events[events.length - 1].t).toBeLessThan(scenario.durationMs);

    for (const e of events) routedAt.set(e.outcome, e.t);
    const late = adapter.outcomes.filter(({ now, outcome }) => now !== routedAt.get(outcome)! + outcome.latency_ms);
    expect(late).toEqual([]);
    // Only outcomes still in flight at the end are not delivered.
    expect(events.length - adapter.outcomes.length).toBeLessThan(50);
    expect(adapter.ticks).toEqual(Array.from({ length: 3599 }, (_, i) => (i + 1) * 1000));

    const approval = events.filter((e) => e.outcome.success).length / events.length;
    expect(approval).toBeCloseTo(0.98 * 0.92, 2);
  });

  it('is deterministic, and arrival times do not depend on the engine', async () => {
    const scenario = getScenario('sudden-outage', { durationMs: 120_000 });
    const run = (id: string): ReturnType<typeof runScenario> =>
      runScenario({ scenario, ratePerSec: 20, seed: 7, adapter: new FixedAdapter(id) });
    const a = await run(scenario.primary.id);
    expect(await run(scenario.primary.id)).toEqual(a);
    const b = await run(scenario.secondary.id);
    expect(b.map((e) => e.t)).toEqual(a.map((e) => e.t));
    const other = await runScenario({ scenario, ratePerSec: 20, seed: 8, adapter: new FixedAdapter(scenario.primary.id) });
    expect(other.map((e) => e.t)).not.toEqual(a.map((e) => e.t));
  });

  it('draws outcomes from the chosen processor at the routing time', async () => {
    const scenario = getScenario('sudden-outage', { durationMs: 120_000 });
    const events = await runScenario({ scenario, ratePerSec: 50, seed: 2, adapter: new FixedAdapter(scenario.primary.id) });
    expect(events.filter((e) => e.t >= 60_000).every((e) => e.outcome.kind === 'technical_error')).toBe(true);
    expect(events.filter((e) => e.t < 60_000 && e.outcome.success).length).toBeGreaterThan(0);
  });

  it('shares its virtual clock with the engine, starting from the clock value', async () => {
    const clock = new VirtualClock(1_000_000);
    const seen: Array<[number, number]> = [];
    const scenario = getScenario('steady', { durationMs: 10_000 });
    const events = await runScenario({
      scenario,
      ratePerSec: 10,
      seed: 3,
      clock,
      adapter: {
        route: (now) => {
          seen.push([now, clock.now()]);
          return { processorId: scenario.primary.id };
        },
        outcome: () => {},
      },
    });
    expect(seen.every(([now, c]) => now === c)).toBe(true);
    expect(seen.length).toBe(events.length);
    // Clock time is origin + scenario time (up to float rounding of the sum).
    expect(seen.every(([now], i) => Math.abs(now - 1_000_000 - events[i].t) < 1e-6)).toBe(true);
  });

  it('awaits asynchronous adapters and records their decisions', async () => {
    const scenario = getScenario('steady', { durationMs: 5_000 });
    const events = await runScenario({
      scenario,
      ratePerSec: 20,
      seed: 4,
      adapter: {
        route: async () => ({ processorId: scenario.secondary.id, weight: 0.7, decisionSource: 'mab', failureProbability: 0.1 }),
        outcome: async () => {},
        tick: async () => {},
      },
    });
    expect(events.length).toBeGreaterThan(0);
    expect(events[0].decision).toEqual({ processorId: scenario.secondary.id, weight: 0.7, decisionSource: 'mab', failureProbability: 0.1 });
  });

  it('rejects unknown processors and non-positive rates', async () => {
    const scenario = getScenario('steady', { durationMs: 5_000 });
    await expect(runScenario({ scenario, ratePerSec: 10, seed: 1, adapter: new FixedAdapter('nope') })).rejects.toThrow(/unknown processor/);
    await expect(runScenario({ scenario, ratePerSec: 0, seed: 1, adapter: new FixedAdapter('nope') })).rejects.toThrow(/ratePerSec/);
  });

  it('scores a simple failover engine end to end', async () => {
    const scenario = getScenario('sudden-outage');
    const engine = new NaiveFailover(scenario.primary.id, scenario.secondary.id);
    const r = score(await runScenario({ scenario, ratePerSec: 50, seed: 5, adapter: engine }), scenario);
    // Outage errors come back within ~1 s (no timeouts), so 5 in a row are seen almost at once.
    expect(r.detectionMs).toBeGreaterThanOrEqual(0);
    expect(r.detectionMs).toBeLessThan(3_000);
    expect(r.falseFailovers).toBe(0);
    expect(r.regret).toBeLessThan(0.01);
    expect(r.oracleSavedPayments).toBeGreaterThan(0);
  });
});
