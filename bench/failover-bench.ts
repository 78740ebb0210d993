/**
 * `npm run bench:failover`: Tier 1 failover detection while the route path is saturated.
 * The pool threads run at a lower priority than the front thread (src/engine/worker/priority.ts),
 * so under load an evaluation gets little of a contended core; this measures what that costs
 * the one evaluation that must be fast: the early evaluation after a hard outage.
 *
 * Per round, a fresh service (pinned to BENCH_SERVER_CPU with wrk on BENCH_GENERATOR_CPU, as
 * `npm run bench`) holding `--rules` rules over 5 tenants: an outcome for every rule first (so
 * an evaluation of a tenant evaluates all its rules), then wrk saturates POST /v1/route; after
 * 2 s one rule's primary times out FAST_PATH_RUN times in a row (sequential reports, as a
 * checkout would send them) and GET /v1/health/{rule} is polled every 10 ms. Reported: from
 * the first failed payment's report to failed_over seen, and from the report that completes
 * the run (the one that asks for the early evaluation) to failed_over seen.
 * `--other <dist/src/main.js>` alternates another build's service with this one (A B A B).
 *
 *   npm run bench:failover -- [--rounds 5] [--rules 1000] [--other ../main/dist/src/main.js]
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCli } from './lib/cli.js';
import { loadAverage1m } from './lib/cpu-usage.js';
import { table } from './lib/load.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { apiKeysFor, keyOf, outcomeRequests, routeRequests, sampleRules } from './lib/requests.js';
import { median } from './lib/scenario-metrics.js';
import { seed } from './lib/seed.js';
import { requireWrk, runWrk } from './lib/wrk.js';
import { FAST_PATH_RUN } from '../src/tiers/tier1/config.js';

const env = process.env;
const SERVER_CPU = env.BENCH_SERVER_CPU ?? '1';
const GENERATOR_CPU = env.BENCH_GENERATOR_CPU ?? '0';
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 64);
const TENANTS = 5;
const LOAD_S = 8;

const flags = parseCli({
  usage: 'npm run bench:failover -- [--rounds N] [--rules N] [--other <dist/src/main.js>]',
  summary:
    'Tier 1 failover detection (hard outage: timeouts in a row) while wrk saturates POST /v1/route: ' +
    'time from the failed reports to failed_over in /v1/health, per round and as medians; --other alternates another build.',
  options: { rounds: { type: 'string', default: '5' }, rules: { type: 'string', default: '1000' }, other: { type: 'string' } },
  help: {
    rounds: 'rounds per build',
    rules: 'rules over 5 tenants, all with outcomes',
    other: "another build's dist/src/main.js, run alternately with this one",
  },
  notes: 'Environment: BENCH_SERVER_CPU (1), BENCH_GENERATOR_CPU (0), BENCH_CONNECTIONS (64). Needs wrk.',
});

interface Round {
  build: string;
  round: number;
  firstToFailedOverMs: number;
  triggerToFailedOverMs: number;
  routeRps: number;
  load1: number;
}

async function post(url: string, key: string, body: unknown): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  await res.text();
  return res.status;
}

async function primaryStatus(svc: Child, ruleId: string): Promise<string> {
  const res = await fetch(`${svc.url}/v1/health/${ruleId}`, { headers: { 'x-api-key': keyOf(0) } });
  const body = (await res.json()) as { primary?: { status: string } };
  return body.primary?.status ?? 'unknown';
}

async function oneRound(build: string, main: string, round: number, rulesN: number): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), 'prbench-failover-'));
  const { tenants, rules } = await seed(dir, { rules: rulesN, tenants: TENANTS });
  const svc = await startChild(main, { SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: apiKeysFor(tenants), SERVICE_RATE_LIMIT_RPS: '0' }, 120_000, { cpus: SERVER_CPU });
  try {
    // Every rule of every tenant gets outcomes: an evaluation of t0 evaluates all its rules.
    await runWrk({ url: svc.url, requests: outcomeRequests(rules, TENANTS), durationS: 3, connections: CONNECTIONS, cpus: GENERATOR_CPU });
    const target = rules[round % rules.length];
    const routing = runWrk({ url: svc.url, requests: routeRequests(sampleRules(rules), TENANTS), durationS: LOAD_S, connections: CONNECTIONS, cpus: GENERATOR_CPU });
    await new Promise((r) => setTimeout(r, 2000));
    const t0 = performance.now();
    let trigger = NaN;
    for (let i = 1; i <= FAST_PATH_RUN + 2; i++) {
      const status = await post(`${svc.url}/v1/outcome`, keyOf(0), { rule_id: target.rule_id, processor_id: target.primary_id, success: false, latency_ms: 10_000, error_code: 'timeout' });
      if (status < 200 || status > 299) throw new Error(`outcome answered ${status}`);
      if (i === FAST_PATH_RUN) trigger = performance.now();
    }
    let seen = NaN;
    while (performance.now() - t0 < 5000) {
      if ((await primaryStatus(svc, target.rule_id)) === 'failed_over') {
        seen = performance.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const load = await routing;
    return { build, round, firstToFailedOverMs: seen - t0, triggerToFailedOverMs: seen - trigger, routeRps: load.rps, load1: loadAverage1m() };
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  requireWrk();
  const rounds = Number(flags.rounds);
  const rulesN = Number(flags.rules);
  const builds: [string, string][] = [['this build', join(DIST, 'src/main.js')]];
  if (flags.other !== undefined) builds.unshift(['other', resolve(flags.other)]);
  const results: Round[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const [name, main] of builds) {
      const r = await oneRound(name, main, round, rulesN);
      results.push(r);
      console.log(`${name} round ${round}: failed_over ${r.firstToFailedOverMs.toFixed(0)} ms after the first failure, ${r.triggerToFailedOverMs.toFixed(0)} ms after the run completed; route ${Math.round(r.routeRps)} req/s; load ${r.load1.toFixed(2)}`);
    }
  }
  const r0 = (x: number) => (Number.isNaN(x) ? 'not within 5 s' : Math.round(x));
  console.log(table(results.map((r) => ({ build: r.build, round: r.round, 'first failure → failed_over ms': r0(r.firstToFailedOverMs), 'run complete → failed_over ms': r0(r.triggerToFailedOverMs), 'route req/s': Math.round(r.routeRps), load1: r.load1.toFixed(2) }))));
  console.log(
    table(
      builds.map(([name]) => {
        const mine = results.filter((r) => r.build === name);
        return {
          build: name,
          rules: rulesN,
          'median first failure → failed_over ms': r0(median(mine.map((r) => r.firstToFailedOverMs))!),
          'median run complete → failed_over ms': r0(median(mine.map((r) => r.triggerToFailedOverMs))!),
          'max run complete → failed_over ms': r0(Math.max(...mine.map((r) => r.triggerToFailedOverMs))),
          'median load1': (median(mine.map((r) => r.load1)) ?? NaN).toFixed(2),
        };
      }),
    ),
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
