/**
 * The collections and logs of the PostgreSQL store: reads from memory (memory.ts), writes
 * handed to the store (PgWrites), which commits them and then updates memory.
 */
import { decodeLogKey } from '../log-cursor.js';
import type { Collection, Log } from '../store.js';
import type { MemoryCollection, MemoryLog } from './memory.js';

/** What the collections ask of the store. */
export interface PgWrites {
  write(c: PgCollection<unknown>, op: Op): Promise<void>;
  removeEntry(c: PgCollection<unknown>, tenantId: string, id: string): Promise<boolean>;
  clearCollection(c: PgCollection<unknown>): Promise<void>;
  appendLog(l: PgLog<unknown>, tenantId: string, atMs: number, value: unknown): Promise<string>;
  pruneLog(l: PgLog<unknown>, tenantId: string, how: 'prune' | 'pruneBeyond', arg: number): Promise<number>;
}

export type Op = { kind: 'put' | 'insert' | 'remove'; c: PgCollection<unknown>; tenantId: string; id: string; value?: unknown };

export class PgCollection<V> implements Collection<V> {
  /** Reads are served from memory (memory.ts): the same object each time. */
  readonly retainsValues = true;
  constructor(
    readonly name: string,
    readonly mem: MemoryCollection<V>,
    private readonly store: PgWrites,
    readonly announce: boolean,
    readonly uniqueBy: ((v: V) => string | null) | undefined,
  ) {}
  get(tenantId: string, id: string): V | undefined {
    return this.mem.get(tenantId, id)?.value;
  }
  list(tenantId: string): Iterable<{ id: string; value: V }> {
    return this.mem.list(tenantId);
  }
  ids(tenantId: string, limit: number, after?: string): string[] {
    return this.mem.ids(tenantId, limit, after);
  }
  listAll(): Iterable<{ tenantId: string; id: string; value: V }> {
    return this.mem.listAll();
  }
  uniqueKey(value: V): string | null {
    return this.uniqueBy ? this.uniqueBy(value) : null;
  }
  /** As stored: bytes, since a key may hold NUL, which PostgreSQL text cannot. */
  uniqueKeyBytes(value: V): Buffer | null {
    const k = this.uniqueKey(value);
    return k === null ? null : Buffer.from(k, 'utf8');
  }
  /** The id holding a unique key in memory (to name it in a conflict). */
  holderOf(tenantId: string, key: string | null): string | undefined {
    if (key === null || !this.uniqueBy) return undefined;
    for (const { id, value } of this.mem.list(tenantId)) if (this.uniqueBy(value) === key) return id;
    return undefined;
  }
  private get untyped(): PgCollection<unknown> {
    return this as unknown as PgCollection<unknown>;
  }
  put(tenantId: string, id: string, value: V): Promise<void> {
    return this.store.write(this.untyped, { kind: 'put', c: this.untyped, tenantId, id, value });
  }
  insert(tenantId: string, id: string, value: V): Promise<void> {
    return this.store.write(this.untyped, { kind: 'insert', c: this.untyped, tenantId, id, value });
  }
  async remove(tenantId: string, id: string): Promise<boolean> {
    return this.store.removeEntry(this.untyped, tenantId, id);
  }
  clear(): Promise<void> {
    return this.store.clearCollection(this.untyped);
  }
}

export class PgLog<V> implements Log<V> {
  constructor(
    readonly name: string,
    readonly mem: MemoryLog<V>,
    private readonly store: PgWrites,
  ) {}
  append(tenantId: string, atMs: number, value: V): Promise<string> {
    return this.store.appendLog(this as PgLog<unknown>, tenantId, atMs, value);
  }
  newest(tenantId: string, limit: number, beforeKey?: string): { key: string; value: V }[] {
    const b = beforeKey ? decodeLogKey(beforeKey) : null;
    return this.mem.newest(tenantId, limit, b ? { atMs: b[0], seq: b[1] } : undefined);
  }
  count(tenantId: string): number {
    return this.mem.count(tenantId);
  }
  prune(tenantId: string, cutoffMs: number): Promise<number> {
    return this.store.pruneLog(this as PgLog<unknown>, tenantId, 'prune', cutoffMs);
  }
  pruneBeyond(tenantId: string, keep: number): Promise<number> {
    return this.store.pruneLog(this as PgLog<unknown>, tenantId, 'pruneBeyond', keep);
  }
}
