/**
 * `npm run bench:scrape [-- --other <dist/src/main.js of another build>]`: what a storm of
 * /metrics/ scrapers does to another tenant's route latency (issue 14: route p99 during the
 * storm within 2× of its quiet value).
 *
 * Per rule set (BENCH_SCRAPE_RULES, default 1000,20000, all of tenant t0): every rule is made
 * active first (an outcome on both processors, and a route where its attributes can be
 * targeted), so that every per-rule family is exported (~12 MB of text at 20,000 rules with
 * Tier 3). Tenant t1 has one rule; a probe client routes it sequentially, one request every
 * 5 ms, for BENCH_SCRAPE_PHASE_S seconds quiet, then as long again while 10 scrapers (in a
 * child process) loop on /metrics/ (gzip accepted, as Prometheus does). With `--other`, that build runs side by side
 * on a copy of the same data and the phases are interleaved (A B, then B A, ...), so both see
 * the same neighbours: compare the ratios, not absolute figures, on a shared machine.
 *   BENCH_SCRAPE_RULES (1000,20000), BENCH_ROUNDS (3), BENCH_SCRAPE_PHASE_S (6),
 *   BENCH_SCRAPE_SERVER_CPU (unset: not pinned; e.g. "1": every service is pinned to that core
 *   with taskset, as `npm run bench` pins the server, so that rendering competes with routing
 *   for one core)
 */
import { fork } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './lib/cli.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { seed } from './lib/seed.js';
import type { RuleRecord } from '../src/tenants/tenant.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const RULE_SIZES = (process.env.BENCH_SCRAPE_RULES ?? '1000,20000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PHASE_S = Number(process.env.BENCH_SCRAPE_PHASE_S ?? 6);
const SCRAPERS = 10;
const PROBE_GAP_MS = 5;
const SERVER_CPU = process.env.BENCH_SCRAPE_SERVER_CPU || undefined;

interface Build {
  name: string;
  main: string;
}

interface Phase {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  n: number;
}

/** Runs `fn` over `items` with `width` requests in flight. */
async function inParallel<T>(items: T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

async function post(url: string, path: string, key: string, body: unknown): Promise<number> {
  const r = await fetch(url + path, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  return r.status;
}

/** An outcome on both processors of every rule, and a route to every rule its attributes can target alone. */
async function activate(url: string, rules: RuleRecord[]): Promise<void> {
  const jobs: (() => Promise<number>)[] = [];
  for (const r of rules) {
    for (const p of [r.primary_id, r.secondary_id]) {
      jobs.push(() => post(url, '/v1/outcome', 'key0', { rule_id: r.rule_id, processor_id: p, success: true, latency_ms: 100 }));
    }
    const [country, currency, method, ...rest] = r.attributes;
    if (country !== '*' && rest.every((a) => a === '*')) jobs.push(() => post(url, '/v1/route', 'key0', { country, currency, payment_method: method }));
  }
  let failed = 0;
  await inParallel(jobs, 16, async (job) => {
    const status = await job();
    if (status >= 300) failed++;
  });
  if (failed > 0) throw new Error(`${failed} activation requests failed`);
}

async function probe(url: string, seconds: number): Promise<Phase> {
  const lat: number[] = [];
  const end = performance.now() + seconds * 1000;
  const body = JSON.stringify({ country: 'ZZ', currency: 'USD', payment_method: 'card' });
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, PROBE_GAP_MS));
    const t0 = performance.now();
    const r = await fetch(url + '/v1/route', { method: 'POST', headers: { 'x-api-key': 'key1', 'content-type': 'application/json' }, body });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`probe route answered ${r.status}`);
    lat.push(performance.now() - t0);
  }
  lat.sort((a, b) => a - b);
  const at = (q: number) => Math.round(lat[Math.min(lat.length - 1, Math.floor(lat.length * q))] * 100) / 100;
  return { p50_ms: at(0.5), p99_ms: at(0.99), max_ms: at(1), n: lat.length };
}

/** One scrape: its status and the bytes received. */
function scrapeOnce(url: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    get(`${url}/metrics/`, { headers: { 'Accept-Encoding': 'gzip' } }, (res) => {
      let bytes = 0;
      res.on('data', (b: Buffer) => (bytes += b.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    }).on('error', reject);
  });
}

/**
 * The probe while SCRAPERS clients scrape in a loop, in a child process: receiving ~25 MB/s of
 * scrapes in this process would slow the probe's own timing, not the service's.
 */
async function storm(url: string, seconds: number): Promise<Phase & { scrapes: number; scrape_errors: number; gzip_bytes: number }> {
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, SCRAPE_CHILD_URL: url }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const done = new Promise<{ scrapes: number; errors: number; bytes: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { scrapes: number; errors: number; bytes: number }));
    child.once('exit', (code) => reject(new Error(`scraper process exited with ${code}`)));
  });
  await new Promise((r) => setTimeout(r, 500));
  const p = await probe(url, seconds);
  child.send('stop');
  const { scrapes, errors, bytes } = await done;
  return { ...p, scrapes, scrape_errors: errors, gzip_bytes: bytes };
}

/**
 * The scraper process: SCRAPERS loops until told to stop, then reports the scrapes answered 200
 * and the others (a scrape that waited past SERVICE_REQUEST_TIMEOUT_MS gets 503: on a saturated
 * core the render thread, niced, may be that slow), counted rather than fatal.
 */
async function scraperChild(url: string): Promise<void> {
  let stop = false;
  let scrapes = 0;
  let errors = 0;
  let bytes = 0;
  process.once('message', () => (stop = true));
  await Promise.all(
    Array.from({ length: SCRAPERS }, async () => {
      while (!stop) {
        const r = await scrapeOnce(url);
        if (r.status === 200) {
          bytes = r.bytes;
          scrapes++;
        } else errors++;
      }
    }),
  );
  process.send!({ scrapes, errors, bytes }, () => process.exit(0));
}

/** Size of the plain text (the first scrape starts the render thread; on a busy core it may take past the request timeout). */
async function plainBytes(url: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const r = await fetch(`${url}/metrics/`, { headers: { 'accept-encoding': 'identity' } });
    const bytes = (await r.arrayBuffer()).byteLength;
    if (r.status === 200 || attempt === 3) return r.status === 200 ? bytes : NaN;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const v = parseCli({
    usage: 'npm run bench:scrape -- [--other <path to another build\'s dist/src/main.js>]',
    summary:
      'Route p99 of a quiet tenant with and without 10 /metrics/ scrapers looping, at 1,000 and 20,000 active rules; ' +
      'with --other, against another build on the same data, interleaved. JSON under bench/results/.',
    options: { other: { type: 'string', default: '' } },
    help: { other: 'the other build\'s dist/src/main.js (e.g. a copy of dist/ from before a change)' },
  });
  const builds: Build[] = [{ name: 'this', main: join(DIST, 'src/main.js') }];
  if (v.other) builds.push({ name: 'other', main: String(v.other) });
  const results: Record<string, unknown>[] = [];
  for (const size of RULE_SIZES) {
    const base = mkdtempSync(join(tmpdir(), 'scrape-bench-'));
    const services: Child[] = [];
    try {
      const { rules } = await seed(join(base, 'data'), { rules: size, tenants: 1 });
      for (const b of builds) {
        const dir = join(base, b.name);
        cpSync(join(base, 'data'), dir, { recursive: true });
        const svc = await startChild(b.main, { SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: 'key0:t0,key1:t1', SERVICE_RATE_LIMIT_RPS: '0', SERVICE_TIER: '3' }, 120_000, { cpus: SERVER_CPU });
        services.push(svc);
        if ((await post(svc.url, '/v1/rules', 'key1', { rule_id: 'quiet', attributes: ['ZZ', 'USD', 'card'], primary_id: 'qa', secondary_id: 'qb' })) !== 201) throw new Error('quiet rule not created');
        await activate(svc.url, rules);
      }
      const bytes = await Promise.all(services.map((s) => plainBytes(s.url)));
      const rounds: Record<string, unknown>[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
        const row: Record<string, unknown> = { round: round + 1, load_avg_1m: Math.round(loadavg()[0] * 10) / 10 };
        for (const i of order) {
          const quiet = await probe(services[i].url, PHASE_S);
          const busy = await storm(services[i].url, PHASE_S);
          row[builds[i].name] = { quiet, storm: busy, p99_ratio: Math.round((busy.p99_ms / quiet.p99_ms) * 100) / 100 };
          console.log(
            `${size} rules, round ${round + 1}, ${builds[i].name}: route p99 quiet ${quiet.p99_ms} ms, storm ${busy.p99_ms} ms ` +
              `(×${(busy.p99_ms / quiet.p99_ms).toFixed(2)}), p50 ${quiet.p50_ms} → ${busy.p50_ms} ms, ${busy.scrapes} scrapes${busy.scrape_errors > 0 ? ` (+${busy.scrape_errors} not 200)` : ''}; load ${row.load_avg_1m}`,
          );
        }
        rounds.push(row);
      }
      const summary: Record<string, unknown> = { rules: size, plain_bytes: Object.fromEntries(builds.map((b, i) => [b.name, bytes[i]])) };
      for (const b of builds) {
        const of = (f: (x: { quiet: Phase; storm: Phase; p99_ratio: number }) => number) => median(rounds.map((r) => f(r[b.name] as { quiet: Phase; storm: Phase; p99_ratio: number })));
        summary[b.name] = { quiet_p99_ms: of((x) => x.quiet.p99_ms), storm_p99_ms: of((x) => x.storm.p99_ms), p99_ratio_median: of((x) => x.p99_ratio) };
      }
      console.log(JSON.stringify(summary));
      results.push({ ...summary, rounds });
    } finally {
      await Promise.all(services.map((s) => s.stop()));
      rmSync(base, { recursive: true, force: true });
    }
  }
  const out = { date: new Date().toISOString(), builds, rounds: ROUNDS, phase_s: PHASE_S, scrapers: SCRAPERS, server_cpu: SERVER_CPU ?? null, results };
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `scrape-${out.date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`written to ${file}`);
}

(process.env.SCRAPE_CHILD_URL ? scraperChild(process.env.SCRAPE_CHILD_URL) : main()).catch((e) => {
  console.error(e);
  process.exit(1);
});
