/** The worker's per-rule pipeline: published health, the later-tier stage hook, slot handling. */
import { describe, expect, it } from 'vitest';
import {
  DecisionSource,
  PF_AVG_LATENCY,
  PF_ERROR_RATE,
  PF_P95_LATENCY,
  PF_P99_LATENCY,
  PF_SAMPLE_COUNT,
  PF_SUCCESS_RATE,
  RI_GENERATION,
  RULE_I32_STRIDE,
} from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { resolveTier1Config } from '../../src/tiers/tier1/config.js';
import { DEFAULT_LATER_TIERS } from '../../src/tiers/config.js';
import { evaluateWith } from '../../src/engine/worker/entry.js';
import { tablesIdOf } from '../../src/engine/protocol.js';
import type { RuleStage } from '../../src/tiers/stage.js';
import { Sim } from './tier1-harness.js';

const PUBLISHED = [PF_SUCCESS_RATE, PF_ERROR_RATE, PF_AVG_LATENCY, PF_P95_LATENCY, PF_P99_LATENCY, PF_SAMPLE_COUNT];

describe('published health', () => {
  it('is null (NaN) with no outcomes, and the configured weight stands', () => {
    const s = new Sim();
    s.evaluate();
    expect(PUBLISHED.map((f) => s.field(0, f))).toEqual([NaN, NaN, NaN, NaN, NaN, 0]);
    expect(s.share()).toBe(0.9);
    expect(s.transitions).toEqual([]);
  });

  it('publishes p95 and p99 of whatever samples there are (the spec types them as floats)', () => {
    const s = new Sim({ primaryWeight: 1 });
    s.run(500, { rate: 20, model: () => ({ err: 0, latency: () => 100 }) }); // 10 samples
    s.evaluate();
    expect(s.field(0, PF_SAMPLE_COUNT)).toBe(10);
    expect(s.field(0, PF_P95_LATENCY)).toBeCloseTo(100, -1); // within the sketch's 2%
    expect(s.field(0, PF_P99_LATENCY)).toBeCloseTo(100, -1);
    s.run(10_500, { rate: 20, model: () => ({ err: 0, latency: () => 100 }) });
    s.evaluate();
    expect(s.field(0, PF_P99_LATENCY)).toBeGreaterThan(98);
    expect(s.field(0, PF_AVG_LATENCY)).toBe(100);
    expect(s.field(0, PF_SUCCESS_RATE)).toBe(1);
    expect(s.field(0, PF_ERROR_RATE)).toBe(0);
  });
});

describe('stages (the Tier 2/3 hook)', () => {
  const stage = (share: number, enabled = true): RuleStage => ({
    name: 'test',
    enabled: () => enabled,
    apply: (_ctx, d) => {
      d.primaryShare = share;
      d.source = DecisionSource.Mab;
      d.failProbPrimary = 0.25;
    },
  });

  it('may set the decision while Tier 1 does not override', () => {
    const s = new Sim({ stages: [stage(0.6)] });
    s.run(30_000, { rate: 20, model: () => ({ err: 0.01 }) });
    expect(s.share()).toBe(0.6);
    expect(s.source()).toBe(DecisionSource.Mab);
  });

  it('is skipped when not enabled for the tenant', () => {
    const s = new Sim({ stages: [stage(0.6, false)] });
    s.run(30_000, { rate: 20, model: () => ({ err: 0.01 }) });
    expect([s.share(), s.source()]).toEqual([0.9, DecisionSource.Rules]);
  });

  it('loses to Tier 1 when a processor is failed over (its probabilities stay)', () => {
    const s = new Sim({ stages: [stage(0.6)] });
    s.run(60_000, { rate: 20, model: (k, t) => ({ err: k === 0 && t > 20_000 ? 1 : 0.01 }) });
    expect(s.status(0)).toBe('failed_over');
    expect(s.share()).toBeLessThanOrEqual(0.02);
    expect(s.source()).toBe(DecisionSource.Rules);
  });

  it('cannot publish an invalid share', () => {
    const s = new Sim({ stages: [stage(NaN)] });
    s.run(10_000, { rate: 20, model: () => ({ err: 0.01 }) });
    expect([s.share(), s.source()]).toEqual([0.9, DecisionSource.Rules]);
  });
});

describe('evaluate task', () => {
  it('skips inactive slots and stamps transitions with the slot generation', () => {
    const s = new Sim();
    const tables = s.tables;
    const freed = tables.allocRule(0.9, false);
    tables.freeRule(freed);
    s.run(130_000, { rate: 20, model: (k, t) => ({ err: k === 0 && t > 120_000 ? 1 : 0.01 }) });
    const res = evaluateWith(
      {
        tablesId: tablesIdOf(tables),
        segments: tables.segments(),
        slots: [s.slot, freed, 5000],
        nowMs: s.at(s.t),
        config: s.config,
      },
      [],
    );
    expect(res.evaluatedSlots).toBe(1);
    const gen = s.seg().ruleI32[s.slot * RULE_I32_STRIDE + RI_GENERATION];
    expect(s.transitions[0]).toMatchObject({ slot: s.slot, generation: gen, atMs: s.at(120_500) });
  });

  it('keeps separate view caches for separate tables', () => {
    const a = new SharedTables();
    const b = new SharedTables();
    expect(tablesIdOf(a)).not.toBe(tablesIdOf(b));
    expect(tablesIdOf(a)).toBe(tablesIdOf(a));
    const config = { tier1: resolveTier1Config(), predictionEnabled: false, banditEnabled: false, ...DEFAULT_LATER_TIERS };
    for (const t of [a, b]) {
      const slot = t.allocRule(t === a ? 0.7 : 0.8, false);
      const res = evaluateWith({ tablesId: tablesIdOf(t), segments: t.segments(), slots: [slot], nowMs: 1000, config }, []);
      expect(res.evaluatedSlots).toBe(1);
    }
  });
});
