/**
 * The model card's numbers, all on held-out seeds (never used in training or calibration):
 *
 * 1. step level: PR-AUC of the GRU vs the trend-extrapolation baseline, ECE, Brier (test split);
 * 2. lead time on 120 s ramps at 20 and 100 tx/s (closed loop vs a Tier-1-only twin run);
 * 3. needless shifts per simulated processor-day on benign bumps and long steady-noise runs;
 * 4. per-scenario Tier 1 vs Tier 2: failed payments during the incident, when traffic left.
 */
import { deriveSeed } from '../sim/rng.js';
import { getScenario, listScenarios } from '../sim/scenarios.js';
import { parseModel, type ForesightModelJson } from '../../src/tiers/foresight/model.js';
import { createForesightStage } from '../../src/tiers/foresight/stage.js';
import { HELD_OUT_INCIDENT_AT_MS, FULL_SIZE, heldOutSpecs, type DatasetSize } from './dataset.js';
import { runEngine } from './engine-run.js';
import { median, runPair, shiftEpisodes, type PairResult } from './events.js';
import { generateAll } from './generate.js';
import { heldOutMetrics, type HeldOutMetrics } from './train.js';

const EVAL_SEED = 0xe7a1;
const DAY_MS = 86_400_000;

export interface EvalOptions {
  /** Seeds per (scenario, rate) for the closed-loop runs. */
  seeds: number;
  /** Length of each steady-noise run, hours. */
  noiseHours: number;
  size?: DatasetSize;
  log?: (line: string) => void;
}

export interface LeadStats {
  rate: number;
  runs: number;
  medianS: number;
  minS: number;
  maxS: number;
  /** Runs where Foresight did not move traffic before Tier 1 failed over. */
  missed: number;
  /** Median time traffic left the primary (share < 0.5), s after the incident start, Tier 1 alone vs with Foresight. */
  awayTier1S: number;
  awayTier2S: number;
}

export interface NeedlessStats {
  scenario: string;
  runs: number;
  processorDays: number;
  episodes: number;
  /** Shift episodes in which traffic actually left the primary (share < 0.5 at some evaluation). */
  awayEpisodes: number;
}

export interface ScenarioRow {
  scenario: string;
  rate: number;
  failedTier1: number;
  failedTier2: number;
  awayTier1S: number | null;
  awayTier2S: number | null;
  needlessTier2: number;
  falseFailoversTier1: number;
  falseFailoversTier2: number;
}

export interface Evaluation {
  steps: HeldOutMetrics;
  lead: LeadStats[];
  needless: NeedlessStats[];
  needlessPerDay: number;
  scenarios: ScenarioRow[];
}

const seedOf = (label: string, i: number): number => deriveSeed(EVAL_SEED, `${label}:${i}`);
const sec = (ms: number | null): number | null => (ms === null ? null : Math.round(ms / 100) / 10);

export async function evaluate(json: ForesightModelJson, o: EvalOptions): Promise<Evaluation> {
  const log = o.log ?? (() => {});
  const model = parseModel(json);
  log('step-level metrics on the held-out test split ...');
  const testSeqs = (await generateAll(heldOutSpecs('test', o.size ?? FULL_SIZE))).flat();
  const steps = heldOutMetrics(json, testSeqs);

  log('lead time on ramp-120 ...');
  const lead: LeadStats[] = [];
  for (const rate of [20, 100]) {
    const pairs: PairResult[] = [];
    for (let i = 0; i < o.seeds; i++) {
      pairs.push(await runPair({ name: 'ramp-120', rate, seed: seedOf(`lead:${rate}`, i), incidentAtMs: HELD_OUT_INCIDENT_AT_MS, model }));
    }
    const leads = pairs.filter((p) => p.leadMs !== null).map((p) => (p.leadMs as number) / 1000);
    const away = (k: 'tier1' | 'tier2'): number => median(pairs.map((p) => p[k].score.detectionMs).filter((d): d is number => d !== null)) / 1000;
    lead.push({
      rate,
      runs: pairs.length,
      medianS: median(leads),
      minS: Math.min(...leads),
      maxS: Math.max(...leads),
      missed: leads.filter((l) => l === 0).length,
      awayTier1S: away('tier1'),
      awayTier2S: away('tier2'),
    });
  }

  log('needless shifts on benign bumps and steady noise ...');
  const needless: NeedlessStats[] = [];
  const negatives: Array<[string, number | undefined]> = [
    ['benign-bump', undefined],
    ['steady-noise-10', o.noiseHours * 3_600_000],
    ['steady-noise-15', o.noiseHours * 3_600_000],
  ];
  for (const [name, durationMs] of negatives) {
    const row: NeedlessStats = { scenario: name, runs: 0, processorDays: 0, episodes: 0, awayEpisodes: 0 };
    const seeds = durationMs === undefined ? o.seeds : 1;
    for (const rate of [2, 20, 100]) {
      for (let i = 0; i < seeds; i++) {
        const scenario = getScenario(name, { incidentAtMs: HELD_OUT_INCIDENT_AT_MS, ...(durationMs !== undefined && { durationMs }) });
        const run = await runEngine({ scenario, ratePerSec: rate, seed: seedOf(`needless:${name}:${rate}`, i), stages: [createForesightStage({ model })], predictionEnabled: true });
        const eps = shiftEpisodes(run).filter((e) => e.needless);
        row.runs++;
        row.processorDays += scenario.durationMs / DAY_MS;
        row.episodes += eps.length;
        row.awayEpisodes += eps.filter((e) => run.evals.some((v) => v.t >= e.startMs && v.t <= e.endMs && v.share < 0.5)).length;
      }
    }
    needless.push(row);
  }
  const days = needless.reduce((a, r) => a + r.processorDays, 0);
  const needlessPerDay = needless.reduce((a, r) => a + r.episodes, 0) / days;

  log('scenario table (Tier 1 vs Tier 2) ...');
  const scenarios: ScenarioRow[] = [];
  for (const name of listScenarios()) {
    for (const rate of [20, 100]) {
      const pairs: PairResult[] = [];
      for (let i = 0; i < Math.min(3, o.seeds); i++) {
        pairs.push(await runPair({ name, rate, seed: seedOf(`table:${name}:${rate}`, i), incidentAtMs: HELD_OUT_INCIDENT_AT_MS, durationMs: name === 'drift' ? 900_000 : undefined, model }));
      }
      const mean = (f: (p: PairResult) => number): number => Math.round((pairs.reduce((a, p) => a + f(p), 0) / pairs.length) * 10) / 10;
      const away = (k: 'tier1' | 'tier2'): number | null => {
        const d = pairs.map((p) => p[k].score.detectionMs).filter((x): x is number => x !== null);
        return d.length === 0 ? null : sec(median(d));
      };
      scenarios.push({
        scenario: name,
        rate,
        failedTier1: mean((p) => p.tier1.score.failedDuringIncident),
        failedTier2: mean((p) => p.tier2.score.failedDuringIncident),
        awayTier1S: away('tier1'),
        awayTier2S: away('tier2'),
        needlessTier2: mean((p) => p.tier2.episodes.filter((e) => e.needless).length),
        falseFailoversTier1: mean((p) => p.tier1.score.falseFailovers),
        falseFailoversTier2: mean((p) => p.tier2.score.falseFailovers),
      });
    }
  }
  return { steps, lead, needless, needlessPerDay, scenarios };
}
