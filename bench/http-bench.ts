/**
 * `npm run bench`: the service's HTTP throughput against a bare uWebSockets.js server on the
 * same machine, measured so that the load generator is not the bottleneck.
 *
 * - Generator: wrk, one thread, pinned to one core (BENCH_GENERATOR_CPU, default 0), with this
 *   process (it scrapes /metrics/ too); the service and the bare uWS ceiling are pinned to the
 *   other (BENCH_SERVER_CPU, default 1) when `taskset` exists. wrk: `apt-get install -y wrk`.
 * - Per rule-set size (10, 1,000, 100,000 rules over 5 tenants, an API key per tenant):
 *   BENCH_ROUNDS (≥ 5) interleaved rounds of [ceiling, POST /v1/route, POST /v1/outcome],
 *   BENCH_DURATION_S each, taken in slices of BENCH_SLICE_S (default 1 s) in turn: ceiling,
 *   route, outcome, ceiling, route, outcome… A virtual machine's speed drifts by ±15% over a
 *   few seconds, so the ceiling is measured at most seconds from the route run it divides;
 *   each run's slices are pooled (requests over their time, CPU over their requests, p50 and
 *   p99 over all their requests: latency-quantiles.ts). A round's ratios are same-run ratios;
 *   the summary quotes their medians, server CPU per request (µs, all the server's threads)
 *   and the generator's CPU (share of its core: near 1.0 means the generator, not the server,
 *   set the pace).
 * - Rule-set sizes against each other: the first size's service stays up (idle) while the
 *   larger sizes run, and each of their rounds adds a route run on it ("reference"), slice by
 *   slice after their own: "route / route at <first> rules" is the median of those same-round
 *   ratios. (The machine's speed drifts by a fifth between sections minutes apart; the ceiling
 *   drifts with it.)
 * - Turns: each slice runs with every other server of the benchmark stopped (SIGSTOP) and the
 *   one it measures woken BENCH_SETTLE_MS (250) before it starts (lib/turn-taking.ts): an idle
 *   service's timers, cycles and collections took 3.5% of the ceiling's throughput.
 * - Disturbance: the CPU every other process on the machine used during each run is measured
 *   from /proc, and so is the time the hypervisor gave to other guests (steal, /proc/stat),
 *   summed over the run's slices. A round whose ceiling run saw more than
 *   BENCH_DISTURBED_CORES of both (default 0.15 of a core) is retried (up to
 *   BENCH_MAX_ATTEMPTS per round) and, if still disturbed, gets no ratio. So does a round
 *   whose ceiling run took more than 1.25× the CPU per request of the rule set's median
 *   ceiling run: the host slowed the machine without steal showing (same-run.ts). The
 *   1-minute load average is printed beside every run.
 * - The generator held off its core: wrk shares its core with this process and with whatever
 *   the machine runs there, and counts the time it waits for it into every answer in flight.
 *   Each slice reads the run-queue time of wrk's load thread (wrk.ts); a slice in which wrk
 *   waited longer than BENCH_GENERATOR_HELD of it (default 0.02) is taken again, up to
 *   BENCH_SLICE_ATTEMPTS times (default 3), for bare and the service alike
 *   (lib/measured-slice.ts says what it was seen to do to p99). Every run shows wrk's wait
 *   (ms per second) and how many of its slices were taken again. Of the scrape + cycle runs,
 *   the first (the cold one) is not taken again, since a second take would be warm; the
 *   three warm ones are.
 * - The generator's wake-ups: every run shows the kernel's part of the server's CPU per
 *   request and how many wake-up IPIs the generator's core received per request
 *   (lib/interrupts.ts). On a virtual machine whose idle vCPUs halt, a server that answers
 *   slower than wrk reads lets wrk sleep between answers, and each answer that wakes it costs
 *   the server an IPI: a cost of the set-up (a client on the same machine) that grows as the
 *   server slows, visible here instead of hidden in the ratio.
 * - Scrape and evaluation cycle (at BENCH_CYCLE_RULES, default 1,000 rules): route p99 in
 *   three runs before any outcome exists (the cycle has nothing to evaluate; a disturbed one
 *   is taken again and does not count), then again after an
 *   outcome was reported for every rule of every tenant, while /metrics/ is scraped every
 *   second and the default 5 s evaluation cycle evaluates them all. The first such run is
 *   shown apart ("cold"): it holds the JIT warm-up of the code that only the first outcomes,
 *   cycles and scrapes run (in the pool, the render thread and V8's compiler threads), as the
 *   route runs have their unreported warm-up. A disturbed scrape + cycle run gets no ratio,
 *   nor does one taken while the machine was slower than beside the quiet runs: bare uWS is
 *   measured for a slice before and after each of these runs, and a run whose slower
 *   neighbour took more than SLOW_CEILING_FACTOR × the quiet runs' median CPU per request is
 *   refused (lib/same-run.ts, slowdownBeside).
 * - Memory: the service's RSS at rest after loading and right after its full-speed runs.
 *
 *   npm run bench [-- --no-keys] [-- --profile] [-- --calibrate]
 *   BENCH_RULE_SIZES=10,1000,100000 BENCH_ROUNDS=5 BENCH_DURATION_S=5 BENCH_SLICE_S=1 BENCH_CONNECTIONS=64
 *
 * --no-keys runs the service without SERVICE_API_KEYS (development mode, no key lookup);
 * --profile starts the service with --cpu-prof (profiles under bench/results/profiles/);
 * --calibrate measures the method, not the service: two identical bare uWS servers through the
 * same rounds and slices, A against B. Their ratios should be 1: their spread from round to
 * round, and their median's distance from 1, are what a ratio of this machine can resolve.
 * Results: tables on the terminal and JSON under bench/results/.
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './lib/cli.js';
import { loadAverage1m, mostOthers } from './lib/cpu-usage.js';
import { table } from './lib/load.js';
import { GENERATOR_HELD_SHARE, measuredSlice, SLICE_ATTEMPTS, type Slice } from './lib/measured-slice.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { apiKeysFor, outcomeRequests, routeRequests, sampleRules, type BenchRequest } from './lib/requests.js';
import { median } from './lib/scenario-metrics.js';
import { GENERATOR_BOUND_CORE, SLOW_CEILING_FACTOR, loopShare, sameRunRatios, sizeRatios, slowdownBeside } from './lib/same-run.js';
import { scrapeEverySecond } from './lib/scrape-loop.js';
import { ruleSet, seed } from './lib/seed.js';
import { stopChildrenOnSignals, TurnTaking, wakeAndStop } from './lib/turn-taking.js';
import { HAVE_TASKSET, pinSelf, requireWrk, runWrk } from './lib/wrk.js';
import { pooledPercentileMs } from './lib/latency-quantiles.js';
import { describeHost, hostLine, type HostDescription } from './lib/host.js';
import { judgeTargets, setupCaveats, type CycleFigure, type SizeFigures } from './lib/targets.js';

const env = process.env;
const SIZES = (env.BENCH_RULE_SIZES ?? '10,1000,100000').split(',').map(Number);
const TENANTS = Number(env.BENCH_TENANTS ?? 5);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(env.BENCH_DURATION_S ?? 5);
/** A round's runs are taken in slices of this many seconds, in turn (wrk takes whole seconds). */
const SLICE_S = Number(env.BENCH_SLICE_S ?? 1);
const SLICES = Math.max(1, Math.round(DURATION_S / SLICE_S));
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 64);
const SERVER_CPU = env.BENCH_SERVER_CPU ?? '1';
const GENERATOR_CPU = env.BENCH_GENERATOR_CPU ?? '0';
const DISTURBED_CORES = Number(env.BENCH_DISTURBED_CORES ?? 0.15);
const MAX_ATTEMPTS = Number(env.BENCH_MAX_ATTEMPTS ?? 3);
const CYCLE_RULES = Number(env.BENCH_CYCLE_RULES ?? 1000);
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

const flags = parseCli({
  usage: 'npm run bench -- [--no-keys] [--profile] [--calibrate]',
  summary:
    'HTTP throughput of POST /v1/route and POST /v1/outcome against a bare uWebSockets.js ceiling in interleaved rounds: ' +
    'wrk pinned to one core, the server to the other; medians of same-run ratios, server CPU per request, generator CPU; ' +
    'route p99 while /metrics is scraped and cycles run; RSS. Tables on the terminal, JSON under bench/results/. ' +
    'Needs wrk (apt-get install -y wrk); takes several minutes.',
  options: { 'no-keys': { type: 'boolean' }, profile: { type: 'boolean' }, calibrate: { type: 'boolean' } },
  help: {
    calibrate: 'measure the method instead: two identical bare uWS servers through the same rounds and slices (their ratio should be 1; its spread is what a ratio can resolve here)',
    'no-keys': 'run the service without SERVICE_API_KEYS (development mode, no key lookup)',
    profile: 'start the service with --cpu-prof (profiles under bench/results/profiles/)',
  },
  notes:
    'Environment: BENCH_RULE_SIZES (10,1000,100000), BENCH_TENANTS (5), BENCH_ROUNDS (5), BENCH_DURATION_S (5), BENCH_SLICE_S (1), ' +
    'BENCH_CONNECTIONS (64), BENCH_SERVER_CPU (1), BENCH_GENERATOR_CPU (0), BENCH_DISTURBED_CORES (0.15), ' +
    'BENCH_MAX_ATTEMPTS (3), BENCH_GENERATOR_HELD (0.02), BENCH_SLICE_ATTEMPTS (3), BENCH_CYCLE_RULES (1000), BENCH_SETTLE_MS (250).',
});

interface Run {
  /** reference: POST /v1/route on the smallest rule set's service, run beside a larger one (sizeRatios). */
  target: 'ceiling' | 'route' | 'outcome' | 'reference';
  rules: number;
  round: number;
  /** The wrk runs (slices) this run is made of, pooled: requests over their time, percentiles over all their requests. */
  slices: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** The generator's share of its core. */
  generatorCore: number;
  serverUsPerReq: number;
  /** The kernel's part of serverUsPerReq. */
  serverKernelUsPerReq: number;
  /** Wake-up IPIs the generator's core received per request (lib/interrupts.ts: what waking an idle wrk costs the server); NaN where unknown. */
  generatorWakeUpsPerReq: number;
  othersCores: number;
  /** The other processes that used the most of othersCores, by name ('' when none used 5 ms). */
  othersMost: string;
  /** Cores' worth of time the hypervisor gave to other guests during the run (/proc/stat steal). */
  stealCores: number;
  /** ms per second of the run that wrk's load thread waited for its core (the slices kept); NaN where unknown. */
  generatorWaitMsPerS: number;
  /** Takes of its slices refused because wrk was held off its core (lib/measured-slice.ts). */
  slicesTakenAgain: number;
  /** Its slices in which wrk was still held when the attempts ran out. */
  slicesHeld: number;
  load1: number;
  disturbed: boolean;
}

/** Children still running, stopped if the benchmark fails half-way. */
const live = new Set<Child>();
/** Each slice runs with every other child stopped (lib/turn-taking.ts says why). */
const turns = new TurnTaking();
stopChildrenOnSignals(() => live);

/** Stops a child for good (woken first if a slice had stopped it). */
async function stopChild(c: Child): Promise<void> {
  turns.release(c);
  await c.stop();
}
async function started(c: Promise<Child>): Promise<Child> {
  const child = await c;
  live.add(child);
  child.proc.once('exit', () => live.delete(child));
  return child;
}

const r2 = (x: number) => Math.round(x * 100) / 100;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * One wrk run against `server`, with its CPU and everybody else's accounted; taken again (up to
 * `attempts` times) while wrk was held off its core.
 */
async function slice(target: Run['target'], server: Child, url: string, reqs: readonly BenchRequest[], durationS: number, attempts = SLICE_ATTEMPTS): Promise<Slice> {
  await turns.only(server, live);
  return measuredSlice({ label: target, pid: server.proc.pid!, url, requests: reqs, durationS, connections: CONNECTIONS, generatorCpu: GENERATOR_CPU, attempts });
}

/** Slices of one target pooled into a run: sums over their time, percentiles over all their requests. */
function pooled(target: Run['target'], rules: number, round: number, slices: readonly Slice[]): Run {
  const sum = (f: (s: Slice) => number) => slices.reduce((a, s) => a + f(s), 0);
  const seconds = sum((s) => s.wrk.durationS);
  const requests = sum((s) => s.wrk.requests);
  const others = sum((s) => s.othersCpuS) / seconds;
  const steal = sum((s) => s.stealS) / seconds;
  const latencies = slices.map((s) => s.wrk.latency);
  return {
    target,
    rules,
    round,
    slices: slices.length,
    rps: requests / seconds,
    p50Ms: pooledPercentileMs(latencies, 50),
    p99Ms: pooledPercentileMs(latencies, 99),
    generatorCore: sum((s) => s.wrk.generatorCpuS) / seconds,
    serverUsPerReq: (sum((s) => s.serverCpuS) / requests) * 1e6,
    serverKernelUsPerReq: (sum((s) => s.serverKernelCpuS) / requests) * 1e6,
    generatorWakeUpsPerReq: sum((s) => s.generatorWakeUps) / requests,
    othersCores: others,
    othersMost: mostOthers(slices.flatMap((s) => s.others)),
    stealCores: steal,
    generatorWaitMsPerS: (sum((s) => s.wrk.generatorWaitS) / seconds) * 1000,
    slicesTakenAgain: sum((s) => s.refusedWaitsS.length),
    slicesHeld: slices.filter((s) => s.held).length,
    load1: loadAverage1m(),
    disturbed: others + steal > DISTURBED_CORES,
  };
}

/** One run of `durationS` in one piece (the quiet runs, and the scrape and cycle phases with `attempts` 1). */
async function measure(target: Run['target'], server: Child, url: string, reqs: readonly BenchRequest[], rules: number, round: number, durationS: number, attempts = SLICE_ATTEMPTS): Promise<Run> {
  return pooled(target, rules, round, [await slice(target, server, url, reqs, durationS, attempts)]);
}

/** Median wake-ups of the generator per request, bare then route ('' where /proc/interrupts tells nothing). */
function wakeUpsColumn(runs: readonly Run[]): string {
  const of = (t: Run['target']) => median(runs.filter((r) => r.target === t && !Number.isNaN(r.generatorWakeUpsPerReq)).map((r) => r.generatorWakeUpsPerReq));
  const bare = of('ceiling');
  const route = of('route');
  return bare === null || route === null ? '' : `${r3(bare)} / ${r3(route)}`;
}

/** wrk's wait for its core in a run, ms a second ('' where it could not be read). */
const heldCell = (r: Run): number | string => (Number.isNaN(r.generatorWaitMsPerS) ? '' : r2(r.generatorWaitMsPerS));
/** A run's slices taken again, and how many were still held after their last take. */
const takenAgainCell = (r: Run): number | string => (r.slicesHeld > 0 ? `${r.slicesTakenAgain} (${r.slicesHeld} still held)` : r.slicesTakenAgain);

/**
 * What a run cost the server and the generator: the server's CPU per request (all its threads)
 * with the kernel's part, wrk's wake-ups per request and its share of its core. Beside a p99
 * they tell a host's slow phase (bare-like costs, more wake-ups, wrk idle) from work of the
 * service's own (its CPU per request up).
 */
const costCells = (r: Run) => ({
  'server µs/req': r2(r.serverUsPerReq),
  'of which kernel': r2(r.serverKernelUsPerReq),
  'wrk wake-ups/req': Number.isNaN(r.generatorWakeUpsPerReq) ? '' : r3(r.generatorWakeUpsPerReq),
  'wrk core': r2(r.generatorCore),
});

const runRow = (r: Run) => ({
  rules: r.rules,
  round: r.round,
  run: r.target,
  'req/s': Math.round(r.rps),
  'p50 ms': r2(r.p50Ms),
  'p99 ms': r2(r.p99Ms),
  slices: r.slices,
  ...costCells(r),
  'wrk held ms/s': heldCell(r),
  'slices taken again': takenAgainCell(r),
  'others cores': r2(r.othersCores),
  'steal cores': r2(r.stealCores),
  load1: r2(r.load1),
  disturbed: r.disturbed ? 'yes' : '',
  'others, most CPU': r.othersMost,
});

/**
 * What every mode needs first: wrk, whole-second slices, this process pinned with the
 * generator; returns (and prints) the host the figures come from.
 */
function prepare(): HostDescription {
  requireWrk();
  if (!Number.isInteger(SLICE_S) || SLICE_S < 1) throw new Error(`BENCH_SLICE_S must be a whole number of seconds ≥ 1 (wrk's -d), not ${env.BENCH_SLICE_S}`);
  if (!HAVE_TASKSET) console.warn('taskset not found: generator and server are not pinned; the figures include their contention');
  pinSelf(GENERATOR_CPU); // this process scrapes /metrics/ too: with the generator, off the server's core
  const host = describeHost();
  console.log(hostLine(host));
  return host;
}

async function main(): Promise<void> {
  const host = prepare();
  const keysMode = !flags['no-keys'];
  const runs: Run[] = [];
  const summary: Record<string, string | number>[] = [];
  const memory: { rules: number; 'rss at rest MB': number; 'rss after load MB': number }[] = [];
  const cycleRows: Record<string, string | number>[] = [];
  const profileDir = join(RESULTS, 'profiles');
  // The first size's service stays up (idle) while the larger sizes run, and every round of theirs
  // routes on it too, right after their own route run: throughput at N rules over the first size,
  // same-run, instead of comparing sections minutes apart on a machine whose speed drifts.
  let reference: { svc: Child; reqs: BenchRequest[]; size: number; dir: string } | null = null;
  for (const size of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'prbench-'));
    const tenantsN = Math.min(TENANTS, size);
    const { tenants, rules } = await seed(dir, { rules: size, tenants: tenantsN });
    const sample = sampleRules(rules);
    const svcEnv: Record<string, string> = { SERVICE_DATA_DIR: dir };
    // The default configuration; SERVICE_RATE_LIMIT_RPS=0 (the default: rate limits are opt-in
    // per tenant) is spelled out so that a value in the caller's shell does not leak in.
    if (keysMode) Object.assign(svcEnv, { SERVICE_API_KEYS: apiKeysFor(tenants), SERVICE_RATE_LIMIT_RPS: '0' });
    const nodeArgs = flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    const svc = await started(startChild(join(DIST, 'src/main.js'), svcEnv, 300_000, { cpus: SERVER_CPU, nodeArgs, ownProcessGroup: true }));
    const rest = svc.rssMb();
    const routeReqs = keysMode ? routeRequests(sample, tenantsN) : routeRequests(sample, 1).map((q) => ({ ...q, headers: {} }));
    const outReqs = outcomeRequests(sample.slice(0, 50), 1).map((q, i) => ({ ...q, headers: keysMode ? { 'x-api-key': `key${i % tenantsN}` } : ({} as Record<string, string>) }));
    const probe = await fetch(svc.url + '/v1/route', { method: 'POST', headers: { 'content-type': 'application/json', ...routeReqs[0].headers }, body: routeReqs[0].body });
    const sampleBody = await probe.text();
    if (probe.status !== 200) throw new Error(`route probe failed: ${probe.status} ${sampleBody}`);
    const bare = await started(startChild(join(DIST, 'bench/bare-uws.js'), { BARE_BODY: sampleBody }, 30_000, { cpus: SERVER_CPU, ownProcessGroup: true }));

    // Warm-up (JIT, connection set-up); not reported.
    await runWrk({ url: bare.url, requests: routeReqs, durationS: 2, connections: CONNECTIONS, cpus: GENERATOR_CPU });
    await runWrk({ url: svc.url, requests: routeReqs, durationS: 2, connections: CONNECTIONS, cpus: GENERATOR_CPU });

    const quietP99: number[] = [];
    // The machine's speed beside the quiet runs and each scrape + cycle run: bare uWS's CPU per
    // request in a slice before and after each (slowdownBeside says why).
    const ceilingCost = async (): Promise<number> => pooled('ceiling', size, 0, [await slice('ceiling', bare, bare.url, routeReqs, SLICE_S)]).serverUsPerReq;
    const ceilingBesideQuiet: number[] = [];
    if (size === CYCLE_RULES) {
      ceilingBesideQuiet.push(await ceilingCost());
      for (let i = 1; i <= 3; i++) {
        // A quiet run that other processes or the hypervisor disturbed is taken again (it would
        // raise the quiet p99 the scrape + cycle runs are divided by, flattering them).
        for (let attempt = 1; ; attempt++) {
          const q = await measure('route', svc, svc.url, routeReqs, size, -i, DURATION_S);
          const after = await ceilingCost();
          ceilingBesideQuiet.push(after);
          cycleRows.push({ rules: size, phase: 'quiet (no outcomes, no scrape)', ...pick(q), 'bare µs/req after': r2(after), disturbed: q.disturbed ? 'yes' : '' });
          if (!q.disturbed) quietP99.push(q.p99Ms);
          if (!q.disturbed || attempt >= MAX_ATTEMPTS) break;
        }
      }
    }

    for (let round = 1; round <= ROUNDS; round++) {
      let got: Run[] = [];
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        // The round's runs cut into slices and taken in turn, slice by slice: the host's speed
        // drifts by ±15% over seconds here, and a ceiling measured seconds before its route run
        // divided that drift into the ratio.
        const parts = { ceiling: [] as Slice[], route: [] as Slice[], outcome: [] as Slice[], reference: [] as Slice[] };
        for (let s = 0; s < SLICES; s++) {
          parts.ceiling.push(await slice('ceiling', bare, bare.url, routeReqs, SLICE_S));
          parts.route.push(await slice('route', svc, svc.url, routeReqs, SLICE_S));
          parts.outcome.push(await slice('outcome', svc, svc.url, outReqs, SLICE_S));
          if (reference !== null) parts.reference.push(await slice('reference', reference.svc, reference.svc.url, reference.reqs, SLICE_S));
        }
        got = [pooled('ceiling', size, round, parts.ceiling), pooled('route', size, round, parts.route), pooled('outcome', size, round, parts.outcome)];
        if (reference !== null) got.push(pooled('reference', size, round, parts.reference));
        if (!got[0].disturbed) break;
        if (attempt < MAX_ATTEMPTS) runs.push(...got); // kept in the JSON, marked disturbed
      }
      runs.push(...got);
      console.log(table(got.map(runRow)));
    }
    const rss = svc.rssMb();

    if (size === CYCLE_RULES) {
      // Every rule of every tenant gets outcomes, so each cycle evaluates them all.
      await turns.only(svc, live); // the last slice may have been another server's
      await runWrk({ url: svc.url, requests: keysMode ? outcomeRequests(rules, tenantsN) : outcomeRequests(rules, 1).map((q) => ({ ...q, headers: {} })), durationS: 3, connections: CONNECTIONS, cpus: GENERATOR_CPU });
      let before = await ceilingCost();
      for (let i = 0; i <= 3; i++) {
        let stop = false;
        const scraping = scrapeEverySecond(svc.url, () => stop);
        // The cold run is taken once (a second take would be warm); a warm one in which wrk was
        // held off its core is taken again like every other run, scrapes and cycles going on.
        const q = await measure('route', svc, svc.url, routeReqs, size, -10 - i, Math.max(DURATION_S, 6), i === 0 ? 1 : SLICE_ATTEMPTS);
        stop = true;
        const { scrapes, cpuMsPerScrape } = await scraping;
        const after = await ceilingCost();
        const slowdown = slowdownBeside([before, after], ceilingBesideQuiet);
        before = after;
        const phase = `scrape every 1 s (${scrapes}) + 5 s evaluation cycle${i === 0 ? ' (cold: the first run)' : ''}`;
        // No ratio for a disturbed run (retried neither for other processes' CPU nor, the cold
        // one, for wrk's wait), nor without an undisturbed quiet run, nor for one taken while the
        // machine ran slower than beside the quiet runs (as a round whose ceiling ran slowed).
        const ratio = q.disturbed
          ? 'refused: disturbed'
          : quietP99.length === 0
            ? 'refused: every quiet run disturbed'
            : slowdown > SLOW_CEILING_FACTOR
              ? `refused: the machine slowed (bare uWS at ${r2(slowdown)}× its CPU per request beside the quiet runs)`
              : r2(q.p99Ms / median(quietP99)!);
        cycleRows.push({ rules: size, phase, ...pick(q), 'bare µs/req after': r2(after), 'machine × quiet': Number.isNaN(slowdown) ? '' : r2(slowdown), disturbed: q.disturbed ? 'yes' : '', 'p99 / quiet median': ratio, 'scraper ms/scrape': r2(cpuMsPerScrape) });
      }
    }

    const sizeRuns = runs.filter((r) => r.rules === size && r.round > 0);
    const rounds = [...new Set(sizeRuns.map((r) => r.round))];
    // Per round, the attempt that counted (the last one).
    const perAttempt = reference === null ? 3 : 4;
    const counted = rounds.map((round) => sizeRuns.filter((r) => r.round === round).slice(-perAttempt));
    const ratios = sameRunRatios(counted.map(([ceiling, route, outcome]) => ({ ceiling, route, outcome })), CONNECTIONS);
    const bySize = reference === null ? [] : sizeRatios(counted.map(([, route, , ref]) => ({ route, reference: ref })));
    const refused = ratios.refused;
    const med = (xs: number[]) => (xs.length > 0 ? r3(median(xs)!) : 'refused: every ceiling run disturbed');
    const medOf = (t: Run['target'], f: (r: Run) => number) => r2(median(counted.flat().filter((r) => r.target === t).map(f))!);
    summary.push({
      rules: size,
      mode: keysMode ? 'API key' : 'no keys',
      'rounds counted': `${ratios.route.length}/${rounds.length}`,
      'route / bare': med(ratios.route),
      'outcome / bare': med(ratios.outcome),
      'route p99 / bare p99': med(ratios.p99),
      'route p50 / bare p50': med(ratios.p50),
      'p99 / p50, route / bare': `${med(ratios.routeTail)} / ${med(ratios.ceilingTail)}`,
      'p50 / loop, bare / route': `${med(ratios.ceilingLoopShare)} / ${med(ratios.routeLoopShare)}`,
      'route / bare by CPU': med(ratios.routeByCpu),
      [`route / route at ${SIZES[0]} rules`]: reference === null ? '' : bySize.length > 0 ? r3(median(bySize)!) : 'refused: every run disturbed',
      'bare req/s': medOf('ceiling', (r) => r.rps),
      'route req/s': medOf('route', (r) => r.rps),
      'outcome req/s': medOf('outcome', (r) => r.rps),
      'bare µs/req': medOf('ceiling', (r) => r.serverUsPerReq),
      'route µs/req': medOf('route', (r) => r.serverUsPerReq),
      'outcome µs/req': medOf('outcome', (r) => r.serverUsPerReq),
      'kernel µs/req, bare / route': `${medOf('ceiling', (r) => r.serverKernelUsPerReq)} / ${medOf('route', (r) => r.serverKernelUsPerReq)}`,
      'wrk wake-ups/req, bare / route': wakeUpsColumn(counted.flat()),
      'wrk core (bare)': medOf('ceiling', (r) => r.generatorCore),
      'load1': medOf('ceiling', (r) => r.load1),
    });
    if (refused > ratios.slowed) console.log(`${size} rules: ${refused - ratios.slowed} round(s) refused (ceiling run disturbed by other processes)`);
    if (ratios.slowed > 0) {
      console.log(`${size} rules: ${ratios.slowed} round(s) refused (the machine slowed: the bare server took more than ${SLOW_CEILING_FACTOR}× the CPU per request of this rule set's median ceiling run)`);
    }
    const retaken = counted.flat().reduce((a, r) => a + r.slicesTakenAgain, 0);
    const held = counted.flat().reduce((a, r) => a + r.slicesHeld, 0);
    if (retaken > 0 || held > 0) {
      console.log(
        `${size} rules: ${retaken} slice(s) of the counted rounds taken again, wrk having waited for its core more than ${GENERATOR_HELD_SHARE} of the slice` +
          (held > 0 ? `; ${held} still so after ${SLICE_ATTEMPTS} takes (kept, and marked in the runs' table)` : ''),
      );
    }
    if (ratios.generatorBound > 0) {
      console.log(
        `${size} rules: in ${ratios.generatorBound} of ${ratios.route.length} counted round(s) wrk used ≥ ${GENERATOR_BOUND_CORE} of its core in the ceiling run: ` +
          "the bare figure is partly the generator's limit, so 'route / bare' flatters the service; 'route / bare by CPU' (server CPU per request) does not depend on it. " +
          `Its latency is flattered too: bare's p50 covered ${med(ratios.ceilingLoopShare)} of a connection's loop (${CONNECTIONS} / req/s) against the route's ${med(ratios.routeLoopShare)}, ` +
          "the rest of bare's loop waiting inside wrk, off its latency clock, so 'route p99 / bare p99' is set against the service",
      );
    }
    memory.push({ rules: size, 'rss at rest MB': Math.round(rest), 'rss after load MB': Math.round(Math.max(rss, svc.rssMb())) });
    await stopChild(bare);
    if (reference === null && SIZES.length > 1) reference = { svc, reqs: routeReqs, size, dir };
    else {
      await stopChild(svc);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (reference !== null) {
    await stopChild(reference.svc);
    rmSync(reference.dir, { recursive: true, force: true });
  }
  console.log('\nSame-run ratios (medians over the counted rounds):');
  console.log(table(summary));
  if (cycleRows.length > 0) {
    console.log('\nRoute p99 with a /metrics/ scrape and evaluation cycles during the run:');
    console.log(table(cycleRows));
  }
  console.log('\nService RSS:');
  console.log(table(memory));
  const targets = judgeTargets(
    summary.map((s): SizeFigures => ({ rules: s.rules as number, 'route / bare': s['route / bare'], 'outcome / bare': s['outcome / bare'], 'route p99 / bare p99': s['route p99 / bare p99'], sizeRatio: s[`route / route at ${SIZES[0]} rules`] })),
    cycleRows.map((c): CycleFigure => ({ phase: String(c.phase), 'p99 / quiet median': c['p99 / quiet median'] })),
    memory,
  );
  const caveats = setupCaveats({ keysMode, rounds: ROUNDS, connections: CONNECTIONS });
  console.log("\nIssue 20's targets, judged from this run's figures:");
  console.log(table(targets.map((t) => ({ target: t.target, verdict: t.verdict, figures: t.figures }))));
  for (const c of caveats) console.log(`not the targets' set-up: ${c}`);
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `http-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const settings = { sizes: SIZES, tenants: TENANTS, rounds: ROUNDS, durationS: DURATION_S, sliceS: SLICE_S, slices: SLICES, connections: CONNECTIONS, serverCpu: SERVER_CPU, generatorCpu: GENERATOR_CPU, disturbedCores: DISTURBED_CORES, generatorHeld: GENERATOR_HELD_SHARE, sliceAttempts: SLICE_ATTEMPTS, keysMode, taskset: HAVE_TASKSET };
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), host, settings, summary, targets, targetCaveats: caveats, cycle: cycleRows, memory, runs: runs.map(runRow) }, null, 2));
  console.log(`results: ${file}`);
}

function pick(r: Run): Record<string, number | string> {
  return {
    'req/s': Math.round(r.rps),
    'p50 ms': r2(r.p50Ms),
    'p99 ms': r2(r.p99Ms),
    // The quiet value is flattered as bare's p99 is where the quiet route ran at wrk's pace (a
    // share near 0.5: half of each connection's loop waits inside wrk, off its latency clock).
    'p50 / loop': r3(loopShare(r, CONNECTIONS)),
    ...costCells(r),
    'wrk held ms/s': heldCell(r),
    'taken again': takenAgainCell(r),
    'others cores': r2(r.othersCores),
    'steal cores': r2(r.stealCores),
    load1: r2(r.load1),
    'others, most CPU': r.othersMost,
  };
}

/** --calibrate: the ceiling against itself, in the rounds and slices of the real runs. */
async function calibrate(): Promise<void> {
  const body = JSON.stringify({ processor_id: 'p1', weight: 0.9, fallback_processor_id: 'p2', decision_source: 'rules', failure_probability: null, rule_id: 'r000001' });
  const host = prepare();
  const reqs = routeRequests(sampleRules(ruleSet(1000)), 1);
  const a = await started(startChild(join(DIST, 'bench/bare-uws.js'), { BARE_BODY: body }, 30_000, { cpus: SERVER_CPU, ownProcessGroup: true }));
  const b = await started(startChild(join(DIST, 'bench/bare-uws.js'), { BARE_BODY: body }, 30_000, { cpus: SERVER_CPU, ownProcessGroup: true }));
  for (const s of [a, b]) await runWrk({ url: s.url, requests: reqs, durationS: 2, connections: CONNECTIONS, cpus: GENERATOR_CPU });
  const rows: Record<string, string | number>[] = [];
  const ratios = { rps: [] as number[], cpu: [] as number[], p99: [] as number[] };
  for (let round = 1; round <= ROUNDS; round++) {
    const parts = { a: [] as Slice[], b: [] as Slice[] };
    for (let i = 0; i < SLICES; i++) {
      parts.a.push(await slice('ceiling', a, a.url, reqs, SLICE_S));
      parts.b.push(await slice('ceiling', b, b.url, reqs, SLICE_S));
    }
    const [ra, rb] = [pooled('ceiling', 0, round, parts.a), pooled('ceiling', 0, round, parts.b)];
    ratios.rps.push(rb.rps / ra.rps);
    ratios.cpu.push(ra.serverUsPerReq / rb.serverUsPerReq);
    ratios.p99.push(rb.p99Ms / ra.p99Ms);
    rows.push({ round, 'A req/s': Math.round(ra.rps), 'B req/s': Math.round(rb.rps), 'B / A': r3(rb.rps / ra.rps), 'B / A by CPU': r3(ra.serverUsPerReq / rb.serverUsPerReq), 'p99 B / A': r2(rb.p99Ms / ra.p99Ms), 'wrk core (A)': r2(ra.generatorCore), 'wrk held ms/s, A / B': `${heldCell(ra)} / ${heldCell(rb)}`, 'slices taken again': ra.slicesTakenAgain + rb.slicesTakenAgain, 'slices still held': ra.slicesHeld + rb.slicesHeld, disturbed: ra.disturbed || rb.disturbed ? 'yes' : '' });
    console.log(table([rows[rows.length - 1]]));
  }
  await stopChild(a);
  await stopChild(b);
  const spread = (xs: number[]) => `${r3(Math.min(...xs))}-${r3(Math.max(...xs))}`;
  const summary = [
    { figure: 'req/s, B / A', median: r3(median(ratios.rps)!), 'range of rounds': spread(ratios.rps) },
    { figure: 'by CPU, B / A', median: r3(median(ratios.cpu)!), 'range of rounds': spread(ratios.cpu) },
    { figure: 'p99, B / A', median: r3(median(ratios.p99)!), 'range of rounds': spread(ratios.p99) },
  ];
  console.log(`\nThe method against itself (${ROUNDS} rounds of ${SLICES} slices of ${SLICE_S} s; identical servers, so every ratio should be 1):`);
  console.log(table(summary));
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `calibrate-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), host, settings: { rounds: ROUNDS, slices: SLICES, sliceS: SLICE_S, connections: CONNECTIONS }, summary, rounds: rows }, null, 2));
  console.log(`results: ${file}`);
}

(flags.calibrate ? calibrate() : main()).catch(async (e) => {
  console.error(e);
  await wakeAndStop(live);
  process.exit(1);
});
