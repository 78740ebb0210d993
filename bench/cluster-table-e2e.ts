/**
 * Route latency on a follower while the leader publishes a 100,000-rule tenant's decision table
 * after every evaluation: this build against another build of the service (e.g. one from
 * before decision-table deltas), interleaved A B B A. Two replicas on the machine's Redis, each
 * on its own copy of one seeded LMDB data directory, an evaluation every second
 * (SERVICE_EVAL_INTERVAL_MS=1000) and no outcome traffic, so few decisions change: the steady
 * state in which the old build still sent the whole table every second.
 *
 *   node dist/bench/cluster-table-e2e.js --other <other dist/src/main.js> [--rules 100000] [--rounds 2] [--duration 8]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseCli } from './lib/cli.js';
import { deleteClusterKeys } from './lib/cluster-keys.js';
import autocannon from 'autocannon';
import { table } from './lib/load.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { apiKeysFor, routeRequests, sampleRules } from './lib/requests.js';
import { seed } from './lib/seed.js';

const o = parseCli({
  usage: 'node dist/bench/cluster-table-e2e.js --other <dist/src/main.js> [options]',
  summary: "Route p50/p99 on a follower while the leader publishes a large tenant's decision table every second: this build against another, interleaved.",
  options: {
    other: { type: 'string', default: '' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    rules: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '8' },
  },
  help: {
    other: "the other build's dist/src/main.js",
    redis: 'Redis URL (each run uses its own key prefix, deleted afterwards)',
    rules: 'rules of the one tenant',
    rounds: 'rounds (each runs both builds)',
    duration: 'seconds of route load per run',
  },
});
if (o.other === '') {
  console.error('--other <dist/src/main.js of the build to compare with> is required');
  process.exit(2);
}
const THIS = join(DIST, 'src/main.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function view(c: Child): Promise<{ leader: boolean; role: string; table_age_seconds: number | null }> {
  const r = await fetch(c.url + '/');
  return ((await r.json()) as { leadership: { leader: boolean; role: string; table_age_seconds: number | null } }).leadership;
}

interface RunResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  non2xx: number;
  errors: number;
  /** Tables the follower applied during the load. */
  applied: number;
}

async function appliedTables(c: Child): Promise<number> {
  const text = await (await fetch(c.url + '/metrics/')).text();
  const m = /^service_cluster_tables_total\{result="applied"\} ([0-9.e+-]+)$/m.exec(text);
  return m ? Number(m[1]) : NaN;
}

async function run(main: string, seeded: string, keys: string, reqs: ReturnType<typeof routeRequests>, dur: number): Promise<RunResult> {
  const cluster = `tbl_${randomBytes(4).toString('hex')}`;
  const dirs = [mkdtempSync(join(tmpdir(), 'tbl-a-')), mkdtempSync(join(tmpdir(), 'tbl-b-'))];
  for (const d of dirs) execFileSync('cp', ['-a', `${seeded}/.`, d]);
  const env = (id: string, dir: string) => ({
    SERVICE_DATA_DIR: dir,
    SERVICE_TIER: '1',
    SERVICE_REDIS_URL: o.redis,
    SERVICE_CLUSTER: cluster,
    SERVICE_REPLICA_ID: id,
    SERVICE_API_KEYS: keys,
    SERVICE_EVAL_INTERVAL_MS: '1000',
  });
  const children: Child[] = [];
  try {
    const leader = await startChild(main, env('lead', dirs[0]), 300_000);
    children.push(leader);
    for (let i = 0; i < 100 && !(await view(leader)).leader; i++) await sleep(100);
    const follower = await startChild(main, env('follow', dirs[1]), 300_000);
    children.push(follower);
    // Holding the leader's table: a few publishes have happened.
    for (let i = 0; i < 300; i++) {
      const v = await view(follower);
      if (v.role === 'follower' && v.table_age_seconds !== null && v.table_age_seconds < 2) break;
      await sleep(100);
    }
    await sleep(3000);
    const applied0 = await appliedTables(follower);
    const r = await autocannon({
      url: follower.url,
      connections: 10,
      duration: dur,
      requests: reqs.map((q) => ({ ...q, headers: { 'content-type': 'application/json', ...q.headers } })),
    });
    return {
      name: main === THIS ? 'this build' : 'other build',
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      p999: r.latency.p99_9,
      max: r.latency.max,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
      applied: (await appliedTables(follower)) - applied0,
    };
  } finally {
    for (const c of children) await c.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await deleteClusterKeys(o.redis, cluster);
  }
}

async function main(): Promise<void> {
  const seeded = mkdtempSync(join(tmpdir(), 'tbl-seed-'));
  try {
    const s = await seed(seeded, { rules: Number(o.rules), tenants: 1 });
    const keys = apiKeysFor(s.tenants);
    const reqs = routeRequests(sampleRules(s.rules, 200), 1);
    const rows: Record<string, unknown>[] = [];
    for (let round = 0; round < Number(o.rounds); round++) {
      const order = round % 2 === 0 ? [o.other, THIS] : [THIS, o.other];
      for (const m of order) {
        const r = await run(m, seeded, keys, reqs, Number(o.duration));
        rows.push({ round: round + 1, build: r.name, rps: Math.round(r.rps), p50_ms: r.p50, p99_ms: r.p99, 'p99.9_ms': r.p999, max_ms: r.max, non2xx: r.non2xx, errors: r.errors, tables_applied: r.applied });
        console.log(JSON.stringify(rows[rows.length - 1]));
      }
    }
    console.log(`\nroutes on a follower, one tenant of ${o.rules} rules, evaluation every 1 s, ${new Date().toISOString()}`);
    console.log(table(rows));
  } finally {
    rmSync(seeded, { recursive: true, force: true });
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
