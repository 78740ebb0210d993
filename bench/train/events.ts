/**
 * Event-level (closed-loop) evaluation: the same scenario and seed run twice through the
 * real engine, Tier 1 only and with Foresight acting, and compared.
 *
 * - lead time: when Tier 1 alone fails the primary over, minus when Foresight first moved
 *   traffic (first evaluation with decision source `prediction`); 0 when it did not act first;
 * - shift episodes: maximal runs of evaluations with source `prediction`; one is needless
 *   unless Tier 1 fails the primary over during it or within HORIZON_MS after it ends;
 * - the simulator's own score (bench/sim/score.ts) for both runs: failed payments during the
 *   incident, when traffic left the primary.
 */
import { getScenario, type Scenario } from '../sim/scenarios.js';
import { score, type ScoreResult } from '../sim/score.js';
import type { ForesightModel } from '../../src/tiers/foresight/model.js';
import { createForesightStage } from '../../src/tiers/foresight/stage.js';
import type { ForesightConfig } from '../../src/tiers/foresight/policy.js';
import { runEngine, transitionTime, type EngineRun } from './engine-run.js';
import { HORIZON_MS } from './traces.js';

export interface Episode {
  startMs: number;
  endMs: number;
  needless: boolean;
}

export interface PairResult {
  scenario: Scenario;
  rate: number;
  seed: number;
  tier1: { run: EngineRun; score: ScoreResult; failoverMs: number | null };
  tier2: { run: EngineRun; score: ScoreResult; failoverMs: number | null; firstActionMs: number | null; episodes: Episode[] };
  /** Tier 1's failover time minus Foresight's first action, ms; null when Tier 1 never failed over. */
  leadMs: number | null;
}

export function firstFailover(run: EngineRun): number | null {
  const tr = run.transitions.find((x) => x.processor === 0 && x.event === 'failover.triggered');
  return tr === undefined ? null : transitionTime(tr);
}

export function shiftEpisodes(run: EngineRun): Episode[] {
  const fails = run.transitions.filter((x) => x.processor === 0 && x.event === 'failover.triggered').map(transitionTime);
  const out: Episode[] = [];
  let start: number | null = null;
  let last = 0;
  const close = (end: number): void => {
    if (start === null) return;
    const s = start;
    out.push({ startMs: s, endMs: end, needless: !fails.some((f) => f >= s && f <= end + HORIZON_MS) });
    start = null;
  };
  for (const e of run.evals) {
    if (e.source === 'prediction') {
      start ??= e.t;
      last = e.t;
    } else if (start !== null) {
      close(e.t);
    }
  }
  close(last);
  return out;
}

export interface PairOptions {
  name: string;
  rate: number;
  seed: number;
  incidentAtMs: number;
  durationMs?: number;
  model: ForesightModel;
  foresight?: ForesightConfig;
}

export async function runPair(o: PairOptions): Promise<PairResult> {
  const scenario = getScenario(o.name, { incidentAtMs: o.incidentAtMs, ...(o.durationMs !== undefined && { durationMs: o.durationMs }) });
  const base = { scenario, ratePerSec: o.rate, seed: o.seed };
  // Tier 1 alone: the Foresight stage is present but prediction is off, as for a tenant at tier 1.
  const r1 = await runEngine({ ...base, stages: [createForesightStage({ model: o.model })], predictionEnabled: false });
  const r2 = await runEngine({
    ...base,
    stages: [createForesightStage({ model: o.model })],
    predictionEnabled: true,
    ...(o.foresight && { foresight: o.foresight }),
  });
  const f1 = firstFailover(r1);
  const episodes = shiftEpisodes(r2);
  const firstAction = episodes.length > 0 ? episodes[0].startMs : null;
  return {
    scenario,
    rate: o.rate,
    seed: o.seed,
    tier1: { run: r1, score: score(r1.events, scenario), failoverMs: f1 },
    tier2: { run: r2, score: score(r2.events, scenario), failoverMs: firstFailover(r2), firstActionMs: firstAction, episodes },
    leadMs: f1 === null ? null : firstAction !== null && firstAction < f1 ? f1 - firstAction : 0,
  };
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
