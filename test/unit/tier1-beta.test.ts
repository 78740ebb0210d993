import { describe, expect, it } from 'vitest';
import { betaCdf, betaTail, logGamma, probAbove, probBelow } from '../../src/tiers/tier1/beta.js';

/** [x, a, b, P(X > x), P(X ≤ x)] from scipy.special.betaincc / betainc. */
const REFERENCE: [number, number, number, number, number][] = [
  [0.3, 11, 1, 0.99999822852999998, 1.7714699999999993e-6],
  [0.15, 25, 77, 0.99304864286303207, 0.0069513571369679518],
  [0.15, 9, 13, 0.99798225603828028, 0.0020177439617197297],
  [0.05, 1, 60, 0.046069798986952071, 0.95393020101304793],
  [0.3, 4001, 6001, 1, 1.4380268461774933e-100],
  [0.001, 0.5, 0.5, 0.97986495836662246, 0.020135041633377492],
  [0.15, 16, 86, 0.55165152122325034, 0.44834847877674949],
  [0.9, 50, 2, 0.96907734875607932, 0.030922651243920716],
  [0.3, 31, 71, 0.52308844134276211, 0.47691155865723678],
  [0.05, 3, 300, 2.6745471894361175e-5, 0.99997325452810559],
  [0.15, 1201, 6801, 0.50582861909191001, 0.4941713809080906],
  [0.2, 2, 2, 0.89600000000000002, 0.10400000000000005],
];

describe('Beta tails', () => {
  it.each(REFERENCE)('x=%f a=%f b=%f matches scipy', (x, a, b, tail, cdf) => {
    expect(betaTail(x, a, b)).toBeCloseTo(tail, 12);
    expect(betaCdf(x, a, b)).toBeCloseTo(cdf, 12);
    // Relative accuracy in the far tails, where absolute closeness says nothing.
    if (tail > 0) expect(Math.abs(betaTail(x, a, b) / tail - 1)).toBeLessThan(1e-9);
    expect(Math.abs(betaCdf(x, a, b) / cdf - 1)).toBeLessThan(1e-9);
  });

  it('matches closed forms', () => {
    // Beta(1, b): P(X > x) = (1 - x)^b; Beta(a, 1): P(X ≤ x) = x^a.
    for (const b of [1, 2, 7, 90, 1000]) expect(betaTail(0.05, 1, b) / Math.pow(0.95, b)).toBeCloseTo(1, 12);
    for (const a of [1, 3, 20, 500]) expect(betaCdf(0.9, a, 1) / Math.pow(0.9, a)).toBeCloseTo(1, 12);
    // Symmetric: half the mass on each side of 1/2. At a = 5000, ln B(a, b) comes from
    // ln Γ values near 4e4, so ~1e-11 of rounding is expected (and irrelevant at a 0.99 bar).
    for (const a of [0.5, 3, 41, 5000]) expect(betaTail(0.5, a, a)).toBeCloseTo(0.5, 10);
  });

  it('handles the ends of the support', () => {
    expect(betaTail(0, 2, 3)).toBe(1);
    expect(betaTail(1, 2, 3)).toBe(0);
    expect(betaCdf(0, 2, 3)).toBe(0);
    expect(betaCdf(1, 2, 3)).toBe(1);
  });

  it('logGamma matches factorials and Γ(1/2)', () => {
    let f = 0;
    for (let n = 1; n <= 30; n++) {
      expect(logGamma(n)).toBeCloseTo(f, 10);
      f += Math.log(n);
    }
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 13);
  });

  it('probAbove / probBelow use a uniform prior on the error rate', () => {
    // 10 errors out of 10: Beta(11, 1), P(p > 0.3) = 1 - 0.3^11.
    expect(probAbove(0.3, 10, 10)).toBeCloseTo(1 - Math.pow(0.3, 11), 14);
    // 0 errors out of 58: Beta(1, 59), P(p < 0.05) = 1 - 0.95^59 ≈ 0.951: the recovery bar.
    expect(probBelow(0.05, 0, 58)).toBeCloseTo(1 - Math.pow(0.95, 59), 12);
    expect(probBelow(0.05, 0, 58)).toBeGreaterThanOrEqual(0.95);
    expect(probBelow(0.05, 0, 57)).toBeLessThan(0.95);
  });

  it('is fast enough for a cycle over thousands of rules', () => {
    // Not a timing assert: a convergence bound. Large counts must still terminate with
    // a probability in range (the continued fraction takes O(sqrt(n)) terms).
    for (const n of [1e3, 1e5, 1e7]) {
      const p = probAbove(0.15, Math.round(0.16 * n), n);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThanOrEqual(1);
    }
    expect(probAbove(0.15, 1_600_000, 10_000_000)).toBeCloseTo(1, 12);
  });
});
