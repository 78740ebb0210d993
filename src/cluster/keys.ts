/**
 * Redis key names of one cluster (SERVICE_CLUSTER). The cluster name sits in a hash tag, so
 * on a Redis Cluster every key of one engine cluster lands in one slot (the Lua scripts touch
 * several of them at once).
 */
export interface ClusterKeys {
  /** Leader lease: `<replica>:<epoch>`, expires unless renewed. */
  lease: string;
  /** The epoch counter: INCR at every acquisition, never expires, so epochs only grow. */
  epoch: string;
  /** Stream of outcome delta batches, trimmed by time. */
  outcomes: string;
  /** Hash tenant → latest snapshot of its decision table (binary). */
  tables: string;
  /**
   * Hash tenant → `<epoch>:<version>:<snapshot version>` of its latest table (followers poll
   * it to heal): the head, and the snapshot the deltas after it start from.
   */
  heads: string;
  /** Prefix of the per-tenant lists of deltas published since the tenant's snapshot (`<prefix><tenant>`). */
  deltasPrefix: string;
  /** Pub/sub channel announcing each published table (the table itself is the message). */
  tableChannel: string;
  /** Prefix of the per-replica heartbeat keys (`<prefix><replica id>`, with an expiry). */
  alivePrefix: string;
  /** Pub/sub channel of operator commands a follower forwards to the leader (command-relay.ts). */
  commandChannel: string;
  /** Prefix of each replica's reply channel (`<prefix><replica id>`): the leader's answers to its commands. */
  replyChannelPrefix: string;
  /** Prefix of the claim keys (`<prefix><request id>`, 60 s expiry): a forwarded command is applied once. */
  commandClaimPrefix: string;
}

/** The prefix every key of one cluster starts with (tools that list or delete a cluster's keys use it too). */
export function clusterKeyPrefix(cluster: string): string {
  return `rte:{${cluster}}:`;
}

export function clusterKeys(cluster: string): ClusterKeys {
  const p = clusterKeyPrefix(cluster);
  return {
    lease: `${p}lease`,
    epoch: `${p}epoch`,
    outcomes: `${p}outcomes`,
    tables: `${p}tables`,
    heads: `${p}heads`,
    deltasPrefix: `${p}deltas:`,
    tableChannel: `${p}tables:published`,
    alivePrefix: `${p}alive:`,
    commandChannel: `${p}commands`,
    replyChannelPrefix: `${p}replies:`,
    commandClaimPrefix: `${p}command:`,
  };
}

/** Every key of the cluster (tests delete them afterwards). */
export function allKeys(k: ClusterKeys): string[] {
  return [k.lease, k.epoch, k.outcomes, k.tables, k.heads];
}

/**
 * A 53-bit hash (cyrb53) of a string, exact in a JS number. Names a rule's processor across
 * replicas in the outcome deltas and the decision table (slots differ per replica): 8 bytes
 * instead of the ids. With 200,000 processor windows the chance that two collide is ~2e-6;
 * a collision would merge two windows' outcomes, never crash.
 */
export function hash53(s: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** Key of a processor's outcome window: tenant, rule and processor ids. */
export function windowKey(tenantId: string, ruleId: string, processorId: string): number {
  return hash53(`${tenantId}\u0000${ruleId}\u0000${processorId}`);
}

/** Key of a rule in the decision table. */
export function ruleKey(tenantId: string, ruleId: string): number {
  return hash53(`${tenantId}\u0000${ruleId}`);
}
