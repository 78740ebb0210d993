/**
 * The in-process engine adapter (bench/sim/engine-adapter.ts) drives the real engine modules
 * in virtual time: seeded, so these are exact replays; nothing here depends on wall time.
 */
import { describe, expect, it } from 'vitest';
import { FAST_PATH_RUN } from '../../src/tiers/tier1/config.js';
import { EARLY_GAP_MS, InProcessEngine, POOL_DELAY_MS, RUN_START_MS, runInProcess } from '../../bench/sim/engine-adapter.js';
import type { Outcome } from '../../bench/sim/processor.js';
import { getScenario } from '../../bench/sim/scenarios.js';
import { score } from '../../bench/sim/score.js';
import { measureRun } from '../../bench/lib/scenario-metrics.js';

describe('in-process engine adapter', () => {
  it('fails a sudden total outage over within ~1-2 s of virtual time at 20 tx/s', async () => {
    const scenario = getScenario('sudden-outage');
    for (const seed of [1, 2, 3]) {
      const run = await runInProcess({ scenario, ratePerSec: 20, seed });
      const m = measureRun(run, 20, seed, 1);
      expect(m.failoverMs, `seed ${seed}`).not.toBeNull();
      expect(m.failoverMs!).toBeGreaterThan(0);
      expect(m.failoverMs!).toBeLessThan(2000);
      // The traffic follows: the score sees it leave the primary shortly after.
      expect(m.detectionMs!).toBeLessThan(2500);
      expect(run.engine.status(0)).toBe('failed_over');
      expect(run.engine.primaryShare()).toBeLessThanOrEqual(0.06); // recovery probes: 1 probe/s of 20 tx/s at the bottom of the slow-start ladder
      expect(run.engine.counters.earlyEvaluations).toBeGreaterThanOrEqual(1);
    }
  });

  it('never fails over on steady 2% errors over a simulated 10 minutes', async () => {
    const scenario = getScenario('steady', { durationMs: 600_000 });
    for (const rate of [2, 20, 100]) {
      const run = await runInProcess({ scenario, ratePerSec: rate, seed: 7 });
      const s = score(run.events, scenario);
      expect(s.falseFailovers, `${rate} tx/s`).toBe(0);
      expect(run.engine.transitions.filter((t) => t.event === 'failover.triggered')).toEqual([]);
      expect(s.primaryShare).toBe(1);
      expect(run.engine.counters.cycles).toBe(120);
    }
  });

  it('replays exactly for the same seed', async () => {
    const scenario = getScenario('partial-outage');
    const a = await runInProcess({ scenario, ratePerSec: 20, seed: 4 });
    const b = await runInProcess({ scenario, ratePerSec: 20, seed: 4 });
    expect(b.events).toEqual(a.events);
    expect(b.engine.transitions).toEqual(a.engine.transitions);
  });

  it('follows the scheduler: early evaluation at the run threshold, gap-limited, published after the pool delay', () => {
    const scenario = getScenario('sudden-outage');
    const evals: Array<{ t: number; early: boolean }> = [];
    const engine = new InProcessEngine({ scenario, seed: 1, firstCycleMs: 5000, onEvaluated: (e) => evals.push({ t: e.t, early: e.early }) });
    const fail: Outcome = { success: false, latency_ms: 100, error_code: 'http_503', kind: 'technical_error' };
    const primary = scenario.primary.id;
    let t = RUN_START_MS + 1000;
    for (let i = 0; i < FAST_PATH_RUN; i++) engine.outcome((t += 10), primary, fail);
    const requestedAt = t;
    // Nothing is published before the round trip ends.
    engine.tick(requestedAt + POOL_DELAY_MS - 1);
    expect(evals).toEqual([]);
    engine.tick(requestedAt + POOL_DELAY_MS);
    expect(evals).toEqual([{ t: requestedAt + POOL_DELAY_MS - RUN_START_MS, early: true }]);
    expect(engine.status(0)).toBe('failed_over');
    // A second run right away waits for the early gap, measured from the first dispatch.
    const ok: Outcome = { success: true, latency_ms: 100, error_code: null, kind: 'approved' };
    t = requestedAt + POOL_DELAY_MS;
    engine.outcome((t += 10), primary, ok);
    for (let i = 0; i < FAST_PATH_RUN; i++) engine.outcome((t += 1), primary, fail);
    engine.tick(requestedAt + EARLY_GAP_MS + POOL_DELAY_MS);
    expect(evals.map((e) => e.t)).toEqual([requestedAt + POOL_DELAY_MS, requestedAt + EARLY_GAP_MS + POOL_DELAY_MS].map((x) => x - RUN_START_MS));
    // The periodic cycle comes on its own grid.
    engine.tick(RUN_START_MS + 5000 + POOL_DELAY_MS);
    expect(evals.at(-1)).toEqual({ t: 5000 + POOL_DELAY_MS, early: false });
    expect(engine.counters).toEqual({ cycles: 1, earlyEvaluations: 2, overrunsSkipped: 0 });
  });

  it('routes through the tenant rule and counts like the front thread', async () => {
    const scenario = getScenario('steady', { durationMs: 10_000 });
    const run = await runInProcess({ scenario, ratePerSec: 20, seed: 1 });
    const { tenant, rule } = run.engine;
    expect(rule.record.primary_id).toBe(scenario.primary.id);
    expect(rule.record.secondary_id).toBe(scenario.secondary.id);
    expect(tenant.counters.routed).toBe(run.events.length);
    // Outcomes still in flight at the end are not reported.
    expect(tenant.counters.reported).toBeLessThanOrEqual(run.events.length);
    expect(tenant.counters.reported).toBeGreaterThan(run.events.length - 40);
  });
});
