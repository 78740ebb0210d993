/**
 * `node dist/bench/cold-rows.js --other <dist dir>`: the route's read of its rule's shared
 * row (pickSide: the seqlocked decision fields and the traffic counter) when the caches and
 * the TLB no longer hold it, in this build and another.
 *
 * Why: at 100,000 rules a route's rule is one of many, and between two routes of the same rule
 * the kernel, uWS and V8 pass over far more memory than the caches hold; what that costs is in
 * how many cache lines and pages the read needs (one row of both field kinds, against two
 * arrays: src/shm/layout.ts). Neither timing the service (its run-to-run spread here is wider
 * than the effect) nor counting instructions (callgrind sees no cache) shows it. So: 100,000
 * rules in the shared tables, 200 of them routed (the bench's spread), and before every 8
 * routes the caches are flushed by passing over BENCH_POLLUTE_MB (4) of other memory. Builds
 * alternate round by round; medians of ns per pickSide.
 *
 *   node dist/bench/cold-rows.js --other <dist dir> [BENCH_POLLUTE_MB=4] [BENCH_ROUNDS=9]
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCli } from './lib/cli.js';
import { DIST } from './lib/processes.js';
import { median } from './lib/scenario-metrics.js';

const RULES = 100_000;
const HOT = 200;
const ROUTES_PER_FLUSH = 8;
const POLLUTE_MB = Number(process.env.BENCH_POLLUTE_MB ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);

const o = parseCli({
  usage: 'node dist/bench/cold-rows.js --other <dist dir>',
  summary:
    "ns per route's read of its rule's shared row (pickSide) with the caches flushed every 8 routes, 200 routed rules of 100,000: " +
    'this build against another, alternated round by round.',
  options: { other: { type: 'string' } },
  help: { other: "another build's dist/ directory (e.g. a worktree of an earlier commit)" },
  notes: 'Environment: BENCH_POLLUTE_MB (4), BENCH_ROUNDS (9). Run it pinned to one core (taskset -c 1) on a quiet machine.',
});
if (o.other === undefined) {
  process.stderr.write('--other <dist dir> is required\n');
  process.exit(2);
}

interface Setup {
  run(n: number): number;
}

const junk = new Uint8Array(POLLUTE_MB << 20);
/** Passes over `junk` a line at a time, writing: the caches (and the TLB entries) then hold it, not the rows. */
function flush(): number {
  let s = 0;
  for (let i = 0; i < junk.length; i += 64) s += junk[i]++;
  return s;
}

async function setup(dist: string): Promise<Setup> {
  const load = (p: string) => import(pathToFileURL(join(dist, 'src', p)).href);
  const [shm, decide] = await Promise.all([load('shm/tables.js'), load('routing/decide.js')]);
  const tables = new shm.SharedTables();
  const slots: number[] = [];
  for (let i = 0; i < RULES; i++) slots.push(tables.allocRule(0.9, false));
  const hot = Array.from({ length: HOT }, (_, i) => ({ slot: slots[(i * 7919) % RULES], override: null }));
  return {
    run(n: number): number {
      let ns = 0n;
      let sides = 0;
      for (let k = 0; k < n; k++) {
        flush();
        const t0 = process.hrtime.bigint();
        for (let j = 0; j < ROUTES_PER_FLUSH; j++) sides += decide.pickSide(tables, hot[(k * 37 + j * 53) % HOT], 0.5);
        ns += process.hrtime.bigint() - t0;
      }
      if (sides < 0) throw new Error('unreachable'); // keeps the reads alive
      return Number(ns) / (n * ROUTES_PER_FLUSH);
    },
  };
}

const builds: [string, Setup][] = [
  ['this', await setup(DIST)],
  ['other', await setup(o.other)],
];
for (const [, b] of builds) b.run(2000); // JIT warm-up
const results: Record<string, number[]> = { this: [], other: [] };
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const [name, b] of order) results[name].push(b.run(3000));
}
const fmt = (xs: number[]) => xs.map((x) => Math.round(x)).join(' ');
console.log(`ns per pickSide, caches flushed (${POLLUTE_MB} MB) every ${ROUTES_PER_FLUSH} routes:`);
console.log(`  this  ${fmt(results.this)}  median ${Math.round(median(results.this)!)}`);
console.log(`  other ${fmt(results.other)}  median ${Math.round(median(results.other)!)}`);
console.log(`this / other: ${(median(results.this)! / median(results.other)!).toFixed(3)}`);
