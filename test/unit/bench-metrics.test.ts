/** The scenario benchmark's arithmetic: threshold crossings, percentiles over seeds, delays. */
import { describe, expect, it } from 'vitest';
import { crossing, delays, median, percentile, type RunMetrics } from '../../bench/lib/scenario-metrics.js';
import { sec } from '../../bench/lib/scenario-report.js';
import { getScenario } from '../../bench/sim/scenarios.js';

describe('scenario benchmark metrics', () => {
  it('finds where a ramp crosses a threshold, to the millisecond', () => {
    const ramp = getScenario('ramp-120').primary.errorRate; // 2% at 60 s → 60% at 180 s
    const expected = 60_000 + ((0.15 - 0.02) / 0.58) * 120_000;
    expect(Math.abs(crossing(ramp, 0.15, 300_000)! - expected)).toBeLessThanOrEqual(1);
    expect(crossing(ramp, 0.9, 300_000)).toBeNull();
    expect(crossing(() => 1, 0.5, 1000)).toBe(0);
  });

  it('takes nearest-rank percentiles and true medians, and counts "never" as worse than any time', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(percentile([5, 1, 4, 2, 3], 95)).toBe(5);
    expect(percentile([1, null, 2], 95)).toBe(Infinity);
    expect(median([1, null, 2])).toBe(2);
    // An even count: the mean of the two middle values, not the lower one (nearest rank).
    expect(median([0.898, 1.017])).toBeCloseTo(0.9575, 10);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(percentile([4, 1, 3, 2], 50)).toBe(2);
    expect(median([1, null])).toBe(Infinity);
    expect(median([])).toBeNull();
    expect(percentile([], 50)).toBeNull();
    expect(sec(Infinity)).toBe('never');
    expect(sec(null)).toBe('-');
    expect(sec(1234)).toBe('1.23');
  });

  it('measures delays only where the start is known, a missing end being "never"', () => {
    const runs = [
      { degradeCrossMs: 1000, degradedAtMs: 4000 },
      { degradeCrossMs: 1000, degradedAtMs: null },
      { degradeCrossMs: null, degradedAtMs: 5000 },
    ] as RunMetrics[];
    expect(delays(runs, (r) => r.degradeCrossMs, (r) => r.degradedAtMs)).toEqual([3000, null]);
  });
});
