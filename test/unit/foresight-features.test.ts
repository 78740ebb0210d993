/**
 * Foresight features read from real outcome windows, and the step schedule that keeps one
 * GRU step per STEP_MS however irregularly evaluations come.
 */
import { describe, expect, it } from 'vitest';
import { FEATURE_NAMES, N_FEATURES, computeFeatures } from '../../src/tiers/foresight/features.js';
import {
  MAX_GAP_MS,
  STEP_MS,
  StepAction,
  WARMUP_STEPS,
  markStepped,
  pushProbability,
  resetHidden,
  stepAction,
  sustainedProbability,
  heldProbability,
} from '../../src/tiers/foresight/state.js';
import {
  PF_GRU_BASE,
  PF_GRU_LEN,
  PROC_F64_STRIDE,
  WINDOW_MASK,
  WINDOW_SHIFT,
  G_ERR_DEN,
  G_ERR_NUM,
  G_HIDDEN,
  G_P95_DEN,
  G_STEPS,
  MAX_HIDDEN,
  PROB_HISTORY,
} from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';

const T0 = 1_700_000_000_000;
const f = (name: (typeof FEATURE_NAMES)[number]): number => FEATURE_NAMES.indexOf(name);

function setup() {
  const tables = new SharedTables();
  const w = tables.allocWindow();
  const seg = tables.windowSegs[w >> WINDOW_SHIFT];
  const row = new Float64Array(PROC_F64_STRIDE);
  const out = new Float64Array(N_FEATURES);
  const record = (t: number, kind: OutcomeKind, lat = 200): void => recordOutcome(seg, w & WINDOW_MASK, T0 + t, kind, lat);
  const features = (t: number): Float64Array => computeFeatures(seg, w & WINDOW_MASK, T0 + t, row, 0, out);
  return { seg, w, row, out, record, features };
}

describe('foresight features', () => {
  it('the row layout fits the reserved PF_GRU fields', () => {
    // The hidden state's room, then the two error-baseline fields closing the block.
    expect(G_HIDDEN + MAX_HIDDEN).toBe(G_ERR_NUM);
    expect([G_ERR_NUM, G_ERR_DEN]).toEqual([PF_GRU_BASE + PF_GRU_LEN - 2, PF_GRU_BASE + PF_GRU_LEN - 1]);
    expect(MAX_HIDDEN).toBeGreaterThanOrEqual(16);
  });

  it('a processor with no window or no outcomes gets finite, neutral features', () => {
    const { row, out } = setup();
    computeFeatures(undefined, 0, T0, row, 0, out);
    expect(Array.from(out).every(Number.isFinite)).toBe(true);
    expect(out[f('err5')]).toBeCloseTo(0.05, 6); // the prior mean
    expect(out[f('logvol')]).toBe(0);
    expect(out[f('slope60')]).toBe(0);
  });

  it('rates, volume and timeout share over their horizons', () => {
    const { record, features } = setup();
    // 60 s at 10 outcomes/s: 1 technical error (a timeout every other one), 1 decline, 8 successes per second.
    for (let s = 0; s < 60; s++) {
      for (let i = 0; i < 10; i++) {
        const t = s * 1000 + i * 100;
        record(t, i === 0 ? (s % 2 ? OutcomeKind.Timeout : OutcomeKind.TechError) : i === 1 ? OutcomeKind.Decline : OutcomeKind.Success);
      }
    }
    const x = features(59_999);
    expect(x[f('err30')]).toBeCloseTo(30.1 / 302, 3);
    expect(x[f('err5')]).toBeCloseTo(5.1 / 52, 3);
    expect(x[f('sd30')]).toBeLessThan(x[f('sd5')]);
    expect(x[f('decl30')]).toBeCloseTo(30.1 / 271, 3);
    expect(x[f('logvol')]).toBeCloseTo(Math.log1p(600), 6);
    expect(x[f('tshare30')]).toBeCloseTo((15 + 0.25) / 31, 3);
    expect(Math.abs(x[f('slope30')])).toBeLessThan(0.02);
    expect(Math.abs(x[f('slope60')])).toBeLessThan(0.02);
  });

  it('a rising error rate has a positive slope in rate per minute', () => {
    const { record, features } = setup();
    // Error probability rises linearly from 0 to 0.6 over 60 s, 20 outcomes/s, deterministic pattern.
    let acc = 0;
    for (let s = 0; s < 60; s++) {
      for (let i = 0; i < 20; i++) {
        acc += (0.6 * (s + i / 20)) / 60;
        const err = acc >= 1;
        if (err) acc -= 1;
        record(s * 1000 + i * 50, err ? OutcomeKind.TechError : OutcomeKind.Success);
      }
    }
    const x = features(59_999);
    expect(x[f('slope60')]).toBeGreaterThan(0.5);
    expect(x[f('slope60')]).toBeLessThan(0.7); // 0.6 per minute
    expect(x[f('slope30')]).toBeGreaterThan(0.45);
    expect(x[f('err5')]).toBeGreaterThan(x[f('err30')]);
  });

  it('latency features are deviations from a baseline the row carries', () => {
    const { record, features, row } = setup();
    for (let i = 0; i < 100; i++) record(i * 100, OutcomeKind.Success, 200);
    const first = features(9_999);
    expect(first[f('lp50')]).toBe(0); // the first measurement sets the baseline
    expect(row[G_P95_DEN]).toBe(1);
    row[G_STEPS] = 1;
    for (let i = 0; i < 150; i++) record(10_000 + i * 100, OutcomeKind.Success, 800);
    const slow = features(24_999);
    expect(slow[f('lp50')]).toBeGreaterThan(Math.log(3));
    expect(slow[f('lp95')]).toBeGreaterThan(Math.log(3));
  });
});

describe('foresight step schedule', () => {
  it('steps every STEP_MS; early evaluations in between republish; a long gap resets', () => {
    const row = new Float64Array(PROC_F64_STRIDE);
    expect(stepAction(row, 0, T0)).toBe(StepAction.ResetAndStep); // cold
    markStepped(row, 0, T0);
    expect(stepAction(row, 0, T0 + 1_200)).toBe(StepAction.Skip); // fast-path evaluation
    expect(stepAction(row, 0, T0 + STEP_MS - 400)).toBe(StepAction.Step); // timer jitter
    expect(stepAction(row, 0, T0 + STEP_MS)).toBe(StepAction.Step);
    expect(stepAction(row, 0, T0 + 3 * STEP_MS)).toBe(StepAction.Step); // a skipped cycle
    expect(stepAction(row, 0, T0 + MAX_GAP_MS + 1)).toBe(StepAction.ResetAndStep);
  });

  it('the sustained risk is the minimum over the last confirmSteps probabilities, 0 while warming up', () => {
    const row = new Float64Array(PROC_F64_STRIDE);
    const probs = [0.1, 0.2, 0.9, 0.95, 0.85, 0.99, 0.97];
    probs.forEach((p, i) => {
      pushProbability(row, 0, p);
      markStepped(row, 0, T0 + i * STEP_MS);
      if (i + 1 < WARMUP_STEPS) expect(sustainedProbability(row, 0, 1)).toBe(0);
    });
    expect(PROB_HISTORY).toBeGreaterThanOrEqual(3);
    expect(sustainedProbability(row, 0, 1)).toBe(0.97);
    expect(sustainedProbability(row, 0, 2)).toBe(0.97);
    expect(sustainedProbability(row, 0, 3)).toBe(0.85);
    // Held one step: a single low step does not release the risk, two do.
    pushProbability(row, 0, 0.1);
    markStepped(row, 0, T0 + probs.length * STEP_MS);
    expect([sustainedProbability(row, 0, 1), heldProbability(row, 0, 1), heldProbability(row, 0, 2)]).toEqual([0.1, 0.97, 0.97]);
    pushProbability(row, 0, 0.15);
    markStepped(row, 0, T0 + (probs.length + 1) * STEP_MS);
    expect([heldProbability(row, 0, 1), heldProbability(row, 0, 2), heldProbability(row, 0, 3)]).toEqual([0.15, 0.1, 0.1]);
    // Over all PROB_HISTORY steps there is no step before to hold.
    expect(heldProbability(row, 0, PROB_HISTORY)).toBe(sustainedProbability(row, 0, PROB_HISTORY));
    resetHidden(row, 0);
    expect(sustainedProbability(row, 0, 1)).toBe(0);
    expect(heldProbability(row, 0, 1)).toBe(0);
    expect(row[G_STEPS]).toBe(0);
  });
});
