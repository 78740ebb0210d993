/** Pooling wrk runs' latency percentiles (the HTTP benchmark's slices): exact to the grid's step. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuantiles, pooledPercentileMs, QUANTILE_GRID, type LatencyQuantiles } from '../../bench/lib/latency-quantiles.js';

/** What wrk's latency:percentile(p) gives for these latencies (µs): the value at rank round(p/100 × n + 0.5). */
function wrkPercentile(sorted: readonly number[], p: number): number {
  const rank = Math.min(sorted.length, Math.max(1, Math.round((p / 100) * sorted.length + 0.5)));
  return sorted[rank - 1];
}

function runOf(latenciesUs: readonly number[]): LatencyQuantiles {
  const sorted = [...latenciesUs].sort((a, b) => a - b);
  return { count: sorted.length, us: QUANTILE_GRID.map((p) => wrkPercentile(sorted, p)) };
}

describe('the quantile grid', () => {
  it('rises from 0.5 to 100, every 0.02 between 98 and 99.9', () => {
    expect(QUANTILE_GRID[0]).toBe(0.5);
    expect(QUANTILE_GRID[QUANTILE_GRID.length - 1]).toBe(100);
    for (let i = 1; i < QUANTILE_GRID.length; i++) expect(QUANTILE_GRID[i]).toBeGreaterThan(QUANTILE_GRID[i - 1]);
    expect(QUANTILE_GRID).toContain(99);
    expect(QUANTILE_GRID.filter((p) => p > 98 && p <= 99.9)).toHaveLength(95);
  });

  it("parses the hook's line and refuses one of another length", () => {
    const line = QUANTILE_GRID.map((_, i) => 100 + i).join(',');
    expect(parseQuantiles(line, 7)).toEqual({ count: 7, us: QUANTILE_GRID.map((_, i) => 100 + i) });
    expect(() => parseQuantiles('1,2,3', 3)).toThrow(/quantile/);
  });
});

describe('pooled percentiles', () => {
  it("of one run are the run's own", () => {
    const lat = Array.from({ length: 10_000 }, (_, i) => 500 + ((i * 7919) % 1000));
    const r = runOf(lat);
    expect(pooledPercentileMs([r], 99)).toBe(r.us[QUANTILE_GRID.indexOf(99)] / 1000);
    expect(pooledPercentileMs([r], 50)).toBe(r.us[QUANTILE_GRID.indexOf(50)] / 1000);
  });

  it('weigh each run by its requests: a slow slice of few requests moves p99 less than one of many', () => {
    const fast = runOf(Array.from({ length: 10_000 }, () => 1000));
    const slowFew = runOf(Array.from({ length: 50 }, () => 9000)); // 0.5% of all: p99 stays fast
    const slowMany = runOf(Array.from({ length: 500 }, () => 9000)); // 4.8% of all: p99 is slow
    expect(pooledPercentileMs([fast, slowFew], 99)).toBe(1);
    expect(pooledPercentileMs([fast, slowMany], 99)).toBe(9);
    expect(pooledPercentileMs([], 99)).toBeNaN();
  });

  it('match the percentile of all the requests together, to within the grid step and a request per run', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.integer({ min: 50, max: 20_000 }), { minLength: 200, maxLength: 2000 }), { minLength: 1, maxLength: 6 }), fc.constantFrom(50, 90, 99, 99.5), (runs, p) => {
        const all = runs.flat().sort((a, b) => a - b);
        const n = all.length;
        const got = pooledPercentileMs(runs.map(runOf), p) * 1000;
        // Each grid point stands for the requests since the one before it, so the pooled rank is
        // p to within a step (0.5 at most) and each run's rounding (a request per run).
        const at = (rank: number) => all[Math.min(n - 1, Math.max(0, rank - 1))];
        expect(got).toBeGreaterThanOrEqual(at(Math.floor(((p - 0.5) / 100) * n) - runs.length));
        expect(got).toBeLessThanOrEqual(at(Math.ceil(((p + 0.5) / 100) * n) + runs.length));
      }),
      { numRuns: 200 },
    );
  });
});
