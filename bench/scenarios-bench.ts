/**
 * `npm run bench:scenarios`: every simulator scenario against the real engine in-process and
 * in virtual time (bench/sim/engine-adapter.ts), at several rates and seeds, per tier.
 *
 *   node dist/bench/scenarios-bench.js [--seeds 5] [--scenarios a,b] [--rates 2,20,50,100]
 *     [--tiers 1] [--steady-s 3600] [--weight 1] [--prediction-threshold 0.2] [--prediction-gain 1.5]
 *     [--prediction-confirm 1] [--incident-at-s 180]
 *
 * Rate: the rule's total arrival rate. With the primary weight at 1 (below) all of it goes to
 * the primary until the engine moves traffic, so "tx/s per processor" as issue 5 puts it is
 * the total rate. Weight 1 by default because the score judges "left the primary" from the
 * share of routed traffic in a 1 s window: at 2 tx/s with a configured 90/10 split, a single
 * payment routed to the secondary would read as a failover. `--weight 0.9` is available.
 *
 * Scripted incidents begin at `--incident-at-s` (default 180 s): the rule has run for three
 * minutes first, as a processor in service has (Tier 2's model is cold for its first couple of
 * minutes and the policy does not fully trust it then; the scenarios' own default is 60 s).
 *
 * Scenarios with no scripted event (one `steady` phase) run `--steady-s` (default one hour)
 * instead of their 10 min default, so that "false failovers per simulated hour" is measured
 * over at least an hour per seed; every other scenario runs as defined (never weakened).
 *
 * Seeds 1..N drive arrivals, outcomes and route draws. Percentiles are nearest-rank over
 * seeds (p95 of 5 seeds is the worst), the p50 columns medians (of an even count of seeds, the
 * mean of the two middle ones); a seed that never left the primary counts as "never".
 * Output: tables on the terminal, all runs and summaries as JSON under bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli as parseCliOptions } from './lib/cli.js';
import { runChart, type EngineMoment } from './lib/run-chart.js';
import { STAGES } from '../src/engine/worker/stages.js';
import { resolveForesightConfig, type ForesightConfig } from '../src/tiers/foresight/policy.js';
import { runInProcess, type InProcessRun, type Tier } from './sim/engine-adapter.js';
import { getScenario, listScenarios, type Scenario } from './sim/scenarios.js';
import { table } from './lib/load.js';
import { measureRun, type RunMetrics } from './lib/scenario-metrics.js';
import {
  issue17TargetRows,
  leadRows,
  noiseRows,
  outageRows,
  rampRows,
  recoveryRows,
  shiftRows,
  summaries,
  summaryRow,
  targetRows,
} from './lib/scenario-report.js';

const LEGEND = `
detect: routed traffic left the primary (score.ts: under half of the last 1 s went there), from the incident start.
failover: the engine's failover.triggered of the primary, from the incident start. "never": some seed never did.
failed in incident: failed payments (declines included, either processor) from incident start to end, mean per run.
false FO/h: score.ts away episodes outside [incident start - 60 s, incident end) per simulated hour; the 1 s share
  window has no hysteresis, so a share hovering near 0.5 counts several episodes.
false trips/h: engine failovers of the primary outside that window. regret: mean per payment of the best success
  probability of the moment minus the chosen one's. back: incident end to traffic back on the primary (score.ts;
  at 2 tx/s the 1 s window holds ~2 payments, so one recovery probe reads as "back"). recovered: incident end to the
  engine's failover.recovered of the primary (0 if it was not failed over then).`;

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

interface Options {
  seeds: number;
  scenarios: string[];
  rates: number[];
  tiers: Tier[];
  steadyMs: number;
  weight: number;
  /** When scripted incidents begin (scenario ms). */
  incidentAtMs: number;
  /** Tier 2 policy overrides (the tenant's prediction_action_threshold / prediction_shift_gain). */
  foresight: Partial<ForesightConfig>;
  /** The rate whose seed-1 runs are drawn as SVG charts. */
  chartRate: number;
}

function list(raw: string, what: string, ok: (v: string) => boolean): string[] {
  const items = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const bad = items.find((v) => !ok(v));
  if (items.length === 0 || bad !== undefined) throw new Error(`--${what}: invalid value "${bad ?? raw}"`);
  return items;
}

function parseCli(argv: string[]): Options {
  const values = parseCliOptions(
    {
      usage: 'npm run bench:scenarios -- [options]',
      summary:
        'Every simulator scenario against the real engine in-process and in virtual time, at several rates and seeds, per tier. ' +
        'Prints tables (detection, failover, failed payments, false failovers, recovery), writes all runs as JSON and one SVG chart ' +
        'per scenario and tier (seed 1 at --chart-rate) under bench/results/.',
      options: {
        seeds: { type: 'string', default: '5' },
        scenarios: { type: 'string', default: listScenarios().join(',') },
        rates: { type: 'string', default: '2,20,50,100' },
        tiers: { type: 'string', default: '1' },
        'steady-s': { type: 'string', default: '3600' },
        weight: { type: 'string', default: '1' },
        'chart-rate': { type: 'string', default: '20' },
        'incident-at-s': { type: 'string', default: '180' },
        'prediction-threshold': { type: 'string' },
        'prediction-gain': { type: 'string' },
        'prediction-confirm': { type: 'string' },
      },
      help: {
        seeds: 'seeds per scenario and rate (1..N)',
        scenarios: 'comma-separated scenario names',
        rates: 'comma-separated total arrival rates, payments per second',
        tiers: 'comma-separated tiers to run (1, 2, 3)',
        'steady-s': 'simulated seconds for scenarios without a scripted event',
        weight: 'primary weight of the rule, 0.5 to 1',
        'chart-rate': 'rate whose seed-1 run is drawn (the nearest given rate is used)',
        'incident-at-s': 'when scripted incidents begin, simulated seconds (the rule runs that long first)',
        'prediction-threshold': "Tier 2's action threshold (the tenant's prediction_action_threshold)",
        'prediction-gain': "Tier 2's shift gain (prediction_shift_gain)",
        'prediction-confirm': "Tier 2's confirm steps (prediction_confirm_steps)",
      },
      notes: 'A full run (all scenarios, 3 rates, 5 seeds) takes minutes; progress is printed per scenario on stderr.',
    },
    argv,
  );
  const positive = (v: string): boolean => Number(v) > 0 && Number.isFinite(Number(v));
  const seeds = Number(values.seeds);
  if (!Number.isInteger(seeds) || seeds < 1) throw new Error(`--seeds must be a positive integer`);
  const weight = Number(values.weight);
  if (!(weight >= 0.5 && weight <= 1)) throw new Error('--weight must be in 0.5..1 (spec 2.10)');
  if (!positive(values['steady-s'])) throw new Error('--steady-s must be positive');
  if (!positive(values['incident-at-s'])) throw new Error('--incident-at-s must be positive');
  if (!positive(values['chart-rate'])) throw new Error('--chart-rate must be positive');
  const rates = list(values.rates, 'rates', positive).map(Number);
  const wanted = Number(values['chart-rate']);
  return {
    seeds,
    scenarios: list(values.scenarios, 'scenarios', (v) => listScenarios().includes(v)),
    rates,
    tiers: list(values.tiers, 'tiers', (v) => ['1', '2', '3'].includes(v)).map((v) => Number(v) as Tier),
    steadyMs: Number(values['steady-s']) * 1000,
    incidentAtMs: Number(values['incident-at-s']) * 1000,
    weight,
    foresight: {
      ...(values['prediction-threshold'] !== undefined && { actionThreshold: Number(values['prediction-threshold']) }),
      ...(values['prediction-gain'] !== undefined && { shiftGain: Number(values['prediction-gain']) }),
      ...(values['prediction-confirm'] !== undefined && { confirmSteps: Number(values['prediction-confirm']) }),
    },
    chartRate: rates.reduce((best, r) => (Math.abs(r - wanted) < Math.abs(best - wanted) ? r : best)),
  };
}

/** The chart of one run: traffic share, error rate, failure probability, the engine's failovers and recoveries. */
function writeRunChart(dir: string, run: InProcessRun, rate: number, tier: Tier, seed: number): string {
  const { engine, scenario } = run;
  const moments: EngineMoment[] = engine.transitions
    .filter((tr) => tr.processor === 0 && (tr.event === 'failover.triggered' || tr.event === 'failover.recovered'))
    .map((tr) => ({ t: engine.scenarioTime(tr.atMs), kind: tr.event === 'failover.triggered' ? ('failover' as const) : ('recovery' as const) }));
  const file = join(dir, `${scenario.name}-tier${tier}-rate${rate}.svg`);
  writeFileSync(
    file,
    runChart({
      title: `${scenario.name} (Tier ${tier})`,
      subtitle: `${scenario.description.replace(/\.?$/, '.')} ${rate} payments/s, seed ${seed}, virtual time, the real engine in-process.`,
      scenario,
      events: run.events,
      moments,
    }),
  );
  return file;
}

function scenarioFor(name: string, steadyMs: number, incidentAtMs: number): Scenario {
  const s = getScenario(name);
  const eventless = s.phases.length === 1 && s.phases[0].name === 'steady';
  return eventless ? getScenario(name, { durationMs: steadyMs }) : getScenario(name, { incidentAtMs });
}

async function main(): Promise<void> {
  const o = parseCli(process.argv.slice(2));
  const stageNames = STAGES.map((s) => s.name);
  if (o.tiers.some((t) => t > 1)) {
    console.log(
      stageNames.length === 0
        ? 'note: src/engine/worker/stages.ts registers no stage yet, so Tier 2/3 rows equal Tier 1'
        : `registered stages: ${stageNames.join(', ')}`,
    );
  }
  const foresight = resolveForesightConfig(o.foresight);
  const t0 = performance.now();
  const runs: RunMetrics[] = [];
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const chartDir = join(RESULTS, `scenarios-${stamp}`);
  mkdirSync(chartDir, { recursive: true });
  const charts: string[] = [];
  for (const tier of o.tiers) {
    for (const name of o.scenarios) {
      const scenario = scenarioFor(name, o.steadyMs, o.incidentAtMs);
      const s0 = performance.now();
      for (const rate of o.rates) {
        for (let seed = 1; seed <= o.seeds; seed++) {
          const run = await runInProcess({ scenario, ratePerSec: rate, seed, tier, primaryWeight: o.weight, configExtras: { foresight } });
          runs.push(measureRun(run, rate, seed, tier, o.weight));
          if (seed === 1 && rate === o.chartRate) charts.push(writeRunChart(chartDir, run, rate, tier, seed));
        }
      }
      process.stderr.write(`tier ${tier} ${name}: ${((performance.now() - s0) / 1000).toFixed(1)} s\n`);
    }
  }
  const wallS = (performance.now() - t0) / 1000;

  const summary = summaries(runs);
  console.log(`\nScenario benchmark: ${o.seeds} seeds, weight ${o.weight}, incidents at ${o.incidentAtMs / 1000} s, ${wallS.toFixed(1)} s wall`);
  console.log(table(summary.map(summaryRow)));
  console.log(LEGEND);
  const sections: Array<[string, Record<string, unknown>[]]> = [
    ['Tier 1, total outage (sudden-outage): time from the outage to the failover decision / to traffic away', outageRows(runs)],
    ['Tier 1, linear ramp 2%→60% over 120 s (ramp-120)', rampRows(runs)],
    ['Tier 1, false trips per simulated hour at steady technical error rates', noiseRows(runs)],
    ['Issue 5 targets (Tier 1)', targetRows(runs)],
    ['Lead before the true error rate crosses the 30% failover threshold (published share; weight as configured)', leadRows(runs)],
    ['Recovery after the outage ends (recovered = failover.recovered; share = the published primary share)', recoveryRows(runs)],
    ['Shifts of ≥20% of the configured share away from the primary outside incidents; harmless 20% bumps', shiftRows(runs)],
    ['Issue 17 targets', issue17TargetRows(runs)],
  ];
  for (const [title, rows] of sections) {
    if (rows.length === 0) continue;
    console.log(`\n${title}\n${table(rows)}`);
  }

  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `scenarios-${stamp}.json`);
  const json = { at: new Date().toISOString(), options: o, stages: stageNames, wallS, summary, sections: Object.fromEntries(sections), runs };
  // Infinity (it never happened) is not JSON; null stays "not applicable".
  writeFileSync(file, JSON.stringify(json, (_k, v) => (v === Infinity ? 'never' : v), 2));
  console.log(`\nresults: ${file}\ncharts (SVG): ${charts.length > 0 ? chartDir : 'none'}`);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
