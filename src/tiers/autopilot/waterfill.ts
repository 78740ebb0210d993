/**
 * Box-constrained proportional allocation ("water-filling").
 *
 * Find weights w with lo[i] <= w[i] <= hi[i] and Σ w = total, as close as the bounds allow to
 * "proportional to score": w[i] = clamp(λ · score[i], lo[i], hi[i]) for one level λ. Raising λ
 * is pouring water: an arm stays at its floor until λ · score reaches it, stops at its cap, and
 * in between grows in proportion to its score.
 *
 *   weight
 *     │             ┌─────── hi (cap)
 *     │           ╱
 *     │         ╱   λ · score
 *     │ ──────╱
 *     │   lo (floor)
 *     └────────────────────── λ
 *
 * Active-set solution, at most n rounds: share what is left among the free arms in proportion to
 * score; if that pushes some below their floor or above their cap, the sign of the total
 * correction says on which side of the current level the true λ lies, so one side's violators
 * can be pinned to their bound for good (an arm below its floor at this level is below it at any
 * lower level, and vice versa). λ itself is never formed: shares are computed as
 * rest · score / Σ score, which stays finite even for subnormal scores.
 * Bounds are met exactly (a weight is a bound or checked against both); the sum is `total` up to
 * rounding.
 *
 * Degenerate inputs, each with a defined answer instead of NaN:
 * - a score that is negative or not finite counts as 0, and a 0-score arm sits at its floor;
 * - Σ lo >= total: the floors cannot all be met; weights are the floors scaled to `total`;
 * - Σ hi <= total: the caps cannot all be met; weights are the caps scaled to `total`;
 * - the arms that can grow (score > 0, lo < hi) cannot absorb `total` even at their caps (e.g.
 *   every score is 0): they take their caps and the rest is shared by the 0-score arms as if
 *   their scores were equal.
 */

/** Solve into `out` (length n) and return it. `score`, `lo`, `hi` have length n; 0 <= lo <= hi. */
export function waterFill(
  score: ArrayLike<number>,
  lo: ArrayLike<number>,
  hi: ArrayLike<number>,
  total: number,
  out: Float64Array,
): Float64Array {
  const n = out.length;
  let sumLo = 0;
  let sumHi = 0;
  for (let i = 0; i < n; i++) {
    sumLo += lo[i];
    sumHi += hi[i];
  }
  if (sumLo >= total) return scaled(lo, sumLo, total, out);
  if (sumHi <= total) return scaled(hi, sumHi, total, out);

  const free = new Uint8Array(n);
  let reachable = 0; // Σ w when every free arm is at its cap
  for (let i = 0; i < n; i++) {
    free[i] = s(score, i) > 0 && lo[i] < hi[i] ? 1 : 0;
    out[i] = lo[i];
    reachable += free[i] ? hi[i] : lo[i];
  }
  if (reachable < total) return pourIntoZeroScores(score, lo, hi, total, out);

  for (;;) {
    let rest = total;
    let sumS = 0;
    for (let i = 0; i < n; i++) {
      if (free[i]) sumS += s(score, i);
      else rest -= out[i];
    }
    if (sumS === 0) return out; // every arm pinned: rest is 0 up to rounding
    let violated = false;
    let correction = 0; // Σ (clamped − proportional) over the free arms
    for (let i = 0; i < n; i++) {
      if (!free[i]) continue;
      const w = rest * (s(score, i) / sumS);
      out[i] = w;
      if (w < lo[i] || w > hi[i]) {
        violated = true;
        correction += (w < lo[i] ? lo[i] : hi[i]) - w;
      }
    }
    if (!violated) return out;
    // correction > 0: true λ is lower, pin the arms under their floor; < 0: pin those over their
    // cap; exactly 0: this level is the solution, pin every violator to its bound.
    for (let i = 0; i < n; i++) {
      if (!free[i]) continue;
      if (out[i] < lo[i] && correction >= 0) pin(i, lo[i]);
      else if (out[i] > hi[i] && correction <= 0) pin(i, hi[i]);
    }
  }

  function pin(i: number, bound: number): void {
    out[i] = bound;
    free[i] = 0;
  }
}

function s(score: ArrayLike<number>, i: number): number {
  const v = score[i];
  return v > 0 && v < Infinity ? v : 0;
}

function scaled(v: ArrayLike<number>, sum: number, total: number, out: Float64Array): Float64Array {
  for (let i = 0; i < out.length; i++) out[i] = sum > 0 ? v[i] * (total / sum) : total / out.length;
  return out;
}

/** Arms with score > 0 take their caps; the others share the rest as if their scores were equal. */
function pourIntoZeroScores(
  score: ArrayLike<number>,
  lo: ArrayLike<number>,
  hi: ArrayLike<number>,
  total: number,
  out: Float64Array,
): Float64Array {
  const n = out.length;
  const equal = new Float64Array(n);
  const lo2 = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const capped = s(score, i) > 0;
    equal[i] = capped ? 0 : 1;
    lo2[i] = capped ? hi[i] : lo[i];
  }
  // Now every arm that is not pinned can reach its cap and Σ hi > total: no second pour.
  return waterFill(equal, lo2, hi, total, out);
}
