/**
 * `npm run bench:cycle-pauses`: what the evaluation cycle costs the front thread, measured as
 * the event loop's delays (the time a route arriving then would wait before being read) while
 * cycles run, without HTTP, so other processes on the machine disturb it little.
 *
 * Per round, a child process pinned to one core (BENCH_SERVER_CPU, as the service in
 * `npm run bench`), so the pool thread competes with the front thread as it does there: the
 * engine of the service (EngineService, its piscina pool, checkpoints to a real LMDB store,
 * RuleService loading `--rules` seeded rules over 5 tenants, Tier 3), outcomes recorded into
 * every rule (1 per rule and second, in 100 ms batches), cycles every `--interval` ms, and
 * perf_hooks.monitorEventLoopDelay (1 ms resolution) over `--cycles` cycles after one of
 * warm-up. The event-loop delay also counts the time other processes held the core; the
 * front thread's own blocks are measured apart (Linux): a 1 ms timer reads the thread's CPU
 * time (/proc/thread-self/schedstat), and the CPU it used between two ticks is work that
 * ran without yielding. `--other <dist/>` runs another build's engine in alternate rounds.
 *
 *   npm run bench:cycle-pauses -- [--rules 1000] [--interval 1000] [--cycles 10] [--rounds 5] [--other ../main/dist]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseCli } from './lib/cli.js';
import { table } from './lib/load.js';
import { DIST } from './lib/processes.js';
import { median } from './lib/scenario-metrics.js';
import { seed } from './lib/seed.js';
import { pinned } from './lib/wrk.js';
import { Rng } from './sim/rng.js';

const TENANTS = 5;
const SERVER_CPU = process.env.BENCH_SERVER_CPU ?? '1';

const flags = parseCli({
  usage: 'npm run bench:cycle-pauses -- [--rules N] [--interval MS] [--cycles N] [--rounds N] [--other <dist/>]',
  summary:
    "Front-thread event-loop delays while the service's engine evaluates every rule each cycle (real pool, checkpoints to LMDB), " +
    'in a child pinned to one core; medians over rounds; --other alternates another build.',
  options: {
    rules: { type: 'string', default: '1000' },
    interval: { type: 'string', default: '1000' },
    cycles: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '5' },
    other: { type: 'string' },
    child: { type: 'string' },
  },
  help: {
    rules: 'rules over 5 tenants, all with outcomes',
    interval: 'SERVICE_EVAL_INTERVAL_MS of the engine',
    cycles: 'cycles measured per round',
    rounds: 'rounds per build',
    other: "another build's dist/ directory, run in alternate rounds",
    child: '(internal) run one measurement with the engine of this dist/',
  },
  notes: 'Environment: BENCH_SERVER_CPU (1): the core the measuring child is pinned to.',
});

interface Measure {
  /** The front thread's longest / 99.9th percentile run of CPU between two 1 ms ticks. */
  blockMaxMs: number;
  block999Ms: number;
  maxMs: number;
  p99Ms: number;
  p999Ms: number;
  cycleMsMedian: number;
}

/** The child: one build's engine under a steady outcome feed, event-loop delays measured. */
async function child(dist: string): Promise<void> {
  const load = (p: string) => import(pathToFileURL(join(dist, p)).href);
  const { LmdbStore } = await load('src/store/lmdb-store.js');
  const { SharedTables } = await load('src/shm/tables.js');
  const { TenantRegistry } = await load('src/tenants/registry.js');
  const { settingsForTier } = await load('src/tenants/tenant.js');
  const { Metrics } = await load('src/metrics/registry.js');
  const { EngineService } = await load('src/engine/engine-service.js');
  const { RuleService } = await load('src/rules/rule-service.js');
  const { recordReportedOutcome } = await load('src/routing/outcome.js');
  const { setLogLevel } = await load('src/log.js');
  setLogLevel('error');
  const rulesN = Number(flags.rules);
  const interval = Number(flags.interval);
  const dir = mkdtempSync(join(tmpdir(), 'prpauses-'));
  const { tenants: ids } = await seed(dir, { rules: rulesN, tenants: TENANTS });
  const store = new LmdbStore(dir);
  const tables = new SharedTables();
  const tenants = new TenantRegistry(ids, settingsForTier(3, false));
  const engine = new EngineService({ tables, tenants, store, metrics: new Metrics(), intervalMs: interval });
  new RuleService(store, tables, tenants, engine, 200_000).load();
  engine.start();
  const rng = new Rng(7);
  const all = [...tenants.all()];
  // 1 outcome per rule and second, in 100 ms batches (each rule every 10th batch).
  let batch = 0;
  const feed = setInterval(() => {
    const now = Date.now();
    for (const t of all) {
      let i = 0;
      for (const { record } of t.rules.values()) {
        if (i++ % 10 !== batch % 10) continue;
        const u = rng.next();
        const report = { rule_id: record.rule_id, processor_id: u < 0.9 ? record.primary_id : record.secondary_id, success: u > 0.08, latency_ms: 150 + u * 300, error_code: u > 0.08 ? null : 'do_not_honor' };
        recordReportedOutcome(tables, t, report, now);
      }
    }
    batch++;
  }, 100);
  await new Promise((r) => setTimeout(r, interval * 1.5)); // warm-up: one cycle
  const h = monitorEventLoopDelay({ resolution: 1 });
  const cycles: number[] = [];
  let last = engine.stats().cyclesRun;
  const threadCpuNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  const blocks: number[] = [];
  let lastCpu = threadCpuNs();
  const sampler = setInterval(() => {
    const cpu = threadCpuNs();
    blocks.push((cpu - lastCpu) / 1e6);
    lastCpu = cpu;
  }, 1);
  h.enable();
  const t0 = Date.now();
  while (Date.now() - t0 < interval * Number(flags.cycles)) {
    await new Promise((r) => setTimeout(r, 50));
    const s = engine.stats();
    if (s.cyclesRun !== last) {
      last = s.cyclesRun;
      if (Number.isFinite(s.lastCycleMs)) cycles.push(s.lastCycleMs);
    }
  }
  h.disable();
  clearInterval(sampler);
  clearInterval(feed);
  await engine.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  const ms = (ns: number) => ns / 1e6;
  blocks.sort((a, b) => a - b);
  const m: Measure = { blockMaxMs: blocks[blocks.length - 1], block999Ms: blocks[Math.floor(blocks.length * 0.999)], maxMs: ms(h.max), p99Ms: ms(h.percentile(99)), p999Ms: ms(h.percentile(99.9)), cycleMsMedian: median(cycles) ?? NaN };
  process.stdout.write(`PAUSES ${JSON.stringify(m)}\n`);
}

function runChild(dist: string): Promise<Measure> {
  const [cmd, ...args] = pinned(SERVER_CPU, [process.execPath, join(DIST, 'bench/cycle-pauses.js'), '--child', dist, '--rules', flags.rules, '--interval', flags.interval, '--cycles', flags.cycles]);
  return new Promise((resolveRun, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b) => (out += String(b)));
    p.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('PAUSES '));
      if (code !== 0 || line === undefined) reject(new Error(`measuring child exited ${code}: ${out}`));
      else resolveRun(JSON.parse(line.slice(7)) as Measure);
    });
  });
}

async function main(): Promise<void> {
  if (flags.child !== undefined) return child(resolve(flags.child));
  const builds: [string, string][] = [['this build', DIST]];
  if (flags.other !== undefined) builds.unshift(['other', resolve(flags.other)]);
  const rows: Record<string, string | number>[] = [];
  const r2 = (x: number) => Math.round(x * 100) / 100;
  for (let round = 1; round <= Number(flags.rounds); round++) {
    for (const [name, dist] of builds) {
      const m = await runChild(dist);
      const row = { build: name, round, 'block max ms': r2(m.blockMaxMs), 'block p99.9 ms': r2(m.block999Ms), 'max ms': r2(m.maxMs), 'p99.9 ms': r2(m.p999Ms), 'p99 ms': r2(m.p99Ms), 'cycle ms (median)': r2(m.cycleMsMedian), load1: r2(loadavg()[0]) };
      rows.push(row);
      console.log(table([row]));
    }
  }
  console.log(`\nFront thread: its own blocks (CPU between 1 ms ticks) and event-loop delay; ${flags.rules} rules over ${TENANTS} tenants all with outcomes, cycle every ${flags.interval} ms, pinned to CPU ${SERVER_CPU}:`);
  console.log(table(rows));
  const med = (name: string, k: string) => r2(median(rows.filter((r) => r.build === name).map((r) => Number(r[k])))!);
  console.log(table(builds.map(([name]) => ({ build: name, 'median block max ms': med(name, 'block max ms'), 'median block p99.9 ms': med(name, 'block p99.9 ms'), 'median max ms': med(name, 'max ms'), 'median p99.9 ms': med(name, 'p99.9 ms'), 'median p99 ms': med(name, 'p99 ms'), 'median cycle ms': med(name, 'cycle ms (median)'), 'median load1': med(name, 'load1') }))));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
