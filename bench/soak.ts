/**
 * `npm run bench:soak`: a steady mixed load for 10 minutes (`--minutes N` to change) —
 * POST /v1/route at 400 req/s and POST /v1/outcome at 150 req/s (generators in child
 * processes), rule churn (a rule created and another deleted every 200 ms, per tenant), the
 * evaluation cycle every 2 s — against the real service with rules loaded.
 *
 * Reports RSS at start and end (growth of its anonymous part after the first minute must stay
 * within RSS_GROWTH_BOUND_MB: median of the last minute against median of the second; the
 * file-backed part, the LMDB map's pages, is reported beside it), the front thread's event-loop delay p99
 * (prom-client's `service_process_nodejs_eventloop_lag_p99_seconds`, scraped from /metrics/
 * every 10 s), a single client's route latency (1-s sequential probe every 10 s: autocannon's
 * paced load arrives in bursts at each second, which its own percentiles include) and errors,
 * which must be zero (exit code 1 if either fails). JSON under bench/results/.
 *
 * Also (issue 14): two scrapers of /metrics/ every second; 5 webhooks of tenant t0 pointing at
 * a receiver that accepts connections and never answers, fed by a manual failover + recovery
 * of one rule every second, after a fill phase that brings its backlog to the cap
 * (MAX_PENDING_PER_WEBHOOK per webhook; beyond it the oldest are dropped) before the measured
 * run starts, so that the RSS bound measures growth once the bounded structures are full;
 * per-minute route p99 (probe), RSS (anonymous / file-backed), heap and backlog; and at the end a
 * restart on the same data, after which every rule acknowledged (201) and not deleted must be
 * there and every deleted one gone ("nothing acknowledged was lost").
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLoad } from './lib/load-child.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { seed } from './lib/seed.js';
import { outcomeRequests, probe, routeRequests } from './overload.js';
import { parseCli } from './lib/cli.js';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { MAX_PENDING_PER_WEBHOOK } from '../src/webhooks/deliveries.js';

const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const ROUTE_RPS = 400;
const OUTCOME_RPS = 150;
const CHURN_MS = 200;
/** RSS may grow at most this much after the first minute (README, Reliability and security). */
const RSS_GROWTH_BOUND_MB = 16;
const DEAD_WEBHOOKS = 5;
/** The fill phase ends when the backlog reaches its cap, or after this long. */
const FILL_LIMIT_MS = 180_000;

function minutesOption(): number {
  const v = parseCli({
    usage: 'npm run bench:soak -- [--minutes N]',
    summary:
      'A steady mixed load (route 400/s, outcome 150/s, rule churn, evaluation every 2 s) against the real service. ' +
      'Prints RSS, event-loop lag p99, a probe client\'s route latency and errors every 10 s; exit 1 if anonymous memory grows ' +
      `more than ${RSS_GROWTH_BOUND_MB} MB after the first minute or any request fails. JSON under bench/results/.`,
    options: { minutes: { type: 'string', default: '10' } },
    help: { minutes: 'duration in minutes (fractions allowed)' },
  });
  const minutes = Number(v.minutes);
  if (!(minutes > 0) || !Number.isFinite(minutes)) {
    console.error('--minutes must be a positive number');
    process.exit(2);
  }
  return minutes;
}

interface Sample {
  t_s: number;
  rss_mb: number;
  /** RSS split (from /proc): anonymous (V8 heap, malloc, buffers), file-backed (the LMDB map, code), shared (SharedArrayBuffer tables). */
  rss_anon_mb: number;
  rss_file_mb: number;
  rss_shmem_mb: number;
  /** service_webhook_deliveries_pending: the dead receiver's backlog. */
  deliveries_pending: number;
  eventloop_lag_p99_ms: number;
  heap_used_mb: number;
  rules: number;
  /** One client's sequential route requests for 1 s (autocannon's paced load comes in bursts). */
  probe_p50_ms: number;
  probe_p99_ms: number;
}

/** RssAnon, RssFile and RssShmem of a process, in MB (/proc/<pid>/status). */
function rssParts(pid: number): { anon: number; file: number; shmem: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  const mb = (field: string) => Math.round(kb(field) / 102.4) / 10;
  return { anon: mb('RssAnon'), file: mb('RssFile'), shmem: mb('RssShmem') };
}

async function main(): Promise<void> {
  const minutes = minutesOption();
  const durationS = Math.round(minutes * 60);
  const tenants = 2;
  const dir = mkdtempSync(join(tmpdir(), 'soak-'));
  let svc: Child | undefined;
  try {
    const { rules } = await seed(dir, { rules: 2000, tenants });
    const serviceEnv = {
      SERVICE_DATA_DIR: dir,
      SERVICE_API_KEYS: Array.from({ length: tenants }, (_, t) => `key${t}:t${t}`).join(','),
      SERVICE_RATE_LIMIT_RPS: '0',
      SERVICE_EVAL_INTERVAL_MS: '2000',
      SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true',
    };
    svc = await startChild(join(DIST, 'src/main.js'), serviceEnv);
    // A receiver that never answers.
    const held: Socket[] = [];
    const dead = createTcpServer((sock) => held.push(sock));
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadPort = (dead.address() as { port: number }).port;
    for (let i = 0; i < DEAD_WEBHOOKS; i++) {
      await fetch(`${svc.url}/v1/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': 'key0', 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${deadPort}/hook${i}` }),
      });
    }
    const url = svc.url;
    // Fill phase: the dead receiver's backlog is bounded (MAX_PENDING_PER_WEBHOOK per webhook),
    // and its memory grows until that cap is reached (at the steady 1 event/s below, after
    // ~12 minutes). Fill it first, so that the growth bound measures the service once its
    // bounded structures are full: growth after that is a leak, not a backlog filling.
    const rssBeforeFill = { rss_mb: Math.round(svc.rssMb() * 10) / 10, ...rssParts(svc.proc.pid!) };
    const filled = await fillBacklog(url, rules[0].rule_id, DEAD_WEBHOOKS * MAX_PENDING_PER_WEBHOOK);
    const rssAfterFill = { rss_mb: Math.round(svc.rssMb() * 10) / 10, ...rssParts(svc.proc.pid!) };
    // What a pending delivery costs (with no other load running yet): the growth over the fill, per delivery.
    const kbPerPending = Math.round(((rssAfterFill.anon - rssBeforeFill.anon) * 1024) / Math.max(1, filled.pending));
    const fill = { ...filled, rss_before: rssBeforeFill, rss_after: rssAfterFill, anon_kb_per_pending_delivery: kbPerPending };
    console.log(
      `backlog filled: ${fill.pending} deliveries pending after ${fill.events} events in ${(fill.ms / 1000).toFixed(1)} s (cap ${DEAD_WEBHOOKS * MAX_PENDING_PER_WEBHOOK}); ` +
        `RSS ${rssBeforeFill.rss_mb} → ${rssAfterFill.rss_mb} MB (anonymous ${rssBeforeFill.anon} → ${rssAfterFill.anon} MB, ~${kbPerPending} KB per pending delivery)`,
    );
    const samples: Sample[] = [];
    const probeRequests = routeRequests(rules, tenants);
    let errorsSeenByProbe = 0;
    const t0 = Date.now();
    const sample = async () => {
      const text = await (await fetch(`${url}/metrics/`)).text();
      const gauge = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
      const p = await probe(url, probeRequests);
      const stats = (await (await fetch(`${url}/v1/stats`, { headers: { 'x-api-key': 'key0' } })).json()) as { trie: { total_rules: number } };
      const parts = rssParts(svc!.proc.pid!);
      samples.push({
        t_s: Math.round((Date.now() - t0) / 1000),
        rss_mb: Math.round(svc!.rssMb() * 10) / 10,
        rss_anon_mb: parts.anon,
        rss_file_mb: parts.file,
        rss_shmem_mb: parts.shmem,
        deliveries_pending: gauge('service_webhook_deliveries_pending'),
        eventloop_lag_p99_ms: Math.round(gauge('service_process_nodejs_eventloop_lag_p99_seconds') * 1e5) / 100,
        heap_used_mb: Math.round(gauge('service_process_nodejs_heap_size_used_bytes') / 1e5) / 10,
        rules: stats.trie.total_rules,
        probe_p50_ms: p.p50,
        probe_p99_ms: p.p99,
      });
      errorsSeenByProbe += p.errors;
    };
    await sample();
    const rssStart = samples[0].rss_mb;

    // Rule churn: per tenant, create a rule every CHURN_MS and delete the one created 10 steps earlier.
    let stopChurn = false;
    const churn = { created: 0, deleted: 0, errors: 0, firstError: '' };
    const churnLoop = async (t: number) => {
      const h = { 'x-api-key': `key${t}`, 'content-type': 'application/json' };
      for (let i = 0; !stopChurn; i++) {
        const started = Date.now();
        try {
          const c = await fetch(`${url}/v1/rules`, {
            method: 'POST',
            headers: h,
            body: JSON.stringify({ rule_id: `churn_${i}`, attributes: ['ZZ', 'EUR', 'card', `churn${i}`], primary_id: 'p1', secondary_id: 'p2' }),
          });
          if (c.status === 201) churn.created++;
          else throw new Error(`create ${c.status} ${await c.text()}`);
          if (i >= 10) {
            const d = await fetch(`${url}/v1/rules/churn_${i - 10}`, { method: 'DELETE', headers: h });
            if (d.status === 200) churn.deleted++;
            else throw new Error(`delete ${d.status} ${await d.text()}`);
          }
        } catch (e) {
          churn.errors++;
          churn.firstError ||= String(e);
        }
        await new Promise((r) => setTimeout(r, Math.max(0, CHURN_MS - (Date.now() - started))));
      }
    };
    const churners = Array.from({ length: tenants }, (_, t) => churnLoop(t));
    // Scrapers: /metrics/ every second, twice.
    const scrapes = { done: 0, errors: 0 };
    const scrapeLoop = async () => {
      while (!stopChurn) {
        const started = Date.now();
        try {
          const r = await fetch(`${url}/metrics/`, { headers: { 'accept-encoding': 'gzip' } });
          await r.arrayBuffer();
          if (r.status === 200) scrapes.done++;
          else scrapes.errors++;
        } catch {
          scrapes.errors++;
        }
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - started))));
      }
    };
    const scrapers = [scrapeLoop(), scrapeLoop()];
    // Events for the dead receiver: manual failover and recovery of one rule, in turn.
    const events = { sent: 0, errors: 0 };
    const eventLoop = async () => {
      const h = { 'x-api-key': 'key0' };
      const rule = encodeURIComponent(rules[0].rule_id);
      for (let i = 0; !stopChurn; i++) {
        const r = await fetch(`${url}/v1/rules/${rule}/${i % 2 === 0 ? 'failover' : 'recover'}`, { method: 'POST', headers: h }).catch(() => null);
        if (r && (r.status === 200 || r.status === 409)) events.sent += r.status === 200 ? 1 : 0;
        else events.errors++;
        await r?.arrayBuffer();
        await new Promise((res) => setTimeout(res, 1000));
      }
    };
    const eventer = eventLoop();
    const sampler = setInterval(() => void sample().catch(() => {}), 10_000);
    const progress = setInterval(() => {
      const s = samples[samples.length - 1];
      console.log(`${s.t_s} s: rss ${s.rss_mb} MB (anon ${s.rss_anon_mb}, file ${s.rss_file_mb}, shmem ${s.rss_shmem_mb}), pending deliveries ${s.deliveries_pending}, eventloop p99 ${s.eventloop_lag_p99_ms} ms, route probe p99 ${s.probe_p99_ms} ms, heap ${s.heap_used_mb} MB, rules ${s.rules}`);
    }, 60_000);
    const [route, outcome] = await Promise.all([
      runLoad({ url, connections: 20, durationS, overallRate: ROUTE_RPS, requests: routeRequests(rules, tenants) }),
      runLoad({ url, connections: 10, durationS, overallRate: OUTCOME_RPS, requests: outcomeRequests(rules, tenants) }),
    ]);
    stopChurn = true;
    await Promise.all([...churners, ...scrapers, eventer]);
    clearInterval(sampler);
    clearInterval(progress);
    await sample();
    const rssEnd = samples[samples.length - 1].rss_mb;
    const finalMetrics = await (await fetch(`${url}/metrics/`)).text();
    const pendingDeliveries = Number(/^service_webhook_deliveries_pending ([0-9.]+)$/m.exec(finalMetrics)?.[1] ?? NaN);
    // Nothing acknowledged lost: restart on the same data, then every live churn rule is there.
    const expected = new Map<string, Set<string>>();
    const listAll = async (base: string, t: number) => {
      const ids = new Set<string>();
      let next: string | null = '/v1/rules?limit=10000';
      while (next) {
        const r: Response = await fetch(`${base}${next}`, { headers: { 'x-api-key': `key${t}` } });
        for (const x of (await r.json()) as { rule_id: string }[]) ids.add(x.rule_id);
        next = /^<([^>]+)>; rel="next"$/.exec(r.headers.get('link') ?? '')?.[1] ?? null;
      }
      return ids;
    };
    for (let t = 0; t < tenants; t++) expected.set(`t${t}`, await listAll(url, t));
    await svc.stop();
    svc = await startChild(join(DIST, 'src/main.js'), serviceEnv);
    let lost = 0;
    for (let t = 0; t < tenants; t++) {
      const after = await listAll(svc.url, t);
      for (const id of expected.get(`t${t}`)!) if (!after.has(id)) lost++;
      if (after.size !== expected.get(`t${t}`)!.size) lost += Math.abs(after.size - expected.get(`t${t}`)!.size);
    }
    held.forEach((x) => x.destroy());
    dead.close();
    // Per minute: the worst probe p99 and the last RSS of each minute.
    type Minute = { minute: number; route_probe_p99_ms: number; rss_mb: number; rss_anon_mb: number; rss_file_mb: number; heap_used_mb: number; deliveries_pending: number };
    const perMinute: Minute[] = [];
    for (const smp of samples.slice(1)) {
      const minute = Math.max(1, Math.ceil(smp.t_s / 60));
      const m = perMinute.find((x) => x.minute === minute) ?? perMinute[perMinute.push({ minute, route_probe_p99_ms: 0, rss_mb: 0, rss_anon_mb: 0, rss_file_mb: 0, heap_used_mb: 0, deliveries_pending: 0 }) - 1];
      m.route_probe_p99_ms = Math.max(m.route_probe_p99_ms, smp.probe_p99_ms);
      Object.assign(m, { rss_mb: smp.rss_mb, rss_anon_mb: smp.rss_anon_mb, rss_file_mb: smp.rss_file_mb, heap_used_mb: smp.heap_used_mb, deliveries_pending: smp.deliveries_pending });
    }
    // Growth after warm-up: the first minute fills caches, JIT and the allocator's arenas. Single
    // samples swing by 10-25 MB with the V8 heap's collection cycle (heap used 37-58 MB at a
    // steady load), so a window's level is the median of its samples (one every 10 s): the
    // second minute against the last minute under load. The bound applies to the anonymous part
    // (V8 heaps, malloc, buffers: the process's own memory). The file-backed part is the LMDB
    // map's pages the process has touched (page cache, reclaimable by the kernel): it follows the
    // data file, which grows until the bounded stores are full (the change audit reaches its
    // 10,000 entries per tenant after ~17 minutes of this churn, and its first pruning reads
    // through it: a 13 MB step then), so it is reported, not bounded.
    const underLoad = samples.slice(1, -1);
    const growthOf = (of: (x: (typeof samples)[number]) => number) => {
      const level = (from: number, to: number) => {
        const w = underLoad.filter((x) => x.t_s >= from && x.t_s < to).map(of);
        return w.length > 0 ? medianOf(w) : NaN;
      };
      const warm = level(60, 120);
      const last = level(Math.max(60, durationS - 60), durationS + 1);
      return { warm, last, growth: Number.isFinite(warm) && Number.isFinite(last) ? Math.round((last - warm) * 10) / 10 : 0 };
    };
    const total = growthOf((x) => x.rss_mb);
    const anon = growthOf((x) => x.rss_anon_mb);
    const fileBacked = growthOf((x) => x.rss_file_mb);
    const lags = samples.slice(1).map((s) => s.eventloop_lag_p99_ms).filter(Number.isFinite).sort((a, b) => a - b);
    const errors = route.non2xx + route.errors + outcome.non2xx + outcome.errors + churn.errors + errorsSeenByProbe + scrapes.errors + events.errors + lost;
    const probes = samples.slice(1).map((s) => s.probe_p99_ms).sort((a, b) => a - b);
    const result = {
      date: new Date().toISOString(),
      minutes,
      load: { route_rps: ROUTE_RPS, outcome_rps: OUTCOME_RPS, churn: `create + delete every ${CHURN_MS} ms per tenant`, tenants, eval_interval_ms: 2000 },
      route: { responses: route.responses, rps: Math.round(route.rps), p50_ms: route.p50, p99_ms: route.p99, p999_ms: route.p999, max_ms: route.max, status: route.statusCodes },
      outcome: { responses: outcome.responses, rps: Math.round(outcome.rps), p99_ms: outcome.p99, status: outcome.statusCodes },
      churn,
      scrapes,
      dead_receiver: { webhooks: DEAD_WEBHOOKS, fill_phase: fill, events_published: events.sent, event_errors: events.errors, deliveries_pending_at_end: pendingDeliveries },
      acknowledged_rules_lost_after_restart: lost,
      per_minute: perMinute,
      errors,
      rss_mb: {
        start: rssStart,
        second_minute_median: total.warm,
        last_minute_median: total.last,
        end: rssEnd,
        max: Math.max(...samples.map((s) => s.rss_mb)),
        growth_after_warmup: total.growth,
        anon_growth_after_warmup: anon.growth,
        file_growth_after_warmup: fileBacked.growth,
        bound_on_anon: RSS_GROWTH_BOUND_MB,
      },
      eventloop_lag_p99_ms: { median: lags[Math.floor(lags.length / 2)], max: lags[lags.length - 1] },
      route_probe_p99_ms: { median: probes[Math.floor(probes.length / 2)], max: probes[probes.length - 1] },
      samples,
    };
    console.log(JSON.stringify({ ...result, samples: `${samples.length} samples (in the JSON file)` }, null, 2));
    mkdirSync(RESULTS, { recursive: true });
    const file = join(RESULTS, `soak-${result.date.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2));
    console.log(`written to ${file}`);
    if (errors > 0 || result.rss_mb.anon_growth_after_warmup > RSS_GROWTH_BOUND_MB) process.exitCode = 1;
  } finally {
    await svc?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function medianOf(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** The backlog as /metrics/ reports it. */
async function pendingDeliveries(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics/`)).text();
  return Number(/^service_webhook_deliveries_pending ([0-9.]+)$/m.exec(text)?.[1] ?? NaN);
}

/**
 * Manual failovers and recoveries of one rule, back to back, until `target` deliveries are
 * pending (each event goes to every webhook of the tenant) or FILL_LIMIT_MS has passed.
 */
async function fillBacklog(url: string, ruleId: string, target: number): Promise<{ events: number; pending: number; ms: number }> {
  const started = Date.now();
  const h = { 'x-api-key': 'key0' };
  const rule = encodeURIComponent(ruleId);
  let events = 0;
  let pending = await pendingDeliveries(url);
  for (let i = 0; pending < target && Date.now() - started < FILL_LIMIT_MS; i++) {
    const r = await fetch(`${url}/v1/rules/${rule}/${i % 2 === 0 ? 'failover' : 'recover'}`, { method: 'POST', headers: h });
    await r.arrayBuffer();
    if (r.status === 200) events++;
    if (i % 50 === 49) pending = await pendingDeliveries(url);
  }
  return { events, pending: await pendingDeliveries(url), ms: Date.now() - started };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
