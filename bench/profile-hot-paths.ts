/**
 * `npm run bench:profile`: CPU profiles of the service's route and outcome paths under load,
 * and where the time goes (profile-breakdown.ts). The service (1,000 rules over 5 tenants, an
 * API key per tenant) runs with --cpu-prof, pinned like `npm run bench`, while wrk drives
 * POST /v1/route for BENCH_DURATION_S (default 10 s); then again for POST /v1/outcome.
 * Inlining is switched off so that each stage keeps its own frames (the profiled service is
 * slower than the real one; the shares, not the absolute times, are the result). The µs per
 * request column splits the service's measured CPU per request (all threads, /proc) by the
 * shares. Profiles are written to bench/results/profiles/.
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { breakdown } from './profile-breakdown.js';
import { DIST, startChild } from './lib/processes.js';
import { apiKeysFor, hotPathRequests } from './lib/requests.js';
import { seed } from './lib/seed.js';
import { processCpuS } from './lib/cpu-usage.js';
import { requireWrk, runWrk } from './lib/wrk.js';
import { parseCli } from './lib/cli.js';

const RULES = Number(process.env.BENCH_PROFILE_RULES ?? 1000);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const PROFILES = fileURLToPath(new URL('../../bench/results/profiles/', import.meta.url));

async function main(): Promise<void> {
  parseCli({
    usage: 'npm run bench:profile',
    summary:
      'CPU profiles of the service\'s route and outcome paths under wrk load (inlining off, so the shares are the result), ' +
      'with the time broken down per stage and the service\'s CPU per request. Profiles under bench/results/profiles/. Needs wrk.',
    options: {},
    help: {},
    notes: 'Environment: BENCH_PROFILE_RULES (1000), BENCH_DURATION_S (10), BENCH_SERVER_CPU (1), BENCH_GENERATOR_CPU (0).',
  });
  requireWrk();
  const dir = mkdtempSync(join(tmpdir(), 'prbench-'));
  const { tenants, rules } = await seed(dir, { rules: RULES, tenants: 5 });
  const paths = hotPathRequests(rules, tenants.length);
  for (const [name, reqs] of Object.entries(paths)) {
    const out = join(PROFILES, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(out, { recursive: true });
    const svc = await startChild(join(DIST, 'src/main.js'), { SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: apiKeysFor(tenants), SERVICE_RATE_LIMIT_RPS: '0' }, 120_000, {
      cpus: process.env.BENCH_SERVER_CPU ?? '1',
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${out}`, '--no-turbo-inlining'],
    });
    await runWrk({ url: svc.url, requests: reqs, durationS: 2, connections: 64, cpus: process.env.BENCH_GENERATOR_CPU ?? '0' });
    const cpu0 = processCpuS(svc.proc.pid!) ?? NaN;
    const t0 = Number(process.hrtime.bigint() / 1000n);
    const w = await runWrk({ url: svc.url, requests: reqs, durationS: DURATION_S, connections: 64, cpus: process.env.BENCH_GENERATOR_CPU ?? '0' });
    const t1 = Number(process.hrtime.bigint() / 1000n);
    const usPerReq = (((processCpuS(svc.proc.pid!) ?? NaN) - cpu0) / w.requests) * 1e6;
    await svc.stop();
    // The front thread's profile is the largest (worker threads write their own).
    const files = readdirSync(out).map((f) => join(out, f));
    const main = files.sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0];
    console.log(`\nPOST /v1/${name}: ${Math.round(w.rps)} req/s, ${w.requests} requests, ${usPerReq.toFixed(1)} µs server CPU per request (profiled), profile ${main}`);
    const rows = breakdown(JSON.parse(readFileSync(main, 'utf8')), [t0, t1]);
    for (const r of rows) console.log(`${r.stage.padEnd(28)} ${String(r.samples).padStart(7)} samples ${String(r.share).padStart(5)} % ${((r.share / 100) * usPerReq).toFixed(2).padStart(6)} µs/req`);
  }
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
