/**
 * Runs a simulator scenario against the real engine in-process and in virtual time, through
 * the bench's in-process adapter (bench/sim/engine-adapter.ts): the service's own routing
 * (`decide`), outcome recording (`recordReportedOutcome`, run counters), early-evaluation rule
 * (`wantsEarlyEvaluation`), the worker's evaluate task, and the scheduler's timing (cycle
 * phase drawn from the seed, pool round trip, early-evaluation gap).
 *
 * Training labels, held-out metrics and the Tier 1 vs Tier 2 comparison all come from here,
 * so they are Tier 1's real decisions on the service's code path, not a re-implementation,
 * and they follow it when it changes.
 */
import { RUN_START_MS, runInProcess } from '../sim/engine-adapter.js';
import type { TxEvent } from '../sim/driver.js';
import type { Scenario } from '../sim/scenarios.js';
import type { Transition } from '../../src/engine/transitions.js';
import type { ForesightConfig } from '../../src/tiers/foresight/policy.js';
import type { DECISION_SOURCE_NAMES } from '../../src/shm/layout.js';
import type { RuleStage } from '../../src/tiers/stage.js';

export { RUN_START_MS };

export interface EngineRunOptions {
  scenario: Scenario;
  ratePerSec: number;
  seed: number;
  /** The rule's configured primary weight (default 0.9, the onboarding default). */
  primaryWeight?: number;
  /** The worker pipeline's stages after Tier 1 (default none: Tier 1 alone). */
  stages?: readonly RuleStage[];
  /** Tier 2 on (the tenant's prediction_enabled); the bandit stays off. */
  predictionEnabled?: boolean;
  foresight?: ForesightConfig;
}

/** The published decision after one evaluation. */
export interface EvalRecord {
  /** Scenario time, ms. */
  t: number;
  share: number;
  source: (typeof DECISION_SOURCE_NAMES)[number];
  pPrimary: number;
  pSecondary: number;
}

export interface EngineRun {
  scenario: Scenario;
  events: TxEvent[];
  transitions: Transition[];
  evals: EvalRecord[];
  configWeight: number;
}

/** Scenario time (ms) of a transition. */
export function transitionTime(tr: Transition): number {
  return tr.atMs - RUN_START_MS;
}

export async function runEngine(o: EngineRunOptions): Promise<EngineRun> {
  const configWeight = o.primaryWeight ?? 0.9;
  const evals: EvalRecord[] = [];
  const run = await runInProcess({
    scenario: o.scenario,
    ratePerSec: o.ratePerSec,
    seed: o.seed,
    tier: o.predictionEnabled ? 2 : 1,
    primaryWeight: configWeight,
    stages: o.stages ?? [],
    ...(o.foresight && { configExtras: { foresight: o.foresight } }),
    onEvaluated: (e) => evals.push({ t: e.t, share: e.primaryShare, source: e.source, pPrimary: e.pPrimary, pSecondary: e.pSecondary }),
  });
  return { scenario: o.scenario, events: run.events, transitions: run.engine.transitions, evals, configWeight };
}
