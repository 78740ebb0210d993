/**
 * The embedded LMDB store (lmdb-js). One environment under SERVICE_DATA_DIR, one named
 * database per collection or log, keys ordered as [tenantId, id] (or [tenantId, atMs, seq]).
 * Writes are committed with fsync before their promise resolves (overlappingSync off), so an
 * acknowledged write survives both a process kill and a machine crash.
 */
import { mkdirSync, statfsSync } from 'node:fs';
import { asBinary, open, type Database, type RootDatabase } from 'lmdb';
import { StoreConflict, type Collection, type CollectionOptions, type Log, type Store, type StoredForm, type WriteBatch } from './store.js';
import { Quarantine } from './lmdb-quarantine.js';
import { withUniformShape } from './lmdb-shapes.js';
import { msgpackBin } from './msgpack-bin.js';
import { decodeLogKey as decodeKey, encodeLogKey as encodeKey } from './log-cursor.js';
import { cachedReading } from './cached-reading.js';
import { reserveBytes, StoreHealth, type StoreStatus } from './store-health.js';

const MAX_KEY = '\uffff';

type AnyDb = Database<unknown, (string | number)[]>;

/** Runs one write; a refused write becomes a catalogued error (507 when the disk is full). */
type Guard = <T>(write: () => Promise<T>) => Promise<T>;

/** `tenantId`'s map in a per-tenant index, made empty on first use. */
function tenantPart(index: Map<string, Map<string, string>>, tenantId: string): Map<string, string> {
  let part = index.get(tenantId);
  if (part === undefined) index.set(tenantId, (part = new Map()));
  return part;
}

class LmdbCollection<V> implements Collection<V> {
  /**
   * The `uniqueBy` index, tenant → unique key → id, built at first use. This process is the
   * store's only writer (the data directory lock), so the index is updated when a write is
   * issued, before it commits: a second write issued meanwhile sees the first. A failed commit
   * drops the index (rebuilt from the store at next use). One map per tenant rather than one
   * keyed by tenant + key: at 100,000 rules the joined keys were ~90 bytes a rule.
   */
  private uniqueIndex: Map<string, Map<string, string>> | null = null;
  /** Ids whose insert is issued but not yet committed. */
  private readonly inserting = new Set<string>();

  constructor(
    readonly db: AnyDb,
    private readonly guard: Guard,
    readonly name: string,
    private readonly quarantine: Quarantine,
    private readonly uniqueBy?: (value: V) => string | null,
    private readonly bytes = false,
    private readonly form?: StoredForm<V>,
  ) {}

  /**
   * What lmdb-js is given to put: the value's stored form (CollectionOptions.storedForm), or a
   * byte-string value of a `bytes` collection in its msgpack form (store.ts).
   */
  stored(value: V): unknown {
    if (this.form !== undefined) return this.form.toStored(value);
    return this.bytes && value instanceof Uint8Array ? asBinary(msgpackBin(value)) : value;
  }

  /** A value as read from lmdb-js, back from its stored form. */
  private read(stored: unknown): V {
    return this.form !== undefined && stored !== undefined ? this.form.fromStored(stored) : (stored as V);
  }

  /** The tenant's part of the `uniqueBy` index (unique key → id), built with the rest at first use. */
  private index(tenantId: string): Map<string, string> {
    if (this.uniqueIndex === null) {
      // Built whole before it is kept: a read that fails half-way leaves no partial index.
      const all = new Map<string, Map<string, string>>();
      for (const { tenantId: t, id, value } of this.listAll()) {
        const u = this.uniqueBy!(value);
        if (u === null) continue;
        const idx = tenantPart(all, t);
        if (!idx.has(u)) idx.set(u, id);
      }
      this.uniqueIndex = all;
    }
    return tenantPart(this.uniqueIndex, tenantId);
  }

  /**
   * Checks the unique key of a write about to be issued and records it: throws StoreConflict
   * when another entry holds it. Returns the undo for a write that fails.
   */
  claimUnique(tenantId: string, id: string, value: V | undefined): void {
    if (!this.uniqueBy) return;
    const idx = this.index(tenantId);
    const old = this.get(tenantId, id);
    const oldKey = old === undefined ? null : this.uniqueBy(old);
    const newKey = value === undefined ? null : this.uniqueBy(value);
    if (newKey !== null) {
      const holder = idx.get(newKey);
      if (holder !== undefined && holder !== id) throw new StoreConflict('unique', this.name, tenantId, id, holder);
    }
    if (oldKey !== null && idx.get(oldKey) === id) idx.delete(oldKey);
    if (newKey !== null) idx.set(newKey, id);
  }

  /** A write whose unique key was claimed did not commit: the index is rebuilt at next use. */
  dropIndex(): void {
    this.uniqueIndex = null;
  }

  private async write<T>(tenantId: string, id: string, value: V | undefined, fn: () => Promise<T>): Promise<T> {
    this.claimUnique(tenantId, id, value);
    try {
      return await this.guard(fn);
    } catch (e) {
      this.dropIndex();
      throw e;
    }
  }
  get(tenantId: string, id: string): V | undefined {
    return this.read(this.db.get([tenantId, id]));
  }
  *list(tenantId: string): Iterable<{ id: string; value: V }> {
    for (const { key, value } of this.quarantine.range(this.name, this.db, { start: [tenantId], end: [tenantId, MAX_KEY] })) {
      yield { id: key[1] as string, value: this.read(value) };
    }
  }
  ids(tenantId: string, limit: number, after?: string): string[] {
    const out: string[] = [];
    for (const key of this.db.getKeys({ start: [tenantId, after ?? ''], end: [tenantId, MAX_KEY] })) {
      const id = key[1] as string;
      if (id === after) continue;
      out.push(id);
      if (out.length >= limit) break;
    }
    return out;
  }
  *listAll(): Iterable<{ tenantId: string; id: string; value: V }> {
    for (const { key, value } of this.quarantine.range(this.name, this.db, {})) {
      yield { tenantId: key[0] as string, id: key[1] as string, value: this.read(value) };
    }
  }
  async put(tenantId: string, id: string, value: V): Promise<void> {
    await this.write(tenantId, id, value, () => this.db.put([tenantId, id], this.stored(value)));
  }
  async insert(tenantId: string, id: string, value: V): Promise<void> {
    this.claimInsert(tenantId, id);
    try {
      await this.write(tenantId, id, value, () => this.db.put([tenantId, id], this.stored(value)));
    } finally {
      this.releaseInsert(tenantId, id);
    }
  }
  /** Reserves an id for an insert until it committed or failed; throws StoreConflict when it is taken. */
  claimInsert(tenantId: string, id: string): void {
    const k = `${tenantId}\u0000${id}`;
    if (this.inserting.has(k) || this.db.doesExist([tenantId, id])) throw new StoreConflict('id', this.name, tenantId, id);
    this.inserting.add(k);
  }
  releaseInsert(tenantId: string, id: string): void {
    this.inserting.delete(`${tenantId}\u0000${id}`);
  }
  async remove(tenantId: string, id: string): Promise<boolean> {
    // lmdb-js resolves true whether or not the key was there; the contract says whether it was.
    const existed = this.db.doesExist([tenantId, id]);
    await this.write(tenantId, id, undefined, () => this.db.remove([tenantId, id]));
    return existed;
  }
  async clear(): Promise<void> {
    this.dropIndex();
    await this.guard(() => this.db.clearAsync());
  }
}

class LmdbLog<V> implements Log<V> {
  private seq = 0;
  constructor(
    readonly db: AnyDb,
    private readonly guard: Guard,
  ) {}
  async append(tenantId: string, atMs: number, value: V): Promise<string> {
    // seq breaks ties between entries of the same millisecond; it restarts at 0 after a
    // restart, which cannot collide because atMs has moved on by then.
    const key = [tenantId, atMs, this.seq++ % 1_000_000];
    await this.guard(() => this.db.put(key, value));
    return encodeKey(key[1] as number, key[2] as number);
  }
  newest(tenantId: string, limit: number, beforeKey?: string): { key: string; value: V }[] {
    const before = beforeKey ? decodeKey(beforeKey) : null;
    const start = before ? [tenantId, before[0], before[1]] : [tenantId, Number.MAX_SAFE_INTEGER];
    const out: { key: string; value: V }[] = [];
    for (const { key, value } of this.db.getRange({ start, end: [tenantId, -1], reverse: true, limit: limit + 1 })) {
      const k = encodeKey(key[1] as number, key[2] as number);
      if (k === beforeKey) continue;
      out.push({ key: k, value: value as V });
      if (out.length >= limit) break;
    }
    return out;
  }
  count(tenantId: string): number {
    return this.db.getKeysCount({ start: [tenantId, -1], end: [tenantId, Number.MAX_SAFE_INTEGER] });
  }
  async prune(tenantId: string, cutoffMs: number): Promise<number> {
    let n = 0;
    await this.guard(() =>
      this.db.transaction(() => {
        for (const key of this.db.getKeys({ start: [tenantId, -1], end: [tenantId, cutoffMs] })) {
          this.db.removeSync(key);
          n++;
        }
      }),
    );
    return n;
  }
  async pruneBeyond(tenantId: string, keep: number): Promise<number> {
    let n = 0;
    await this.guard(() =>
      this.db.transaction(() => {
        const old = [...this.db.getKeys({ start: [tenantId, Number.MAX_SAFE_INTEGER], end: [tenantId, -1], reverse: true, offset: keep })];
        for (const key of old) {
          this.db.removeSync(key);
          n++;
        }
      }),
    );
    return n;
  }
}

/**
 * The address space LMDB maps for the data file, set once at open. lmdb-js otherwise starts
 * at 128 KB and doubles the map as the file grows, and it never unmaps the old maps (a reader
 * may still hold one): every page touched through one of them stays resident. At 100,000 rules
 * created one by one that was four maps holding 119 MB of RSS for a 74 MB file. One map of
 * 64 GiB is address space only: without MDB_WRITEMAP the file grows by what is written, not to
 * the map's size. A store beyond it still works (the map then grows as before).
 */
export const LMDB_MAP_BYTES = 64 * 2 ** 30;

function volumeBytesAt(path: string): number | undefined {
  try {
    const s = statfsSync(path);
    return s.blocks * s.bsize;
  } catch {
    return undefined;
  }
}

/**
 * A free-space reading is reused for this long: the writes of one millisecond (at most a few
 * hundred KB) cannot use up the reserve (≥ 16 MiB unless the volume is tiny), and a slice of
 * checkpoint writes no longer makes a statfs() call per record.
 */
const FREE_SPACE_TTL_MS = 1;

function freeBytesAt(path: string): number | undefined {
  try {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** The underlying error of a failed lmdb-js commit (observing `commitError` so it is handled). */
async function causeOf(e: unknown): Promise<unknown> {
  const pending = (e as { commitError?: Promise<unknown> })?.commitError;
  if (!pending || typeof pending.then !== 'function') return e;
  // The cause is settled right after the generic rejection; do not wait on it for long.
  const later = new Promise<'none'>((r) => setTimeout(() => r('none'), 100));
  try {
    await Promise.race([pending, later]);
    return e;
  } catch (cause) {
    return cause;
  }
}

export class LmdbStore implements Store {
  private readonly root: RootDatabase;
  private readonly dbs = new Map<string, AnyDb>();
  private readonly collections = new Map<string, LmdbCollection<unknown>>();
  private closed = false;
  private readonly quarantine: Quarantine;
  private readonly health: StoreHealth;
  /** Free space below which writes are refused without reaching LMDB (see reserveBytes). */
  private readonly reserve: number;
  private readonly guard: Guard = (write) => this.guarded(write);
  /** Free space for the reserve check, read at most once per FREE_SPACE_TTL_MS. */
  private readonly freeBytes: () => number | undefined;

  constructor(path: string) {
    mkdirSync(path, { recursive: true });
    this.health = new StoreHealth(
      () => this.connected(),
      () => freeBytesAt(path),
    );
    this.reserve = reserveBytes(volumeBytesAt(path));
    this.freeBytes = cachedReading(() => freeBytesAt(path), FREE_SPACE_TTL_MS);
    this.root = open({ path, noSubdir: false, compression: false, overlappingSync: false, maxDbs: 64, mapSize: LMDB_MAP_BYTES });
    this.quarantine = new Quarantine(this.root, (write) => {
      this.guard(write).catch(() => undefined); // logged by the health tracker; the record is skipped either way
    });
  }

  /**
   * Every write goes through here. lmdb-js rejects a failed commit with a generic
   * "Commit failed" whose cause (the errno) arrives on a second promise, `commitError`; left
   * unobserved that promise is an unhandled rejection, which used to kill the process.
   */
  private async guarded<T>(write: () => Promise<T>): Promise<T> {
    const free = this.freeBytes();
    if (free !== undefined && free < this.reserve) throw this.health.refusedForSpace(free, this.reserve);
    let result: T;
    try {
      result = await write();
    } catch (e) {
      if (e instanceof StoreConflict) throw e; // a refused write, not a store failure
      throw this.health.failed(await causeOf(e));
    }
    this.health.committed();
    return result;
  }

  status(): StoreStatus {
    return { ...this.health.status(), quarantined: this.quarantine.count };
  }

  private db(name: string): AnyDb {
    let db = this.dbs.get(name);
    if (!db) {
      // Alike from the start (lmdb-shapes.ts): a first write to a database read at start must
      // not deoptimise the write path every database shares.
      db = withUniformShape(this.root.openDB({ name }) as unknown as AnyDb);
      this.dbs.set(name, db);
    }
    return db;
  }

  collection<V>(name: string, options: CollectionOptions<V> = {}): Collection<V> {
    let c = this.collections.get(name);
    if (!c) {
      c = new LmdbCollection<V>(this.db(name), this.guard, name, this.quarantine, options.uniqueBy, options.bytes, options.storedForm) as LmdbCollection<unknown>;
      this.collections.set(name, c);
    }
    return c as LmdbCollection<V>;
  }

  /** One process, one store: there are no other replicas to hear from. */
  onRemoteChange(): void {}

  log<V>(name: string): Log<V> {
    return new LmdbLog<V>(this.db(name), this.guard);
  }

  async atomic(fn: (batch: WriteBatch) => void): Promise<void> {
    type Op = { c: LmdbCollection<unknown>; tenantId: string; id: string; value?: unknown; remove?: true };
    const ops: Op[] = [];
    const inserts: Op[] = [];
    fn({
      put: (c, tenantId, id, value) => void ops.push({ c: c as LmdbCollection<unknown>, tenantId, id, value }),
      insert: (c, tenantId, id, value) => {
        const op = { c: c as LmdbCollection<unknown>, tenantId, id, value };
        ops.push(op);
        inserts.push(op);
      },
      remove: (c, tenantId, id) => void ops.push({ c: c as LmdbCollection<unknown>, tenantId, id, remove: true }),
    });
    // Checked before the transaction, synchronously: this process is the only writer, and
    // a write issued earlier has claimed its id and unique key already (see LmdbCollection).
    // A conflict leaves nothing written (lmdb-js commits what a throwing callback did).
    const claimed: Op[] = [];
    try {
      for (const op of inserts) op.c.claimInsert(op.tenantId, op.id);
      for (const op of ops) op.c.claimUnique(op.tenantId, op.id, op.remove ? undefined : op.value);
      claimed.push(...inserts);
    } catch (e) {
      for (const op of ops) op.c.dropIndex();
      for (const op of inserts) op.c.releaseInsert(op.tenantId, op.id);
      throw e;
    }
    try {
      await this.guard(() =>
        this.root.transaction(() => {
          for (const op of ops) {
            if (op.remove) op.c.db.removeSync([op.tenantId, op.id]);
            else op.c.db.putSync([op.tenantId, op.id], op.c.stored(op.value));
          }
        }),
      );
    } catch (e) {
      for (const op of ops) op.c.dropIndex();
      throw e;
    } finally {
      for (const op of claimed) op.c.releaseInsert(op.tenantId, op.id);
    }
  }

  connected(): boolean {
    if (this.closed) return false;
    try {
      this.root.getStats();
      return true;
    } catch {
      return false;
    }
  }

  async checkWritable(): Promise<void> {
    if (this.closed) throw new Error('the store is closed');
    // One key, overwritten, through the same guard as every write (refused below the space
    // reserve, and a commit clears a past failure): it proves the store takes writes now.
    await this.guard(() => this.db('readiness_probe').put(['readiness', 'probe'], Date.now()));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.root.flushed;
    await this.root.close();
  }
}
