/**
 * Detection scenarios at virtual time, on real shared tables and the worker's evaluate
 * function. Measured delays are logged for the record; asserts are on behaviour and bounds.
 */
import { describe, expect, it } from 'vitest';
import {
  PF_DECLINE_RATE,
  PF_ERROR_RATE,
  PF_SUCCESS_RATE,
} from '../../src/shm/layout.js';
import { Sim, countEvents, type Model } from './tier1-harness.js';

const OUTAGE_AT = 120_000;
const outage = (err = 1, timeout = false): Model => (k, t) => ({
  err: k === 0 && t >= OUTAGE_AT ? err : 0.02,
  timeout,
});

describe('sudden outage', () => {
  it('at 20 tx/s, the fast path fails over within ~1 s', () => {
    const s = new Sim({ seed: 7 });
    s.run(180_000, { rate: 20, model: outage() });
    const f = s.first('failover.triggered');
    expect(f).toBeDefined();
    const delay = s.when(f!) - OUTAGE_AT;
    console.log(`total outage, 20 tx/s, fast path: failover ${delay} ms after onset (${f!.reason})`);
    expect(delay).toBeLessThanOrEqual(1000);
    expect(f).toMatchObject({ processor: 0, from: 'healthy', to: 'failed_over', triggerValue: 1, threshold: 0.3 }); // the run's error rate, above the threshold
    expect(f!.reason).toContain('consecutive technical failures');
    expect(s.transitions.filter((t) => t.event === 'failover.triggered')).toHaveLength(1);
    expect(s.share()).toBeLessThanOrEqual(0.051); // its probes: 1 probe/s of 20 tx/s at the bottom of the ladder
    expect(s.status(1)).toBe('healthy');
  });

  it('at 2 tx/s, fails over within 10 s', () => {
    const s = new Sim({ seed: 7 });
    s.run(180_000, { rate: 2, model: outage() });
    const f = s.first('failover.triggered');
    const delay = s.when(f!) - OUTAGE_AT;
    console.log(`total outage, 2 tx/s, fast path: failover ${delay} ms after onset`);
    expect(delay).toBeLessThanOrEqual(10_000);
  });

  it('timeouts are technical errors too', () => {
    const s = new Sim({ seed: 7 });
    s.run(180_000, { rate: 20, model: outage(1, true) });
    expect(s.when(s.first('failover.triggered')!) - OUTAGE_AT).toBeLessThanOrEqual(1000);
  });

  it('without the fast path, the 5 s cycle alone fails over within 10 s', () => {
    for (const rate of [20, 2]) {
      const s = new Sim({ seed: 7 });
      s.run(180_000, { rate, fastPath: false, model: outage() });
      const delay = s.when(s.first('failover.triggered')!) - OUTAGE_AT;
      console.log(`total outage, ${rate} tx/s, cycle only: failover ${delay} ms after onset`);
      expect(delay).toBeLessThanOrEqual(10_000);
    }
  });

  it('a partial outage (50% errors at 20 tx/s) fails over on the rate within 10 s', () => {
    const s = new Sim({ seed: 9 });
    s.run(180_000, { rate: 20, fastPath: false, model: outage(0.5) });
    const f = s.first('failover.triggered')!;
    const delay = s.when(f) - OUTAGE_AT;
    console.log(`partial outage 50%, 20 tx/s: failover ${delay} ms after onset (${f.reason})`);
    expect(delay).toBeLessThanOrEqual(10_000);
    expect(f.threshold).toBe(0.3);
    expect(f.triggerValue).toBeGreaterThan(0.3);
    expect(f.reason).toMatch(/^error rate \d+\.\d% exceeds failover threshold 30\.0% \(n=\d+ over \d+ s\)$/);
  });
});

describe('gradual degradation', () => {
  it('a ramp from 2% to 60% over 120 s degrades, then fails over, within 15-30 s of each crossing', () => {
    const t0 = 60_000;
    const rampErr = (t: number) => Math.min(0.6, 0.02 + (0.58 * (t - t0)) / 120_000);
    const cross = (thr: number) => t0 + ((thr - 0.02) / 0.58) * 120_000;
    for (const seed of [3, 4, 5]) {
      const s = new Sim({ seed });
      s.run(300_000, { rate: 20, model: (k, t) => ({ err: k === 0 && t >= t0 ? rampErr(t) : 0.02 }) });
      const d = s.first('processor.degraded')!;
      const f = s.first('failover.triggered')!;
      const dDelay = s.when(d) - cross(0.15);
      const fDelay = s.when(f) - cross(0.3);
      console.log(
        `ramp 2%→60%/120 s, 20 tx/s, seed ${seed}: degraded ${(dDelay / 1000).toFixed(1)} s after crossing 15%, ` +
          `failed over ${(fDelay / 1000).toFixed(1)} s after crossing 30%`,
      );
      expect(d).toMatchObject({ from: 'healthy', to: 'degraded', threshold: 0.15 });
      expect(f).toMatchObject({ from: 'degraded', to: 'failed_over' });
      expect(dDelay).toBeGreaterThan(0);
      expect(dDelay).toBeLessThanOrEqual(30_000);
      expect(fDelay).toBeLessThanOrEqual(35_000);
    }
  });
});

describe('steady noise at 20 tx/s over simulated hours', () => {
  it.each([0.02, 0.1, 0.15])('%f technical errors never fail over', (err) => {
    const counts: Record<string, number> = {};
    for (const seed of [1, 2]) {
      const s = new Sim({ seed });
      s.run(3_600_000, { rate: 20, model: () => ({ err }) });
      for (const [k, v] of Object.entries(countEvents(s.transitions))) counts[k] = (counts[k] ?? 0) + v;
      expect(s.transitions.filter((t) => t.to === 'failed_over')).toEqual([]);
      if (err < 0.15) expect(s.transitions).toEqual([]);
    }
    console.log(`steady ${err * 100}% errors, 2 simulated hours at 20 tx/s: events`, counts);
  });
});

describe('signals', () => {
  it('issuer declines lower the success rate but are not errors', () => {
    const s = new Sim({ seed: 5 });
    // 60% declines: a failure rate that would fail the processor over if they counted.
    s.run(600_000, { rate: 20, model: () => ({ err: 0.02, decline: 0.6 }) });
    expect(s.transitions).toEqual([]);
    expect(s.field(0, PF_ERROR_RATE)).toBeCloseTo(0.02, 1);
    expect(s.field(0, PF_DECLINE_RATE)).toBeCloseTo(0.6, 1);
    expect(s.field(0, PF_SUCCESS_RATE)).toBeCloseTo(0.38, 1);
  });

  it('p95 far above the processor’s own baseline degrades it, and it recovers when latency does', () => {
    const s = new Sim({ seed: 5 });
    const slow = (k: 0 | 1, t: number) => k === 0 && t >= 300_000 && t < 600_000;
    s.run(900_000, {
      rate: 20,
      model: (k, t) => ({ err: 0.02, latency: slow(k, t) ? (u) => 500 + 200 * u : (u) => 80 + 40 * u }),
    });
    const d = s.first('processor.degraded')!;
    const h = s.first('processor.healthy')!;
    console.log(`latency 100 ms → 600 ms: degraded after ${s.when(d) - 300_000} ms (${d.reason}); healthy ${s.when(h) - 600_000} ms after it ended`);
    expect(s.when(d) - 300_000).toBeLessThanOrEqual(10_000);
    expect(d.reason).toMatch(/^p95 latency \d+ ms exceeds 3x baseline \d+ ms/);
    expect(d.triggerValue).toBeGreaterThan(d.threshold);
    expect(d.threshold).toBeGreaterThan(300); // 3 × ~118 ms
    expect(s.when(h)).toBeGreaterThan(600_000);
    expect(h.reason).toContain('p95 latency');
    expect(s.transitions).toHaveLength(2);
  });

  it('a processor that is slow from the start is its own baseline', () => {
    const s = new Sim({ seed: 5 });
    s.run(600_000, { rate: 20, model: () => ({ err: 0.02, latency: (u) => 900 + 300 * u }) });
    expect(s.transitions).toEqual([]);
  });
});
