/**
 * The RuleStage contract (src/tiers/stage.ts), one suite run against every stage the worker
 * registers (src/engine/worker/stages.ts), each through the real pipeline (Tier 1, then the
 * stage, then runStages' enforcement) on the Tier 1 harness:
 * - with its tier switched off, the rule routes exactly as with Tier 1 alone, and what the
 *   stage published while on (failure probability, bandit weight) is cleared;
 * - when Tier 1 overrides (the primary failed over), the decision is Tier 1's: its probe
 *   share, source `rules`;
 * - the published share is always a probability and the source one of the spec's values;
 * - a new instance replays a seeded run identically (no state shared between instances).
 */
import { describe, expect, it } from 'vitest';
import { DecisionSource, PF_BANDIT_WEIGHT, PF_FAILURE_PROB } from '../../src/shm/layout.js';
import { STAGES } from '../../src/engine/worker/stages.js';
import { createAutopilotStage } from '../../src/tiers/autopilot/stage.js';
import { createForesightStage } from '../../src/tiers/foresight/stage.js';
import type { RuleStage } from '../../src/tiers/stage.js';
import { Sim, type Model } from './tier1-harness.js';

interface StageCase {
  /** A fresh instance of the stage, as registered. */
  make: () => RuleStage;
  /** Switches its tier on or off in the tenant config. */
  enable: (s: Sim, on: boolean) => void;
  /** The processor-row field it publishes (NaN while off). */
  output: number;
}

const CASES: Record<string, StageCase> = {
  foresight: {
    make: () => createForesightStage(),
    enable: (s, on) => {
      s.config.predictionEnabled = on;
    },
    output: PF_FAILURE_PROB,
  },
  autopilot: {
    make: () => createAutopilotStage(),
    enable: (s, on) => {
      s.config.predictionEnabled = on;
      s.config.banditEnabled = on;
    },
    output: PF_BANDIT_WEIGHT,
  },
};

const steady: Model = (k) => ({ err: k === 0 ? 0.02 : 0.03, decline: 0.05 });
const outage: Model = (k, t) => ({ err: k === 0 && t > 60_000 ? 1 : 0.02 });

/** (virtual ms, share, source) after each evaluation. */
function trace(s: Sim, until: number, model: Model): Array<[number, number, DecisionSource]> {
  const out: Array<[number, number, DecisionSource]> = [];
  s.run(until, { rate: 20, model, onEval: (t) => out.push([t, s.share(), s.source()]) });
  return out;
}

describe('every registered stage has a contract case', () => {
  it('names each stage of STAGES once', () => {
    expect(STAGES.map((s) => s.name).sort()).toEqual(Object.keys(CASES).sort());
  });
});

describe.each(Object.entries(CASES))('RuleStage contract: %s', (name, c) => {
  it('is named and runs for every rule (no enabled hook: switching off must clear its outputs)', () => {
    const stage = c.make();
    expect(stage.name).toBe(name);
    expect(stage.enabled).toBeUndefined();
  });

  it('switched off, routes exactly as Tier 1 alone', () => {
    const bare = new Sim({ seed: 7 });
    const off = new Sim({ seed: 7, stages: [c.make()] });
    c.enable(off, false);
    expect(trace(off, 90_000, steady)).toEqual(trace(bare, 90_000, steady));
    expect([off.field(0, c.output), off.field(1, c.output)]).toEqual([NaN, NaN]);
  });

  it('switched off at runtime, clears what it published', () => {
    const s = new Sim({ seed: 8, stages: [c.make()] });
    c.enable(s, true);
    s.run(60_000, { rate: 20, model: steady });
    expect(Number.isNaN(s.field(0, c.output))).toBe(false);
    c.enable(s, false);
    s.run(70_000, { rate: 20, model: steady });
    expect([s.field(0, c.output), s.field(1, c.output)]).toEqual([NaN, NaN]);
    expect(s.source()).toBe(DecisionSource.Rules);
  });

  it('loses to Tier 1 at every evaluation where Tier 1 overrides', () => {
    // A probe after the stage sees what Tier 1 decided for this evaluation.
    const tier1 = { share: NaN, override: false };
    const probe: RuleStage = {
      name: 'probe',
      apply: (ctx) => {
        tier1.share = ctx.tier1Share;
        tier1.override = ctx.tier1Override;
      },
    };
    const s = new Sim({ seed: 9, stages: [c.make(), probe] });
    c.enable(s, true);
    let overridden = 0;
    s.run(180_000, {
      rate: 20,
      model: outage,
      onEval: () => {
        if (!tier1.override) return;
        overridden++;
        expect([s.share(), s.source()]).toEqual([tier1.share, DecisionSource.Rules]);
      },
    });
    expect(overridden).toBeGreaterThan(10);
    expect(s.status(0)).toBe('failed_over');
  });

  it('publishes a probability and a known source at every evaluation', () => {
    const s = new Sim({ seed: 10, stages: [c.make()] });
    c.enable(s, true);
    for (const [, share, source] of trace(s, 180_000, outage)) {
      expect(share).toBeGreaterThanOrEqual(0);
      expect(share).toBeLessThanOrEqual(1);
      expect([DecisionSource.Rules, DecisionSource.Prediction, DecisionSource.Mab]).toContain(source);
    }
  });

  it('replays a seeded run identically with a new instance', () => {
    const run = (): Array<[number, number, DecisionSource]> => {
      const s = new Sim({ seed: 11, stages: [c.make()] });
      c.enable(s, true);
      return trace(s, 120_000, steady);
    };
    expect(run()).toEqual(run());
  });
});
