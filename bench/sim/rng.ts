/**
 * Seeded pseudo-random numbers for the simulator. Every simulated run must be
 * reproducible from a single seed, so nothing under bench/sim uses Math.random.
 *
 * Generator: xoshiro128** (32-bit arithmetic, fast in JS, passes BigCrush), with its
 * 128-bit state filled from splitmix32 so that nearby seeds give unrelated streams.
 */

/** splitmix32 output function: a bijective avalanche mix of a 32-bit integer. */
function mix32(x: number): number {
  let z = x | 0;
  z ^= z >>> 16;
  z = Math.imul(z, 0x21f0aaad);
  z ^= z >>> 15;
  z = Math.imul(z, 0x735a2d97);
  z ^= z >>> 15;
  return z >>> 0;
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** FNV-1a over the UTF-16 code units of a label. */
function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
  }
  return h >>> 0;
}

/**
 * Seed of the sub-stream `label` of `seed`. Depends only on (seed, label), never on how
 * many numbers have been drawn, so adding draws to one stream cannot shift another.
 */
export function deriveSeed(seed: number, label: string): number {
  return mix32((mix32(seed >>> 0) ^ hashLabel(label)) + 0x9e3779b9);
}

/** 95th percentile of the standard normal distribution. */
export const Z95 = 1.6448536269514722;

export class Rng {
  /** The uint32 seed this stream was created from (what `fork` derives from). */
  readonly seed: number;
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  /** Box-Muller yields normals in pairs; the second one is kept for the next call. */
  private spareNormal: number | null = null;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    // Four consecutive splitmix32 outputs: mix32 is a bijection and its inputs are
    // distinct, so at most one word can be zero and the all-zero state is impossible.
    let x = this.seed;
    const step = (): number => {
      x = (x + 0x9e3779b9) | 0;
      return mix32(x);
    };
    this.s0 = step();
    this.s1 = step();
    this.s2 = step();
    this.s3 = step();
  }

  /** Independent stream for `label` (e.g. "arrivals", "outcomes:psp-a"). */
  fork(label: string): Rng {
    return new Rng(deriveSeed(this.seed, label));
  }

  /** Uniform 32-bit unsigned integer (xoshiro128**). */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Standard normal (Box-Muller). */
  normal(): number {
    if (this.spareNormal !== null) {
      const z = this.spareNormal;
      this.spareNormal = null;
      return z;
    }
    const u = 1 - this.next(); // (0, 1]: log(0) must not happen
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** exp(N(mu, sigma²)): median e^mu. */
  lognormal(mu: number, sigma: number): number {
    return Math.exp(mu + sigma * this.normal());
  }

  /** Exponential with the given rate (mean 1/rate): Poisson inter-arrival times. */
  exponential(rate: number): number {
    return -Math.log(1 - this.next()) / rate;
  }

  /** Index drawn with probability proportional to its (non-negative) weight. */
  pick(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    if (!(total > 0)) throw new Error('pick: weights must have a positive sum');
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i];
      if (r < 0) return i;
    }
    // Rounding can leave r at ~0 after the loop: return the last positive weight.
    for (let i = weights.length - 1; ; i--) if (weights[i] > 0) return i;
  }
}
