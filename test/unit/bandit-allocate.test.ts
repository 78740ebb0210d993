import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { allocate, CLEAR_LEAD_SD, evidenceStrength, preferOnTies, probabilityOfBest, riskAdjusted, type ArmInput } from '../../src/tiers/autopilot/allocate.js';
import { DEFAULT_BANDIT_CONFIG, resolveBanditConfig } from '../../src/tiers/autopilot/config.js';
import { mulberry32, Sampler } from '../../src/tiers/autopilot/sampling.js';
import { waterFill } from '../../src/tiers/autopilot/waterfill.js';

const arm = (alpha: number, beta: number, extra: Partial<ArmInput> = {}): ArmInput => ({
  posterior: { alpha, beta },
  status: 'healthy',
  ...extra,
});
const sum = (w: ArrayLike<number>): number => Array.from(w).reduce((s, x) => s + x, 0);

describe('waterFill', () => {
  const fill = (score: number[], lo: number[], hi: number[], total = 1): number[] =>
    Array.from(waterFill(score, lo, hi, total, new Float64Array(score.length)));

  it('is proportional to score when no bound binds', () => {
    const w = fill([0.6, 0.3, 0.1], [0.02, 0.02, 0.02], [1, 1, 1]);
    expect(w[0]).toBeCloseTo(0.6, 14);
    expect(w[1]).toBeCloseTo(0.3, 14);
    expect(w[2]).toBeCloseTo(0.1, 14);
  });

  it('floors raise low arms; the rest keeps its proportions', () => {
    const w = fill([0.9, 0.099, 0.001], [0.02, 0.02, 0.02], [1, 1, 1]);
    expect(w[2]).toBe(0.02);
    expect(w[0] / w[1]).toBeCloseTo(0.9 / 0.099, 10);
    expect(sum(w)).toBeCloseTo(1, 14);
  });

  it('caps lower an arm; the excess goes to the others', () => {
    expect(fill([0.9, 0.1], [0.02, 0], [1, 0.02])).toEqual([0.98, 0.02]);
    const w = fill([0.8, 0.15, 0.05], [0, 0, 0], [0.5, 1, 1]);
    expect(w[0]).toBe(0.5);
    expect(w[1]).toBeCloseTo(0.375, 14);
    expect(w[2]).toBeCloseTo(0.125, 14);
  });

  it('pours the rest into zero-score arms equally when scored arms are capped', () => {
    expect(fill([1, 0, 0], [0, 0, 0], [0.02, 1, 1])).toEqual([0.02, 0.49, 0.49]);
    expect(fill([0, 0], [0, 0], [1, 1])).toEqual([0.5, 0.5]);
  });

  it('degrades infeasible bounds by scaling them to the total', () => {
    expect(fill([1, 1], [0.75, 0.75], [1, 1])).toEqual([0.5, 0.5]);
    expect(fill([1, 3], [0, 0], [0.1, 0.3])).toEqual([0.25, 0.75]);
  });

  it('meets bounds exactly, sums to the total, and shares one level λ (property)', () => {
    const arb = fc
      .array(
        fc.record({
          s: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true })),
          lo: fc.double({ min: 0, max: 0.2, noNaN: true }),
          span: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true })),
        }),
        { minLength: 1, maxLength: 6 },
      )
      .filter((xs) => {
        const lo = sum(xs.map((x) => x.lo));
        const hi = sum(xs.map((x) => x.lo + x.span));
        return lo < 1 && hi > 1;
      });
    fc.assert(
      fc.property(arb, (xs) => {
        const lo = xs.map((x) => x.lo);
        const hi = xs.map((x) => x.lo + x.span);
        const w = fill(
          xs.map((x) => x.s),
          lo,
          hi,
        );
        expect(Math.abs(sum(w) - 1)).toBeLessThan(1e-9);
        let lambda = NaN;
        w.forEach((wi, i) => {
          expect(wi).toBeGreaterThanOrEqual(lo[i]);
          expect(wi).toBeLessThanOrEqual(hi[i]);
          if (wi > lo[i] && wi < hi[i] && xs[i].s > 0) {
            const l = wi / xs[i].s; // every free arm sits on the same line λ · score
            if (Number.isNaN(lambda)) lambda = l;
            else expect(Math.abs(l - lambda) / lambda).toBeLessThan(1e-6);
          }
        });
      }),
      { seed: 20240601, numRuns: 500 },
    );
  });
});

describe('probabilityOfBest', () => {
  it('matches the closed form P(Beta(2,1) > U(0,1)) = 2/3', () => {
    const cfg = { ...DEFAULT_BANDIT_CONFIG, samples: 40_000 };
    const p = probabilityOfBest([arm(2, 1), arm(1, 1)], [true, true], mulberry32(1), cfg);
    expect(p[0]).toBeCloseTo(2 / 3, 2);
    expect(p[0] + p[1]).toBeCloseTo(1, 12);
  });

  it('gives ineligible arms nothing and splits ties', () => {
    const p = probabilityOfBest([arm(900, 100), arm(2, 1), arm(1, 1)], [false, true, true], mulberry32(2));
    expect(p[0]).toBe(0);
    const allFailing = [arm(9, 1, { failureProbability: 1 }), arm(1, 9, { failureProbability: 1 })];
    expect(Array.from(probabilityOfBest(allFailing, [true, true], mulberry32(3)))).toEqual([0.5, 0.5]);
  });

  it('folds Tier 2 risk in as p·(1−q) + failingPrior·q', () => {
    expect(riskAdjusted(0.9, 0, 0.05)).toBe(0.9);
    expect(riskAdjusted(0.9, 1, 0.05)).toBe(0.05);
    expect(riskAdjusted(0.9, 0.5, 0.05)).toBeCloseTo(0.475, 15);
  });
});

describe('allocate', () => {
  const rng = () => mulberry32(12345);

  it('returns weights in arm order that sum to 1, reproducibly for a seed', () => {
    const arms = [arm(90, 10), arm(85, 15)];
    const w = allocate(arms, rng());
    expect(w).toBeInstanceOf(Float64Array);
    expect(w.length).toBe(2);
    expect(sum(w)).toBeCloseTo(1, 14);
    expect(w[0]).toBeGreaterThan(w[1]);
    expect(Array.from(allocate(arms, rng()))).toEqual(Array.from(w));
  });

  it('keeps the exploration floor for a clearly worse healthy or degraded arm', () => {
    const w = allocate([arm(9000, 1000), arm(970, 30)], rng());
    expect(Array.from(w)).toEqual([0.02, 0.98]);
    const d = allocate([arm(9000, 1000, { status: 'degraded' }), arm(970, 30)], rng());
    expect(d[0]).toBe(0.02);
    const custom = allocate([arm(9000, 1000), arm(970, 30)], rng(), resolveBanditConfig({ explorationFloor: 0.1 }));
    expect(custom[0]).toBe(0.1);
  });

  it('caps a failed_over arm at the probe share even when its posterior is the best', () => {
    const arms = [arm(990, 10, { status: 'failed_over' }), arm(800, 200)];
    expect(Array.from(allocate(arms, rng()))).toEqual([0.02, 0.98]);
    expect(allocate(arms, rng(), resolveBanditConfig({ probeShare: 0.05 }))[0]).toBe(0.05);
    expect(Array.from(allocate(arms, rng(), resolveBanditConfig({ probeShare: 0 })))).toEqual([0, 1]);
  });

  it('gives a failed_over arm its probe share (not the floor, not 0) when its posterior is bad', () => {
    // The probe is what lets Tier 1 see a recovery; it must not depend on a stale posterior.
    const w = allocate([arm(10, 990, { status: 'failed_over' }), arm(900, 100)], rng(), resolveBanditConfig({ probeShare: 0.01 }));
    expect(Array.from(w)).toEqual([0.01, 0.99]);
  });

  it('shares the rest among healthy arms only, with floors, around a failed arm', () => {
    const w = allocate([arm(99, 1, { status: 'failed_over' }), arm(95, 5), arm(94, 6)], rng());
    expect(w[0]).toBe(0.02);
    expect(w[1]).toBeGreaterThan(0.02);
    expect(w[2]).toBeGreaterThanOrEqual(0.02);
    expect(sum(w)).toBeCloseTo(1, 14);
  });

  it('lowers an arm’s weight when Tier 2 predicts it will fail', () => {
    const twins = (q: number | null) => [arm(951, 51, { failureProbability: q }), arm(951, 51)];
    const base = allocate(twins(null), rng())[0];
    const slight = allocate(twins(0.01), rng())[0];
    const likely = allocate(twins(0.5), rng())[0];
    expect(base).toBeGreaterThan(0.4);
    expect(base).toBeLessThan(0.6);
    expect(slight).toBeLessThan(base);
    expect(likely).toBe(0.02);
  });

  it('all arms failed_over: the fallback (secondary by default) carries the traffic, others keep the probe', () => {
    const arms = [arm(990, 10, { status: 'failed_over' }), arm(10, 990, { status: 'failed_over' })];
    expect(Array.from(allocate(arms, rng()))).toEqual([0.02, 0.98]);
    expect(Array.from(allocate(arms, rng(), DEFAULT_BANDIT_CONFIG, { fallbackIndex: 0 }))).toEqual([0.98, 0.02]);
    expect(Array.from(allocate(arms, rng(), resolveBanditConfig({ probeShare: 0 })))).toEqual([0, 1]);
    expect(Array.from(allocate(arms, rng(), DEFAULT_BANDIT_CONFIG, { fallbackIndex: 7 }))).toEqual([0.02, 0.98]);
  });

  it('handles a single arm and no arms', () => {
    expect(Array.from(allocate([arm(1, 1)], rng()))).toEqual([1]);
    expect(Array.from(allocate([arm(1, 1, { status: 'failed_over' })], rng()))).toEqual([1]);
    expect(allocate([], rng()).length).toBe(0);
  });

  it('with zero samples shares equally (then applies the constraints)', () => {
    const cfg = resolveBanditConfig({ samples: 0 });
    expect(Array.from(allocate([arm(900, 100), arm(10, 90)], rng(), cfg))).toEqual([0.5, 0.5]);
    expect(Array.from(allocate([arm(900, 100, { status: 'failed_over' }), arm(10, 90)], rng(), cfg))).toEqual([0.02, 0.98]);
  });

  it('is NaN-safe: bad posteriors fall back to the prior, bad probabilities to [0, 1]', () => {
    const arms: ArmInput[] = [
      { posterior: { alpha: NaN, beta: -1 }, status: 'healthy', failureProbability: NaN },
      { posterior: { alpha: Infinity, beta: 0 }, status: 'degraded', failureProbability: 7 },
      { posterior: { alpha: 5, beta: 5 }, status: 'healthy', failureProbability: -1 },
    ];
    const w = allocate(arms, rng());
    for (const x of w) expect(Number.isFinite(x)).toBe(true);
    expect(sum(w)).toBeCloseTo(1, 14);
    expect(w[1]).toBe(0.02); // q clamped to 1: it approves ~failingPrior, so it only keeps the floor
  });

  it('writes into a caller-provided array', () => {
    const out = new Float64Array(2);
    expect(allocate([arm(90, 10), arm(10, 90)], rng(), DEFAULT_BANDIT_CONFIG, { out })).toBe(out);
    expect(out[0]).toBe(0.98);
    expect(() => allocate([arm(1, 1), arm(1, 1)], rng(), DEFAULT_BANDIT_CONFIG, { out: new Float64Array(3) })).toThrow(RangeError);
  });
});

describe('allocate with preferred weights: no draws when the evidence does not separate the arms', () => {
  /** allocate as it was before the skip: the draws always taken, then blended by preferOnTies. */
  function reference(arms: ArmInput[], seed: number, preferred: number[]): number[] {
    const cfg = DEFAULT_BANDIT_CONFIG;
    const live = arms.map((a) => a.status !== 'failed_over');
    const score = probabilityOfBest(arms, live, mulberry32(seed), cfg, new Float64Array(arms.length));
    preferOnTies(score, live, preferred, evidenceStrength(arms, live, cfg));
    const lo = arms.map((a, i) => (live[i] ? cfg.explorationFloor : cfg.probeShare));
    const hi = arms.map((a, i) => (live[i] ? 1 : cfg.probeShare));
    return Array.from(waterFill(score, lo, hi, 1, new Float64Array(arms.length)));
  }

  it('gives the same weights as drawing and discarding, for any two arms, statuses and preferences', () => {
    const armArb = fc.record({
      alpha: fc.double({ min: 0.5, max: 3000, noNaN: true }),
      beta: fc.double({ min: 0.5, max: 3000, noNaN: true }),
      status: fc.constantFrom('healthy' as const, 'degraded' as const, 'failed_over' as const),
      failureProbability: fc.oneof(fc.constant(NaN), fc.double({ min: 0, max: 1, noNaN: true })),
    });
    fc.assert(
      fc.property(armArb, armArb, fc.double({ min: 0, max: 1, noNaN: true }), fc.integer(), (x, y, w, seed) => {
        fc.pre(x.status !== 'failed_over' || y.status !== 'failed_over'); // both failed over: the fallback arm, no scores at all
        const arms = [x, y].map((a) => arm(a.alpha, a.beta, { status: a.status, failureProbability: a.failureProbability }));
        const got = Array.from(allocate(arms, mulberry32(seed), DEFAULT_BANDIT_CONFIG, { preferred: [w, 1 - w] }));
        expect(got).toEqual(reference(arms, seed, [w, 1 - w]));
      }),
      { numRuns: 500 },
    );
  });

  it('takes no random draw for two alike processors, and still draws for two that differ', () => {
    let draws = 0;
    const counting = (seed: number) => {
      const r = mulberry32(seed);
      return () => (draws++, r());
    };
    // 0.93 vs 0.92 on 500 outcomes each: the credible intervals overlap.
    const alike = [arm(466, 36), arm(461, 41)];
    expect(Array.from(allocate(alike, counting(1), DEFAULT_BANDIT_CONFIG, { preferred: [0.9, 0.1] }))).toEqual([0.9, 0.1].map((v) => expect.closeTo(v, 12)));
    expect(draws).toBe(0);
    // 0.96 vs 0.90 on 2000 each: separated, so the draws decide.
    allocate([arm(1921, 81), arm(1801, 201)], counting(1), DEFAULT_BANDIT_CONFIG, { preferred: [0.9, 0.1] });
    expect(draws).toBeGreaterThan(DEFAULT_BANDIT_CONFIG.samples);
  });

  describe('a clear leader takes no draws', () => {
    const fp = DEFAULT_BANDIT_CONFIG.failingPrior;
    /** The leader's share of `n` draws, as probabilityOfBest would draw them without the shortcut. */
    const drawnShare = (arms: ArmInput[], leader: number, n: number, seed: number): number => {
      const sampler = new Sampler(mulberry32(seed));
      let won = 0;
      for (let k = 0; k < n; k++) {
        const v = arms.map((x) => {
          const q = x.failureProbability ?? 0;
          return q === 1 ? fp : riskAdjusted(sampler.beta(x.posterior.alpha, x.posterior.beta), q, fp);
        });
        if (v.every((x, i) => i === leader || x < v[leader])) won++;
      }
      return won / n;
    };
    const armArb = fc.record({
      rate: fc.double({ min: 0.3, max: 0.999, noNaN: true }),
      n: fc.integer({ min: 2, max: 5000 }),
      q: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true })),
    });

    it('returns the leader alone, with no random number, only where 4,096 draws would give it ≥ 99.9% (property)', () => {
      let shortcuts = 0;
      fc.assert(
        fc.property(armArb, armArb, fc.integer({ min: 1, max: 1e6 }), (x, y, seed) => {
          const arms = [x, y].map((r) => arm(r.rate * r.n + 1, (1 - r.rate) * r.n + 1, { failureProbability: r.q }));
          let draws = 0;
          const r = mulberry32(seed);
          const w = probabilityOfBest(arms, [true, true], () => (draws++, r()));
          if (draws > 0) return; // no clear lead: the draws decided
          shortcuts++;
          const leader = w[0] === 1 ? 0 : 1;
          expect(Array.from(w)).toEqual(leader === 0 ? [1, 0] : [0, 1]);
          expect(drawnShare(arms, leader, 4096, seed)).toBeGreaterThanOrEqual(0.999);
        }),
        { numRuns: 300, seed: 20261124 },
      );
      // The property saw the shortcut often enough to mean something.
      expect(shortcuts).toBeGreaterThan(50);
    });

    it('draws when the lead is under CLEAR_LEAD_SD, and allocate keeps floor and probe', () => {
      let draws = 0;
      const counting = (seed: number) => {
        const r = mulberry32(seed);
        return () => (draws++, r());
      };
      // 0.96 vs 0.90 on 2,000 outcomes each: 7.5 sd apart, the draws decide.
      probabilityOfBest([arm(1921, 81), arm(1801, 201)], [true, true], counting(1));
      expect(draws).toBeGreaterThan(0);
      expect(CLEAR_LEAD_SD).toBe(8);
      // 0.96 vs 0.70: a clear lead; the weights are the leader's all but the exploration floor.
      draws = 0;
      const w = allocate([arm(1921, 81), arm(1401, 601)], counting(1));
      expect(draws).toBe(0);
      expect(w[1]).toBeCloseTo(DEFAULT_BANDIT_CONFIG.explorationFloor, 12);
      expect(sum(w)).toBeCloseTo(1, 12);
      // A failing processor (Tier 2 certain it fails) loses without a draw.
      draws = 0;
      const v = probabilityOfBest([arm(50, 50, { failureProbability: 1 }), arm(90, 10)], [true, true], counting(2));
      expect(draws).toBe(0);
      expect(Array.from(v)).toEqual([0, 1]);
    });
  });
});
