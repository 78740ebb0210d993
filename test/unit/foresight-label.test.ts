/**
 * The training label: "the processor's TRUE error rate exceeds the failover threshold within
 * the next 60 s" (bench/train/traces.ts), not Tier 1's lagged reaction to it.
 */
import { describe, expect, it } from 'vitest';
import { piecewise } from '../../bench/sim/curves.js';
import { HORIZON_MS, crossesWithin, label } from '../../bench/train/traces.js';

describe('training label', () => {
  // A 120 s ramp from 2% to 60% starting at 100 s: it crosses 30% at 100 + 57.9 s.
  const ramp = piecewise([
    [0, 0.02],
    [100_000, 0.02],
    [220_000, 0.6],
  ]);
  const crossAt = 100_000 + ((0.3 - 0.02) / 0.58) * 120_000;

  it('is positive from one horizon before the true crossing, whatever Tier 1 did', () => {
    expect(crossesWithin(ramp, 0.3, crossAt - HORIZON_MS - 600)).toBe(false);
    expect(crossesWithin(ramp, 0.3, crossAt - HORIZON_MS + 600)).toBe(true);
    expect(crossesWithin(ramp, 0.3, crossAt + 10_000)).toBe(true);
  });

  it('a bump that crests below the threshold is negative throughout', () => {
    const bump = piecewise([
      [0, 0.02],
      [60_000, 0.02],
      [90_000, 0.2],
      [120_000, 0.02],
    ]);
    const t = Array.from({ length: 60 }, (_, i) => i * 5000);
    const { y, mask } = label(t, t.map(() => false), bump, 0.3, 300_000);
    expect(Array.from(y).every((v) => v === 0)).toBe(true);
    // Steps whose horizon runs past the end with no crossing are unknown (masked).
    expect(mask[t.indexOf(240_000)]).toBe(1);
    expect(mask[t.indexOf(245_000)]).toBe(0);
  });

  it('masks the steps while the processor is failed over (Tier 1 owns the decision)', () => {
    const t = [150_000, 155_000, 160_000];
    const { y, mask } = label(t, [false, true, true], ramp, 0.3, 600_000);
    expect(Array.from(y)).toEqual([1, 1, 1]);
    expect(Array.from(mask)).toEqual([1, 0, 0]);
  });
});
