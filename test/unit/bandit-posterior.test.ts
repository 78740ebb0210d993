import { describe, it, expect } from 'vitest';
import { DEFAULT_BANDIT_CONFIG, resolveBanditConfig } from '../../src/tiers/autopilot/config.js';
import {
  createArm,
  decay,
  isValidPosterior,
  observe,
  posteriorMean,
  posteriorVariance,
  retention,
} from '../../src/tiers/autopilot/posterior.js';

const H = DEFAULT_BANDIT_CONFIG.halfLifeMs;
const T0 = 1_700_000_000_000; // injected clock, ms

describe('bandit config', () => {
  it('has the documented defaults', () => {
    expect(DEFAULT_BANDIT_CONFIG).toEqual({
      halfLifeMs: 600_000,
      explorationFloor: 0.02,
      probeShare: 0.02,
      samples: 256,
      failingPrior: 0.05,
      priorAlpha: 1,
      priorBeta: 1,
    });
    expect(Object.isFrozen(DEFAULT_BANDIT_CONFIG)).toBe(true);
  });

  it('overlays and validates overrides, naming the bad field', () => {
    expect(resolveBanditConfig({ halfLifeMs: 60_000 }).halfLifeMs).toBe(60_000);
    expect(resolveBanditConfig({ probeShare: 0 }).probeShare).toBe(0);
    expect(resolveBanditConfig({ halfLifeMs: Infinity }).halfLifeMs).toBe(Infinity);
    expect(() => resolveBanditConfig({ halfLifeMs: 0 })).toThrow(/halfLifeMs/);
    expect(() => resolveBanditConfig({ explorationFloor: NaN })).toThrow(/explorationFloor/);
    expect(() => resolveBanditConfig({ probeShare: -0.1 })).toThrow(/probeShare/);
    expect(() => resolveBanditConfig({ samples: 2.5 })).toThrow(/samples/);
    expect(() => resolveBanditConfig({ failingPrior: 2 })).toThrow(/failingPrior/);
    expect(() => resolveBanditConfig({ priorBeta: 0 })).toThrow(/priorBeta/);
  });
});

describe('posterior decay (injected clock)', () => {
  const arm = { alpha: 1 + 800, beta: 1 + 200, updatedAtMs: T0 };

  it('leaves evidence unchanged at 0 elapsed', () => {
    expect(decay(arm, T0)).toEqual(arm);
  });

  it('halves the evidence after one half-life and quarters it after two, prior untouched', () => {
    const one = decay(arm, T0 + H);
    expect(one.alpha).toBeCloseTo(1 + 400, 10);
    expect(one.beta).toBeCloseTo(1 + 100, 10);
    expect(one.updatedAtMs).toBe(T0 + H);
    const two = decay(arm, T0 + 2 * H);
    expect(two.alpha).toBeCloseTo(1 + 200, 10);
    expect(two.beta).toBeCloseTo(1 + 50, 10);
  });

  it('relaxes to the prior, never below it', () => {
    const far = decay(arm, T0 + 200 * H);
    expect(far.alpha).toBeCloseTo(1, 12);
    expect(far.beta).toBeCloseTo(1, 12);
  });

  it('does not depend on how often it runs (5 s cycles, early cycles, one big step)', () => {
    let stepped = arm;
    const steps = [5000, 5000, 1200, 3800, 5000, 40_000, 100];
    let t = T0;
    for (const dt of steps) stepped = decay(stepped, (t += dt));
    const once = decay(arm, t);
    expect(stepped.alpha).toBeCloseTo(once.alpha, 9);
    expect(stepped.beta).toBeCloseTo(once.beta, 9);
  });

  it('honours a configured half-life and a non-default prior', () => {
    const cfg = { priorAlpha: 2, priorBeta: 3, halfLifeMs: 60_000 };
    const a = { alpha: 12, beta: 13, updatedAtMs: 0 };
    const d = decay(a, 60_000, cfg);
    expect(d.alpha).toBeCloseTo(7, 12);
    expect(d.beta).toBeCloseTo(8, 12);
  });

  it('never decays on a clock that went backwards or is NaN, and keeps the later timestamp', () => {
    expect(decay(arm, T0 - 60_000)).toBe(arm);
    expect(decay(arm, NaN)).toBe(arm);
  });

  it('halfLifeMs Infinity never forgets', () => {
    const d = decay(arm, T0 + 100 * H, { ...DEFAULT_BANDIT_CONFIG, halfLifeMs: Infinity });
    expect(d.alpha).toBe(arm.alpha);
    expect(d.updatedAtMs).toBe(T0 + 100 * H);
  });

  it('retention is 0.5 ** (elapsed / halfLife), 1 when nothing elapsed', () => {
    expect(retention(0, H)).toBe(1);
    expect(retention(-5, H)).toBe(1);
    expect(retention(H, H)).toBe(0.5);
    expect(retention(3 * H, H)).toBe(0.125);
  });
});

describe('posterior update', () => {
  it('starts at the prior', () => {
    expect(createArm(T0)).toEqual({ alpha: 1, beta: 1, updatedAtMs: T0 });
    expect(createArm(T0, { priorAlpha: 2, priorBeta: 5 })).toEqual({ alpha: 2, beta: 5, updatedAtMs: T0 });
  });

  it('adds successes to alpha and failures (declines included) to beta', () => {
    const a = observe(createArm(T0), 95, 5, T0);
    expect(a).toEqual({ alpha: 96, beta: 6, updatedAtMs: T0 });
    expect(posteriorMean(a)).toBeCloseTo(96 / 102, 12);
  });

  it('decays old evidence before adding new evidence', () => {
    const a = observe(createArm(T0), 100, 20, T0);
    const b = observe(a, 10, 0, T0 + H);
    expect(b.alpha).toBeCloseTo(1 + 50 + 10, 10);
    expect(b.beta).toBeCloseTo(1 + 10, 10);
    expect(b.updatedAtMs).toBe(T0 + H);
  });

  it('ignores negative and non-finite counts', () => {
    const a = observe(createArm(T0), -3, NaN, T0);
    expect(a).toEqual(createArm(T0));
    expect(observe(createArm(T0), Infinity, 2, T0)).toEqual({ alpha: 1, beta: 3, updatedAtMs: T0 });
  });

  it('mean and variance match the Beta formulas', () => {
    const p = { alpha: 3, beta: 7 };
    expect(posteriorMean(p)).toBeCloseTo(0.3, 15);
    expect(posteriorVariance(p)).toBeCloseTo((3 * 7) / (100 * 11), 15);
    expect(posteriorVariance({ alpha: 1, beta: 1 })).toBeCloseTo(1 / 12, 15);
  });

  it('flags unusable stored state', () => {
    expect(isValidPosterior({ alpha: 1, beta: 1 })).toBe(true);
    expect(isValidPosterior({ alpha: NaN, beta: 1 })).toBe(false);
    expect(isValidPosterior({ alpha: 0, beta: 1 })).toBe(false);
    expect(isValidPosterior({ alpha: 1, beta: Infinity })).toBe(false);
  });
});
