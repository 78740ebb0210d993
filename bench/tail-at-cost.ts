/**
 * `npm run bench:tail`: is the route's latency tail its own, or what any server at its cost
 * per request would show? The route path, bare uWS (the ceiling of `npm run bench`) and bare
 * uWS slowed by BENCH_TAIL_SPIN_US of busy CPU per request (bare-uws.ts's BARE_SPIN_US: none
 * of the service's code, collections or timers) take 1 s turns under the same wrk load, pinned
 * like `npm run bench` (wrk on core 0, the servers on core 1, each slice with the others
 * stopped). Each server's slices are pooled: its CPU per request and its percentiles.
 * As in `npm run bench`, the service also takes outcome turns (its own row), so that its 5 s
 * evaluation cycles have windows to evaluate during the route's turns; BENCH_TAIL_OUTCOMES=0
 * leaves them out (routes only: the cycles find nothing to do).
 *
 * Why (issue 20's thirty-third pass): with 64 connections in a closed loop, a server slower
 * than the generator is the bottleneck; its answers then wait their turn behind the requests
 * read before them, so its p50 is ~64 × its time per request and its p99 a multiple of that,
 * while the ceiling, as fast as wrk, answers as soon as a request lands. If a slowed bare
 * server at the route's CPU per request has the route's p99, the route's tail is its cost per
 * request, not its pauses. Each row's `p50 / loop` (same-run.ts, loopShare) is how much of a
 * connection's loop wrk's latency clock saw: near 1 for a server slower than wrk (its queue is
 * on the clock), about half for one at wrk's pace (its answers wait inside wrk, off the clock).
 *   BENCH_TAIL_SPIN_US (2,4,6), BENCH_TAIL_SLICES (8), BENCH_TAIL_OUTCOMES (1), BENCH_PROFILE_RULES (1000),
 *   BENCH_TENANTS (5), BENCH_SERVER_CPU (1), BENCH_GENERATOR_CPU (0); a slice in which wrk waited for
 *   its core longer than BENCH_GENERATOR_HELD (0.02) of it is taken again, up to BENCH_SLICE_ATTEMPTS
 *   (3) times, for every server alike (lib/measured-slice.ts).
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './lib/cli.js';
import { pooledPercentileMs, type LatencyQuantiles } from './lib/latency-quantiles.js';
import { table } from './lib/load.js';
import { measuredSlice } from './lib/measured-slice.js';
import { loopShare } from './lib/same-run.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { apiKeysFor, hotPathRequests, type BenchRequest } from './lib/requests.js';
import { seed } from './lib/seed.js';
import { stopChildrenOnSignals, TurnTaking, wakeAndStop } from './lib/turn-taking.js';
import { pinSelf, requireWrk, runWrk } from './lib/wrk.js';

parseCli({
  usage: 'npm run bench:tail',
  summary:
    "The route's latency beside bare uWS and bare uWS slowed by busy CPU a request, by turns under the same wrk load " +
    '(wrk pinned to one core, the servers to the other): for each, CPU per request (and its kernel part), wrk wake-ups per ' +
    "request, req/s, p50 / p90 / p99 / p99.9, p50 over a connection's loop and p99 over bare's. Whether the route's tail is its own or what any server at " +
    'its cost shows. Table on the terminal, JSON under bench/results/. Needs wrk (apt-get install -y wrk); about a minute.',
  options: {},
  help: {},
  notes:
    'Environment: BENCH_TAIL_SPIN_US (2,4,6: µs of busy CPU per request for each slowed bare server), BENCH_TAIL_SLICES (8), ' +
    'BENCH_TAIL_OUTCOMES (1; 0: no outcome turns), BENCH_PROFILE_RULES (1000), BENCH_TENANTS (5), BENCH_SERVER_CPU (1), BENCH_GENERATOR_CPU (0), ' +
    'BENCH_GENERATOR_HELD (0.02: a slice in which wrk waited for its core longer than this share of it is taken again), BENCH_SLICE_ATTEMPTS (3).',
});

const env = process.env;
const SPINS_US = (env.BENCH_TAIL_SPIN_US ?? '2,4,6').split(',').map(Number);
const SLICES = Number(env.BENCH_TAIL_SLICES ?? 8);
const OUTCOMES = env.BENCH_TAIL_OUTCOMES !== '0';
const RULES = Number(env.BENCH_PROFILE_RULES ?? 1000);
const TENANTS = Number(env.BENCH_TENANTS ?? 5);
const SERVER_CPU = env.BENCH_SERVER_CPU ?? '1';
const GENERATOR_CPU = env.BENCH_GENERATOR_CPU ?? '0';
const CONNECTIONS = 64;
const PERCENTILES = [50, 90, 99, 99.9] as const;
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

/** One row: a server and what it is sent (the service has two, route and outcome). */
interface Server {
  name: string;
  child: Child;
  reqs: readonly BenchRequest[];
  requests: number;
  seconds: number;
  cpuS: number;
  /** The kernel's part of cpuS, and the wake-up IPIs wrk's core received meanwhile (NaN where unknown). */
  kernelS: number;
  wrkWakeUps: number;
  /** CPU every other process used during its turns (a busy neighbour shows here, not as a refused turn). */
  othersS: number;
  latencies: LatencyQuantiles[];
}

const r2 = (x: number) => Math.round(x * 100) / 100;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  requireWrk();
  if (SPINS_US.some((s) => !(s > 0))) throw new Error(`BENCH_TAIL_SPIN_US must be positive µs, comma-separated, not ${env.BENCH_TAIL_SPIN_US}`);
  pinSelf(GENERATOR_CPU);
  const dir = mkdtempSync(join(tmpdir(), 'prbench-'));
  const servers: Server[] = [];
  const turns = new TurnTaking();
  stopChildrenOnSignals(() => new Set(servers.map((s) => s.child)));
  const add = (name: string, child: Child, reqs: readonly BenchRequest[]) => servers.push({ name, child, reqs, requests: 0, seconds: 0, cpuS: 0, kernelS: 0, wrkWakeUps: 0, othersS: 0, latencies: [] });
  try {
    const { tenants, rules } = await seed(dir, { rules: RULES, tenants: Math.min(TENANTS, RULES) });
    const { route: reqs, outcome } = hotPathRequests(rules, tenants.length);
    const svcEnv = { SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: apiKeysFor(tenants), SERVICE_RATE_LIMIT_RPS: '0' };
    const svc = await startChild(join(DIST, 'src/main.js'), svcEnv, 300_000, { cpus: SERVER_CPU, ownProcessGroup: true });
    add('route', svc, reqs);
    if (OUTCOMES) add('outcome', svc, outcome);
    const probe = await fetch(svc.url + '/v1/route', { method: 'POST', headers: { 'content-type': 'application/json', ...reqs[0].headers }, body: reqs[0].body });
    const sampleBody = await probe.text();
    if (probe.status !== 200) throw new Error(`route probe failed: ${probe.status} ${sampleBody}`);
    const bare = (spinUs: number) => startChild(join(DIST, 'bench/bare-uws.js'), { BARE_BODY: sampleBody, BARE_SPIN_US: String(spinUs) }, 30_000, { cpus: SERVER_CPU, ownProcessGroup: true });
    add('bare', await bare(0), reqs);
    for (const s of SPINS_US) add(`bare + ${s} µs`, await bare(s), reqs);
    const all = [...new Set(servers.map((s) => s.child))];
    for (const s of servers) {
      await turns.only(s.child, all);
      await runWrk({ url: s.child.url, requests: s.reqs, durationS: 2, connections: CONNECTIONS, cpus: GENERATOR_CPU }); // JIT, connections; not counted
    }
    for (let i = 0; i < SLICES; i++) {
      // Each round in the other order from the one before: a drift of the host's speed falls on all alike.
      const order = i % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        await turns.only(s.child, all);
        const m = await measuredSlice({ label: s.name, pid: s.child.proc.pid!, url: s.child.url, requests: s.reqs, durationS: 1, connections: CONNECTIONS, generatorCpu: GENERATOR_CPU });
        s.cpuS += m.serverCpuS;
        s.kernelS += m.serverKernelCpuS;
        s.wrkWakeUps += m.generatorWakeUps;
        s.othersS += m.othersCpuS;
        s.requests += m.wrk.requests;
        s.seconds += m.wrk.durationS;
        s.latencies.push(m.wrk.latency);
      }
    }
  } finally {
    await wakeAndStop(new Set(servers.map((s) => s.child)));
    rmSync(dir, { recursive: true, force: true });
  }
  const base = servers.find((s) => s.name === 'bare')!;
  const us = (s: Server) => (s.cpuS / s.requests) * 1e6;
  const p = (s: Server, q: number) => pooledPercentileMs(s.latencies, q);
  const rows = servers.map((s) => ({
    server: s.name,
    'µs/req': r2(us(s)),
    'of which kernel': r2((s.kernelS / s.requests) * 1e6),
    'wrk wake-ups/req': r3(s.wrkWakeUps / s.requests),
    'CPU / bare': r3(us(s) / us(base)),
    'req/s': Math.round(s.requests / s.seconds),
    ...Object.fromEntries(PERCENTILES.map((q) => [`p${q} ms`, r2(p(s, q))])),
    'p50 / loop': r3(loopShare({ p50Ms: p(s, 50), rps: s.requests / s.seconds }, CONNECTIONS)),
    'p99 / bare p99': r3(p(s, 99) / p(base, 99)),
    'others cores': r2(s.othersS / s.seconds),
  }));
  console.log(`\nRoute${OUTCOMES ? ' and outcome' : ''} (${RULES} rules) against bare uWS and bare uWS slowed by ${SPINS_US.join(', ')} µs a request; ${SLICES} slices of 1 s each, by turns, ${CONNECTIONS} connections:`);
  console.log(table(rows));
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `tail-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), settings: { rules: RULES, tenants: TENANTS, spinsUs: SPINS_US, slices: SLICES, outcomes: OUTCOMES, connections: CONNECTIONS, serverCpu: SERVER_CPU, generatorCpu: GENERATOR_CPU }, rows }, null, 2));
  console.log(`results: ${file}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
