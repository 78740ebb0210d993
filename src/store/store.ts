/**
 * The storage interface: what the service keeps durably, independent of the backend.
 * Every write resolves only once it is committed, so an acknowledged write survives a crash.
 * Reads are synchronous: LMDB (embedded, the default) reads its memory map; PostgreSQL
 * (cluster mode, SERVICE_STORE_URL) serves them from memory loaded at start and kept current
 * by its change feed, so the service code never waits on a database to read.
 * A write that cannot be stored rejects with a catalogued ServiceError: STORAGE_FULL (507)
 * when there is no room, STORAGE_UNAVAILABLE (503) otherwise; nothing of it is stored.
 * An `insert` (or a write breaking a collection's `uniqueBy`) that collides with what is
 * stored rejects with StoreConflict; the store decides, so two replicas cannot both win.
 */

import type { StoreStatus } from './store-health.js';

/** A per-tenant keyed collection (rules, webhooks, configuration, checkpoints...). */
export interface Collection<V> {
  get(tenantId: string, id: string): V | undefined;
  /** All entries of one tenant, in key order. */
  list(tenantId: string): Iterable<{ id: string; value: V }>;
  /** Up to `limit` ids of one tenant in key order, strictly after `after` when given (pages; values are not read). */
  ids(tenantId: string, limit: number, after?: string): string[];
  /** All entries of all tenants (start-up loading). */
  listAll(): Iterable<{ tenantId: string; id: string; value: V }>;
  put(tenantId: string, id: string, value: V): Promise<void>;
  /** Like put, but only when `id` is not stored yet: rejects with StoreConflict('id') otherwise. */
  insert(tenantId: string, id: string, value: V): Promise<void>;
  remove(tenantId: string, id: string): Promise<boolean>;
  /** Removes every entry of every tenant (a rotating generation of decision records). */
  clear(): Promise<void>;
  /**
   * True when the store keeps every value in memory and each read returns that same object
   * (PostgreSQL's in-memory copy): a caller keeping values long holds the store's object
   * rather than a copy of its own. Absent: each read decodes a new object (LMDB).
   */
  readonly retainsValues?: boolean;
}

/** An append-only, time-ordered per-tenant log (failover audit trail, deliveries). */
export interface Log<V> {
  append(tenantId: string, atMs: number, value: V): Promise<string>;
  /** Newest first, strictly older than `beforeKey` when given. */
  newest(tenantId: string, limit: number, beforeKey?: string): { key: string; value: V }[];
  count(tenantId: string): number;
  /** Deletes entries older than `cutoffMs`; returns how many. */
  prune(tenantId: string, cutoffMs: number): Promise<number>;
  /** Deletes all but the newest `keep` entries; returns how many. */
  pruneBeyond(tenantId: string, keep: number): Promise<number>;
}

export interface WriteBatch {
  put<V>(c: Collection<V>, tenantId: string, id: string, value: V): void;
  /** Fails the whole batch with StoreConflict when `id` is stored already. */
  insert<V>(c: Collection<V>, tenantId: string, id: string, value: V): void;
  remove<V>(c: Collection<V>, tenantId: string, id: string): void;
}

export interface CollectionOptions<V> {
  /**
   * A second key that must be unique within a tenant (null = none for this value): a write
   * that would give two entries the same one rejects with StoreConflict('unique').
   */
  uniqueBy?: (value: V) => string | null;
  /**
   * 'shared' (the default): one copy for every replica of a cluster, changes announced to all.
   * 'replica': this replica's own records (its webhook retry queue): in the shared store, kept
   * apart under the replica's id (SERVICE_REPLICA_ID), neither seen nor changed by the others.
   * 'local': this process's high-volume records (decision records), kept on its own disk
   * (cluster mode: the replica's LMDB in SERVICE_DATA_DIR), never in a shared store.
   * A single-process store keeps all three alike.
   */
  scope?: 'shared' | 'replica' | 'local';
  /**
   * False for state each replica writes for itself and reads back only at start (engine
   * checkpoints, counters): stored and shared, but other replicas are not told of each write.
   */
  announce?: boolean;
  /**
   * Every value put is a byte string (a Uint8Array: engine checkpoints). The embedded store
   * then writes its msgpack form itself (msgpack-bin.ts), the same bytes its encoder would
   * write and read back the same way, without that encoder: msgpackr's shared write code met
   * this collection's encoder for the first time at the first checkpoint under load and was
   * deoptimised and compiled again (lmdb-shapes.ts). A value of another kind is encoded as usual.
   */
  bytes?: boolean;
  /**
   * The form the embedded store writes a value in and reads it back from (rules/stored-rule.ts:
   * values without their field names). The shared store keeps values as they are.
   */
  storedForm?: StoredForm<V>;
}

/** A value's stored form in the embedded store: `fromStored` also takes whatever an earlier version stored. */
export interface StoredForm<V> {
  toStored(value: V): unknown;
  fromStored(stored: unknown): V;
}

/** Called with a change another replica committed: the new value, or undefined once removed. */
export type RemoteChangeHandler<V> = (tenantId: string, id: string, value: V | undefined) => void;

/** A write refused because it collides with a stored entry: the same id, or the same `uniqueBy` key. */
export class StoreConflict extends Error {
  constructor(
    readonly on: 'id' | 'unique',
    readonly collection: string,
    readonly tenantId: string,
    readonly id: string,
    /** The id of the entry already holding the unique key, when known. */
    readonly holder?: string,
  ) {
    super(on === 'id' ? `${collection}: "${id}" exists already` : `${collection}: "${id}" has the unique key of another entry`);
    this.name = 'StoreConflict';
  }
}

export interface Store {
  /** One store object per name: the first call's options hold. */
  collection<V>(name: string, options?: CollectionOptions<V>): Collection<V>;
  log<V>(name: string): Log<V>;
  /** Applies all writes of `fn` atomically: all or none. */
  atomic(fn: (batch: WriteBatch) => void): Promise<void>;
  /**
   * Registers a handler for the changes other replicas make to a collection, applied to the
   * store's reads just before the handler runs. Never called by a single-process store.
   */
  onRemoteChange<V>(collection: string, handler: RemoteChangeHandler<V>): void;
  /**
   * Cluster mode (a shared store): the replica ids holding 'replica'-scoped entries of `name`,
   * and taking over another replica's (its webhook retry queue, once that replica is gone):
   * moved under this replica's id in one statement, so of two replicas adopting at once each
   * entry goes to one. Absent on a single-process store.
   */
  replicasWithEntries?(name: string): Promise<string[]>;
  adoptReplicaEntries?<V>(name: string, fromReplica: string): Promise<{ tenantId: string; id: string; value: V }[]>;
  /** True while the backend answers. */
  connected(): boolean;
  /** Whether writes are going through (a full disk makes them fail with 507). */
  status(): StoreStatus;
  /** Resolves once a small write has been committed; rejects when the store cannot take writes, e.g. 507 when the disk is full (readiness). */
  checkWritable(): Promise<void>;
  /** Waits for every pending write to be on disk, then closes. */
  close(): Promise<void>;
}
