/**
 * Webhook deliveries of replicas that are gone (cluster mode on a shared store). Every replica
 * refreshes a heartbeat key (`rte:{c}:alive:<replica>`, expiring after 3 lease times); the
 * leader, every 2 lease times, lists the replicas that hold pending deliveries in the store
 * and adopts the queue of any whose heartbeat expired (the store moves the rows in one
 * statement, so two adopters never split one delivery), then sends them.
 */
import { log } from '../log.js';
import type { ClusterKeys } from './keys.js';
import type { GuardedRedis } from './redis-client.js';

/** What the takeover needs of the webhook dispatcher. */
export interface OrphanDeliveries {
  /** Replica ids holding pending deliveries in the shared store. */
  owners(): Promise<string[]>;
  /** Moves a gone replica's pending deliveries to this one and sends them; how many. */
  adopt(replicaId: string): Promise<number>;
}

export class DeliveryTakeover {
  private scanning = false;
  /** Deliveries this replica took over. */
  adopted = 0;

  constructor(
    private readonly conn: GuardedRedis,
    private readonly keys: ClusterKeys,
    private readonly replicaId: string,
    private readonly ttlMs: number,
    private readonly orphans: OrphanDeliveries,
  ) {}

  /** Refreshes this replica's heartbeat. */
  async heartbeat(): Promise<void> {
    try {
      await this.conn.run((r) => r.set(this.keys.alivePrefix + this.replicaId, '1', 'PX', this.ttlMs));
    } catch {
      // Redis unreachable: the next heartbeat tries again.
    }
  }

  /** One scan (the leader calls it; `stillLeader` is checked before each adoption). */
  async scan(stillLeader: () => boolean): Promise<void> {
    if (this.scanning) return;
    this.scanning = true;
    try {
      const owners = (await this.orphans.owners()).filter((id) => id !== this.replicaId);
      if (owners.length === 0) return;
      const alive = await this.conn.run((r) => r.mget(...owners.map((id) => this.keys.alivePrefix + id)));
      for (let i = 0; i < owners.length; i++) {
        if (alive[i] !== null || !stillLeader()) continue;
        this.adopted += await this.orphans.adopt(owners[i]);
      }
    } catch (e) {
      log.warn('cluster: could not take over the webhook deliveries of gone replicas; retried', { err: String((e as Error)?.message ?? e) });
    } finally {
      this.scanning = false;
    }
  }
}
