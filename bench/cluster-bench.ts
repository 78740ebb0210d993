/**
 * `npm run bench:cluster`: cluster mode part 2 on the machine's Redis.
 *  1. route throughput: one process alone, then N replicas loaded at once (per replica and
 *     in total), same run, same rules, same load generator settings;
 *  2. Redis round trips per second per replica under steady outcome traffic;
 *  3. outcome-to-decision lag across replicas: a run of technical failures reported to one
 *     follower, until another follower routes by the failover (p50 / p99 over trials);
 *  4. leader failover time over repeated kill -9 of the leader (the killed one restarts).
 * Every run uses its own SERVICE_CLUSTER key prefix, deleted at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseCli } from './lib/cli.js';
import { deleteClusterKeys } from './lib/cluster-keys.js';
import { load, table } from './lib/load.js';
import { DIST, startChild, type Child } from './lib/processes.js';

const o = parseCli({
  usage: 'npm run bench:cluster -- [options]',
  summary:
    'Starts one process, then a cluster of replicas on Redis, and prints route throughput (per replica, total, and the same-run single-process figure), Redis round trips per second per replica, the outcome-to-decision lag across replicas (p50/p99) and the leader failover time over repeated kill -9.',
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    replicas: { type: 'string', default: '3' },
    rules: { type: 'string', default: '200' },
    duration: { type: 'string', default: '8' },
    'lag-trials': { type: 'string', default: '30' },
    kills: { type: 'string', default: '10' },
    'lease-ms': { type: 'string', default: '3000' },
  },
  help: {
    redis: 'Redis URL (the bench uses its own key prefix and deletes it afterwards)',
    replicas: 'cluster size',
    rules: 'rules created on every replica',
    duration: 'seconds per throughput run',
    'lag-trials': 'outcome-to-decision trials',
    kills: 'leader kills for the failover time',
    'lease-ms': 'SERVICE_CLUSTER_LEASE_MS of the replicas',
  },
});

const REPLICAS = Number(o.replicas);
const RULES = Number(o.rules);
const DURATION = Number(o.duration);
const cluster = `bench_${randomBytes(4).toString('hex')}`;
const dirs: string[] = [];
const children: Child[] = [];
const MAIN = join(DIST, 'src/main.js');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
};

function country(i: number): string {
  return String.fromCharCode(65 + Math.floor(i / 26) % 26, 65 + (i % 26));
}

function rule(id: string, i: number) {
  return { rule_id: id, attributes: [country(i), 'USD', 'card'], primary_id: 'stripe', primary_name: 'Stripe', secondary_id: 'adyen', secondary_name: 'Adyen', primary_weight: 0.9 };
}

async function api(c: Child, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(c.url + path, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : undefined };
}

async function seed(c: Child, rules: unknown[]): Promise<void> {
  for (const r of rules) {
    const res = await api(c, 'POST', '/v1/rules', r);
    if (res.status !== 201 && res.status !== 409) throw new Error(`seeding: ${res.status} ${JSON.stringify(res.json)}`);
  }
}

async function track(p: Promise<Child>): Promise<Child> {
  const c = await p;
  children.push(c);
  return c;
}

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'clusterbench-'));
  dirs.push(d);
  return d;
}

interface Replica extends Child {
  id: string;
  dir: string;
}

async function startReplica(id: string, dir = dataDir()): Promise<Replica> {
  const c = await track(startChild(MAIN, {
    SERVICE_DATA_DIR: dir,
    SERVICE_TIER: '1',
    SERVICE_REDIS_URL: o.redis,
    SERVICE_CLUSTER: cluster,
    SERVICE_REPLICA_ID: id,
    SERVICE_CLUSTER_LEASE_MS: o['lease-ms'],
  }));
  return Object.assign(c, { id, dir });
}

const view = async (c: Child) => (await api(c, 'GET', '/')).json.leadership as { leader: boolean; epoch: number; role: string };

async function leaderOf(rs: Replica[]): Promise<Replica> {
  for (;;) {
    const vs = await Promise.all(rs.map(view));
    const ls = rs.filter((_, i) => vs[i].leader);
    if (ls.length === 1) return ls[0];
    await sleep(50);
  }
}

const routeReq = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ method: 'POST', path: '/v1/route', body: JSON.stringify({ country: country(i), currency: 'USD', payment_method: 'card', amount: 42 }) }));

async function metric(c: Child, name: string): Promise<number> {
  const text = await (await fetch(c.url + '/metrics/')).text();
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

async function main(): Promise<void> {
  const rules = Array.from({ length: RULES }, (_, i) => rule(`r${i}`, i));
  const reqs = routeReq(RULES);
  console.log(`bench:cluster — ${REPLICAS} replicas, ${RULES} rules, Redis ${o.redis}, cluster ${cluster}; ${new Date().toISOString()}`);

  // 1a. One process alone.
  const single = await track(startChild(MAIN, { SERVICE_DATA_DIR: dataDir(), SERVICE_TIER: '1' }));
  await seed(single, rules);
  const alone = await load('single', single.url, reqs, DURATION);
  await single.stop();

  // 1b. The cluster, every replica loaded at once.
  const rs: Replica[] = [];
  for (let i = 1; i <= REPLICAS; i++) rs.push(await startReplica(`b${i}`));
  for (const r of rs) await seed(r, rules);
  await leaderOf(rs);
  const per = await Promise.all(rs.map((r) => load(r.id, r.url, reqs, DURATION)));
  const total = per.reduce((a, r) => a + r.rps, 0);
  console.log('\nRoute throughput (autocannon, 50 connections per target, every target at once):');
  console.log(
    table([
      { target: 'single process (same run)', rps: Math.round(alone.rps), p99_ms: alone.p99, non2xx: alone.non2xx },
      ...per.map((r) => ({ target: `replica ${r.name}`, rps: Math.round(r.rps), p99_ms: r.p99, non2xx: r.non2xx })),
      { target: `cluster total (${REPLICAS} replicas)`, rps: Math.round(total), p99_ms: Math.max(...per.map((r) => r.p99)), non2xx: per.reduce((a, r) => a + r.non2xx, 0) },
    ]),
  );
  console.log(`cluster total / single process: ${(total / alone.rps).toFixed(2)}`);

  // 2. Redis round trips per replica under steady outcomes (100/s per replica, all rules).
  const before = await Promise.all(rs.map((r) => metric(r, 'service_cluster_redis_round_trips')));
  const t0 = performance.now();
  let k = 0;
  const outcomeTimer = setInterval(() => {
    for (const r of rs) void api(r, 'POST', '/v1/outcome', { rule_id: `r${k++ % RULES}`, processor_id: 'stripe', success: true, latency_ms: 100 }).catch(() => {});
  }, 10);
  await sleep(10_000);
  clearInterval(outcomeTimer);
  const secs = (performance.now() - t0) / 1000;
  const after = await Promise.all(rs.map((r) => metric(r, 'service_cluster_redis_round_trips')));
  const rtt = rs.map((r, i) => ({ replica: r.id, role: '', round_trips_per_s: Number(((after[i] - before[i]) / secs).toFixed(1)) }));
  const roles = await Promise.all(rs.map(view));
  rtt.forEach((x, i) => (x.role = roles[i].role));
  console.log(`\nRedis round trips per second per replica (${REPLICAS}×100 outcomes/s over ${RULES} rules, ${secs.toFixed(1)} s):`);
  console.log(table(rtt));

  // 3. Outcome-to-decision lag: a run of failures on one follower, seen on another follower.
  const leader = await leaderOf(rs);
  const followers = rs.filter((r) => r !== leader);
  const trials = Number(o['lag-trials']);
  const lags: number[] = [];
  if (followers.length >= 2) {
    const lagRules = Array.from({ length: trials }, (_, i) => rule(`lag${i}`, RULES + i));
    for (const r of rs) await seed(r, lagRules);
    await sleep(1500);
    const [a, b] = followers;
    for (let i = 0; i < trials; i++) {
      for (let j = 0; j < 10; j++) await api(a, 'POST', '/v1/outcome', { rule_id: `lag${i}`, processor_id: 'stripe', success: false, latency_ms: 50, error_code: 'processor_unavailable' });
      const start = performance.now();
      for (;;) {
        const h = await api(b, 'GET', `/v1/health/lag${i}`);
        if (h.json.primary.status === 'failed_over') break;
        if (performance.now() - start > 10_000) throw new Error(`lag${i}: no failover on ${b.id} within 10 s`);
        await sleep(2);
      }
      lags.push(performance.now() - start);
    }
    console.log(`\nOutcome-to-decision lag across replicas (10th failure acknowledged by ${a.id} → ${b.id} shows failed_over), ${trials} trials: p50 ${pct(lags, 0.5).toFixed(0)} ms, p99 ${pct(lags, 0.99).toFixed(0)} ms, max ${Math.max(...lags).toFixed(0)} ms`);
  }

  // 4. Leader failover time over repeated kill -9.
  const kills = Number(o.kills);
  const takeovers: number[] = [];
  for (let i = 0; i < kills; i++) {
    const old = await leaderOf(rs);
    const epoch = (await view(old)).epoch;
    const others = rs.filter((r) => r !== old);
    old.proc.kill('SIGKILL');
    const t = performance.now();
    await new Promise((r) => old.proc.once('exit', r));
    for (;;) {
      const vs = await Promise.all(others.map(view));
      if (vs.some((v) => v.leader && v.epoch > epoch)) break;
      await sleep(20);
    }
    takeovers.push(performance.now() - t);
    // The killed replica comes back on its data directory (its rules are stored there).
    rs[rs.indexOf(old)] = await startReplica(old.id, old.dir);
  }
  console.log(`\nLeader failover after kill -9 (SERVICE_CLUSTER_LEASE_MS=${o['lease-ms']}), ${kills} kills: p50 ${pct(takeovers, 0.5).toFixed(0)} ms, max ${Math.max(...takeovers).toFixed(0)} ms`);

  for (const r of rs) await r.stop();
}

async function cleanup(): Promise<void> {
  for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await deleteClusterKeys(o.redis, cluster);
}

main()
  .then(cleanup, async (e) => {
    console.error(`bench:cluster failed: ${(e as Error).message}`);
    await cleanup();
    process.exit(1);
  })
  .then(() => process.exit(0));
