/**
 * Time functions used to describe how a simulated processor changes during a scenario.
 * Time is in ms since scenario start.
 */

export type TimeFn = (tMs: number) => number;

export function constant(value: number): TimeFn {
  return () => value;
}

/**
 * Piecewise-linear curve through `[tMs, value]` points (times non-decreasing), flat before
 * the first and after the last point. Repeating a time makes a step: at exactly that time
 * the later point wins, so `[[0, a], [60_000, a], [60_000, b]]` is `b` from 60 s on.
 */
export function piecewise(points: ReadonlyArray<readonly [number, number]>): TimeFn {
  if (points.length === 0) throw new Error('piecewise: needs at least one point');
  for (let i = 1; i < points.length; i++) {
    if (points[i][0] < points[i - 1][0]) throw new Error('piecewise: times must be non-decreasing');
  }
  const last = points.length - 1;
  return (t) => {
    if (t < points[0][0]) return points[0][1];
    if (t >= points[last][0]) return points[last][1];
    // Binary search for the last point at or before t (flapping curves have many points).
    let lo = 0;
    let hi = last;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (points[mid][0] <= t) lo = mid;
      else hi = mid;
    }
    const [t0, v0] = points[lo];
    const [t1, v1] = points[hi];
    return v0 + ((v1 - v0) * (t - t0)) / (t1 - t0);
  };
}

/** Step curve: `base` everywhere except `[startMs, endMs)` where it is `value`, for each window. */
export function windows(base: number, spans: ReadonlyArray<{ startMs: number; endMs: number; value: number }>): TimeFn {
  const points: Array<[number, number]> = [[0, base]];
  for (const { startMs, endMs, value } of spans) {
    points.push([startMs, base], [startMs, value], [endMs, value], [endMs, base]);
  }
  return piecewise(points);
}
