/**
 * Platt scaling: p = sigmoid(a·z + b) fitted to held-out labels by Newton's method on the
 * log loss (with a tiny ridge so a separable calibration set cannot run a, b to infinity).
 * It also undoes the class weighting of training, which inflates the raw probabilities.
 */
export function fitPlatt(logits: ArrayLike<number>, labels: ArrayLike<number>): { a: number; b: number } {
  let a = 1;
  let b = 0;
  const ridge = 1e-6 * logits.length;
  for (let iter = 0; iter < 100; iter++) {
    let ga = ridge * (a - 1);
    let gb = 0;
    let haa = ridge;
    let hab = 0;
    let hbb = 1e-9 * logits.length;
    for (let i = 0; i < logits.length; i++) {
      const z = logits[i];
      const p = 1 / (1 + Math.exp(-(a * z + b)));
      const r = p - labels[i];
      const w = p * (1 - p);
      ga += r * z;
      gb += r;
      haa += w * z * z;
      hab += w * z;
      hbb += w;
    }
    const det = haa * hbb - hab * hab;
    if (!(det > 0)) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-10) break;
  }
  return { a, b };
}
