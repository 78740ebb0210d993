/**
 * Start order: config → store → shared tables → tenants and rules → webhooks (delivery thread,
 * pending deliveries resumed) → engine → HTTP.
 * Stop order (SIGTERM/SIGINT): stop accepting, answer in-flight requests, stop the engine,
 * stop webhook delivery (in-flight attempts finish or are cut within 3 s; unfinished deliveries
 * stay pending for the next start), end the metrics render thread, flush and close the store.
 */
import { readFileSync } from 'node:fs';
import uws from '@trufflesuite/uws-js-unofficial';
import type { AppContext } from './app-context.js';
import { loadConfig, type Config } from './config.js';
import { CorsPolicy } from './http/cors.js';
import type { Endpoint } from './http/endpoint.js';
import { rootEndpoints } from './http/resources/root.js';
import { routingEndpoints } from './http/resources/routing.js';
import { ruleEndpoints } from './http/resources/rules.js';
import { statsEndpoints } from './http/resources/stats.js';
import { healthEndpoints } from './http/resources/health.js';
import { configEndpoints } from './http/resources/config.js';
import { TenantConfigService } from './tenants/tenant-config.js';
import { EngineService } from './engine/engine-service.js';
import { registerEngineGauges } from './metrics/engine-gauges.js';
import { webhookEndpoints } from './http/resources/webhooks.js';
import { onboardingEndpoints } from './http/resources/onboarding.js';
import { tenantEndpoints } from './http/resources/tenants.js';
import { shadowEndpoints } from './http/resources/shadow.js';
import { readinessEndpoints } from './http/resources/readiness.js';
import { checkReadiness } from './readiness.js';
import { registerOperationsMetrics } from './metrics/operations.js';
import { overrideEndpoints } from './http/resources/overrides.js';
import { OverrideService } from './overrides/override-service.js';
import { serveForwardedCommand } from './http/manual-command.js';
import { AuditTrail } from './audit/audit-trail.js';
import { auditEndpoints } from './http/resources/audit.js';
import { DecisionLog } from './decisions/decision-log.js';
import { decisionEndpoints } from './http/resources/decisions.js';
import { dashboardEndpoints } from './http/resources/dashboard.js';
import { ShadowService } from './shadow/shadow-service.js';
import { Router } from './http/router.js';
import { RateLimiter } from './http/rate-limit.js';
import { loadModel } from './tiers/foresight/model.js';
import { log, setLogContext, setLogLevel } from './log.js';
import { Metrics } from './metrics/registry.js';
import { RuleService } from './rules/rule-service.js';
import { buildOpenApi } from './schemas/openapi.js';
import { SharedTables } from './shm/tables.js';
import { DataDirLock } from './store/data-dir-lock.js';
import { listenExclusive } from './http/listen.js';
import { restoreFastPrototypes } from './fast-prototypes.js';
import { openStore } from './store/open-store.js';
import { registerStoreGauges } from './metrics/store-gauges.js';
import { TenantRegistry } from './tenants/registry.js';
import { settingsForTier } from './tenants/tenant.js';
import { warmUpFrontThread } from './front-warm-up.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { ClusterNode } from './cluster/cluster-node.js';
import { clusterMetrics } from './metrics/cluster-metrics.js';
import { RenderThread } from './metrics/render-thread.js';
import { ScrapeRenderer } from './metrics/scrape-renderer.js';
import { ScrapeCache } from './metrics/scrape-cache.js';

export const MAX_RULES_PER_TENANT = 200_000;

export interface RunningService {
  port: number;
  app: AppContext;
  stop(): Promise<void>;
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function startService(config: Config = loadConfig()): Promise<RunningService> {
  setLogLevel(config.logLevel);
  // In cluster mode every log line names its replica.
  if (config.storeUrl !== null || config.redis !== null) setLogContext({ replica: config.replicaId });
  // The workers load the Foresight model lazily; loading it here first makes a deployment
  // without `models/` fail at start, not quietly at the first Tier 2 evaluation.
  loadModel();
  // Before the store is checked or opened: a second process on this directory must not touch it.
  const dirLock = DataDirLock.acquire(config.dataDir);
  let store;
  try {
    store = await openStore(config);
  } catch (e) {
    dirLock.release();
    throw e;
  }
  // What a start that fails midway has started, ended before the error reaches main() and its
  // process.exit(): above all the evaluation pool, whose thread may still be loading (ending it
  // then, as process.exit does, can abort the process: engine/worker/loaded.ts).
  const started: (() => Promise<void>)[] = [
    async () => {
      await store.close();
      dirLock.release();
    },
  ];
  try {
    const tables = new SharedTables();
    const configuredTenants = config.apiKeys ? config.apiKeys.tenants() : ['default'];
    const tenants = new TenantRegistry(configuredTenants, settingsForTier(config.tier, config.shadowMode));
    const metrics = new Metrics();
    // Cluster mode part 2: the node exists before the engine (whose rule hooks feed its index).
    let cluster: ClusterNode | undefined;
    if (config.redis !== null) {
      cluster = new ClusterNode(config.redis, tables, tenants, clusterMetrics(metrics, () => cluster!));
    }

    const engine = new EngineService({ tables, tenants, store, metrics, intervalMs: config.evalIntervalMs, cluster, warmUp: config.jitWarmUp });
    started.push(() => engine.stop());
    const rules = new RuleService(store, tables, tenants, engine, MAX_RULES_PER_TENANT);
    const audit = new AuditTrail(store);
    const decisions = new DecisionLog({ store, tables, tenants });
    // /metrics/: the per-rule families are rendered on the metrics render thread, or on the front
    // thread in slices while it is down. With the JIT warm-up the thread starts now, so that its
    // start and warm-up happen before traffic, not at the first scrape under load.
    const renderThread = new RenderThread({ niceIncrement: config.metricsRenderNice, warmUp: config.jitWarmUp });
    if (config.jitWarmUp) void renderThread.started().catch(() => undefined); // a failure is logged, and retried at the next scrape
    const renderer = new ScrapeRenderer(metrics, tables, tenants, renderThread);
    const scrapes = new ScrapeCache(() => renderer.render());
    const app: AppContext = { config, version: packageVersion(), store, tables, tenants, rules, metrics, scrapes, engine, audit, decisions, leadership: cluster };
    const configs = new TenantConfigService(store, tenants);
    configs.load();
    const shadow = new ShadowService({ store, tables, tenants });
    const rateLimiter = new RateLimiter(config.rateLimitRps);
    for (const t of tenants.all()) rateLimiter.configure(t.id, t.rateLimitRps);
    configs.onChange((t) => {
      engine.configChanged(t);
      shadow.settingsChanged(t);
      rateLimiter.configure(t.id, t.rateLimitRps);
    });
    const overrides = new OverrideService(store, tenants);
    rules.overrides = overrides;
    overrides.onExpired = (t, rec) =>
      audit.recordSystem(t.id, { action: 'override.expired', target_type: rec.scope === 'rule' ? 'override' : 'processor', target_id: rec.rule_id ?? rec.processor_id, before: rec, after: null });
    const loaded = rules.load();
    overrides.load();
    // Alive before the webhook queue is resumed: the leader must not take over a queue coming back.
    await cluster?.announceAlive();
    const webhooks = new WebhookDispatcher({ store, config, metrics, version: app.version });
    started.push(() => webhooks.stop());
    app.webhooks = webhooks;
    await webhooks.start();
    engine.setPublisher((tenantId, eventType, data, atMs) => webhooks.publish(tenantId, eventType, data, atMs));
    engine.start();
    cluster?.attachOrphans({ owners: () => webhooks.replicasWithPending(), adopt: (id) => webhooks.adoptFrom(id) });
    cluster?.serveCommands((c) => serveForwardedCommand(app, engine, c));
    cluster?.start();
    decisions.start();
    shadow.start(); // after engine.start(): it reads the restored failover counters
    registerEngineGauges(metrics, tenants, config.tier);

    registerOperationsMetrics(metrics, { engineStats: () => engine.stats(), webhookBacklog: () => webhooks.pendingCount() });
    metrics.gauge('service_engine_cycle_interval_seconds', 'configured evaluation interval in seconds (SERVICE_EVAL_INTERVAL_MS)', [], (g) =>
      g.set(config.evalIntervalMs / 1000),
    );
    metrics.gauge('service_store_connected', 'backing-store connectivity, 0 or 1', [], (g) => g.set(store.connected() ? 1 : 0));
    metrics.gauge('service_replica_info', 'this replica: its SERVICE_REPLICA_ID, store (lmdb or postgres) and cluster; always 1', ['replica_id', 'store', 'cluster'], (g) =>
      g.set({ replica_id: config.replicaId, store: config.storeUrl === null ? 'lmdb' : 'postgres', cluster: config.storeUrl === null && config.redis === null ? '' : config.cluster }, 1),
    );
    registerStoreGauges(metrics, store);

    const endpoints: Endpoint[] = [];
    endpoints.push(
      ...rootEndpoints(app, () => buildOpenApi(endpoints, app.version, config.apiKeys !== null)),
      ...readinessEndpoints(() =>
        checkReadiness({
          store,
          pingPool: (ms) => engine.pingPool(ms),
          engineRunning: () => engine.running(),
          intervalMs: config.evalIntervalMs,
          engineStartedAtMs: () => engine.startedAtMs,
          lastCycleEndMs: () => engine.stats().lastCycleEndMs,
        }),
      ),
      ...routingEndpoints(app, shadow),
      ...ruleEndpoints(app),
      ...statsEndpoints(app, (tenantId) => engine.banditRuleCount(tenantId)),
      ...healthEndpoints(app, engine),
      ...configEndpoints(app, configs),
      ...webhookEndpoints(webhooks, audit),
      ...onboardingEndpoints(app),
      ...tenantEndpoints(app),
      ...shadowEndpoints(app, shadow),
      ...overrideEndpoints(app, engine, overrides, cluster),
      ...auditEndpoints(app),
      ...decisionEndpoints(app),
      ...dashboardEndpoints(),
    );

    const router = new Router({
      apiKeys: config.apiKeys,
      cors: new CorsPolicy(config.corsOrigins),
      maxBodyBytes: config.maxBodyBytes,
      rateLimiter,
      requestTimeoutMs: config.requestTimeoutMs,
      requestSeries: (m, p) => metrics.requestSeries(m, p),
      onInternalError: (err, method, path) => log.error('unhandled error', { method, path, err: String((err as Error)?.stack ?? err) }),
    });
    const server = uws.App();
    router.mount(server, endpoints);

    // Every module is loaded by now (the cluster client included): undo what they did to V8's prototypes.
    restoreFastPrototypes();
    if (config.jitWarmUp) {
      await warmUpFrontThread({
        registry: metrics.registry,
        tables,
        settings: settingsForTier(config.tier, config.shadowMode),
        embeddedStore: config.storeUrl === null ? store : null,
        hotTargets: router.hotTargets,
        maxBodyBytes: config.maxBodyBytes,
      });
    }
    const listenSocket = await listenExclusive(server, config.host, config.port);
    const port = uws.us_socket_local_port(listenSocket);
    if (config.apiKeys === null) {
      log.warn('development mode: SERVICE_API_KEYS is not set, so requests are not authenticated and all are served as tenant "default"; set keys before exposing the service');
    }
    log.info('service started', { host: config.host, port, rules: loaded, tenants: configuredTenants.length, auth: config.apiKeys !== null });

    let stopping: Promise<void> | null = null;
    const stop = () =>
      (stopping ??= (async () => {
        uws.us_listen_socket_close(listenSocket);
        await Promise.race([router.drain(), new Promise((r) => setTimeout(r, 10_000))]);
        overrides.stop();
        await decisions.stop();
        // Hand the lease over first (another replica leads at once) and ship the last outcomes.
        await cluster?.stop();
        await engine.stop();
        await shadow.stop();
        await webhooks.stop();
        await renderThread.stop();
        await store.close();
        dirLock.release();
        log.info('service stopped');
      })());
    return { port, app, stop };
  } catch (e) {
    for (const end of started.reverse()) await end().catch((err) => log.error('ending a failed start', { err: String(err) }));
    throw e;
  }
}
