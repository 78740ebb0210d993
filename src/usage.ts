/**
 * `npm start -- --help` (node dist/src/main.js --help): what the service reads from the
 * environment. The README's Configuration table says the same at length; a test checks that
 * every variable config.ts reads is listed here.
 */
const VARIABLES: [name: string, def: string, meaning: string][] = [
  ['PORT', '8000', 'HTTP port (0 picks a free one)'],
  ['HOST', '0.0.0.0', 'listen address'],
  ['SERVICE_DATA_DIR', './data', 'LMDB directory (created if missing)'],
  ['SERVICE_API_KEYS', 'unset', 'key[:tenant[:admin]],...; unset = development mode (no key, tenant "default")'],
  ['SERVICE_TIER', '3', 'start-up tier (1, 2 or 3) for tenants without a stored configuration'],
  ['SERVICE_SHADOW_MODE', 'false', 'start-up shadow mode for tenants without a stored configuration'],
  ['SERVICE_CORS_ORIGINS', 'unset', 'comma-separated allowed origins, or *'],
  ['SERVICE_EVAL_INTERVAL_MS', '5000', 'health evaluation cycle, 100-600000'],
  ['SERVICE_WEBHOOK_ALLOW_PRIVATE', 'false', 'allow webhook URLs on loopback/private addresses'],
  ['SERVICE_WEBHOOK_TIMEOUT_MS', '10000', 'per-attempt webhook timeout'],
  ['SERVICE_WEBHOOK_BACKOFF_MS', '1000,2000,4000', 'waits between webhook attempts'],
  ['SERVICE_MAX_BODY_BYTES', '65536', 'request body limit (413 beyond it)'],
  ['SERVICE_RATE_LIMIT_RPS', '0 (off)', 'opt-in requests per second per tenant (429 beyond it); per-tenant override in /v1/config/tiers'],
  ['SERVICE_REQUEST_TIMEOUT_MS', '10000', 'slow body -> 408, slow handler -> 503'],
  ['SERVICE_METRICS_TOKEN', 'unset', 'when set (16+ characters), /metrics needs Authorization: Bearer <token>'],
  ['SERVICE_METRICS_RENDER_NICE', '10', 'added to the nice value of the /metrics render thread, 0-19 (routes first on a shared core)'],
  ['SERVICE_JIT_WARM_UP', 'true', 'at start, run simulated work through the evaluation and /metrics threads, and the front thread\'s checkpoint and /metrics paths, so the first cycles and scrapes under load are not compiled then'],
  ['SERVICE_STORE_START_FRESH', 'false', 'start with an empty store when the stored one is damaged (its files are renamed, never deleted)'],
  ['SERVICE_STORE_URL', 'unset (LMDB)', 'postgres://user@host:5432/db: keep the configuration in PostgreSQL, shared by every replica (cluster mode)'],
  ['SERVICE_REDIS_URL', 'unset', 'redis://host:6379: replicas share their outcomes and one leader evaluates for all (cluster mode, part 2)'],
  ['SERVICE_CLUSTER', 'default', "the cluster's name: its PostgreSQL schema and Redis key prefix (a-z 0-9 _, up to 40)"],
  ['SERVICE_REPLICA_ID', 'host:port', "this replica's name in logs, metrics, GET / and the leader lease"],
  ['SERVICE_CLUSTER_LEASE_MS', '3000', 'leader lease time; a dead leader is replaced within about this long'],
  ['SERVICE_CLUSTER_STALE_MS', '15000', 'without a fresh decision table this long, a replica evaluates its own outcomes'],
  ['SERVICE_CLUSTER_SHIP_INTERVAL_MS', '200', 'outcome delta batch period'],
  ['SERVICE_CLUSTER_HEAL_MS', '2000', 'followers poll for a missed decision table this often'],
  ['SERVICE_CLUSTER_COMMAND_TIMEOUT_MS', '3000', 'a follower forwarding a manual failover/recover to the leader answers 503 after this'],
  ['SERVICE_LOG_LEVEL', 'info', 'debug, info, warn or error (JSON lines on stdout)'],
];

export function usageText(): string {
  const w = Math.max(...VARIABLES.map(([n]) => n.length)) + 2;
  return [
    'Usage: npm start            (or: node dist/src/main.js)',
    '',
    'The payment routing engine: HTTP API on PORT, embedded LMDB store in SERVICE_DATA_DIR',
    '(or, with SERVICE_STORE_URL, a PostgreSQL store shared by several replicas).',
    'Configured by environment variables only (an invalid value stops the start, naming it):',
    '',
    ...VARIABLES.map(([n, d, m]) => `  ${n.padEnd(w)}${m} (default ${d})`),
    '',
    'Endpoints: GET / (liveness), GET /ready (readiness), GET /metrics, GET /docs (API reference).',
    'SIGTERM or SIGINT: stop taking requests, answer those in flight, flush the store, exit 0.',
    'Example: SERVICE_API_KEYS=sk_test_acme:acme npm start',
  ].join('\n');
}
