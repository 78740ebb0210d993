/**
 * `npm run bench:store`: what cluster mode (the PostgreSQL store) costs against the embedded
 * LMDB store, on the same machine in the same run.
 *
 * - Rule creation rate: N rules created by POST /v1/rules one at a time, then N more with
 *   16 in flight (LMDB: one service; PostgreSQL: replica A of two).
 * - Write → first route elsewhere: for each of N rules, the time from A's 201 to the first
 *   200 of POST /v1/route for it on replica B (B is asked in a loop, one request at a time;
 *   the resolution is one route's round trip). LMDB has no other replica: its figure is the
 *   same process's first route after the 201, the floor of the measure.
 * - The same without HTTP: two PostgresStore objects in this process (put on one, poll the
 *   other's memory), which separates the store's share of that latency from the services'.
 * - Route throughput: wrk (one thread, BENCH_CONNECTIONS) on POST /v1/route of the LMDB
 *   service and of replica B in interleaved rounds; the same-run ratio PostgreSQL / LMDB per
 *   round and its median (the store is off the route path, so it should be ~1). The LMDB
 *   service and replica B are pinned to BENCH_SERVER_CPU (default 1), wrk to
 *   BENCH_GENERATOR_CPU (default 0), when taskset exists.
 *
 * PostgreSQL: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test), a fresh schema
 * dropped at the end. The 1-minute load average is printed: on a busy machine the absolute
 * figures move, the same-run ratios much less.
 */
import './lib/quiet-gc.js'; // first: restarts this process with the memory reducer off (see there)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { parseCli } from './lib/cli.js';
import { loadAverage1m } from './lib/cpu-usage.js';
import { table } from './lib/load.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { PostgresStore } from '../src/store/postgres/pg-store.js';
import { requireWrk, runWrk, type WrkRequest } from './lib/wrk.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const flags = parseCli({
  usage: 'npm run bench:store -- [--writes N] [--rounds N] [--duration S]',
  summary:
    'Rule creation rate, write-on-one-replica → first-route-on-another latency (median, p99) and route throughput (same-run ratio), ' +
    'LMDB against PostgreSQL (cluster mode, two replicas). Needs PostgreSQL (BENCH_PG_URL) and wrk. Tables on the terminal, JSON under bench/results/.',
  options: {
    writes: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
  },
  help: {
    writes: 'rules written per measure',
    rounds: 'interleaved route-throughput rounds (LMDB, PostgreSQL)',
    duration: 'seconds per route-throughput run',
  },
});
const WRITES = Number(flags.writes);
const ROUNDS = Number(flags.rounds);
const DURATION_S = Number(flags.duration);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SERVER_CPU = process.env.BENCH_SERVER_CPU ?? '1';
const GENERATOR_CPU = process.env.BENCH_GENERATOR_CPU ?? '0';
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MAIN = join(DIST, 'src', 'main.js');

const COUNTRIES = Array.from({ length: 26 * 26 }, (_, i) => String.fromCharCode(65 + Math.floor(i / 26), 65 + (i % 26)));
const CURRENCIES = ['EUR', 'USD', 'GBP', 'JPY', 'CHF', 'SEK', 'NOK', 'DKK'];
/** The i-th (country, currency) of set 0, 1 or 2: distinct across sets while 3 × writes ≤ 676 × 8. */
function attrsOf(set: number, i: number): [string, string] {
  const k = set * WRITES + i;
  return [COUNTRIES[k % COUNTRIES.length], CURRENCIES[Math.floor(k / COUNTRIES.length)]];
}

async function post(url: string, path: string, body: unknown): Promise<number> {
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  return r.status;
}

const ruleBody = (id: string, [country, currency]: [string, string]) => ({ rule_id: id, attributes: [country, currency], primary_id: 'stripe', secondary_id: 'adyen' });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** Creates `n` rules (set `set`) on `url`, `inFlight` at a time; returns rules per second. */
async function creationRate(url: string, set: number, n: number, inFlight: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        const i = next++;
        const status = await post(url, '/v1/rules', ruleBody(`s${set}_${i}`, attrsOf(set, i)));
        if (status !== 201) throw new Error(`rule creation answered ${status}`);
      }
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

/** For each write on `writer`: ms from its 201 to the first 200 route on `reader`. */
async function writeToRoute(writer: string, reader: string, set: number, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const [country, currency] = attrsOf(set, i);
    const status = await post(writer, '/v1/rules', ruleBody(`w${set}_${i}`, [country, currency]));
    if (status !== 201) throw new Error(`rule creation answered ${status}`);
    const t0 = performance.now();
    for (;;) {
      const s = await post(reader, '/v1/route', { country, currency });
      if (s === 200) break;
      if (performance.now() - t0 > 10_000) throw new Error('the rule did not reach the other replica within 10 s');
    }
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

/** ms from a put's commit on one store to the value in another store's memory (same process). */
async function storeToStore(schema: string, n: number): Promise<number[]> {
  const a = await PostgresStore.open({ url: PG_URL, schema, replicaId: 'direct-a' });
  const b = await PostgresStore.open({ url: PG_URL, schema, replicaId: 'direct-b' });
  const ca = a.collection<{ i: number }>('rules');
  const cb = b.collection<{ i: number }>('rules');
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      await ca.put('t', `r${i}`, { i });
      const t0 = performance.now();
      while (cb.get('t', `r${i}`) === undefined) {
        if (performance.now() - t0 > 10_000) throw new Error('a change did not reach the other store within 10 s');
        await new Promise((r) => setImmediate(r));
      }
      out.push(performance.now() - t0);
    }
  } finally {
    await a.close();
    await b.close();
  }
  return out.sort((x, y) => x - y);
}

function routeRequests(set: number, n: number): WrkRequest[] {
  return Array.from({ length: Math.min(n, 200) }, (_, i) => {
    const [country, currency] = attrsOf(set, i);
    return { method: 'POST', path: '/v1/route', body: JSON.stringify({ country, currency }), headers: {} };
  });
}

async function main(): Promise<void> {
  requireWrk();
  if (!(WRITES >= 1 && 3 * WRITES <= COUNTRIES.length * CURRENCIES.length)) throw new Error(`--writes must be 1-${Math.floor((COUNTRIES.length * CURRENCIES.length) / 3)}`);
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'store-bench-'));
    dirs.push(d);
    return d;
  };
  const schema = `bench_${process.pid}_${Date.now().toString(36)}`;
  const children: Child[] = [];
  const base = { SERVICE_TIER: '1', SERVICE_LOG_LEVEL: 'warn' };
  try {
    console.log(`load average (1 min) at start: ${loadAverage1m().toFixed(2)}`);
    // As in `npm run bench`: the services on one core, wrk on the other (when taskset exists).
    const lmdb = await startChild(MAIN, { ...base, SERVICE_DATA_DIR: dir() }, 120_000, { cpus: SERVER_CPU });
    children.push(lmdb);
    const pgEnv = (id: string) => ({ ...base, SERVICE_DATA_DIR: dir(), SERVICE_STORE_URL: PG_URL, SERVICE_CLUSTER: schema, SERVICE_REPLICA_ID: id });
    const a = await startChild(MAIN, pgEnv('bench-a'));
    children.push(a);
    const b = await startChild(MAIN, pgEnv('bench-b'), 120_000, { cpus: SERVER_CPU });
    children.push(b);

    const creation = [
      { store: 'LMDB', one_at_a_time_per_s: await creationRate(lmdb.url, 0, WRITES, 1), sixteen_in_flight_per_s: await creationRate(lmdb.url, 1, WRITES, 16) },
      { store: 'PostgreSQL', one_at_a_time_per_s: await creationRate(a.url, 0, WRITES, 1), sixteen_in_flight_per_s: await creationRate(a.url, 1, WRITES, 16) },
    ];
    console.log(`\nRule creation (${WRITES} rules each), load average ${loadAverage1m().toFixed(2)}\n${table(creation)}`);

    const same = await writeToRoute(lmdb.url, lmdb.url, 2, WRITES);
    const other = await writeToRoute(a.url, b.url, 2, WRITES);
    const stores = await storeToStore(`${schema}_direct`, WRITES);
    const latency = [
      { path: 'LMDB: 201 → first route, same process', median_ms: percentile(same, 0.5), p99_ms: percentile(same, 0.99), max_ms: same[same.length - 1] },
      { path: 'PostgreSQL: 201 on A → first route on B', median_ms: percentile(other, 0.5), p99_ms: percentile(other, 0.99), max_ms: other[other.length - 1] },
      { path: 'PostgreSQL, no HTTP: put committed on store A → in store B', median_ms: percentile(stores, 0.5), p99_ms: percentile(stores, 0.99), max_ms: stores[stores.length - 1] },
    ];
    console.log(`\nWrite → first route (${WRITES} writes), load average ${loadAverage1m().toFixed(2)}\n${table(latency)}`);

    const requests = routeRequests(0, WRITES);
    const rounds: { round: number; lmdb_rps: number; postgres_rps: number; ratio: number; load_1m: number }[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const l = await runWrk({ url: lmdb.url, requests, durationS: DURATION_S, connections: CONNECTIONS, cpus: GENERATOR_CPU });
      const p = await runWrk({ url: b.url, requests, durationS: DURATION_S, connections: CONNECTIONS, cpus: GENERATOR_CPU });
      if (l.non2xx + p.non2xx > 0) throw new Error(`routes failed: ${l.non2xx} (LMDB), ${p.non2xx} (PostgreSQL)`);
      rounds.push({ round: r, lmdb_rps: Math.round(l.rps), postgres_rps: Math.round(p.rps), ratio: p.rps / l.rps, load_1m: loadAverage1m() });
    }
    const ratios = rounds.map((r) => r.ratio).sort((x, y) => x - y);
    console.log(`\nRoute throughput (wrk, ${CONNECTIONS} connections, ${DURATION_S} s per run)\n${table(rounds)}\nmedian ratio PostgreSQL / LMDB: ${percentile(ratios, 0.5).toFixed(3)}`);

    mkdirSync(RESULTS, { recursive: true });
    const file = join(RESULTS, `store-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ writes: WRITES, creation, latency, rounds, median_ratio: percentile(ratios, 0.5) }, null, 2));
    console.log(`\nresults: ${file}`);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect().then(
      () => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_direct" CASCADE`).finally(() => client.end()),
      () => undefined,
    );
  }
}

main().catch((e) => {
  process.stderr.write(`bench:store failed: ${(e as Error).message}\n`);
  process.exit(1);
});
