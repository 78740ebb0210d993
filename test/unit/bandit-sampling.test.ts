import { describe, it, expect } from 'vitest';
import { mulberry32, Sampler } from '../../src/tiers/autopilot/sampling.js';

function moments(draw: () => number, n: number): { mean: number; variance: number; bad: number } {
  let sum = 0;
  let sumSq = 0;
  let bad = 0;
  for (let i = 0; i < n; i++) {
    const x = draw();
    if (!Number.isFinite(x)) bad++;
    sum += x;
    sumSq += x * x;
  }
  const mean = sum / n;
  return { mean, variance: sumSq / n - mean * mean, bad };
}

/** Kolmogorov–Smirnov distance between n draws and a known CDF. */
function ksDistance(draw: () => number, cdf: (x: number) => number, n: number): number {
  const xs = Float64Array.from({ length: n }, draw).sort();
  let d = 0;
  for (let i = 0; i < n; i++) {
    const f = cdf(xs[i]);
    d = Math.max(d, Math.abs((i + 1) / n - f), Math.abs(f - i / n));
  }
  return d;
}

describe('mulberry32', () => {
  it('is deterministic per seed and stays in [0, 1)', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const xs = Array.from({ length: 1000 }, a);
    expect(xs).toEqual(Array.from({ length: 1000 }, b));
    expect(xs).not.toEqual(Array.from({ length: 1000 }, c));
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
  });

  it('is roughly uniform (mean 1/2, variance 1/12)', () => {
    const m = moments(mulberry32(7), 100_000);
    expect(m.mean).toBeCloseTo(0.5, 2);
    expect(m.variance).toBeCloseTo(1 / 12, 3);
  });
});

describe('Sampler', () => {
  const N = 40_000;

  it('draws standard normals (mean 0, variance 1) reproducibly', () => {
    const a = new Sampler(mulberry32(1));
    const b = new Sampler(mulberry32(1));
    const seqA = Array.from({ length: 101 }, () => a.normal());
    expect(Array.from({ length: 101 }, () => b.normal())).toEqual(seqA);
    const s = new Sampler(mulberry32(3));
    const n = moments(() => s.normal(), 100_000);
    expect(Math.abs(n.mean)).toBeLessThan(0.01);
    expect(n.variance).toBeCloseTo(1, 1);
  });

  it.each([0.1, 0.5, 0.9, 1, 2.5, 10, 1000])('Gamma(%s) has mean and variance = shape', (k) => {
    const s = new Sampler(mulberry32(11));
    const m = moments(() => s.gamma(k), N);
    expect(m.bad).toBe(0);
    // mean: within 5 standard errors; variance: within 10 % (heavier tails for small shapes).
    expect(Math.abs(m.mean - k)).toBeLessThan(5 * Math.sqrt(k / N));
    expect(Math.abs(m.variance / k - 1)).toBeLessThan(0.1);
  });

  it.each([
    [1, 1],
    [0.5, 0.5],
    [0.2, 3],
    [3, 0.4],
    [2, 5],
    [96, 6],
    [900, 100],
    [8000, 400],
  ])('Beta(%s, %s) matches the mean and variance formulas', (a, b) => {
    const s = new Sampler(mulberry32(5));
    const mean = a / (a + b);
    const variance = (a * b) / ((a + b) ** 2 * (a + b + 1));
    const m = moments(() => s.beta(a, b), N);
    expect(m.bad).toBe(0);
    expect(Math.abs(m.mean - mean)).toBeLessThan(5 * Math.sqrt(variance / N));
    expect(Math.abs(m.variance / variance - 1)).toBeLessThan(0.08);
  });

  it.each([
    ['Beta(0.5, 0.5)', 0.5, 0.5, (x: number) => (2 / Math.PI) * Math.asin(Math.sqrt(x))],
    ['Beta(0.3, 1)', 0.3, 1, (x: number) => x ** 0.3],
    ['Beta(1, 1)', 1, 1, (x: number) => x],
    ['Beta(2, 1)', 2, 1, (x: number) => x * x],
  ])('%s has the right distribution (KS test, 1 percent level)', (_name, a, b, cdf) => {
    const s = new Sampler(mulberry32(9));
    const n = 20_000;
    expect(ksDistance(() => s.beta(a, b), cdf, n)).toBeLessThan(1.63 / Math.sqrt(n));
  });

  it('stays inside [0, 1] and finite for tiny shapes (where U^(1/k) underflows)', () => {
    const s = new Sampler(mulberry32(13));
    for (let i = 0; i < 20_000; i++) {
      const x = s.beta(0.01, 0.02);
      expect(x >= 0 && x <= 1).toBe(true);
    }
  });

  it('returns NaN for invalid parameters instead of looping or throwing', () => {
    const s = new Sampler(mulberry32(1));
    expect(s.beta(0, 1)).toBeNaN();
    expect(s.beta(1, NaN)).toBeNaN();
    expect(s.beta(Infinity, 1)).toBeNaN();
    expect(s.gamma(-1)).toBeNaN();
  });
});
