/**
 * Configuration from the environment, parsed and validated once at start. An invalid value
 * stops the start with a message naming the variable (ConfigError).
 */
import { hostname } from 'node:os';
import { parseApiKeys, type ApiKeyTable } from './http/api-keys.js';
import { MAX_RATE_LIMIT_RPS } from './http/rate-limit.js';
import { ClusterConfigError, loadClusterSettings, type ClusterSettings } from './cluster/cluster-config.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  apiKeys: ApiKeyTable | null; // null = development mode, every request is tenant `default`
  tier: 1 | 2 | 3;
  shadowMode: boolean;
  corsOrigins: string[]; // empty = CORS off; ['*'] = any origin
  evalIntervalMs: number;
  webhookAllowPrivate: boolean;
  webhookTimeoutMs: number;
  webhookBackoffMs: number[];
  maxBodyBytes: number;
  /** Default requests per second per tenant, all its keys together (burst: twice that); 0 = no limit (the default). */
  rateLimitRps: number;
  requestTimeoutMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Start with an empty store when the stored one is missing or damaged (its files are moved aside, not deleted). */
  storeStartFresh: boolean;
  /** When set, GET /metrics/ needs `Authorization: Bearer <token>`; null = public (the spec's default). */
  metricsToken: string | null;
  /**
   * Added to the metrics render thread's nice value (Linux), 0-19: the higher, the more the
   * route path wins a shared core, and the longer a scrape waits when the core is saturated.
   */
  metricsRenderNice: number;
  /**
   * Warm the JIT at start (SERVICE_JIT_WARM_UP): each evaluation thread evaluates a few simulated
   * minutes of traffic and the metrics render thread renders synthetic tables, so that the first
   * cycles and scrapes under load run optimised code (engine/worker/warm-up.ts, metrics/render-warm-up.ts).
   */
  jitWarmUp: boolean;
  /** postgres://… selects the PostgreSQL store (cluster mode); null = LMDB in dataDir (the default). */
  storeUrl: string | null;
  /** The cluster's name: its PostgreSQL schema and its Redis key prefix. */
  cluster: string;
  /** This replica's name in logs, metrics and GET / (default host:port). */
  replicaId: string;
  /** Cluster mode part 2 (SERVICE_REDIS_URL): shared engine state over Redis; null = off. */
  redis: ClusterSettings | null;
}

/** A cluster name is used as a PostgreSQL schema (and a key prefix): a plain lower-case identifier. */
export const CLUSTER_PATTERN = /^[a-z_][a-z0-9_]{0,39}$/;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `must be one of true/false/1/0/yes/no/on/off, got "${raw}"`);
}

function list(env: Env, name: string): string[] {
  const raw = env[name];
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function metricsToken(env: Env): string | null {
  const raw = env.SERVICE_METRICS_TOKEN;
  if (raw === undefined || raw.trim() === '') return null;
  const t = raw.trim();
  if (t.length < 16 || !/^[\x21-\x7e]+$/.test(t)) {
    throw new ConfigError('SERVICE_METRICS_TOKEN', 'must be at least 16 printable characters without spaces');
  }
  return t;
}

function redisSettings(env: Env, clusterName: string, replica: string): ClusterSettings | null {
  try {
    return loadClusterSettings(env, clusterName, replica);
  } catch (e) {
    if (e instanceof ClusterConfigError) throw new ConfigError(e.variable, e.message);
    throw e;
  }
}

function storeUrl(env: Env): string | null {
  const raw = (env.SERVICE_STORE_URL ?? '').trim();
  if (raw === '') return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError('SERVICE_STORE_URL', 'is not a URL; expected postgres://user@host:5432/database');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new ConfigError('SERVICE_STORE_URL', `must start with postgres:// (PostgreSQL is the only shared store), got "${u.protocol}//"`);
  }
  return raw;
}

function cluster(env: Env): string {
  const raw = (env.SERVICE_CLUSTER ?? '').trim();
  if (raw === '') return 'default';
  if (!CLUSTER_PATTERN.test(raw)) {
    throw new ConfigError('SERVICE_CLUSTER', `must be 1-40 of a-z 0-9 _ and not start with a digit (it names a PostgreSQL schema), got "${raw}"`);
  }
  return raw;
}

function replicaId(env: Env, host: string, port: number): string {
  const raw = (env.SERVICE_REPLICA_ID ?? '').trim();
  // PORT=0 picks a port only at listen, after the store is open: the pid stands in for it.
  if (raw === '') return port === 0 ? `${host}:pid${process.pid}` : `${host}:${port}`;
  if (!/^[\x21-\x7e]{1,60}$/.test(raw)) throw new ConfigError('SERVICE_REPLICA_ID', 'must be 1-60 printable characters without spaces');
  return raw;
}

/** Nice value added to the metrics render thread unless SERVICE_METRICS_RENDER_NICE says otherwise: routes first on a shared core. */
export const DEFAULT_METRICS_RENDER_NICE = 10;

export function loadConfig(env: Env = process.env): Config {
  const tierRaw = env.SERVICE_TIER?.trim();
  let tier: 1 | 2 | 3 = 3;
  if (tierRaw !== undefined && tierRaw !== '') {
    if (tierRaw !== '1' && tierRaw !== '2' && tierRaw !== '3') {
      throw new ConfigError('SERVICE_TIER', `must be 1, 2 or 3, got "${tierRaw}"`);
    }
    tier = Number(tierRaw) as 1 | 2 | 3;
  }
  const host = (env.HOST ?? '').trim() || '0.0.0.0';
  const corsOrigins = list(env, 'SERVICE_CORS_ORIGINS');
  for (const o of corsOrigins) {
    if (o !== '*' && !/^https?:\/\/[^/\s]+$/.test(o)) {
      throw new ConfigError('SERVICE_CORS_ORIGINS', `"${o}" is not an origin like https://shop.example.com (no path) or *`);
    }
  }
  let apiKeys: ApiKeyTable | null = null;
  // Unset = development mode (warned about at start). Set but empty or unparsable stops the
  // start: a typo must never turn authentication off silently.
  if (env.SERVICE_API_KEYS !== undefined) {
    if (env.SERVICE_API_KEYS.trim() === '') {
      throw new ConfigError('SERVICE_API_KEYS', 'is set but empty; give at least one key (key:tenant), or unset it for development mode without authentication');
    }
    try {
      apiKeys = parseApiKeys(env.SERVICE_API_KEYS);
    } catch (e) {
      throw new ConfigError('SERVICE_API_KEYS', (e as Error).message);
    }
  }
  const backoff = list(env, 'SERVICE_WEBHOOK_BACKOFF_MS');
  const webhookBackoffMs = backoff.length === 0 ? [1000, 2000, 4000] : backoff.map((b) => {
    if (!/^\d+$/.test(b)) throw new ConfigError('SERVICE_WEBHOOK_BACKOFF_MS', `"${b}" is not an integer`);
    return Number(b);
  });
  const logLevel = (env.SERVICE_LOG_LEVEL ?? 'info').trim().toLowerCase();
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    throw new ConfigError('SERVICE_LOG_LEVEL', `must be debug, info, warn or error, got "${env.SERVICE_LOG_LEVEL}"`);
  }
  const port = int(env, 'PORT', 8000, 0, 65535);
  const clusterName = cluster(env);
  const replica = replicaId(env, host === '0.0.0.0' ? hostname() : host, port);
  return {
    port,
    host,
    dataDir: (env.SERVICE_DATA_DIR ?? '').trim() || './data',
    apiKeys,
    tier,
    shadowMode: bool(env, 'SERVICE_SHADOW_MODE', false),
    corsOrigins,
    evalIntervalMs: int(env, 'SERVICE_EVAL_INTERVAL_MS', 5000, 100, 600_000),
    webhookAllowPrivate: bool(env, 'SERVICE_WEBHOOK_ALLOW_PRIVATE', false),
    webhookTimeoutMs: int(env, 'SERVICE_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    webhookBackoffMs,
    maxBodyBytes: int(env, 'SERVICE_MAX_BODY_BYTES', 64 * 1024, 1024, 16 * 1024 * 1024),
    rateLimitRps: int(env, 'SERVICE_RATE_LIMIT_RPS', 0, 0, MAX_RATE_LIMIT_RPS),
    requestTimeoutMs: int(env, 'SERVICE_REQUEST_TIMEOUT_MS', 10_000, 100, 600_000),
    logLevel: logLevel as Config['logLevel'],
    storeStartFresh: bool(env, 'SERVICE_STORE_START_FRESH', false),
    metricsToken: metricsToken(env),
    metricsRenderNice: int(env, 'SERVICE_METRICS_RENDER_NICE', DEFAULT_METRICS_RENDER_NICE, 0, 19),
    jitWarmUp: bool(env, 'SERVICE_JIT_WARM_UP', true),
    storeUrl: storeUrl(env),
    cluster: clusterName,
    replicaId: replica,
    redis: redisSettings(env, clusterName, replica),
  };
}
