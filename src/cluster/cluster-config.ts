/**
 * Cluster mode part 2 settings (SERVICE_REDIS_URL and the timings around it), parsed with the
 * rest of the configuration at start.
 */
export interface ClusterSettings {
  redisUrl: string;
  cluster: string;
  replicaId: string;
  leaseMs: number;
  shipIntervalMs: number;
  /** Without a fresh decision table for this long, a replica evaluates its own outcomes. */
  staleMs: number;
  healMs: number;
  /** The leader publishes a full snapshot of a tenant's table at least this often (deltas between). */
  snapshotMs: number;
  /** How long a follower waits for the leader to apply a forwarded operator command (and for its table). */
  commandTimeoutMs: number;
}

type Env = Record<string, string | undefined>;

export class ClusterConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw)) throw new ClusterConfigError(name, `must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ClusterConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** null when SERVICE_REDIS_URL is unset (single-process mode). */
export function loadClusterSettings(env: Env, cluster: string, replicaId: string): ClusterSettings | null {
  const url = env.SERVICE_REDIS_URL?.trim();
  if (url === undefined || url === '') return null;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ClusterConfigError('SERVICE_REDIS_URL', 'is not a URL; expected redis://host:6379');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new ClusterConfigError('SERVICE_REDIS_URL', `must start with redis:// or rediss://, got "${u.protocol}//"`);
  }
  const leaseMs = int(env, 'SERVICE_CLUSTER_LEASE_MS', 3000, 300, 60_000);
  const staleMs = int(env, 'SERVICE_CLUSTER_STALE_MS', 15_000, 1000, 600_000);
  if (staleMs <= leaseMs) throw new ClusterConfigError('SERVICE_CLUSTER_STALE_MS', `must be longer than SERVICE_CLUSTER_LEASE_MS (${leaseMs})`);
  return {
    redisUrl: url,
    cluster,
    replicaId,
    leaseMs,
    shipIntervalMs: int(env, 'SERVICE_CLUSTER_SHIP_INTERVAL_MS', 200, 20, 5000),
    staleMs,
    healMs: int(env, 'SERVICE_CLUSTER_HEAL_MS', 2000, 100, 60_000),
    snapshotMs: int(env, 'SERVICE_CLUSTER_SNAPSHOT_MS', 30_000, 1000, 3_600_000),
    commandTimeoutMs: int(env, 'SERVICE_CLUSTER_COMMAND_TIMEOUT_MS', 3000, 500, 60_000),
  };
}
