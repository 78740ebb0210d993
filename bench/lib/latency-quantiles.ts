/**
 * wrk's latencies as a quantile grid, so that a run cut into slices (http-bench.ts) reports the
 * percentiles of all its requests together, not a median of per-slice percentiles. wrk's Lua
 * `done` hook writes its own percentiles on QUANTILE_GRID (wrk.ts): coarse in the body, fine in
 * the tail. Its per-value counts are out of reach: `latency(i)` rescans the histogram on every
 * call, seconds for one run. Merging treats each grid point as the requests between it and the
 * point before (weight: the run's requests × the step), at the point's latency, the upper edge:
 * a pooled percentile is then exact to the grid's step (0.02 of a percent around p99).
 */

/** Percentiles wrk reports for each run: every 0.5 up to 98, every 0.02 up to 99.9, every 0.01 to 100. */
export const QUANTILE_GRID: readonly number[] = [
  ...Array.from({ length: 196 }, (_, i) => (i + 1) * 0.5),
  ...Array.from({ length: 95 }, (_, i) => Math.round((98 + (i + 1) * 0.02) * 100) / 100),
  ...Array.from({ length: 10 }, (_, i) => Math.round((99.9 + (i + 1) * 0.01) * 100) / 100),
];

export interface LatencyQuantiles {
  /** Requests the run counted. */
  count: number;
  /** Latency, µs, at each percentile of QUANTILE_GRID (same order). */
  us: number[];
}

/** Parses the hook's `<us>,<us>,…` line for a run of `count` requests. */
export function parseQuantiles(line: string, count: number): LatencyQuantiles {
  const us = line.trim().split(',').map(Number);
  if (us.length !== QUANTILE_GRID.length || us.some((v) => !Number.isFinite(v) || v < 0)) throw new Error(`not a quantile line of ${QUANTILE_GRID.length} values: ${line.slice(0, 80)}`);
  return { count, us };
}

/** The latency (ms) below which `p` percent of all the runs' requests fall, to the grid's step; NaN when they had none. */
export function pooledPercentileMs(runs: readonly LatencyQuantiles[], p: number): number {
  const points: { us: number; weight: number }[] = [];
  let total = 0;
  for (const r of runs) {
    if (r.count <= 0) continue;
    total += r.count;
    let below = 0;
    for (let i = 0; i < QUANTILE_GRID.length; i++) {
      points.push({ us: r.us[i], weight: (r.count * (QUANTILE_GRID[i] - below)) / 100 });
      below = QUANTILE_GRID[i];
    }
  }
  if (total === 0) return NaN;
  points.sort((a, b) => a.us - b.us);
  const rank = (p / 100) * total;
  let seen = 0;
  for (const pt of points) {
    seen += pt.weight;
    if (seen >= rank - 1e-9) return pt.us / 1000;
  }
  return points[points.length - 1].us / 1000;
}
