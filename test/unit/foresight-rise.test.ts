/**
 * Foresight's rise evidence (src/tiers/foresight/rise.ts) on real outcome windows: the
 * processor's usual error rate, and how sure a rise of the last 15 s above it is, which the
 * proportional policy scales its cut by (a ramp starting from 2% moves traffic, a noisy stretch
 * of a processor usually at 10% does not).
 */
import { describe, expect, it } from 'vitest';
import { G_ERR_DEN, G_ERR_NUM, G_P95_DEN, G_P95_NUM, PROC_F64_STRIDE, WINDOW_MASK, WINDOW_SHIFT } from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';
import { DEFAULT_FORESIGHT_CONFIG, predictedShare } from '../../src/tiers/foresight/policy.js';
import {
  BASELINE_HALF_LIFE_MS,
  errorRise,
  latencyRise,
  riseEvidence,
  riseLevel,
  updateErrorBaseline,
  usualErrorRate,
} from '../../src/tiers/foresight/rise.js';
import { resetHidden, STEP_MS } from '../../src/tiers/foresight/state.js';

const T0 = 1_700_000_000_000;
const THR = 0.3;

function setup() {
  const tables = new SharedTables();
  const w = tables.allocWindow();
  const seg = tables.windowSegs[w >> WINDOW_SHIFT];
  const wi = w & WINDOW_MASK;
  const row = new Float64Array(PROC_F64_STRIDE);
  /** `perSec` outcomes in each second of [from, to) (ms), every k-th a technical error. */
  const traffic = (from: number, to: number, perSec: number, errorRate: number, latencyMs = 200): void => {
    let errors = 0;
    let n = 0;
    for (let t = from; t < to; t += 1000 / perSec) {
      n++;
      const tech = errors < errorRate * n - 1e-9;
      if (tech) errors++;
      recordOutcome(seg, wi, T0 + t, tech ? OutcomeKind.TechError : OutcomeKind.Success, latencyMs);
    }
  };
  /** One baseline update per STEP_MS over [from, to). */
  const steps = (from: number, to: number): void => {
    for (let t = from + STEP_MS; t <= to; t += STEP_MS) updateErrorBaseline(row, 0, seg, wi, T0 + t, STEP_MS);
  };
  return { seg, wi, row, traffic, steps };
}

describe('Foresight rise evidence', () => {
  it("the usual error rate: a 2% prior, then the processor's own rate, moving with a 10-minute half-life", () => {
    const { row, traffic, steps } = setup();
    expect(usualErrorRate(row, 0)).toBeCloseTo(0.02, 10);
    traffic(0, 60_000, 20, 0.1);
    steps(0, 60_000);
    expect(usualErrorRate(row, 0)).toBeCloseTo(0.1, 2);
    // Two minutes at 40%: the usual rate moves by well under a third of the way.
    traffic(60_000, 180_000, 20, 0.4);
    steps(60_000, 180_000);
    const b = usualErrorRate(row, 0);
    expect(b).toBeGreaterThan(0.1);
    expect(b).toBeLessThan(0.1 + 0.3 * (1 - 2 ** (-120_000 / BASELINE_HALF_LIFE_MS)) * 5);
    // A reset of the hidden state keeps the baselines.
    const kept = [row[G_ERR_NUM], row[G_ERR_DEN]];
    resetHidden(row, 0);
    expect([row[G_ERR_NUM], row[G_ERR_DEN]]).toEqual(kept);
  });

  it('the rise level: 5% for a processor usually at 2%, 17% at 10%, at most half-way to the failover threshold', () => {
    expect(riseLevel(0.02, THR)).toBeCloseTo(0.05, 12);
    expect(riseLevel(0.1, THR)).toBeCloseTo(0.17, 12);
    expect(riseLevel(0.2, THR)).toBeCloseTo(0.25, 12);
  });

  it('a ramp starting from 2% is a rise; the same stretch on a processor usually at 10%, or at its usual rate, is not', () => {
    // Usually 2%, then 15 s at 10% (300 outcomes): far above 5%.
    const ramp = setup();
    ramp.traffic(0, 180_000, 20, 0.02);
    ramp.steps(0, 180_000);
    ramp.traffic(180_000, 195_000, 20, 0.1);
    expect(errorRise(ramp.row, 0, ramp.seg, ramp.wi, T0 + 195_000, THR)).toBeGreaterThan(0.99);
    // Usually 10%, then 15 s at 13%: a couple of standard errors, below the 17% level.
    const noisy = setup();
    noisy.traffic(0, 180_000, 20, 0.1);
    noisy.steps(0, 180_000);
    noisy.traffic(180_000, 195_000, 20, 0.13);
    expect(errorRise(noisy.row, 0, noisy.seg, noisy.wi, T0 + 195_000, THR)).toBeLessThan(0.05);
    // At its usual rate: nothing.
    const steady = setup();
    steady.traffic(0, 195_000, 20, 0.02);
    steady.steps(0, 180_000);
    expect(riseEvidence(steady.row, 0, steady.seg, steady.wi, T0 + 195_000, THR)).toBeLessThan(0.01);
    // No window, or no outcomes in the last 15 s: no evidence.
    expect(riseEvidence(steady.row, 0, undefined, 0, T0, THR)).toBe(0);
    expect(errorRise(steady.row, 0, steady.seg, steady.wi, T0 + 400_000, THR)).toBe(0);
  });

  it("latency: p95 at 2x its trailing baseline starts to count, 4x counts fully; jitter does not", () => {
    const { row, seg, wi, traffic } = setup();
    row[G_P95_NUM] = Math.log(200);
    row[G_P95_DEN] = 1;
    traffic(0, 15_000, 20, 0, 260); // +30%
    expect(latencyRise(row, 0, seg, wi, T0 + 15_000)).toBe(0);
    traffic(15_000, 30_000, 20, 0, 800); // 4x
    expect(latencyRise(row, 0, seg, wi, T0 + 30_000)).toBeCloseTo(1, 1);
    traffic(30_000, 45_000, 20, 0, 565); // ~2.8x: half-way on the log scale
    const half = latencyRise(row, 0, seg, wi, T0 + 45_000);
    expect(half).toBeGreaterThan(0.35);
    expect(half).toBeLessThan(0.65);
    // The larger of the two rises counts.
    expect(riseEvidence(row, 0, seg, wi, T0 + 30_000, THR)).toBeCloseTo(latencyRise(row, 0, seg, wi, T0 + 30_000), 12);
    // No baseline yet: no latency evidence.
    expect(latencyRise(new Float64Array(PROC_F64_STRIDE), 0, seg, wi, T0 + 30_000)).toBe(0);
  });

  it('the policy cut scales with the rise evidence: none without a rise, half with half', () => {
    const cfg = DEFAULT_FORESIGHT_CONFIG;
    // p just above the action threshold, so that the floor does not bind.
    const p = cfg.actionThreshold + 0.05;
    const full = predictedShare(0.9, p, 0.01, cfg, NaN, NaN, Infinity, 1, 1);
    const half = predictedShare(0.9, p, 0.01, cfg, NaN, NaN, Infinity, 1, 0.5);
    expect(full).toBeLessThan(0.9);
    expect(full).toBeGreaterThan(cfg.minPrimaryShare);
    expect(0.9 - half).toBeCloseTo((0.9 - full) / 2, 10);
    expect(predictedShare(0.9, p, 0.01, cfg, NaN, NaN, Infinity, 1, 0)).toBeNaN();
  });
});
