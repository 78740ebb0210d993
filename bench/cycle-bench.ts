/**
 * `npm run bench:cycle`: the evaluation cycle's cost and the HTTP throughput while it runs.
 *
 * 1. Cost: 10,000 rules across 50 tenants in SharedTables, outcomes recorded into every rule
 *    (1 tx/s each over the trailing minute, then 5 s more before each cycle), evaluated once
 *    per tenant shard per cycle: in-process (the worker's `evaluate` on this thread) and
 *    through the real piscina pool (EngineScheduler with dist/src/engine/worker/entry.js). Reported
 *    per cycle and per 1,000 rule slots (a rule slot holds the primary and the secondary), at
 *    Tier 1 and Tier 3 by default (the stages registered in src/engine/worker/stages.ts run when enabled).
 * 2. HTTP: the real server (child process) with the same 10,000 rules across 50 tenants,
 *    outcomes first reported for every (tenant, rule) so that each cycle evaluates them all,
 *    then autocannon on POST /v1/route and POST /v1/outcome beside the bare uWS ceiling in the
 *    same run, at SERVICE_EVAL_INTERVAL_MS 5000 (default) and 1000 (stress), and as a control
 *    at 600000 (the maximum: no cycle falls in the run), so the engine's cost on the front
 *    thread shows against the same machine's noise. The per-key rate limit
 *    (SERVICE_RATE_LIMIT_RPS, default 10,000/s) is switched off: it would measure itself.
 *    The load generator shares the machine: on 2 cores absolute numbers are noisy, so the
 *    load average is printed with the results.
 *
 *   node dist/bench/cycle-bench.js [--cycles 10] [--rules 10000] [--tenants 50]
 *     [--tiers 1,3] [--intervals 600000,5000,1000] [--service-tier N] [--no-http]
 *   (BENCH_DURATION_S, BENCH_CONNECTIONS apply; the server runs at SERVICE_TIER's default unless --service-tier)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './lib/cli.js';
import { EngineScheduler, type ShardSpec } from '../src/engine/scheduler.js';
import { resolveTier1Config } from '../src/tiers/tier1/config.js';
import { SharedTables } from '../src/shm/tables.js';
import type { Tenant } from '../src/tenants/tenant.js';
import evaluate from '../src/engine/worker/entry.js';
import { DEFAULT_LATER_TIERS } from '../src/tiers/config.js';
import { tablesIdOf, type TenantEngineConfig } from '../src/engine/protocol.js';
import { feedOutcomes, loadTenants } from './lib/cycle-load.js';
import { load, table } from './lib/load.js';
import { DIST, startChild } from './lib/processes.js';
import { apiKeysFor, outcomeRequests, routeRequests, sampleRules } from './lib/requests.js';
import { ruleSet, seed } from './lib/seed.js';
import { median } from './lib/scenario-metrics.js';
import type { Tier } from './sim/engine-adapter.js';
import { Rng } from './sim/rng.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const CYCLE_MS = 5000;
const WARMUP_CYCLES = 2;
const PER_RULE_RATE = 1;

type Row = Record<string, string | number>;

type Mode = 'in-process' | 'piscina pool';

/** One workload, `cycles` measured cycles (after warm-up) in one mode at one tier. */
async function cycleCost(mode: Mode, tier: Tier, rulesTotal: number, tenantsN: number, cycles: number): Promise<Row> {
  const tables = new SharedTables();
  let now = Date.now();
  const tenants = loadTenants(tables, ruleSet(Math.ceil(rulesTotal / tenantsN)), tenantsN, now - 60_000);
  const slots = tenants.reduce((a, t) => a + t.rules.size, 0);
  const rng = new Rng(1);
  feedOutcomes(tables, tenants, now - 60_000, now, PER_RULE_RATE, rng);
  const config: TenantEngineConfig = { tier1: resolveTier1Config(), predictionEnabled: tier >= 2, banditEnabled: tier >= 3, ...DEFAULT_LATER_TIERS };
  const shards: ShardSpec[] = tenants.map((t: Tenant) => ({ shardId: t.id, slots: t.slots(), config }));
  // The service's default pool size: the front thread keeps a core.
  const threads = mode === 'piscina pool' ? Math.max(1, availableParallelism() - 1) : 1;
  let taskMs = 0;
  const scheduler =
    mode === 'piscina pool'
      ? new EngineScheduler({ tables, getShards: () => shards, onTransitions: () => {}, onEvaluated: (_id, r) => (taskMs += r.durationMs), now: () => now, maxThreads: threads })
      : undefined;
  const wall: number[] = [];
  const work: number[] = [];
  for (let c = 0; c < WARMUP_CYCLES + cycles; c++) {
    feedOutcomes(tables, tenants, now, now + CYCLE_MS, PER_RULE_RATE, rng);
    now += CYCLE_MS;
    taskMs = 0;
    const t0 = performance.now();
    if (scheduler) await scheduler.runCycle();
    else {
      for (const s of shards) {
        taskMs += evaluate({ tablesId: tablesIdOf(tables), segments: tables.segments(), slots: s.slots as Int32Array, nowMs: now, config }).durationMs;
      }
    }
    if (c >= WARMUP_CYCLES) {
      wall.push(performance.now() - t0);
      work.push(taskMs);
    }
  }
  await scheduler?.stop();
  const p50 = median(wall) ?? NaN;
  return {
    mode,
    tier,
    threads,
    'rule slots': slots,
    'cycle wall ms p50': p50.toFixed(1),
    'cycle wall ms max': Math.max(...wall).toFixed(1),
    'task ms p50 (sum)': (median(work) ?? NaN).toFixed(1),
    'wall ms / 1000 slots': ((p50 * 1000) / slots).toFixed(2),
    'shared MB': Math.round(tables.bytes() / 1048576),
  };
}

async function httpRuns(rulesTotal: number, tenantsN: number, intervals: number[], serviceTier?: string): Promise<{ rows: Row[]; memory: Row[] }> {
  const rows: Row[] = [];
  const memory: Row[] = [];
  for (const interval of intervals) {
    process.stderr.write(`HTTP runs at SERVICE_EVAL_INTERVAL_MS ${interval}...\n`);
    const dir = mkdtempSync(join(tmpdir(), 'prcycle-'));
    try {
      const { tenants, rules } = await seed(dir, { rules: rulesTotal, tenants: tenantsN });
      const svc = await startChild(join(DIST, 'src/main.js'), {
        SERVICE_DATA_DIR: dir,
        SERVICE_API_KEYS: apiKeysFor(tenants),
        SERVICE_EVAL_INTERVAL_MS: String(interval),
        SERVICE_RATE_LIMIT_RPS: '0',
        ...(serviceTier !== undefined && { SERVICE_TIER: serviceTier }),
      });
      try {
        const outcomes = outcomeRequests(rules, tenants.length);
        const routes = routeRequests(sampleRules(rules), tenants.length);
        // Every (tenant, rule) reports before the measured runs: all slots have windows to evaluate.
        const warm = await load('warm-up outcomes', svc.url, outcomes, 3);
        const probe = await fetch(svc.url + '/v1/route', { method: 'POST', headers: { ...routes[0].headers, 'content-type': 'application/json' }, body: routes[0].body });
        const body = await probe.text();
        if (probe.status !== 200) throw new Error(`route probe: ${probe.status} ${body}`);
        const bare = await startChild(join(DIST, 'bench/bare-uws.js'), { BARE_BODY: body });
        try {
          const ceil = await load('bare uWS', bare.url, routes);
          const route = await load('POST /v1/route', svc.url, routes);
          const outcome = await load('POST /v1/outcome', svc.url, outcomes);
          for (const r of [ceil, route, outcome]) {
            rows.push({ 'eval interval ms': interval, load: loadavg()[0].toFixed(1), run: r.name, 'req/s': Math.round(r.rps), 'p50 ms': r.p50, 'p99 ms': r.p99, 'vs bare': (r.rps / ceil.rps).toFixed(2), non2xx: r.non2xx, errors: r.errors });
          }
        } finally {
          await bare.stop();
        }
        memory.push({ 'eval interval ms': interval, rules: rules.length * tenants.length, 'warm-up outcomes': Math.round(warm.rps * 3), 'rss MB': Math.round(svc.rssMb()) });
      } finally {
        await svc.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { rows, memory };
}

async function main(): Promise<void> {
  const values = parseCli({
    usage: 'npm run bench:cycle -- [options]',
    summary:
      'The evaluation cycle\'s cost (in-process and through the piscina pool, per cycle and per 1,000 rules) and the HTTP ' +
      'throughput of route and outcome while cycles run, beside the bare uWS ceiling. Prints tables, JSON under bench/results/.',
    options: {
      cycles: { type: 'string', default: '10' },
      rules: { type: 'string', default: '10000' },
      tenants: { type: 'string', default: '50' },
      intervals: { type: 'string', default: '600000,5000,1000' },
      tiers: { type: 'string', default: '1,3' },
      'service-tier': { type: 'string' },
      'no-http': { type: 'boolean', default: false },
    },
    help: {
      cycles: 'cycles measured (the median is reported)',
      rules: 'rules, all with traffic',
      tenants: 'tenants the rules are spread over',
      intervals: 'comma-separated SERVICE_EVAL_INTERVAL_MS values for the HTTP runs',
      tiers: 'comma-separated tiers whose cycle cost is measured',
      'service-tier': 'SERVICE_TIER of the server in the HTTP runs (default: the service default)',
      'no-http': 'skip the HTTP runs',
    },
  });
  const rules = Number(values.rules);
  const tenants = Number(values.tenants);
  const cycles = Number(values.cycles);
  if (![rules, tenants, cycles].every((v) => Number.isInteger(v) && v > 0)) throw new Error('--rules, --tenants and --cycles must be positive integers');
  const load0 = loadavg()[0];
  const tiers = values.tiers.split(',').map(Number) as Tier[];
  if (!tiers.every((t) => t === 1 || t === 2 || t === 3)) throw new Error('--tiers: 1, 2 or 3');
  const cost: Row[] = [];
  for (const tier of tiers) {
    for (const mode of ['in-process', 'piscina pool'] as const) {
      process.stderr.write(`cycle cost: tier ${tier}, ${mode}, ${cycles} cycles...\n`);
      cost.push(await cycleCost(mode, tier, rules, tenants, cycles));
    }
  }
  console.log(`\nEvaluation cycle, ${rules} rules across ${tenants} tenants, all with traffic (median of ${cycles} cycles; load average ${load0.toFixed(1)} on ${availableParallelism()} CPUs)\n${table(cost)}`);
  let http: { rows: Row[]; memory: Row[] } = { rows: [], memory: [] };
  if (!values['no-http']) {
    const intervals = values.intervals.split(',').map(Number);
    http = await httpRuns(rules, tenants, intervals, values['service-tier']);
    console.log(`\nHTTP with the engine running, ${rules} rules across ${tenants} tenants (load: 1-min load average after the run)\n${table(http.rows)}\n\n${table(http.memory)}`);
  }
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `cycle-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), cpus: availableParallelism(), loadAverageAtStart: load0, rules, tenants, cycles, cost, http }, null, 2));
  console.log(`results: ${file}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
