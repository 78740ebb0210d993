/** The bandit pieces the Tier 3 stage adds: change detection, the window cursor, seeds, tenant settings. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CHANGE_THRESHOLD, klBernoulli, observeBatch, shiftStatistic } from '../../src/tiers/autopilot/change.js';
import {
  DEFAULT_BANDIT_CONFIG,
  TENANT_HALF_LIFE_MAX_MS,
  TENANT_HALF_LIFE_MIN_MS,
  tenantBanditOverrides,
} from '../../src/tiers/autopilot/config.js';
import { createArm, observe } from '../../src/tiers/autopilot/posterior.js';
import { DEFAULT_RISK_FLOOR, effectiveRisk } from '../../src/tiers/autopilot/risk.js';
import { countsSince, readArm, writeArm } from '../../src/tiers/autopilot/rows.js';
import { mulberry32, seedFor } from '../../src/tiers/autopilot/sampling.js';
import {
  PF_BANDIT_BASE,
  PF_BANDIT_LEN,
  PF_GRU_BASE,
  PF_T1_BASE,
  PF_T1_LEN,
  PROC_F64_STRIDE,
  B_ALPHA,
  B_BETA,
  B_UPDATED_MS,
} from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { emptyCounts, OutcomeKind, recordOutcome } from '../../src/shm/window.js';

const T0 = 1_700_000_000_000;

describe('change detection', () => {
  const cfg = DEFAULT_BANDIT_CONFIG;
  // ~15,000 outcomes at 0.95: a busy arm's steady state at the default half-life.
  const busy = observe(createArm(T0), 14_250, 750, T0);

  it('KL divergence of Bernoullis', () => {
    expect(klBernoulli(0.5, 0.5)).toBe(0);
    expect(klBernoulli(0.6, 0.95)).toBeCloseTo(0.6 * Math.log(0.6 / 0.95) + 0.4 * Math.log(0.4 / 0.05), 12);
    expect(klBernoulli(0, 0.95)).toBeCloseTo(Math.log(1 / 0.05), 12);
    expect(klBernoulli(1, 1)).toBeCloseTo(0, 9);
    expect(Number.isFinite(klBernoulli(1, 0))).toBe(true);
  });

  it('a batch like the arm scores low; a drop to 0.60 scores far above the threshold', () => {
    expect(shiftStatistic(busy, 86, 4)).toBeLessThan(1);
    expect(shiftStatistic(busy, 54, 36)).toBeGreaterThan(40);
    expect(shiftStatistic(busy, 0, 0)).toBe(0);
  });

  it('an arm with little evidence is hardly ever "changed" (the uncertainty of its mean is counted)', () => {
    const young = observe(createArm(T0), 19, 1, T0); // 20 outcomes
    expect(shiftStatistic(young, 54, 36)).toBeLessThan(DEFAULT_CHANGE_THRESHOLD);
    expect(shiftStatistic(busy, 54, 36)).toBeGreaterThan(shiftStatistic(young, 54, 36) * 5);
  });

  it('restarts the arm from the prior plus the batch on detection, else adds the batch', () => {
    const kept = observeBatch(busy, 86, 4, T0 + 5000, cfg);
    expect(kept.changed).toBe(false);
    expect(kept.arm).toEqual(observe(busy, 86, 4, T0 + 5000, cfg));
    const moved = observeBatch(busy, 54, 36, T0 + 5000, cfg);
    expect(moved.changed).toBe(true);
    expect(moved.arm).toEqual({ alpha: 1 + 54, beta: 1 + 36, updatedAtMs: T0 + 5000 });
    // Infinity disables detection.
    expect(observeBatch(busy, 54, 36, T0 + 5000, cfg, Infinity).changed).toBe(false);
  });

  it('false alarms on a stationary arm are rare: none in 20,000 simulated 5 s batches at 18 tx/s', () => {
    const rng = mulberry32(42);
    let arm = busy;
    let alarms = 0;
    let t = T0;
    for (let i = 0; i < 20_000; i++) {
      let s = 0;
      for (let j = 0; j < 90; j++) if (rng() < 0.95) s++;
      t += 5000;
      const r = observeBatch(arm, s, 90 - s, t, cfg);
      if (r.changed) alarms++;
      arm = r.arm;
    }
    expect(alarms).toBe(0);
  });
});

describe('bandit rows', () => {
  it('lie inside the processor row, clear of Tier 1 and Tier 2 state', () => {
    expect(PF_BANDIT_BASE).toBeGreaterThanOrEqual(PF_T1_BASE + PF_T1_LEN);
    expect(PF_BANDIT_BASE + PF_BANDIT_LEN).toBeLessThanOrEqual(PF_GRU_BASE);
    expect(PF_GRU_BASE).toBeLessThan(PROC_F64_STRIDE);
  });

  it('a zero-filled row reads as the prior; an arm round-trips', () => {
    const f = new Float64Array(PROC_F64_STRIDE);
    expect(readArm(f, 0, T0, DEFAULT_BANDIT_CONFIG)).toEqual({ alpha: 1, beta: 1, updatedAtMs: T0 });
    writeArm(f, 0, { alpha: 10.5, beta: 2.25, updatedAtMs: T0 - 5 });
    expect([f[B_ALPHA], f[B_BETA], f[B_UPDATED_MS]]).toEqual([10.5, 2.25, T0 - 5]);
    expect(readArm(f, 0, T0, DEFAULT_BANDIT_CONFIG)).toEqual({ alpha: 10.5, beta: 2.25, updatedAtMs: T0 - 5 });
    f[B_ALPHA] = NaN;
    expect(readArm(f, 0, T0, DEFAULT_BANDIT_CONFIG).alpha).toBe(1);
  });

  it('countsSince consumes complete buckets once, declines and technical errors as failures', () => {
    const tables = new SharedTables();
    const w = tables.allocWindow();
    const seg = tables.windowSegs[0];
    const rec = (t: number, kind: OutcomeKind) => recordOutcome(seg, w, T0 + t, kind, 100);
    rec(100, OutcomeKind.Success);
    rec(900, OutcomeKind.Decline);
    rec(1_500, OutcomeKind.Success);
    rec(1_600, OutcomeKind.Timeout);
    rec(2_100, OutcomeKind.TechError); // in the bucket still filling at 2.5 s
    const c = emptyCounts();
    const b0 = Math.floor(T0 / 1000);
    let cursor = countsSince(seg, w, w, 0, T0 + 2_500, c);
    expect(cursor).toBe(b0 + 1);
    expect([c.success, c.decline + c.tech]).toEqual([2, 2]);
    cursor = countsSince(seg, w, w, cursor, T0 + 2_900, c); // nothing completed since
    expect(cursor).toBe(b0 + 1);
    expect([c.success, c.decline, c.tech]).toEqual([0, 0, 0]);
    cursor = countsSince(seg, w, w, cursor, T0 + 3_000, c);
    expect(cursor).toBe(b0 + 2);
    expect([c.success, c.decline + c.tech]).toEqual([0, 1]);
    // Clock going back: nothing, cursor kept.
    expect(countsSince(seg, w, w, cursor, T0 + 1_000, c)).toBe(cursor);
    // After a long gap only what the window still holds (its last 62 complete buckets) counts.
    for (let s = 0; s < 100; s++) rec(10_000 + s * 1000, OutcomeKind.Success);
    countsSince(seg, w, w, cursor, T0 + 110_500, c);
    expect(c.success).toBe(62);
  });

  it('countsSince: no window yet moves the cursor; a window the task cannot see yet does not', () => {
    const c = emptyCounts();
    const last = Math.floor((T0 + 5_000) / 1000) - 1;
    expect(countsSince(undefined, 0, -1, 0, T0 + 5_000, c)).toBe(last);
    expect(countsSince(undefined, 3, 3, 17, T0 + 5_000, c)).toBe(17);
  });
});

describe('Tier 2 risk', () => {
  it('ignores the healthy base rate and rescales the rest to [0, 1]', () => {
    expect(DEFAULT_RISK_FLOOR).toBe(0.1);
    for (const q of [NaN, null, undefined, -1, 0, 0.03, 0.1]) expect(effectiveRisk(q)).toBe(0);
    expect(effectiveRisk(0.55)).toBeCloseTo(0.5, 12);
    expect(effectiveRisk(1)).toBe(1);
    expect(effectiveRisk(7)).toBe(1);
    expect(effectiveRisk(0.3, 0)).toBe(0.3); // floor 0: raw
  });
});

describe('seeds', () => {
  it('differ across rules and cycles, and are stable', () => {
    const seen = new Set<number>();
    for (let slot = 0; slot < 100; slot++) for (let c = 0; c < 100; c++) seen.add(seedFor(slot, T0 + c * 5000));
    expect(seen.size).toBe(10_000);
    expect(seedFor(7, T0)).toBe(seedFor(7, T0));
    expect(mulberry32(seedFor(1, T0))()).not.toBe(mulberry32(seedFor(1, T0 + 5000))());
  });
});

describe('tenant bandit settings', () => {
  it('maps API names to config fields and validates ranges, naming the API field', () => {
    expect(tenantBanditOverrides({ bandit_half_life_ms: 300_000, bandit_exploration_floor: 0.05, failover_threshold: 0.4 })).toEqual({
      halfLifeMs: 300_000,
      explorationFloor: 0.05,
    });
    expect(tenantBanditOverrides({})).toEqual({});
    expect(() => tenantBanditOverrides({ bandit_half_life_ms: TENANT_HALF_LIFE_MIN_MS - 1 })).toThrow(/: bandit_half_life_ms$/);
    expect(() => tenantBanditOverrides({ bandit_half_life_ms: TENANT_HALF_LIFE_MAX_MS + 1 })).toThrow(/: bandit_half_life_ms$/);
    expect(() => tenantBanditOverrides({ bandit_exploration_floor: 0.6 })).toThrow(/: bandit_exploration_floor$/);
    expect(() => tenantBanditOverrides({ bandit_exploration_floor: -0.01 })).toThrow(/: bandit_exploration_floor$/);
    expect(() => tenantBanditOverrides({ bandit_exploration_floor: NaN })).toThrow(/: bandit_exploration_floor$/);
  });
});
