/**
 * Random variates for Thompson sampling, all drawn from an injected uniform source `rng`
 * (values in [0, 1)). Injected so that a cycle is reproducible from its seed and its inputs,
 * and so tests can pin the stream. No allocation per draw.
 *
 * The cost is in the transcendental functions (a log is ~20 ns on the target machine, about
 * four uniforms), so the normal source is Marsaglia's polar method, which needs one log and no
 * trigonometry per *pair*, and keeps the second value of the pair for the next call. That spare
 * is the only state, which is why this is a small class rather than free functions of `rng`.
 */
import { fmix32 } from '../../shm/hash.js';

export type Rng = () => number;

/**
 * mulberry32: a 32-bit-state generator, one integer hash per draw. Plenty for a few thousand
 * Monte Carlo draws per cycle and much cheaper than a cryptographic source; not for secrets.
 * State is kept as an int32 (`| 0`) so it never loses precision however long it runs.
 */
export function mulberry32(seed: number): Rng {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Sampler {
  #spare = NaN;

  constructor(readonly rng: Rng) {}

  /** Standard normal, Marsaglia polar method (a rejection form of Box–Muller). */
  normal(): number {
    const spare = this.#spare;
    if (spare === spare) {
      this.#spare = NaN;
      return spare;
    }
    let u: number;
    let v: number;
    let s: number;
    do {
      u = 2 * this.rng() - 1;
      v = 2 * this.rng() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0); // accepts π/4 of the pairs
    const f = Math.sqrt((-2 * Math.log(s)) / s);
    this.#spare = v * f;
    return u * f;
  }

  /**
   * Gamma(shape, 1); NaN for a shape that is not a positive finite number.
   * For shape < 1 the boost Gamma(k) = Gamma(k + 1) · U^(1/k).
   */
  gamma(shape: number): number {
    if (!(shape > 0 && shape < Infinity)) return NaN;
    if (shape >= 1) return this.#marsagliaTsang(shape);
    return this.#marsagliaTsang(shape + 1) * Math.pow(1 - this.rng(), 1 / shape);
  }

  /**
   * Beta(a, b) as X / (X + Y), X ~ Gamma(a) drawn before Y ~ Gamma(b); NaN for invalid
   * parameters (callers sanitise posteriors first). When a shape is < 1, U^(1/k) can underflow
   * to 0 for both draws (0/0), so that case is computed in logs, where nothing underflows.
   */
  beta(a: number, b: number): number {
    if (!(a > 0 && a < Infinity && b > 0 && b < Infinity)) return NaN;
    if (a >= 1 && b >= 1) {
      const x = this.#marsagliaTsang(a);
      return x / (x + this.#marsagliaTsang(b));
    }
    const lx = this.#logGamma(a);
    return 1 / (1 + Math.exp(this.#logGamma(b) - lx));
  }

  /** log of a Gamma(shape, 1) draw, for any shape > 0. */
  #logGamma(shape: number): number {
    if (shape >= 1) return Math.log(this.#marsagliaTsang(shape));
    return Math.log(this.#marsagliaTsang(shape + 1)) + Math.log(1 - this.rng()) / shape;
  }

  /**
   * Gamma(shape, 1) for shape >= 1 by Marsaglia–Tsang (2000). Acceptance is above 95 % for every
   * shape >= 1, and the squeeze test decides most draws without a log.
   */
  #marsagliaTsang(shape: number): number {
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.rng();
      const x2 = x * x;
      if (u < 1 - 0.0331 * x2 * x2) return d * v;
      if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v;
    }
  }
}

/**
 * A 32-bit seed from two numbers (e.g. a rule slot and the cycle's clock time), so that each
 * rule's Monte Carlo stream in each cycle is reproducible and independent of the others.
 * `b` may be any finite number up to 2^53 (epoch milliseconds): both 32-bit halves are mixed
 * in. Finalised with murmur3's fmix32 so that neighbouring inputs give unrelated seeds.
 */
export function seedFor(a: number, b: number): number {
  const lo = b % 4294967296 | 0;
  const hi = Math.floor(b / 4294967296) | 0;
  let h = Math.imul((a | 0) ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ lo ^ (h >>> 15), 0xc2b2ae35);
  h = Math.imul(h ^ hi ^ (h >>> 13), 0x27d4eb2f);
  return fmix32(h);
}
