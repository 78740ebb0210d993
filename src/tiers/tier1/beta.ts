/**
 * Beta distribution tails for the credibility tests of the state machine: with k errors in n
 * outcomes and a uniform prior, the error rate's posterior is Beta(1 + k, 1 + n - k), and
 * "credibly above thr" is betaTail(thr, a, b) ≥ confidence.
 *
 * The regularized incomplete beta I_x(a, b) is evaluated by its continued fraction (modified
 * Lentz), on whichever side of the mean converges fast; each tail is computed directly on
 * its own side, so a tail near 1e-12 is not lost to the cancellation of 1 - (1 - 1e-12).
 * Convergence takes O(sqrt(max(a, b))) terms: a few hundred at 1e5 outcomes.
 */

const EPS = 1e-15;
const TINY = 1e-300;
const MAX_TERMS = 10_000;

/** Lanczos coefficients (g = 7, n = 9): ln Γ to ~1e-15 relative. */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let s = LANCZOS[0];
  for (let i = 1; i < 9; i++) s += LANCZOS[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(s);
}

/** Continued fraction of I_x(a, b), valid (fast) for x < (a + 1) / (a + b + 2). */
function continuedFraction(x: number, a: number, b: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= MAX_TERMS; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < EPS) break;
  }
  return h;
}

/** x^a (1-x)^b / B(a, b), in log space so large counts do not overflow. */
function front(x: number, a: number, b: number): number {
  return Math.exp(
    a * Math.log(x) + b * Math.log1p(-x) - (logGamma(a) + logGamma(b) - logGamma(a + b)),
  );
}

/** P(X ≤ x) for X ~ Beta(a, b): the regularized incomplete beta I_x(a, b). */
export function betaCdf(x: number, a: number, b: number): number {
  if (!(x > 0)) return 0;
  if (x >= 1) return 1;
  if (x < (a + 1) / (a + b + 2)) return (front(x, a, b) * continuedFraction(x, a, b)) / a;
  return 1 - (front(x, a, b) * continuedFraction(1 - x, b, a)) / b;
}

/** P(X > x) for X ~ Beta(a, b): 1 - I_x(a, b), computed without cancellation in the tail. */
export function betaTail(x: number, a: number, b: number): number {
  if (!(x > 0)) return 1;
  if (x >= 1) return 0;
  if (x < (a + 1) / (a + b + 2)) return 1 - (front(x, a, b) * continuedFraction(x, a, b)) / a;
  return (front(x, a, b) * continuedFraction(1 - x, b, a)) / b;
}

/** P(error rate > thr | k errors in n outcomes), uniform prior. */
export function probAbove(thr: number, k: number, n: number): number {
  return betaTail(thr, 1 + k, 1 + n - k);
}

/** P(error rate < thr | k errors in n outcomes), uniform prior. */
export function probBelow(thr: number, k: number, n: number): number {
  return betaCdf(thr, 1 + k, 1 + n - k);
}
