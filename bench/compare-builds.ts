/**
 * `npm run bench:compare -- <other dist/src/main.js>`: server CPU per request of this
 * build against another build of the service (e.g. a copy of dist/ from before a change), on
 * the same seeded data (a copy each: a data directory has one owner), pinned like `npm run
 * bench`. CPU per request of two builds measured side by side is the comparison that survives
 * a busy machine: both suffer the same neighbours.
 *
 * Both services run at once; the one not being measured is stopped (SIGSTOP), so its timers,
 * evaluation cycle and GC take nothing from the measured one's core. A round is BENCH_SLICES
 * pairs of 1 s wrk runs, in the order A B, B A, A B… (a drift of the host's speed within the
 * round falls on both alike): the host here drifts by ±15% over seconds, and runs of 5 s in
 * fresh processes, one build after the other, compared the host at two moments as much as the
 * builds (the same code came out 0.84× and 1.11×). The summary is the median of the rounds'
 * ratios and their range: `npm run bench -- --calibrate` shows what a range means on the
 * machine at hand. Each round also gives both builds' p99 (the median of their slices' p99s)
 * and its ratio: the same build under two V8 settings (BENCH_NODE_ARGS_THIS) can trade one
 * for the other (issue 20's twenty-seventh pass: a 1 MB young generation, p99 0.82×, CPU 1.03×).
 *   BENCH_ROUNDS (7), BENCH_SLICES (6), BENCH_PROFILE_RULES (1000), BENCH_TENANTS (5),
 *   BENCH_PATHS (route,outcome; also route-with-id: routes whose bodies carry a transaction_id,
 *   each a record for the decision log to write), BENCH_NODE_ARGS_OTHER and BENCH_NODE_ARGS_THIS (node flags for
 *   one build's process, space-separated: the same build under two V8 settings is a comparison too),
 *   BENCH_OTHER_RULES (the other service's rule count, default BENCH_PROFILE_RULES: with this build
 *   as the other, `BENCH_PROFILE_RULES=100000 BENCH_OTHER_RULES=10` is the cost of 100,000 rules
 *   over 10 on one build, the "within 10%", measured by CPU per request)
 * A slice in which wrk waited for its core longer than BENCH_GENERATOR_HELD (0.02) of it is taken
 * again, up to BENCH_SLICE_ATTEMPTS (3) times, for both builds alike (lib/measured-slice.ts).
 * With BENCH_TENANTS=1 one tenant routes all 200 of the bench's tuples (5 tenants route 40
 * each): a merchant with more usual tuples than a trie's first memo holds.
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCliWithArgs } from './lib/cli.js';
import { table } from './lib/load.js';
import { measuredSlice } from './lib/measured-slice.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { apiKeysFor, hotPathRequests, withTransactionIds, type BenchRequest } from './lib/requests.js';
import { median } from './lib/scenario-metrics.js';
import { seed } from './lib/seed.js';
import { stopChildrenOnSignals, wakeAndStop } from './lib/turn-taking.js';
import { pinSelf, requireWrk, runWrk } from './lib/wrk.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SLICES = Number(process.env.BENCH_SLICES ?? 6);
const RULES = Number(process.env.BENCH_PROFILE_RULES ?? 1000);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 5);
const OTHER_RULES = Number(process.env.BENCH_OTHER_RULES ?? RULES);
const PATHS = (process.env.BENCH_PATHS ?? 'route,outcome').split(',');
const nodeArgs = (v: string | undefined): string[] => (v ?? '').split(' ').filter(Boolean);

interface Tally {
  requests: number;
  cpuS: number;
  seconds: number;
  /** Each slice's p99 (ms): a round's p99 is their median. */
  p99s: number[];
}

/** One 1 s run on `svc`, woken for it and stopped after it, added to `into`. */
async function slice(svc: Child, reqs: readonly BenchRequest[], into: Tally): Promise<void> {
  svc.proc.kill('SIGCONT');
  try {
    const m = await measuredSlice({ label: svc.url, pid: svc.proc.pid!, url: svc.url, requests: reqs, durationS: 1, connections: 64, generatorCpu: '0' });
    const w = m.wrk;
    into.cpuS += m.serverCpuS;
    into.requests += w.requests;
    into.seconds += w.durationS;
    into.p99s.push(w.p99Ms);
  } finally {
    svc.proc.kill('SIGSTOP');
  }
}

const usPerRequest = (t: Tally) => (t.cpuS / t.requests) * 1e6;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  const { args } = parseCliWithArgs({
    usage: 'npm run bench:compare -- <the other build\'s dist/src/main.js>',
    summary:
      'Server CPU per request and p99 of this build against another build of the service (e.g. a copy of dist/ from before a change), ' +
      'on the same seeded data, both pinned to one core with wrk on the other, in alternated 1 s slices with the idle service stopped; ' +
      'medians of the rounds\' ratios and their range. Needs wrk. Takes a few minutes.',
    options: {},
    help: {},
    minArgs: 1,
    notes:
      'Environment: BENCH_ROUNDS (7), BENCH_SLICES (6), BENCH_PROFILE_RULES (1000), BENCH_TENANTS (5), BENCH_PATHS (route,outcome; route-with-id: routes with a transaction_id, each a decision record), ' +
      'BENCH_OTHER_RULES (the other service\'s rule count; default BENCH_PROFILE_RULES), BENCH_NODE_ARGS_THIS and BENCH_NODE_ARGS_OTHER ' +
      '(node flags for one build\'s service, space-separated). The other build may be this one: BENCH_PROFILE_RULES=100000 BENCH_OTHER_RULES=10 ' +
      'is the cost of 100,000 rules over 10, and two BENCH_NODE_ARGS_* compare V8 settings. A slice in which wrk waited for its core longer than ' +
      'BENCH_GENERATOR_HELD (0.02) of it is taken again, up to BENCH_SLICE_ATTEMPTS (3) times (bench/lib/measured-slice.ts).',
  });
  const other = args[0];
  if (!existsSync(other)) {
    console.error(`${other}: no such file (give the other build's dist/src/main.js)`);
    process.exit(2);
  }
  requireWrk();
  pinSelf('0'); // with the generator, off the services' core
  const work = mkdtempSync(join(tmpdir(), 'prbench-'));
  // One data set per rule count (a service gets a copy: a data directory has one owner).
  const dataSets = new Map<number, { dir: string; requests: Record<string, BenchRequest[]>; keys: string }>();
  for (const n of new Set([RULES, OTHER_RULES])) {
    const dir = join(work, `seed-${n}`);
    const { tenants, rules } = await seed(dir, { rules: n, tenants: Math.min(TENANTS, n) });
    const hot = hotPathRequests(rules, tenants.length);
    const requests: Record<string, BenchRequest[]> = { ...hot, 'route-with-id': withTransactionIds(hot.route) };
    dataSets.set(n, { dir, requests, keys: apiKeysFor(tenants) });
  }
  const env = (dir: string, keys: string) => ({ SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: keys, SERVICE_RATE_LIMIT_RPS: '0' });
  const unknown = PATHS.filter((p) => !(p in dataSets.get(RULES)!.requests));
  if (unknown.length > 0) throw new Error(`BENCH_PATHS: unknown ${unknown.join(', ')} (route, outcome, route-with-id)`);
  const builds: [string, string, string[], number][] = [
    ['other', other, nodeArgs(process.env.BENCH_NODE_ARGS_OTHER), OTHER_RULES],
    ['this', join(DIST, 'src/main.js'), nodeArgs(process.env.BENCH_NODE_ARGS_THIS), RULES],
  ];
  const services: Child[] = [];
  stopChildrenOnSignals(() => services); // each is stopped between its slices, in a process group of its own
  const rows: Record<string, string | number>[] = [];
  try {
    for (const [label, script, flags, n] of builds) {
      const dir = join(work, label);
      const data = dataSets.get(n)!;
      cpSync(data.dir, dir, { recursive: true });
      const svc = await startChild(script, env(dir, data.keys), 120_000, { cpus: '1', nodeArgs: flags, ownProcessGroup: true });
      services.push(svc);
      svc.proc.kill('SIGSTOP');
    }
    const [a, b] = services;
    for (const name of PATHS) {
      const reqsA = dataSets.get(OTHER_RULES)!.requests[name];
      const reqs = dataSets.get(RULES)!.requests[name];
      for (const [svc, r] of [[a, reqsA], [b, reqs]] as const) {
        svc.proc.kill('SIGCONT');
        await runWrk({ url: svc.url, requests: r, durationS: 2, connections: 64, cpus: '0' }); // JIT warm-up, not counted
        svc.proc.kill('SIGSTOP');
      }
      const ratios: number[] = [];
      const p99Ratios: number[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const ta: Tally = { requests: 0, cpuS: 0, seconds: 0, p99s: [] };
        const tb: Tally = { requests: 0, cpuS: 0, seconds: 0, p99s: [] };
        for (let i = 0; i < SLICES; i++) {
          if (i % 2 === 0) {
            await slice(a, reqsA, ta);
            await slice(b, reqs, tb);
          } else {
            await slice(b, reqs, tb);
            await slice(a, reqsA, ta);
          }
        }
        const ratio = usPerRequest(tb) / usPerRequest(ta);
        ratios.push(ratio);
        const p99a = median(ta.p99s)!;
        const p99b = median(tb.p99s)!;
        p99Ratios.push(p99b / p99a);
        const row = { path: name, round, 'other µs/req': r3(usPerRequest(ta)), 'this µs/req': r3(usPerRequest(tb)), 'this / other': r3(ratio), 'other req/s': Math.round(ta.requests / ta.seconds), 'this req/s': Math.round(tb.requests / tb.seconds), 'other p99 ms': r3(p99a), 'this p99 ms': r3(p99b), 'p99 this / other': r3(p99b / p99a) };
        rows.push(row);
        console.log(table([row]));
      }
      rows.push({
        path: name,
        round: 'median',
        'other µs/req': '',
        'this µs/req': '',
        'this / other': r3(median(ratios)!),
        'other req/s': `range ${r3(Math.min(...ratios))}-${r3(Math.max(...ratios))}`,
        'this req/s': `lower in ${ratios.filter((x) => x < 1).length} of ${ratios.length}`,
        'other p99 ms': '',
        'this p99 ms': `range ${r3(Math.min(...p99Ratios))}-${r3(Math.max(...p99Ratios))}`,
        'p99 this / other': r3(median(p99Ratios)!),
      });
    }
  } finally {
    await wakeAndStop(services);
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`\nServer CPU per request and p99 (a round's: the median of its slices'), this build (${RULES} rules) over the other (${OTHER_RULES} rules); 1 s slices, alternated, the idle service stopped:`);
  console.log(table(rows.filter((r) => r.round === 'median')));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
