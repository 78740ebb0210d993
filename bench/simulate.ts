/**
 * Live simulator: drives a running engine over HTTP in real time with payments whose
 * outcomes come from a scenario's simulated processors, printing one line per second and
 * a score at the end (or on Ctrl-C).
 *
 *   node dist/bench/simulate.js --scenario sudden-outage [--rate 50] [--url http://127.0.0.1:8000]
 *     [--api-key KEY] [--duration-s N] [--incident-at-s 15] [--seed 1] [--speed 1]
 *   node dist/bench/simulate.js --list
 *
 * --speed S runs scenario time S times faster than real time (latencies shrink by S too);
 * the arrival rate stays in payments per real second. Outcomes are reported after their
 * simulated latency, as a real client would. Runs are seeded, but concurrent responses
 * arrive in varying order, so live runs are not bit-for-bit reproducible (virtual runs are).
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli as parseCliOptions } from './lib/cli.js';
import { runChart, type EngineMoment } from './lib/run-chart.js';
import { RoutingApiClient, type RouteRequest } from './sim/api-client.js';
import { monotonicClock } from './sim/clock.js';
import type { TxEvent } from './sim/driver.js';
import { SecondStats } from './sim/live-stats.js';
import { drawOutcome } from './sim/processor.js';
import { formatScore } from './sim/report.js';
import { Rng } from './sim/rng.js';
import { SCENARIOS, getScenario, listScenarios, phaseAt, truncateScenario, type Scenario } from './sim/scenarios.js';
import { score } from './sim/score.js';

/** Live default: the disturbance starts after 15 s so that a failover shows within a minute. */
const LIVE_INCIDENT_AT_S = 15;
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const ROUTE_REQUEST: RouteRequest = { country: 'US', currency: 'USD', payment_method: 'card', amount: 42 };

interface Options {
  scenario: Scenario;
  ratePerSec: number;
  url: string;
  apiKey?: string;
  seed: number;
  speed: number;
  /** SVG chart path; default under bench/results/. */
  chart?: string;
}

function numberArg(name: string, raw: string, check: (v: number) => boolean, what: string): number {
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v) || !check(v)) throw new Error(`--${name} must be ${what}, got "${raw}"`);
  return v;
}
const positive = (name: string, raw: string): number => numberArg(name, raw, (v) => v > 0, 'a positive number');

/** Parses argv; returns null after printing the scenario list. */
function parseCli(argv: string[]): Options | null {
  const values = parseCliOptions(
    {
      usage: 'npm run simulate -- --scenario NAME [options]   (npm run simulate -- --list for the scenarios)',
      summary:
        'Drives a running engine over HTTP in real time with payments whose outcomes come from a scenario\'s simulated ' +
        'processors; prints one line per second, a score at the end (or on Ctrl-C), and writes an SVG chart of traffic ' +
        'share, error rate and failure probability with the failover and recovery moments marked.',
      options: {
        scenario: { type: 'string' },
        rate: { type: 'string', default: '50' },
        url: { type: 'string', default: 'http://127.0.0.1:8000' },
        'api-key': { type: 'string' },
        'duration-s': { type: 'string' },
        'incident-at-s': { type: 'string', default: String(LIVE_INCIDENT_AT_S) },
        seed: { type: 'string', default: '1' },
        speed: { type: 'string', default: '1' },
        chart: { type: 'string' },
        list: { type: 'boolean', default: false },
      },
      help: {
        scenario: 'scenario to play (required), see --list',
        rate: 'payments per real second',
        url: 'base URL of the running engine',
        'api-key': 'X-API-Key to send (when SERVICE_API_KEYS is set)',
        'duration-s': 'scenario seconds to run (default: the scenario\'s own length)',
        'incident-at-s': 'when the disturbance starts, scenario seconds',
        seed: 'random seed (integer)',
        speed: 'scenario time runs this many times faster than real time',
        chart: 'SVG chart file to write (default bench/results/simulate-<scenario>-<time>.svg)',
        list: 'print the scenarios and exit',
      },
      notes: 'Example: npm start (in one terminal), then npm run simulate -- --scenario sudden-outage --speed 4',
    },
    argv,
  );
  if (values.list) {
    for (const name of listScenarios()) console.log(`${name.padEnd(22)} ${SCENARIOS[name]().description}`);
    return null;
  }
  if (!values.scenario) throw new Error(`--scenario is required; one of: ${listScenarios().join(', ')} (--help for the options)`);
  const durationS = values['duration-s'];
  return {
    scenario: getScenario(values.scenario, {
      incidentAtMs: numberArg('incident-at-s', values['incident-at-s'], (v) => v >= 0, 'a non-negative number') * 1000,
      ...(durationS !== undefined && { durationMs: positive('duration-s', durationS) * 1000 }),
    }),
    ratePerSec: positive('rate', values.rate),
    url: values.url,
    ...(values['api-key'] !== undefined && { apiKey: values['api-key'] }),
    seed: numberArg('seed', values.seed, Number.isInteger, 'an integer'),
    speed: positive('speed', values.speed),
    ...(values.chart !== undefined && { chart: values.chart }),
  };
}

async function run(o: Options): Promise<void> {
  const { scenario, speed } = o;
  const { primary, secondary } = scenario;
  const client = new RoutingApiClient(o.url, o.apiKey);
  const ruleId = `sim-${scenario.name}`;
  await client.replaceRule({
    rule_id: ruleId,
    attributes: ['US', 'USD', 'card'],
    primary_id: primary.id,
    primary_name: primary.name,
    secondary_id: secondary.id,
    secondary_name: secondary.name,
    primary_weight: 1.0,
  });
  const incident = scenario.incident;
  console.log(
    `${scenario.name}: ${scenario.description}\nrule ${ruleId}, ${o.ratePerSec} tx/s, ${scenario.durationMs / 1000} s at speed ${speed}, ` +
      `incident ${incident ? `${incident.startMs / 1000} s .. ${incident.endMs === undefined ? 'end' : `${incident.endMs / 1000} s`}` : 'none'}`,
  );

  const rng = new Rng(o.seed);
  const arrivals = rng.fork('arrivals');
  const processors = new Map([primary, secondary].map((m) => [m.id, { model: m, rng: rng.fork(`outcomes:${m.id}`) }]));
  const labels = [
    [primary.id, 'primary'],
    [secondary.id, 'secondary'],
  ] as const;
  const events: TxEvent[] = [];
  const inflight = new Set<Promise<void>>();
  const stop = new AbortController();
  // Every payment waiting out its latency listens on this signal: hundreds at a time is expected.
  setMaxListeners(0, stop.signal);
  const unknownIds = new Set<string>();
  let stats = new SecondStats();
  const startEpochMs = Date.now();
  const start = monotonicClock.now();
  const scenarioNow = (): number => (monotonicClock.now() - start) * speed;

  const pay = async (t: number): Promise<void> => {
    try {
      const d = await client.route(ROUTE_REQUEST);
      stats.routed(d.processor_id, d.decision_source, d.failure_probability);
      const processor = processors.get(d.processor_id);
      if (!processor) {
        if (!unknownIds.has(d.processor_id)) {
          unknownIds.add(d.processor_id);
          console.warn(`engine chose "${d.processor_id}", not a processor of this scenario (another rule with the same attributes?)`);
        }
        return;
      }
      const outcome = drawOutcome(processor.model, t, processor.rng);
      events.push({
        t,
        decision: { processorId: d.processor_id, weight: d.weight, decisionSource: d.decision_source, failureProbability: d.failure_probability },
        outcome,
      });
      await sleep(outcome.latency_ms / speed, undefined, { signal: stop.signal });
      const { success, latency_ms, error_code } = outcome;
      await client.outcome({ rule_id: ruleId, processor_id: d.processor_id, success, latency_ms, error_code });
      stats.outcomeReported(outcome);
    } catch (err) {
      if (!stop.signal.aborted) stats.httpError(err instanceof Error ? err.message : String(err));
    }
  };

  // Poisson arrivals in real time: fire every arrival that is due, then sleep until the next.
  let nextArrivalMs = arrivals.exponential(o.ratePerSec) * 1000;
  let arrivalTimer: NodeJS.Timeout | undefined;
  const pump = (): void => {
    const elapsed = monotonicClock.now() - start;
    while (nextArrivalMs <= elapsed) {
      const p = pay(nextArrivalMs * speed);
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      nextArrivalMs += arrivals.exponential(o.ratePerSec) * 1000;
    }
    arrivalTimer = setTimeout(pump, nextArrivalMs - elapsed);
  };
  const progress = setInterval(() => {
    const t = scenarioNow();
    console.log(stats.line(t / 1000, phaseAt(scenario, t), labels));
    stats = new SecondStats();
  }, 1000);

  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const end = setTimeout(finish, scenario.durationMs / speed);
  const onSigint = (): void => {
    console.log('\ninterrupted: summary so far');
    process.exitCode = 130;
    finish();
  };
  process.once('SIGINT', onSigint);
  pump();
  await done;
  const horizonMs = scenarioNow();
  // A second Ctrl-C while draining gets Node's default: exit at once.
  process.removeListener('SIGINT', onSigint);
  clearTimeout(end);
  clearTimeout(arrivalTimer);
  clearInterval(progress);
  // Outcomes still waiting out their latency are dropped; requests already sent are awaited.
  stop.abort();
  await Promise.allSettled(inflight);
  // The engine's failovers of this rule's primary during the run, in scenario time.
  let moments: EngineMoment[] = [];
  try {
    moments = (await client.failoverEvents())
      .filter((e) => e.rule_id === ruleId && e.from_processor === primary.id && Date.parse(e.timestamp) >= startEpochMs)
      .map((e) => ({ t: (Date.parse(e.timestamp) - startEpochMs) * speed, kind: 'failover' as const }));
  } catch (err) {
    console.warn(`failover events not read (${err instanceof Error ? err.message : String(err)}); the chart marks when traffic left the primary`);
  }
  await client.close();
  const chartFile = o.chart ?? join(RESULTS, `simulate-${scenario.name}-${new Date().toISOString().replace(/[:.]/g, '-')}.svg`);
  mkdirSync(dirname(chartFile), { recursive: true });
  writeFileSync(
    chartFile,
    runChart({
      title: `Simulator: ${scenario.name}`,
      subtitle: `${o.ratePerSec} payments/s, speed ${speed}, seed ${o.seed}, live engine at ${o.url}`,
      scenario,
      events,
      moments,
      durationMs: horizonMs,
    }),
  );

  // Scored over the time actually run, so an interrupted run reports no incident end it never saw.
  const ran = truncateScenario(scenario, horizonMs);
  console.log(`\n${formatScore(ran, score(events, ran))}`);
  if (unknownIds.size > 0) console.log(`routed to unknown processors: ${[...unknownIds].join(', ')} (not scored)`);
  console.log(`chart: ${chartFile}`);
}

try {
  const options = parseCli(process.argv.slice(2));
  if (options) await run(options);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
}
