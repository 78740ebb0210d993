/**
 * What an operator wires up, checked against a real scrape: the Grafana dashboard and the
 * Prometheus alert rules in deploy/ reference only metrics the service exports (with samples,
 * after traffic, a failover and a webhook delivery); the per-rule routed and outcome counters
 * count exactly what was sent; the rules pass `promtool check rules` when promtool is
 * installed (Debian package `prometheus`).
 *
 * Cluster-mode metrics (`service_cluster_*`, and the PostgreSQL change listener's
 * `service_store_*` ones) exist only on a cluster replica: they are checked against a scrape of
 * one replica started with SERVICE_REDIS_URL on the machine's Redis (its own SERVICE_CLUSTER
 * prefix) and SERVICE_STORE_URL on the machine's PostgreSQL (its own schema). Without Redis or
 * PostgreSQL those checks are skipped with the reason, or fail under CI.
 */
import { spawnSync } from 'node:child_process';
import { run } from '../helpers/run.js';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { dropClusterKeys, redisUnavailable, SHARED_REDIS_URL } from '../helpers/redis.js';
import { dropSchema, newSchema, testPostgres } from '../helpers/postgres.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
const DASHBOARD = join(REPO_ROOT, 'deploy', 'grafana', 'payment-routing-engine.json');
const ALERTS = join(REPO_ROOT, 'deploy', 'prometheus', 'alerts.yml');
const METRIC_NAME = /\bservice_[a-z0-9_]+\b/g;
/** Metrics only a cluster replica exports: Redis (part 2) and the PostgreSQL change listener (part 1). */
const CLUSTER_METRIC = /^service_cluster_/;
const LISTENER_METRIC = /^service_store_(listening|remote_changes_total)$/;

const pgServer = await testPostgres();
/** The cluster replica's scrape ('' when it could not run). */
let clusterScrape = '';
let clusterStarted = false;
const clusterName = newSchema('obs');

let s: TestServer;
let receiver: Server;
let received = 0;
let scrape = '';
/** When `scrape` was taken (Date.now()): the cluster replica started after it takes seconds under load. */
let scrapedAtMs = 0;
const ROUTES = 200;
// p95 needs 50 latency samples (timeouts carry none): 50 successes and 3 declines.
const sent = { success: 50, decline: 3, technical: 12 };

const post = (path: string, body: unknown) => s.request('POST', path, body);

/** Sample names in a scrape (`name{labels} value` or `name value`). */
function sampleNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    names.add(/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]);
  }
  return names;
}

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

function dashboardExprs(): string[] {
  const d = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
  const exprs: string[] = [];
  for (const p of d.panels) for (const t of p.targets ?? []) exprs.push(t.expr);
  for (const a of d.annotations?.list ?? []) if (a.expr) exprs.push(a.expr);
  for (const v of d.templating?.list ?? []) if (typeof v.query === 'object' && v.query?.query) exprs.push(v.query.query);
  return exprs;
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as { port: number }).port;
  s = await startServer({ env: { SERVICE_EVAL_INTERVAL_MS: '200', SERVICE_WEBHOOK_ALLOW_PRIVATE: '1' } });
  expect((await post('/v1/webhooks', { url: `http://127.0.0.1:${port}/hook`, event_types: ['failover.triggered'] })).status).toBe(201);
  const onboard = await post('/v1/onboard', {
    processors: [
      { processor_id: 'stripe_us', name: 'Stripe US', countries: ['US'], currencies: ['USD'], priority: 1 },
      { processor_id: 'adyen_us', name: 'Adyen US', countries: ['US'], currencies: ['USD'], priority: 2 },
    ],
  });
  expect(onboard.status).toBe(201);
  for (let i = 0; i < ROUTES; i++) expect((await post('/v1/route', { country: 'US', currency: 'USD' })).status).toBe(200);
  const outcome = (success: boolean, error_code: string | null, latency_ms = 200) =>
    post('/v1/outcome', { rule_id: 'us_usd_card', processor_id: 'stripe_us', success, latency_ms, error_code });
  for (let i = 0; i < sent.success; i++) await outcome(true, null);
  for (let i = 0; i < sent.decline; i++) await outcome(false, 'do_not_honor');
  for (let i = 0; i < sent.technical; i++) await outcome(false, 'timeout', 10_000);
  await until('the failover', async () => (await s.request('GET', '/v1/failover-events')).json.length > 0);
  await until('the webhook delivery', () => received > 0);
  // A cycle after the failover: every gauge has been evaluated.
  await new Promise((r) => setTimeout(r, 500));
  scrape = (await s.request('GET', '/metrics')).text;
  scrapedAtMs = Date.now();

  // One cluster replica (it leads its own one-replica cluster): every cluster metric is exported.
  if (redisUnavailable === undefined && pgServer.ok) {
    const c = await startServer({
      env: {
        SERVICE_REDIS_URL: SHARED_REDIS_URL,
        SERVICE_STORE_URL: pgServer.url,
        SERVICE_CLUSTER: clusterName,
        SERVICE_REPLICA_ID: 'obs1',
        SERVICE_CLUSTER_LEASE_MS: '1500',
        SERVICE_CLUSTER_SHIP_INTERVAL_MS: '100',
        SERVICE_EVAL_INTERVAL_MS: '200',
      },
    });
    clusterStarted = true;
    expect((await c.request('POST', '/v1/rules', { rule_id: 'c_rule', attributes: ['US', 'USD', 'card'], primary_id: 'stripe', primary_name: 'Stripe', secondary_id: 'adyen', secondary_name: 'Adyen' })).status).toBe(201);
    await until('the replica leads', async () => (await c.request('GET', '/')).json.leadership?.leader === true, 10_000);
    for (let i = 0; i < 20; i++) await c.request('POST', '/v1/outcome', { rule_id: 'c_rule', processor_id: 'stripe', success: true, latency_ms: 100 });
    await until('a decision table published and a batch shipped', async () => {
      const text = (await c.request('GET', '/metrics')).text;
      return /service_cluster_tables_total\{result="published"\} [1-9]/.test(text) && /service_cluster_outcome_batches_total\{result="shipped"\} [1-9]/.test(text);
    }, 10_000);
    clusterScrape = (await c.request('GET', '/metrics')).text;
  }
}, 120_000);
afterAll(async () => {
  await stopAllServers();
  receiver?.close();
  if (clusterStarted) {
    await dropClusterKeys(SHARED_REDIS_URL, clusterName);
    await dropSchema(clusterName);
  }
});

/** Why the cluster replica could not be scraped (undefined: it was). */
const noClusterScrape = redisUnavailable ?? (pgServer.ok ? undefined : pgServer.reason);
if (noClusterScrape !== undefined) console.warn(`cluster metrics of deploy/ not checked: ${noClusterScrape}`);

/** Checks each metric name against the scrape that exports it (cluster ones: the cluster replica's). */
function expectExported(what: string, referenced: Iterable<string>): void {
  const single = sampleNames(scrape);
  const cluster = sampleNames(clusterScrape);
  for (const n of referenced) {
    if (CLUSTER_METRIC.test(n) || LISTENER_METRIC.test(n)) {
      if (noClusterScrape === undefined) expect(cluster, `${what} metric ${n} (cluster replica)`).toContain(n);
    } else {
      expect(single, `${what} metric ${n}`).toContain(n);
    }
  }
}

describe('operator metrics', () => {
  it('count routed decisions per processor and outcomes per result', () => {
    const labels = { rule_id: 'us_usd_card' };
    const primary = sample(scrape, 'service_processor_routed_total', { ...labels, processor_id: 'stripe_us' }) ?? 0;
    const secondary = sample(scrape, 'service_processor_routed_total', { ...labels, processor_id: 'adyen_us' }) ?? 0;
    expect(primary + secondary).toBe(ROUTES);
    expect(primary).toBeGreaterThan(ROUTES * 0.75); // primary weight 0.9
    for (const [result, n] of Object.entries(sent)) {
      expect(sample(scrape, 'service_processor_outcomes_total', { ...labels, processor_id: 'stripe_us', result }), result).toBe(n);
    }
    expect(sample(scrape, 'service_processor_outcomes_total', { ...labels, processor_id: 'adyen_us' })).toBeUndefined();
    expect(sample(scrape, 'service_processor_error_ratio', { ...labels, processor_id: 'stripe_us' })).toBeCloseTo(12 / 65, 2);
    expect(scrape).toMatch(/^service_engine_cycles_total [1-9]\d*$/m);
    expect(scrape).toMatch(/^service_engine_cycle_duration_seconds_count [1-9]\d*$/m);
    expect(scrape).toMatch(/^service_webhook_deliveries_pending 0$/m);
    const last = Number(/^service_engine_last_cycle_timestamp_seconds (\S+)$/m.exec(scrape)![1]);
    // With a 200 ms cycle, the last one ended well within 5 s of the scrape that reports it.
    expect(Math.abs(scrapedAtMs / 1000 - last)).toBeLessThan(5);
  });

  it('keeps the twelve metric names of spec 4.9', () => {
    const names = sampleNames(scrape);
    for (const n of [
      'service_requests_total',
      'service_request_duration_seconds_bucket',
      'service_transactions_routed_total',
      'service_transactions_reported_total',
      'service_failover_events_total',
      'service_processor_health_status',
      'service_processor_success_rate',
      'service_processor_latency_p95',
      'service_processor_failure_probability',
      'service_bandit_weight',
      'service_engine_tier',
      'service_store_connected',
    ]) {
      expect(names, n).toContain(n);
    }
  });
});

describe('deploy/', () => {
  it('the Grafana dashboard references only metrics present in a real scrape', () => {
    const exprs = dashboardExprs();
    expect(exprs.length).toBeGreaterThan(15);
    const referenced = new Set(exprs.flatMap((e) => e.match(METRIC_NAME) ?? []));
    expect(referenced.size).toBeGreaterThan(15);
    expectExported('dashboard', referenced);
  });

  it.skipIf(noClusterScrape !== undefined && !process.env.CI)('the dashboard and the alerts cover cluster mode, with metrics a cluster replica exports', () => {
    expect(clusterScrape, `cluster replica not scraped: ${noClusterScrape}`).not.toBe('');
    const dashboard = dashboardExprs().join('\n');
    for (const n of [
      'service_cluster_role',
      'service_cluster_epoch',
      'service_cluster_table_age_seconds',
      'service_cluster_shipping_lag_seconds_bucket',
      'service_cluster_lease_changes_total',
      'service_cluster_redis_connected',
      'service_cluster_outcome_backlog_bytes',
    ]) {
      expect(dashboard, `dashboard: ${n}`).toContain(n);
    }
    const alerts = readFileSync(ALERTS, 'utf8');
    for (const n of [
      'service_cluster_leader',
      'service_cluster_lease_changes_total',
      'service_cluster_fallback',
      'service_cluster_table_age_seconds',
      'service_cluster_shipping_lag_seconds_bucket',
      'service_cluster_outcome_backlog_bytes',
      'service_cluster_outcome_batches_total',
      'service_cluster_redis_connected',
      'service_store_listening',
    ]) {
      expect(alerts, `alerts: ${n}`).toContain(n);
    }
    // The replica is a cluster member in its own right: it leads, with a fresh table.
    expect(clusterScrape).toMatch(/^service_cluster_leader 1$/m);
    expect(clusterScrape).toMatch(/^service_cluster_role\{role="leader"\} 1$/m);
    expect(clusterScrape).toMatch(/^service_cluster_redis_connected 1$/m);
    expect(clusterScrape).toMatch(/^service_store_listening 1$/m);
    expect(clusterScrape).toMatch(new RegExp(`^service_replica_info\\{replica_id="obs1",store="postgres",cluster="${clusterName}"\\} 1$`, 'm'));
  });

  it('the dashboard covers traffic share, rates, latency, health, failovers, predictions, weights, cycle and backlog', () => {
    const all = dashboardExprs().join('\n');
    for (const n of [
      'service_processor_routed_total',
      'service_processor_outcomes_total',
      'service_processor_error_ratio',
      'service_processor_latency_p95',
      'service_processor_health_status',
      'service_failover_events_total',
      'service_processor_failure_probability',
      'service_bandit_weight',
      'service_engine_cycle_duration_seconds_bucket',
      'service_engine_evaluations_skipped_total',
      'service_webhook_deliveries_pending',
    ]) {
      expect(all, n).toContain(n);
    }
  });

  it('the alert rules reference only metrics present in a real scrape', () => {
    const text = readFileSync(ALERTS, 'utf8');
    const exprs = [...text.matchAll(/^\s+expr: (.+)$/gm)].map((m) => m[1]);
    expect(exprs.length).toBeGreaterThanOrEqual(6);
    expectExported('alert', new Set(exprs.flatMap((e) => e.match(METRIC_NAME) ?? [])));
  });

  const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  // .ci/run installs promtool (Debian package prometheus); under CI a missing binary fails.
  it.skipIf(promtool.error !== undefined && !process.env.CI)('the alert rules pass promtool check rules', async () => {
    expect(promtool.error, 'promtool is not installed (apt-get install -y prometheus)').toBeUndefined();
    const r = await run('promtool', ['check', 'rules', ALERTS]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });
});
