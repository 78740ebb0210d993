/**
 * `npm run bench:scrape-p99`: where the route p99 rise during a /metrics/ scrape and an
 * evaluation cycle comes from (issue 20's last latency target, measured by `npm run bench` at
 * 1,000 rules), phase by phase and thread by thread.
 *
 * Set-up as in `npm run bench`: 1,000 rules (`--rules`) over 5 tenants, API keys, the service pinned to
 * BENCH_SERVER_CPU (1; all its threads share that core), wrk to BENCH_GENERATOR_CPU (0), 64
 * connections, POST /v1/route at saturation. Each build runs as two services: one with the
 * default 5 s evaluation cycle, one whose cycle never comes within a run
 * (SERVICE_EVAL_INTERVAL_MS=600000); the services not being measured are stopped (SIGSTOP),
 * so they take nothing from the core. Each service first gets quiet runs (no outcomes yet: a
 * cycle has nothing to evaluate), then outcomes for every rule for 3 s. Then, per round, the
 * phases in turn (their order rotated from round to round, builds interleaved):
 *   none    no scrape, no cycle (outcomes exist)
 *   scrape  /metrics/ every second, no cycle
 *   cycle   the 5 s cycle, no scrape
 *   both    a scrape every second and the 5 s cycle (what `npm run bench` measures)
 * Per run: route p99, and where the core went: CPU of the front thread, the pool threads, the
 * render thread and the rest (V8/libuv helpers), the front thread's preemptions, and from a
 * probe in the service (bench/lib/front-probe.ts) the front thread's stalls: gaps of ≥ 2 ms
 * between ticks of a 1 ms timer, with the CPU the front thread itself used in them (a stall
 * with little of its own CPU is a preemption; with all of it, its own work). With --sched
 * (perf, root) the front thread's preemptions are taken from the kernel's sched_switch events
 * and charged to the threads that ran meanwhile (bench/lib/sched-trace.ts): what the service's
 * own threads cost it, apart from what other processes on a busy machine do. Each run also shows
 * how long wrk waited for its own core (`wrk held ms/s`, lib/measured-slice.ts): the scraper runs
 * beside wrk, and a held wrk counts its wait into the route's p99. Runs are not taken again here.
 *
 *   npm run bench:scrape-p99 -- [--rounds 3] [--rules 1000] [--duration 6] [--phases none,scrape,cycle,both] [--other <dist/>] [--other-node-args=<flags>] [--sched]
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCli } from './lib/cli.js';
import { table } from './lib/load.js';
import { startChild, type Child, DIST } from './lib/processes.js';
import { stopChildrenOnSignals, wakeAndStop } from './lib/turn-taking.js';
import { apiKeysFor, outcomeRequests, routeRequests, sampleRules } from './lib/requests.js';
import { median } from './lib/scenario-metrics.js';
import { scrapeEverySecond } from './lib/scrape-loop.js';
import { seed } from './lib/seed.js';
import { perfAvailable, SchedTrace, type ThreadClass } from './lib/sched-trace.js';
import { threadGroupsBetween, threadKind, threadSamples } from './lib/thread-cpu.js';
import { requireWrk, runWrk } from './lib/wrk.js';
import type { ProbeReport } from './lib/front-probe.js';
import { DEFAULT_METRICS_RENDER_NICE } from '../src/config.js';
import { POOL_THREAD_NICE_INCREMENT, ROUTINE_THREAD_NICE_INCREMENT } from '../src/engine/worker/priority.js';

const SERVER_CPU = process.env.BENCH_SERVER_CPU ?? '1';
const GENERATOR_CPU = process.env.BENCH_GENERATOR_CPU ?? '0';
const CONNECTIONS = 64;
const TENANTS = 5;
const PHASES = ['none', 'scrape', 'cycle', 'both'] as const;
/** The pool's two sets of threads, told apart from the render thread by their nice values. */
const POOL_NICES = [POOL_THREAD_NICE_INCREMENT, ROUTINE_THREAD_NICE_INCREMENT];
type Phase = (typeof PHASES)[number];

const flags = parseCli({
  usage: 'npm run bench:scrape-p99 -- [--rounds N] [--rules N] [--duration S] [--phases none,scrape,cycle,both] [--other <dist/>]',
  summary:
    'Route p99 at saturation (1,000 rules, service on one core) with no scrape and no cycle, scrapes only, the cycle only, and both; ' +
    "per run the CPU of the service's threads and the front thread's stalls (own work or preempted). --other interleaves another build.",
  options: {
    rounds: { type: 'string', default: '3' },
    rules: { type: 'string', default: '1000' },
    'outcomes-routed-only': { type: 'boolean' },
    duration: { type: 'string', default: '6' },
    phases: { type: 'string', default: PHASES.join(',') },
    quiet: { type: 'string', default: '3' },
    other: { type: 'string' },
    'other-node-args': { type: 'string' },
    sched: { type: 'boolean' },
    'max-foreign': { type: 'string' },
  },
  help: {
    rounds: 'rounds of every phase per build',
    rules: 'rules over the 5 tenants, every one of them given outcomes before the phases (1,000 as `npm run bench` measures; 100,000: what a cycle costs when all of them have traffic)',
    'outcomes-routed-only': "outcomes for the 200 routed rules only, as `npm run bench`'s outcome runs give them (with --rules 100000: its 100,000-rule route runs, cycles walking rules without traffic)",
    duration: 'seconds per run',
    phases: 'which phases to run (none, scrape, cycle, both)',
    quiet: 'quiet runs per service before any outcome',
    other: "another build's dist/ directory, interleaved with this one (with --other-node-args alone: this build again)",
    'other-node-args': "node flags for the other build's service, space-separated, given with = (--other-node-args=--single-threaded-gc): a V8 setting against none",
    'max-foreign': 'with --sched: leave runs in which other processes held the core longer than this many ms (while the front thread could run) out of the medians',
    sched: "also record the kernel's sched_switch events on the server's core (perf; root): the front thread's preemptions, charged to the service's own threads or other processes",
  },
  notes: 'Environment: BENCH_SERVER_CPU (1), BENCH_GENERATOR_CPU (0).',
});

interface Service {
  build: string;
  cycle: boolean;
  child: Child;
  probeOut: string;
  probeLines: number;
}

const r2 = (x: number) => Math.round(x * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readProbe(svc: Service): Promise<ProbeReport> {
  svc.child.proc.kill('SIGUSR2');
  for (let i = 0; i < 200; i++) {
    const lines = existsSync(svc.probeOut) ? readFileSync(svc.probeOut, 'utf8').trim().split('\n') : [];
    if (lines.length > svc.probeLines) {
      svc.probeLines = lines.length;
      return JSON.parse(lines[lines.length - 1]) as ProbeReport;
    }
    await sleep(10);
  }
  throw new Error('the probe did not answer');
}

async function main(): Promise<void> {
  requireWrk();
  if (flags.sched && !perfAvailable()) throw new Error('--sched needs perf (linux-perf) and the right to trace (root, or kernel.perf_event_paranoid ≤ 1)');
  const phases = flags.phases.split(',') as Phase[];
  for (const p of phases) if (!PHASES.includes(p)) throw new Error(`unknown phase ${p}`);
  const durationS = Number(flags.duration);
  const RULES = Number(flags.rules);
  const builds: [string, string][] = [['this', DIST]];
  if (flags.other !== undefined || flags['other-node-args'] !== undefined) builds.push(['other', resolve(flags.other ?? DIST)]);
  const nodeArgsOf = (build: string) => (build === 'other' ? (flags['other-node-args'] ?? '').split(' ').filter((a) => a !== '') : []);
  const work = mkdtempSync(join(tmpdir(), 'prp99-'));
  const seedDir = join(work, 'seed');
  const { tenants, rules } = await seed(seedDir, { rules: RULES, tenants: TENANTS });
  const routeReqs = routeRequests(sampleRules(rules), TENANTS);
  const outReqs = outcomeRequests(flags['outcomes-routed-only'] === true ? sampleRules(rules) : rules, TENANTS);
  const probe = join(DIST, 'bench/lib/front-probe.js');
  const services: Service[] = [];
  const stop = () => wakeAndStop(services.map((s) => s.child));
  stopChildrenOnSignals(() => services.map((s) => s.child)); // stopped between turns, in process groups of their own
  try {
    for (const [build, dist] of builds) {
      for (const cycle of [false, true]) {
        if (!phases.some((p) => (p === 'cycle' || p === 'both') === cycle)) continue;
        const dir = join(work, `${build}-${cycle ? 'cycle' : 'nocycle'}`);
        cpSync(seedDir, dir, { recursive: true });
        const probeOut = join(dir, 'probe.jsonl');
        const env: Record<string, string> = { SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: apiKeysFor(tenants), SERVICE_RATE_LIMIT_RPS: '0', PROBE_OUT: probeOut };
        if (!cycle) env.SERVICE_EVAL_INTERVAL_MS = '600000';
        const child = await startChild(join(dist, 'src/main.js'), env, 300_000, { cpus: SERVER_CPU, nodeArgs: [...nodeArgsOf(build), '--import', probe], ownProcessGroup: true });
        services.push({ build, cycle, child, probeOut, probeLines: 0 });
        child.proc.kill('SIGSTOP');
      }
    }
    const rows: Record<string, string | number>[] = [];
    const quiet = new Map<Service, number[]>();
    const measure = async (svc: Service, phase: string, round: number): Promise<Record<string, string | number>> => {
      const pid = svc.child.proc.pid!;
      let stopScrape = false;
      await readProbe(svc); // starts the probe's count afresh
      const before = threadSamples(pid);
      const trace = flags.sched ? new SchedTrace(SERVER_CPU) : null;
      await trace?.ready();
      const scraping = phase === 'scrape' || phase === 'both' ? scrapeEverySecond(svc.child.url, () => stopScrape) : Promise.resolve({ scrapes: 0, cpuMsPerScrape: 0 });
      const w = await runWrk({ url: svc.child.url, requests: routeReqs, durationS, connections: CONNECTIONS, cpus: GENERATOR_CPU });
      stopScrape = true;
      const { scrapes } = await scraping;
      const after = threadSamples(pid);
      const g = threadGroupsBetween(pid, before, after, POOL_NICES, DEFAULT_METRICS_RENDER_NICE);
      const p = await readProbe(svc);
      const base = after.find((t) => t.tid === pid)?.nice ?? 0;
      const classes = new Map<number, ThreadClass>(
        after.map((t) => {
          const kind = threadKind(t.nice, base, POOL_NICES, DEFAULT_METRICS_RENDER_NICE);
          return [t.tid, kind === 'other' ? 'helper' : kind];
        }),
      );
      const sp = trace === null ? null : await trace.stop(pid, (tid) => classes.get(tid));
      const sched: Record<string, string | number> =
        sp === null
          ? {}
          : {
              'foreign ms': Math.round(sp.byClass.foreign),
              'own preempt ms': Math.round(sp.ownMs),
              'own preempt max ms': r2(sp.ownMaxMs),
              'own preempts ≥1ms': sp.ownOver1Ms,
              'preempted by pool/render/helper/foreign ms': [sp.byClass.pool, sp.byClass.render, sp.byClass.helper, sp.byClass.foreign].map((x) => Math.round(x)).join('/'),
              'longest run pool/render/helper ms': [sp.longestRunMs.pool, sp.longestRunMs.render, sp.longestRunMs.helper].map(r2).join('/'),
              'runs ≥1ms pool/render/helper': [sp.runsOver1Ms.pool, sp.runsOver1Ms.render, sp.runsOver1Ms.helper].join('/'),
            };
      if (w.errors > 0 || w.non2xx > 0) throw new Error(`${phase}: ${w.non2xx} non-2xx, ${w.errors} errors`);
      const q = median(quiet.get(svc) ?? []);
      return {
        build: svc.build,
        round,
        phase,
        scrapes,
        'req/s': Math.round(w.rps),
        'p50 ms': r2(w.p50Ms),
        'p99 ms': r2(w.p99Ms),
        'p99/quiet': q == null ? '' : r2(w.p99Ms / q),
        // wrk waiting for its core counts into p99 (lib/measured-slice.ts); the scraper runs beside it
        'wrk held ms/s': Number.isNaN(w.generatorWaitS) ? '' : r2((w.generatorWaitS / w.durationS) * 1000),
        'front ms': Math.round(g.front),
        'pool ms': Math.round(g.pool),
        'render ms': Math.round(g.render),
        'other ms': Math.round(g.other),
        'other threads': g.others,
        preempted: g.frontPreempted,
        stalls: p.stalls,
        'stall ms': Math.round(p.stallMs),
        'own cpu in stalls ms': Math.round(p.stallCpuMs),
        'max gap ms': r2(p.maxGapMs),
        'max gap cpu ms': r2(p.maxGapCpuMs),
        ...sched,
        load1: r2(loadavg()[0]),
      };
    };
    for (const svc of services) {
      svc.child.proc.kill('SIGCONT');
      await runWrk({ url: svc.child.url, requests: routeReqs, durationS: 2, connections: CONNECTIONS, cpus: GENERATOR_CPU });
      const qs: number[] = [];
      for (let i = 1; i <= Number(flags.quiet); i++) {
        const row = await measure(svc, `quiet (${svc.cycle ? '5 s cycle' : 'no cycle'})`, 0);
        qs.push(Number(row['p99 ms']));
        rows.push(row);
        console.log(table([row]));
      }
      quiet.set(svc, qs);
      await runWrk({ url: svc.child.url, requests: outReqs, durationS: 3, connections: CONNECTIONS, cpus: GENERATOR_CPU });
      svc.child.proc.kill('SIGSTOP');
    }
    for (let round = 1; round <= Number(flags.rounds); round++) {
      const order = phases.map((_, i) => phases[(i + round - 1) % phases.length]);
      for (const phase of order) {
        for (const [build] of builds) {
          const cycle = phase === 'cycle' || phase === 'both';
          const svc = services.find((s) => s.build === build && s.cycle === cycle)!;
          svc.child.proc.kill('SIGCONT');
          await sleep(500);
          const row = await measure(svc, phase, round);
          svc.child.proc.kill('SIGSTOP');
          rows.push(row);
          console.log(table([row]));
        }
      }
    }
    console.log('\nAll runs:');
    console.log(table(rows));
    const keys = ['p99 ms', 'p99/quiet', 'req/s', 'front ms', 'pool ms', 'render ms', 'other ms', 'preempted', 'stalls', 'stall ms', 'own cpu in stalls ms', 'max gap ms'];
    if (flags.sched) keys.push('foreign ms', 'own preempt ms', 'own preempt max ms', 'own preempts ≥1ms');
    const summary = [...new Set(rows.map((r) => `${r.build}|${r.phase}`))].map((k) => {
      const [build, phase] = k.split('|');
      const maxForeign = flags['max-foreign'] === undefined ? Infinity : Number(flags['max-foreign']);
      const of = rows.filter((r) => r.build === build && r.phase === phase && !(Number(r['foreign ms']) > maxForeign));
      const out: Record<string, string | number> = { build, phase, runs: of.length };
      for (const key of keys) out[key] = r2(median(of.map((r) => Number(r[key])).filter((x) => Number.isFinite(x))) ?? NaN);
      return out;
    });
    console.log(`\nMedians (${RULES} rules, ${durationS} s runs, service on CPU ${SERVER_CPU}, wrk on CPU ${GENERATOR_CPU}):`);
    console.log(table(summary));
  } finally {
    await stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
