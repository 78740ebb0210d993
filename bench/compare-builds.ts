/**
 * `node dist/bench/compare-builds.js <other dist/src/main.js>`: server CPU per request of this
 * build against another build of the service (e.g. a copy of dist/ from before a change), on
 * the same seeded data, pinned like `npm run bench`, runs interleaved A B A B. On a machine
 * too busy for throughput ratios, CPU per request of two builds measured side by side is the
 * comparison that survives: both suffer the same neighbours.
 *   BENCH_ROUNDS (5), BENCH_DURATION_S (5), BENCH_PROFILE_RULES (1000)
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processCpuS } from './lib/cpu-usage.js';
import { table } from './lib/load.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { apiKeysFor, outcomeRequests, routeRequests, sampleRules, type BenchRequest } from './lib/requests.js';
import { median } from './lib/scenario-metrics.js';
import { seed } from './lib/seed.js';
import { requireWrk, runWrk } from './lib/wrk.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const RULES = Number(process.env.BENCH_PROFILE_RULES ?? 1000);

async function cpuPerRequest(svc: Child, reqs: readonly BenchRequest[]): Promise<{ us: number; rps: number }> {
  const c0 = processCpuS(svc.proc.pid!) ?? NaN;
  const w = await runWrk({ url: svc.url, requests: reqs, durationS: DURATION_S, connections: 64, cpus: '0' });
  if (w.non2xx > 0 || w.errors > 0) throw new Error(`${w.non2xx} non-2xx answers, ${w.errors} errors`);
  return { us: (((processCpuS(svc.proc.pid!) ?? NaN) - c0) / w.requests) * 1e6, rps: w.rps };
}

async function main(): Promise<void> {
  requireWrk();
  const other = process.argv[2];
  if (!other) throw new Error('usage: compare-builds.js <path to the other build\'s dist/src/main.js>');
  const dir = mkdtempSync(join(tmpdir(), 'prbench-'));
  const { tenants, rules } = await seed(dir, { rules: RULES, tenants: 5 });
  const sample = sampleRules(rules);
  const env = { SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: apiKeysFor(tenants), SERVICE_RATE_LIMIT_RPS: '0' };
  const paths: Record<string, BenchRequest[]> = {
    route: routeRequests(sample, tenants.length),
    outcome: outcomeRequests(sample.slice(0, 50), 1).map((q, i) => ({ ...q, headers: { 'x-api-key': `key${i % tenants.length}` } })),
  };
  const rows: Record<string, string | number>[] = [];
  for (const [name, reqs] of Object.entries(paths)) {
    // One at a time (both hold the data directory's lock): A, B, A, B, each a fresh process.
    const a: number[] = [];
    const b: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [label, script, into] of [['other', other, a], ['this', join(DIST, 'src/main.js'), b]] as const) {
        const svc = await startChild(script, env, 120_000, { cpus: '1' });
        await runWrk({ url: svc.url, requests: reqs, durationS: 2, connections: 64, cpus: '0' });
        const m = await cpuPerRequest(svc, reqs);
        await svc.stop();
        into.push(m.us);
        rows.push({ path: name, round, build: label, 'server µs/req': Math.round(m.us * 100) / 100, 'req/s': Math.round(m.rps) });
      }
    }
    const ratios = a.map((x, i) => b[i] / x);
    rows.push({ path: name, round: 'median', build: 'this / other', 'server µs/req': Math.round(median(ratios)! * 1000) / 1000, 'req/s': '' });
  }
  console.log(table(rows));
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
