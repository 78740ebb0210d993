/**
 * `npm run bench:overload`: does the route path keep answering at twice its maximum load, and
 * does the service recover by itself?
 *
 *   1. baseline: sequential route requests (≤ 200/s, one connection) in 1-second windows → p99
 *   2. maximum: POST /v1/route as fast as two generators can drive it (10 s) → max req/s
 *   3. overload: 2 × max req/s offered on /v1/route for 60 s (two generators, 200 connections
 *      each) plus a concurrent outcome stream, with rules loaded and evaluation cycles running
 *      → route p50/p99/p99.9, achieved rate, error share, event-loop lag p99, RSS
 *   4. recovery: the same probe in 1-second windows right after → seconds until the p99
 *      is back within 2× baseline (or +5 ms) with no errors
 *
 * Options: --seconds N (overload duration, default 60), --rules N (default 2000, over 2
 * tenants). The rate limiter is off (SERVICE_RATE_LIMIT_RPS=0) so the service itself is
 * measured. Load generators run in child processes (bench/lib/load-child.ts). Results: a
 * summary on the terminal and JSON under bench/results/.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './lib/cli.js';
import { runLoad, type LoadRequest, type LoadSummary } from './lib/load-child.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { seed } from './lib/seed.js';
import type { RuleRecord } from '../src/tenants/tenant.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

/** Positive integer options, or exit 2 naming the bad one. */
function options(): { seconds: number; rules: number } {
  const v = parseCli({
    usage: 'npm run bench:overload -- [--seconds N] [--rules N]',
    summary:
      'Does the route path keep answering at twice its maximum load, and does the service recover by itself? Measures a ' +
      'baseline p99, the maximum rate, 2x that rate for --seconds with outcomes and evaluation running, then the recovery. ' +
      'Prints a summary and writes JSON under bench/results/. Takes about --seconds + 40 s and both CPU cores.',
    options: { seconds: { type: 'string', default: '60' }, rules: { type: 'string', default: '2000' } },
    help: { seconds: 'overload duration in seconds', rules: 'rules loaded (over 2 tenants)' },
  });
  const out = { seconds: Number(v.seconds), rules: Number(v.rules) };
  for (const [k, n] of Object.entries(out)) {
    if (!Number.isInteger(n) || n < 1) {
      console.error(`--${k} must be a positive integer`);
      process.exit(2);
    }
  }
  return out;
}

/** Route requests that match seeded rules (country, currency, method specific; the rest wildcards). */
export function routeRequests(rules: RuleRecord[], tenants: number): LoadRequest[] {
  const out: LoadRequest[] = [];
  for (const r of rules) {
    const [country, currency, method, ...rest] = r.attributes;
    if (country === '*' || rest.some((a) => a !== '*')) continue;
    for (let t = 0; t < tenants; t++) {
      out.push({ method: 'POST', path: '/v1/route', headers: { 'x-api-key': `key${t}` }, body: JSON.stringify({ country, currency, payment_method: method }) });
    }
    if (out.length >= 1000) break;
  }
  return out;
}

/** Outcomes on seeded rules: mostly approvals, 10% issuer declines, 5% timeouts (below every threshold). */
export function outcomeRequests(rules: RuleRecord[], tenants: number): LoadRequest[] {
  return rules.slice(0, 500).map((r, i) => {
    const kind = i % 20 === 0 ? 'timeout' : i % 10 === 5 ? 'decline' : 'ok';
    return {
      method: 'POST',
      path: '/v1/outcome',
      headers: { 'x-api-key': `key${i % tenants}` },
      body: JSON.stringify({
        rule_id: r.rule_id,
        processor_id: r.primary_id,
        success: kind === 'ok',
        latency_ms: 80 + (i % 50),
        error_code: kind === 'timeout' ? 'timeout' : kind === 'decline' ? 'do_not_honor' : null,
      }),
    };
  });
}

export async function scrapeGauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics/`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

const errorShare = (r: LoadSummary) => (r.non2xx + r.errors) / Math.max(1, r.responses + r.errors);

/** A light probe: sequential route requests (one keep-alive connection, at most 200/s) for `seconds`; p99 and errors. */
export async function probe(url: string, requests: LoadRequest[], seconds = 1): Promise<{ p50: number; p99: number; max: number; n: number; errors: number }> {
  const lat: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const q = requests[i % requests.length];
    const t = performance.now();
    try {
      const r = await fetch(url + q.path, { method: q.method, headers: { 'content-type': 'application/json', ...q.headers }, body: q.body, signal: AbortSignal.timeout(10_000) });
      await r.arrayBuffer();
      if (r.status >= 300) errors++;
    } catch {
      errors++;
    }
    const ms = performance.now() - t;
    lat.push(ms);
    if (ms < 5) await new Promise((r) => setTimeout(r, 5 - ms));
  }
  lat.sort((a, b) => a - b);
  const at = (q: number) => Math.round(lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] * 100) / 100;
  return { p50: at(0.5), p99: at(0.99), max: at(1), n: lat.length, errors };
}

async function main(): Promise<void> {
  const { seconds: overloadS, rules: ruleCount } = options();
  const tenants = 2;
  const dir = mkdtempSync(join(tmpdir(), 'overload-'));
  let svc: Child | undefined;
  try {
    const { rules } = await seed(dir, { rules: ruleCount, tenants });
    svc = await startChild(join(DIST, 'src/main.js'), {
      SERVICE_DATA_DIR: dir,
      SERVICE_API_KEYS: Array.from({ length: tenants }, (_, t) => `key${t}:t${t}`).join(','),
      SERVICE_RATE_LIMIT_RPS: '0',
      SERVICE_EVAL_INTERVAL_MS: '5000',
    });
    const url = svc.url;
    const routes = routeRequests(rules, tenants);
    const outcomes = outcomeRequests(rules, tenants);
    const check = await fetch(url + '/v1/route', { method: 'POST', headers: { 'content-type': 'application/json', ...routes[0].headers }, body: routes[0].body });
    if (check.status !== 200) throw new Error(`route probe: ${check.status} ${await check.text()}`);

    // 1. baseline
    await probe(url, routes); // warm-up
    const base = [];
    for (let i = 0; i < 3; i++) base.push(await probe(url, routes));
    const baseP99 = [...base.map((b) => b.p99)].sort((a, b) => a - b)[1];
    console.log(`baseline (sequential, ≤ 200 req/s): p50 ${base[1].p50} ms, p99 ${baseP99} ms`);

    // 2. maximum
    const maxRuns = await Promise.all([0, 1].map(() => runLoad({ url, connections: 50, durationS: 10, requests: routes })));
    const maxRps = maxRuns.reduce((a, r) => a + r.rps, 0);
    const maxP99 = Math.max(...maxRuns.map((r) => r.p99));
    console.log(`maximum: ${Math.round(maxRps)} req/s (p99 ${maxP99} ms, errors ${maxRuns.reduce((a, r) => a + r.non2xx + r.errors, 0)})`);

    // 3. overload: 2 × max offered on the route path, outcomes alongside, cycles running
    const rss0 = svc.rssMb();
    const perGen = Math.round(maxRps); // two generators → 2 × max
    const t0 = Date.now();
    const rssSamples: number[] = [];
    const lagSamples: number[] = [];
    const sampler = setInterval(() => {
      rssSamples.push(svc!.rssMb());
      scrapeGauge(url, 'service_process_nodejs_eventloop_lag_p99_seconds').then((v) => lagSamples.push(v * 1000), () => {});
    }, 5000);
    const [o1, o2, out] = await Promise.all([
      runLoad({ url, connections: 200, durationS: overloadS, overallRate: perGen, requests: routes }),
      runLoad({ url, connections: 200, durationS: overloadS, overallRate: perGen, requests: routes }),
      runLoad({ url, connections: 20, durationS: overloadS, overallRate: 300, requests: outcomes }),
    ]);
    clearInterval(sampler);
    const overloadEnd = Date.now();
    const routeResponses = o1.responses + o2.responses;
    const routeErrShare = (o1.non2xx + o2.non2xx + o1.errors + o2.errors) / Math.max(1, routeResponses + o1.errors + o2.errors);
    const overload = {
      offered_rps: 2 * perGen,
      achieved_rps: Math.round(o1.rps + o2.rps),
      route_p50_ms: Math.max(o1.p50, o2.p50),
      route_p99_ms: Math.max(o1.p99, o2.p99),
      route_p999_ms: Math.max(o1.p999, o2.p999),
      route_max_ms: Math.max(o1.max, o2.max),
      route_error_share: routeErrShare,
      route_status_codes: mergeCodes(o1.statusCodes, o2.statusCodes),
      route_timeouts: o1.timeouts + o2.timeouts,
      outcome_rps: Math.round(out.rps),
      outcome_p99_ms: out.p99,
      outcome_error_share: errorShare(out),
      eventloop_lag_p99_ms_max: Math.max(...lagSamples.filter(Number.isFinite)),
      rss_mb_before: Math.round(rss0),
      rss_mb_max: Math.round(Math.max(rss0, ...rssSamples)),
      seconds: (overloadEnd - t0) / 1000,
    };
    console.log(`overload (${overload.offered_rps} req/s offered for ${overloadS} s):`, overload);

    // 4. recovery
    const windows: { after_s: number; p50: number; p99: number; errors: number }[] = [];
    let recoveredAfterS: number | null = null;
    for (let i = 0; i < 30 && recoveredAfterS === null; i++) {
      const p = await probe(url, routes);
      const after = (Date.now() - overloadEnd) / 1000;
      windows.push({ after_s: Math.round(after * 10) / 10, p50: p.p50, p99: p.p99, errors: p.errors });
      if (p.p99 <= Math.max(2 * baseP99, baseP99 + 5) && p.errors === 0) recoveredAfterS = Math.round(after * 10) / 10;
    }
    console.log(`recovery: ${recoveredAfterS === null ? 'NOT within 30 windows' : `${recoveredAfterS} s after the overload ended`}`, windows);

    const result = {
      date: new Date().toISOString(),
      rules: ruleCount,
      tenants,
      baseline_p99_ms: baseP99,
      max: { rps: Math.round(maxRps), p99_ms: maxP99 },
      overload,
      recovery: { recovered_after_s: recoveredAfterS, windows },
      rss_mb_end: Math.round(svc.rssMb()),
    };
    mkdirSync(RESULTS, { recursive: true });
    const file = join(RESULTS, `overload-${result.date.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2));
    console.log(`\nwritten to ${file}`);
    if (recoveredAfterS === null) process.exitCode = 1;
  } finally {
    await svc?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function mergeCodes(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
