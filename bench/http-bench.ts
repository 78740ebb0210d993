/**
 * `npm run bench`: autocannon runs of POST /v1/route (10, 1,000 and 100,000 rules, some
 * wildcards, several tenants) and POST /v1/outcome, each beside a bare uWS server answering
 * a fixed JSON of the same size in the same run; RSS after loading 100,000 rules.
 * Results: a table on the terminal and JSON under bench/results/.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './lib/cli.js';
import { DIST, startChild } from './lib/processes.js';
import { load, table, type LoadResult } from './lib/load.js';
import { routeRequests, sampleRules } from './lib/requests.js';
import { seed } from './lib/seed.js';

const SIZES = (process.env.BENCH_RULE_SIZES ?? '10,1000,100000').split(',').map(Number);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 5);
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

async function main(): Promise<void> {
  parseCli({
    usage: 'npm run bench   (sizes and tenants from BENCH_RULE_SIZES, BENCH_TENANTS)',
    summary:
      'autocannon runs of POST /v1/route (10, 1,000 and 100,000 rules, several tenants) and POST /v1/outcome, each beside a ' +
      'bare uWS server answering a fixed JSON of the same size in the same run; RSS after loading the rules. Prints a table, ' +
      'JSON under bench/results/. Takes several minutes and both CPU cores.',
    options: {},
    help: {},
    notes: 'Environment: BENCH_RULE_SIZES (default 10,1000,100000), BENCH_TENANTS (default 5).',
  });
  const rows: (LoadResult & { rules: number; ratio: number })[] = [];
  const memory: { rules: number; rss_mb: number }[] = [];
  const service = join(DIST, 'src/main.js');
  const bare = join(DIST, 'bench/bare-uws.js');
  for (const size of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'prbench-'));
    const { tenants, rules } = await seed(dir, { rules: size, tenants: Math.min(TENANTS, size) });
    const sample = sampleRules(rules);
    const keys = tenants.map((t, i) => `key${i}:${t}`).join(',');
    // The per-key rate limit would measure itself at these rates.
    const svc = await startChild(service, { SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: keys, SERVICE_RATE_LIMIT_RPS: '0' });
    memory.push({ rules: size, rss_mb: Math.round(svc.rssMb()) });
    const reqs = routeRequests(sample, tenants.length);
    // Same-size fixed reply for the ceiling.
    const probe = await fetch(svc.url + '/v1/route', { method: 'POST', headers: { 'x-api-key': 'key0', 'content-type': 'application/json' }, body: reqs[0].body });
    const sampleBody = await probe.text();
    if (probe.status !== 200) throw new Error(`route probe failed: ${probe.status} ${sampleBody}`);
    const ceiling = await startChild(bare, { BARE_BODY: sampleBody });
    const ceil = await load(`bare uWS (${size} rules run)`, ceiling.url, reqs);
    const route = await load(`POST /v1/route, ${size} rules`, svc.url, reqs);
    rows.push({ ...ceil, rules: size, ratio: 1 });
    rows.push({ ...route, rules: size, ratio: route.rps / ceil.rps });
    if (size === SIZES[Math.min(1, SIZES.length - 1)]) {
      const outReqs = reqs.slice(0, 50).map((q, i) => {
        const r = sample[i];
        return {
          method: 'POST',
          path: '/v1/outcome',
          headers: q.headers,
          body: JSON.stringify({ rule_id: r.rule_id, processor_id: r.primary_id, success: i % 10 !== 0, latency_ms: 100 + i, error_code: i % 10 === 0 ? 'do_not_honor' : null }),
        };
      });
      const outcome = await load(`POST /v1/outcome, ${size} rules`, svc.url, outReqs);
      rows.push({ ...outcome, rules: size, ratio: outcome.rps / ceil.rps });
    }
    memory[memory.length - 1].rss_mb = Math.round(Math.max(memory[memory.length - 1].rss_mb, svc.rssMb()));
    await ceiling.stop();
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const out = rows.map((r) => ({ run: r.name, rules: r.rules, 'req/s': Math.round(r.rps), 'p50 ms': r.p50, 'p99 ms': r.p99, 'vs bare': r.ratio, non2xx: r.non2xx, errors: r.errors }));
  console.log(table(out));
  console.log(table(memory));
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `http-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), runs: out, memory }, null, 2));
  console.log(`results: ${file}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
