/**
 * `npm run bench:alloc`: where the garbage of the route and outcome paths comes from, in bytes
 * allocated per request by function. The service (BENCH_PROFILE_RULES rules over 5 tenants, an
 * API key per tenant, as `npm run bench` seeds them) runs pinned like `npm run bench` with V8's
 * sampling heap profiler preloaded (lib/heap-sampler.ts); after a 3 s warm-up, wrk drives each
 * path for BENCH_DURATION_S while the profiler samples every allocation, freed or not
 * (lib/alloc-breakdown.ts reads it).
 *
 * Why: the young generation's collections (a scavenge of ~1 ms every few hundred ms at
 * saturation) and the memory a request streams through scale with what it allocates, and
 * `--trace-gc` gives only the total. The total here agrees with `--trace-gc`'s (the bytes
 * allocated between two scavenges over the requests served) within a few percent.
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocationsBySite, type HeapProfileNode } from './lib/alloc-breakdown.js';
import { parseCli } from './lib/cli.js';
import { DIST, startChild } from './lib/processes.js';
import { apiKeysFor, hotPathRequests } from './lib/requests.js';
import { seed } from './lib/seed.js';
import { requireWrk, runWrk } from './lib/wrk.js';

const RULES = Number(process.env.BENCH_PROFILE_RULES ?? 1000);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const SAMPLER = join(DIST, 'bench', 'lib', 'heap-sampler.js');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const o = parseCli({
    usage: 'npm run bench:alloc [-- --main <dist/src/main.js>] [-- --top N]',
    summary: 'Bytes allocated per request by function on the route and outcome paths, under wrk load, from V8\'s sampling heap profiler. Needs wrk.',
    options: { main: { type: 'string', default: join(DIST, 'src', 'main.js') }, top: { type: 'string', default: '12' } },
    help: { main: "the service to profile (another build's dist/src/main.js)", top: 'rows shown per path' },
    notes: 'Environment: BENCH_PROFILE_RULES (1000), BENCH_DURATION_S (3), BENCH_SERVER_CPU (1), BENCH_GENERATOR_CPU (0).',
  });
  requireWrk();
  const dir = mkdtempSync(join(tmpdir(), 'prbench-alloc-'));
  const { tenants, rules } = await seed(dir, { rules: RULES, tenants: 5 });
  const paths = hotPathRequests(rules, tenants.length);
  const cpus = process.env.BENCH_GENERATOR_CPU ?? '0';
  for (const [name, requests] of Object.entries(paths)) {
    const out = join(dir, `heap-${name}.json`);
    const svc = await startChild(
      o.main,
      { SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: apiKeysFor(tenants), SERVICE_RATE_LIMIT_RPS: '0', BENCH_HEAP_PROFILE_OUT: out },
      120_000,
      { cpus: process.env.BENCH_SERVER_CPU ?? '1', nodeArgs: ['--import', SAMPLER] },
    );
    try {
      await runWrk({ url: svc.url, requests, durationS: 3, connections: 64, cpus });
      process.kill(svc.proc.pid!, 'SIGUSR2');
      await sleep(100);
      const w = await runWrk({ url: svc.url, requests, durationS: DURATION_S, connections: 64, cpus });
      process.kill(svc.proc.pid!, 'SIGWINCH');
      for (let waited = 0; !existsSync(out); waited += 100) {
        if (waited > 30_000) throw new Error(`no heap profile from the service in 30 s (${out})`);
        await sleep(100);
      }
      await sleep(200); // written in one call; let it finish
      const profile = JSON.parse(readFileSync(out, 'utf8')) as { head?: HeapProfileNode; error?: string };
      if (profile.head === undefined) throw new Error(`heap profiler: ${profile.error ?? 'no profile'}`);
      const { total, rows } = allocationsBySite(profile.head, w.requests);
      console.log(`\nPOST /v1/${name}: ${Math.round(w.rps)} req/s over ${DURATION_S} s, ${total.toFixed(0)} bytes allocated per request`);
      for (const r of rows.slice(0, Number(o.top))) console.log(`${r.bytesPerRequest.toFixed(1).padStart(8)}  ${r.site}`);
    } finally {
      await svc.stop();
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
