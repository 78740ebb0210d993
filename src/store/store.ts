/**
 * The storage interface: what the service keeps durably, independent of the backend.
 * Every write resolves only once it is committed, so an acknowledged write survives a crash.
 * LMDB (embedded) is the default; a shared backend (e.g. Redis) can implement the same
 * interface to serve several replicas.
 * A write that cannot be stored rejects with a catalogued ServiceError: STORAGE_FULL (507)
 * when there is no room, STORAGE_UNAVAILABLE (503) otherwise; nothing of it is stored.
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
  remove(tenantId: string, id: string): Promise<boolean>;
  /** Removes every entry of every tenant (a rotating generation of decision records). */
  clear(): Promise<void>;
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
  remove<V>(c: Collection<V>, tenantId: string, id: string): void;
}

export interface Store {
  collection<V>(name: string): Collection<V>;
  log<V>(name: string): Log<V>;
  /** Applies all writes of `fn` atomically: all or none. */
  atomic(fn: (batch: WriteBatch) => void): Promise<void>;
  /** True while the backend answers. */
  connected(): boolean;
  /** Whether writes are going through (a full disk makes them fail with 507). */
  status(): StoreStatus;
  /** Resolves once a small write has been committed; rejects when the store cannot take writes, e.g. 507 when the disk is full (readiness). */
  checkWritable(): Promise<void>;
  /** Waits for every pending write to be on disk, then closes. */
  close(): Promise<void>;
}
