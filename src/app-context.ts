/** The services a request handler may use, assembled once in main.ts. */
import type { Config } from './config.js';
import type { EngineFacade } from './engine/facade.js';
import type { Ctx } from './http/endpoint.js';
import type { Metrics } from './metrics/registry.js';
import type { ScrapeCache } from './metrics/scrape-cache.js';
import type { RuleService } from './rules/rule-service.js';
import type { SharedTables } from './shm/tables.js';
import type { Store } from './store/store.js';
import type { TenantRegistry } from './tenants/registry.js';
import type { Tenant } from './tenants/tenant.js';
import type { WebhookDispatcher } from './webhooks/dispatcher.js';
import type { AuditTrail } from './audit/audit-trail.js';
import type { DecisionLog } from './decisions/decision-log.js';
import type { ClusterStatus } from './cluster/cluster-node.js';

export interface AppContext {
  config: Config;
  version: string;
  store: Store;
  tables: SharedTables;
  tenants: TenantRegistry;
  rules: RuleService;
  metrics: Metrics;
  /** /metrics/ renderings, at most one a second, shared by concurrent scrapers. */
  scrapes: ScrapeCache;
  engine: EngineFacade;
  /** The change audit: every write is recorded (`await app.audit.record(ctx, change)`) before the answer. */
  audit: AuditTrail;
  /** Decisions and outcomes of requests that carry a transaction_id. */
  decisions: DecisionLog;
  /** Webhook registry and event publishing: `webhooks.publish(tenantId, eventType, data, atMs)`. */
  webhooks?: WebhookDispatcher;
  /** Cluster mode part 2 (SERVICE_REDIS_URL): this replica's role, epoch and table age. */
  leadership?: { status(): ClusterStatus };
}

/** The tenant a request acts for: always the one its API key maps to. */
export function tenantOf(app: AppContext, ctx: Ctx): Tenant {
  return app.tenants.get(ctx.grant.tenantId);
}
