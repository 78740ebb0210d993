/**
 * Labelled training traces: a scenario run through the real engine (Tier 1 only, prediction
 * off) with a recording stage that cuts feature steps on the service's own schedule
 * (`advanceProcessor` without a model), then labels each step from the processor's TRUE
 * technical error rate (the simulator knows it; on production traces the hindsight window
 * rate plays that part):
 *
 *   y(t) = 1  iff the true error rate exceeds the failover threshold somewhere in [t, t + HORIZON_MS]
 *
 * The condition itself, not Tier 1's reaction to it: Tier 1 needs evidence and fails over
 * some 20 s after the crossing on a ramp, and labelling its decision would throw that lead
 * away. Steps are masked out (weight 0, still fed to the GRU so its state runs on) when the
 * processor is already failed_over (Tier 1 owns the decision then) or when the horizon runs
 * past the end of the run with no crossing seen (the label is unknown).
 */
import { ProcessorStatus } from '../../src/shm/layout.js';
import { N_FEATURES } from '../../src/tiers/foresight/features.js';
import { DEFAULT_TIER1_CONFIG } from '../../src/tiers/tier1/config.js';
import { advanceProcessor, newStepResult } from '../../src/tiers/foresight/step.js';
import type { RuleStage } from '../../src/tiers/stage.js';
import type { Scenario } from '../sim/scenarios.js';
import { RUN_START_MS, runEngine, transitionTime, type EngineRun } from './engine-run.js';

/** The prediction horizon: "the error rate exceeds the failover threshold within the next 60 s". */
export const HORIZON_MS = 60_000;
/** Resolution of the scan of the true error rate over a step's horizon. */
const SCAN_MS = 500;

export interface TraceSpec {
  /** Scenario family (named scenario or variant kind), for splits and reports. */
  family: string;
  scenario: Scenario;
  rate: number;
  seed: number;
  primaryWeight: number;
  /** Extra stages after the recorder (training-only traffic perturbation). */
  stages?: readonly RuleStage[];
}

/** One processor's steps in one run. */
export interface Sequence {
  family: string;
  rate: number;
  seed: number;
  processor: 0 | 1;
  /** Scenario time of each step, ms. */
  t: Float64Array;
  /** Raw features, step-major: [T][N_FEATURES]. */
  x: Float32Array;
  y: Uint8Array;
  mask: Uint8Array;
}

interface Recorded {
  t: number[];
  x: number[];
  failedOver: boolean[];
}

/** A stage that records the feature steps of both processors, touching no decision. */
export function recorderStage(): { stage: RuleStage; recorded: [Recorded, Recorded] } {
  const recorded: [Recorded, Recorded] = [
    { t: [], x: [], failedOver: [] },
    { t: [], x: [], failedOver: [] },
  ];
  const res = newStepResult();
  const stage: RuleStage = {
    name: 'foresight-recorder',
    enabled: () => true,
    apply(ctx) {
      for (const k of [0, 1] as const) {
        const p = k === 0 ? ctx.primary : ctx.secondary;
        advanceProcessor(null, null, ctx.rules.procF64, p.row, p.window, p.windowIndex, ctx.nowMs, res);
        if (!res.stepped) continue;
        const r = recorded[k];
        r.t.push(ctx.nowMs - RUN_START_MS);
        for (let f = 0; f < N_FEATURES; f++) r.x.push(res.raw[f]);
        r.failedOver.push(p.tier1.status === ProcessorStatus.FailedOver);
      }
    },
  };
  return { stage, recorded };
}

/** Scenario times (ms) at which Tier 1 moved processor k to failed_over. */
export function failoverTimes(run: EngineRun, k: 0 | 1): number[] {
  return run.transitions.filter((tr) => tr.processor === k && tr.to === 'failed_over').map(transitionTime);
}

/** Whether `errorRate` exceeds `threshold` anywhere in [t, t + HORIZON_MS] (scanned every SCAN_MS). */
export function crossesWithin(errorRate: (t: number) => number, threshold: number, t: number): boolean {
  for (let u = t; u <= t + HORIZON_MS; u += SCAN_MS) if (errorRate(u) > threshold) return true;
  return false;
}

/** Labels and mask for steps at `t` given the true error rate curve and the run's end. */
export function label(
  t: ArrayLike<number>,
  failedOver: ArrayLike<boolean>,
  errorRate: (t: number) => number,
  threshold: number,
  endMs: number,
): { y: Uint8Array; mask: Uint8Array } {
  const y = new Uint8Array(t.length);
  const mask = new Uint8Array(t.length);
  for (let s = 0; s < t.length; s++) {
    const hit = crossesWithin(errorRate, threshold, t[s]);
    y[s] = hit ? 1 : 0;
    const known = hit || t[s] + HORIZON_MS <= endMs;
    mask[s] = known && !failedOver[s] ? 1 : 0;
  }
  return { y, mask };
}

export async function generateTrace(spec: TraceSpec): Promise<Sequence[]> {
  const { stage, recorded } = recorderStage();
  await runEngine({
    scenario: spec.scenario,
    ratePerSec: spec.rate,
    seed: spec.seed,
    primaryWeight: spec.primaryWeight,
    stages: [stage, ...(spec.stages ?? [])],
  });
  return ([0, 1] as const).map((k) => {
    const r = recorded[k];
    const proc = k === 0 ? spec.scenario.primary : spec.scenario.secondary;
    const { y, mask } = label(r.t, r.failedOver, proc.errorRate, DEFAULT_TIER1_CONFIG.failoverThreshold, spec.scenario.durationMs);
    return {
      family: spec.family,
      rate: spec.rate,
      seed: spec.seed,
      processor: k,
      t: Float64Array.from(r.t),
      x: Float32Array.from(r.x),
      y,
      mask,
    };
  });
}
