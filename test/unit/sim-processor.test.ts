import { describe, expect, it } from 'vitest';
import { piecewise, windows } from '../../bench/sim/curves.js';
import {
  DECLINE_CODES,
  TECHNICAL_ERROR_CODES,
  declineRateFor,
  drawOutcome,
  makeProcessor,
  successProbability,
  type Outcome,
} from '../../bench/sim/processor.js';
import { Rng } from '../../bench/sim/rng.js';

const N = 200_000;

function sample(model: ReturnType<typeof makeProcessor>, t: number, seed = 1, n = N): Outcome[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => drawOutcome(model, t, rng));
}

const share = (xs: Outcome[], pred: (o: Outcome) => boolean): number => xs.filter(pred).length / xs.length;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.floor(q * (sorted.length - 1))];
}

describe('curves', () => {
  it('piecewise interpolates linearly, is flat outside, and steps at repeated times', () => {
    const f = piecewise([
      [10, 0],
      [20, 1],
      [20, 5],
      [30, 5],
    ]);
    expect(f(0)).toBe(0);
    expect(f(15)).toBe(0.5);
    expect(f(19.999)).toBeCloseTo(1, 3);
    expect(f(20)).toBe(5);
    expect(f(99)).toBe(5);
    expect(() => piecewise([[2, 0], [1, 0]])).toThrow();
  });

  it('windows holds the value on [start, end) only', () => {
    const f = windows(0.02, [{ startMs: 100, endMs: 200, value: 1 }]);
    expect([f(99), f(100), f(199), f(200)]).toEqual([0.02, 1, 1, 0.02]);
  });
});

describe('drawOutcome', () => {
  const model = makeProcessor({ id: 'p', errorRate: 0.1, declineRate: 0.2, latencyMedianMs: 200, latencyP95Ms: 1000 });
  const outcomes = sample(model, 0);

  it('draws technical errors, declines and approvals at the model rates', () => {
    // Standard errors at n = 200k are below 0.001; tolerances are ~5 sigma.
    expect(share(outcomes, (o) => o.kind === 'technical_error')).toBeCloseTo(0.1, 2);
    expect(share(outcomes, (o) => o.kind === 'declined')).toBeCloseTo(0.9 * 0.2, 2);
    expect(share(outcomes, (o) => o.success)).toBeCloseTo(successProbability(model, 0), 2);
    expect(successProbability(model, 0)).toBeCloseTo(0.72, 10);
  });

  it('keeps success, kind and error code consistent', () => {
    const declineCodes: readonly (string | null)[] = DECLINE_CODES;
    const technicalCodes: readonly (string | null)[] = [...TECHNICAL_ERROR_CODES, null];
    const consistent = (o: Outcome): boolean =>
      o.success === (o.kind === 'approved') &&
      (o.kind === 'approved' ? o.error_code === null : (o.kind === 'declined' ? declineCodes : technicalCodes).includes(o.error_code));
    // One assertion over all draws: 200k expect() calls would dominate the test time.
    expect(outcomes.filter((o) => !consistent(o))).toEqual([]);
  });

  it('reports technical error codes in the mix proportions, null included', () => {
    const mixed = makeProcessor({
      id: 'm',
      errorRate: 1,
      declineRate: 0,
      errorMix: [
        ['http_503', 3],
        [null, 1],
      ],
    });
    const xs = sample(mixed, 0, 2, 40_000);
    expect(share(xs, (o) => o.error_code === 'http_503')).toBeCloseTo(0.75, 2);
    expect(share(xs, (o) => o.error_code === null)).toBeCloseTo(0.25, 2);
  });

  it('draws latency with the model median and p95, never beyond the timeout', () => {
    const answered = outcomes.filter((o) => o.error_code !== 'timeout').map((o) => o.latency_ms);
    answered.sort((a, b) => a - b);
    expect(quantile(answered, 0.5) / 200).toBeCloseTo(1, 1);
    expect(quantile(answered, 0.95) / 1000).toBeCloseTo(1, 1);
    expect(answered[answered.length - 1]).toBeLessThanOrEqual(model.timeoutMs);
  });

  it('gives timeouts a latency of about the timeout', () => {
    const slow = makeProcessor({ id: 's', errorRate: 1, declineRate: 0, errorMix: [['timeout', 1]], timeoutMs: 20_000 });
    for (const o of sample(slow, 0, 3, 1000)) {
      expect(o.error_code).toBe('timeout');
      expect(o.latency_ms).toBeGreaterThanOrEqual(20_000);
      expect(o.latency_ms).toBeLessThan(20_250);
    }
  });

  it('follows time-varying properties', () => {
    const m = makeProcessor({
      id: 't',
      errorRate: windows(0, [{ startMs: 1000, endMs: 2000, value: 1 }]),
      declineRate: 0,
      latencyMedianMs: piecewise([
        [0, 100],
        [10_000, 1000],
      ]),
      latencyP95Ms: piecewise([
        [0, 100],
        [10_000, 1000],
      ]),
    });
    expect(share(sample(m, 500, 4, 1000), (o) => o.success)).toBe(1);
    expect(share(sample(m, 1500, 4, 1000), (o) => o.kind === 'technical_error')).toBe(1);
    // p95 == median means no spread: latency is exactly the median.
    expect(sample(m, 10_000, 4, 1)[0].latency_ms).toBeCloseTo(1000, 6);
  });

  it('is deterministic for a seed', () => {
    expect(sample(model, 0, 9, 100)).toEqual(sample(model, 0, 9, 100));
  });
});

describe('declineRateFor', () => {
  it('yields the requested overall approval', () => {
    const m = makeProcessor({ id: 'a', errorRate: 0.02, declineRate: declineRateFor(0.93, 0.02) });
    expect(successProbability(m, 0)).toBeCloseTo(0.93, 12);
  });
});
