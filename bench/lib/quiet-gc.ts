/**
 * Imported first by the benchmarks that run wrk: restarts this process with V8's memory reducer
 * off (`--no-memory-reducer`) unless it already is.
 *
 * Why: the benchmark's process shares wrk's core, so its garbage collection is time wrk cannot
 * read answers in, and shows as the service's latency. Seeding 100,000 rules leaves a heap that
 * the memory reducer compacts ~8 s after the process falls quiet: three mark-compacts in a row
 * (pauses of 3-19 ms, marking steps up to 25 ms), which landed in the first measured round of
 * every `npm run bench` run (route p99 3.3-6.5 ms at 100,000 rules against 1.7-2.1 ms in the
 * later rounds; the outcome or reference run beside them up to 7.6 ms). The flag only works
 * from the command line (set at run time through v8.setFlagsFromString, the reducer still ran),
 * hence the restart. While it measures the process allocates little, so nothing else collects.
 */
import { spawnSync } from 'node:child_process';

const FLAG = '--no-memory-reducer';

if (!process.execArgv.includes(FLAG)) {
  const r = spawnSync(process.execPath, [FLAG, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
