/**
 * The PostgreSQL store (cluster mode): several replicas share one configuration.
 *
 *   start ──► migrate (advisory lock) ──► load every entry and log into memory (one snapshot)
 *   read  ──► memory (synchronous, like LMDB's memory map; routing never waits on PostgreSQL)
 *   write ──► one statement (or one transaction for `atomic`) commits entry + change row
 *             ──► memory updated ──► promise resolves (the 200/201 goes out after the commit)
 *   other replicas' writes ──► NOTIFY "<schema>_changes" (and a poll every 2 s, which heals a
 *             missed notification) ──► changes read after the last applied one, each with the
 *             entry's current value ──► memory ──► onRemoteChange handlers (trie, tables…)
 *   PostgreSQL unreachable ──► writes reject with STORAGE_UNAVAILABLE (503), reads and routing
 *             go on from memory; the next poll that succeeds reloads everything (differences
 *             go to the handlers), then incremental again.
 *
 * Collections with scope 'local' (decision records) live in the replica's own LMDB (`local`);
 * scope 'replica' ones (the webhook retry queue) in PostgreSQL under the replica's id;
 * announce: false collections (engine checkpoints, counters, shadow periods) and replica
 * ones are written without a change row, several puts per statement.
 *
 * Beside this file: pg-collections.ts (the Collection/Log objects), memory.ts (what reads are
 * served from), change-listener.ts (LISTEN, replica id lock), change-cursor.ts (which changes
 * are applied, gaps), sql.ts (statements), migrations.ts (schema), codec.ts (msgpack).
 */
import pg from 'pg';
import { log } from '../../log.js';
import { StoreHealth, type StoreStatus } from '../store-health.js';
import { StoreConflict, type Collection, type CollectionOptions, type Log, type RemoteChangeHandler, type Store, type WriteBatch } from '../store.js';
import { encodeLogKey } from '../log-cursor.js';
import { ChangeCursor } from './change-cursor.js';
import { ChangeListener, ReplicaIdInUse } from './change-listener.js';
import { PgCollection, PgLog, type Op, type PgWrites } from './pg-collections.js';
import { decodeValue, encodeValue } from './codec.js';
import { MemoryCollection, MemoryLog, type LogItem } from './memory.js';
import { migrate, quoteIdent } from './migrations.js';
import { statements, type ChangeRow, type Statements } from './sql.js';

export interface PostgresStoreOptions {
  /** postgres://user@host:port/db (SERVICE_STORE_URL). */
  url: string;
  /** The cluster's schema (SERVICE_CLUSTER), a validated identifier. */
  schema: string;
  /** This replica's name (SERVICE_REPLICA_ID): on its change rows and connections. */
  replicaId: string;
  /** Where collections with scope 'local' live (the replica's LMDB). */
  local?: Store;
  /** How often the change feed is polled besides the notifications. Default 2000 ms. */
  pollMs?: number;
  /** Server-side limit of every statement. Default 5000 ms. */
  statementTimeoutMs?: number;
  /** Connections of the write pool. Default 8. */
  poolSize?: number;
  /** How long a start waits for its replica id to be free (another session holds it). Default 30 s. */
  replicaIdWaitMs?: number;
}

/** Changes read per poll query (a longer backlog takes several). */
const POLL_BATCH = 2000;
/** Changes re-read at start and after a reload, to find those still in flight (see ChangeCursor). */
const REREAD_WINDOW = 1000;
const PRUNE_CHANGES_EVERY_MS = 60_000;

function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: string })?.code === '23505';
}

export class PostgresStore implements Store, PgWrites {
  private readonly pool: pg.Pool;
  private readonly sql: Statements;
  private readonly health: StoreHealth;
  private readonly memories = new Map<string, MemoryCollection<unknown>>();
  private readonly logMemories = new Map<string, MemoryLog<unknown>>();
  private readonly collections = new Map<string, Collection<unknown>>();
  private readonly logs = new Map<string, PgLog<unknown>>();
  private readonly handlers = new Map<string, RemoteChangeHandler<unknown>[]>();
  private cursor = new ChangeCursor(0);
  private readonly listener: ChangeListener;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  /** Set when PostgreSQL could not be reached: the next successful poll reloads everything. */
  private needsReload = false;
  private reachable = true;
  private closed = false;
  private lastChangesPruneMs = 0;
  /** Quiet puts waiting for the next group commit. */
  private quietQueue = new Map<string, { c: PgCollection<unknown>; tenantId: string; id: string; value: unknown; done: { resolve: () => void; reject: (e: unknown) => void }[] }>();
  private quietFlushScheduled = false;
  /** Remote changes applied since start (metrics, tests). */
  remoteChangesApplied = 0;

  private constructor(private readonly o: PostgresStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: o.url,
      max: o.poolSize ?? 8,
      connectionTimeoutMillis: 3000,
      idleTimeoutMillis: 30_000,
      statement_timeout: o.statementTimeoutMs ?? 5000,
      query_timeout: (o.statementTimeoutMs ?? 5000) + 1000,
      idle_in_transaction_session_timeout: 10_000,
      application_name: `routing:${o.replicaId}`.slice(0, 63),
      keepAlive: true,
    });
    // An idle connection that dies (server restart, pg_terminate_backend) is dropped by the pool;
    // without a listener its error event would end the process.
    this.pool.on('error', (e) => log.warn('store connection lost', { err: e.message }));
    this.sql = statements(quoteIdent(o.schema));
    this.listener = new ChangeListener({ url: o.url, schema: o.schema, replicaId: o.replicaId, onNotify: () => this.requestPoll() });
    this.health = new StoreHealth(
      () => this.connected(),
      () => undefined,
    );
  }

  /** Connects, migrates the schema, loads everything into memory and starts following the change feed. */
  static async open(o: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(o);
    try {
      await migrate(store.pool, o.schema);
      await store.reload(false);
      await store.pool.query(store.sql.replicaStarted, [o.replicaId]);
    } catch (e) {
      await store.pool.end().catch(() => undefined);
      throw e;
    }
    // The id of a replica whose host died stays locked until PostgreSQL drops its session
    // (keepalives, ~25 s): a replacement started under that id waits for it.
    const until = Date.now() + (o.replicaIdWaitMs ?? 30_000);
    for (;;) {
      try {
        await store.listener.connect(true);
        break;
      } catch (e) {
        if (e instanceof ReplicaIdInUse && Date.now() < until) {
          log.warn(`${e.message}; waiting for it to end`);
          await new Promise((r) => setTimeout(r, 2000));
          continue;
        }
        await store.pool.end().catch(() => undefined);
        throw e;
      }
    }
    store.pollTimer = setInterval(() => store.requestPoll(), o.pollMs ?? 2000);
    store.pollTimer.unref();
    return store;
  }

  // ── collections ──────────────────────────────────────────────────────────────────────
  private memory(name: string): MemoryCollection<unknown> {
    let m = this.memories.get(name);
    if (!m) {
      m = new MemoryCollection<unknown>();
      this.memories.set(name, m);
    }
    return m;
  }

  private logMemory(name: string): MemoryLog<unknown> {
    let m = this.logMemories.get(name);
    if (!m) {
      m = new MemoryLog<unknown>();
      this.logMemories.set(name, m);
    }
    return m;
  }

  collection<V>(name: string, options: CollectionOptions<V> = {}): Collection<V> {
    let c = this.collections.get(name);
    if (!c) {
      if (options.scope === 'local') {
        if (!this.o.local) throw new Error(`collection "${name}" is kept on the local disk, but the store has no local store`);
        c = this.o.local.collection<V>(name, options) as Collection<unknown>;
      } else if (options.scope === 'replica') {
        // Stored under the replica's id; nobody else reads it, so nothing is announced.
        const own = `${name}@${this.o.replicaId}`;
        c = new PgCollection<V>(own, this.memory(own) as MemoryCollection<V>, this, false, options.uniqueBy) as unknown as Collection<unknown>;
      } else {
        c = new PgCollection<V>(name, this.memory(name) as MemoryCollection<V>, this, options.announce !== false, options.uniqueBy) as unknown as Collection<unknown>;
      }
      this.collections.set(name, c);
    }
    return c as Collection<V>;
  }

  log<V>(name: string): Log<V> {
    let l = this.logs.get(name);
    if (!l) {
      l = new PgLog<unknown>(name, this.logMemory(name), this);
      this.logs.set(name, l);
    }
    return l as Log<V>;
  }

  async replicasWithEntries(name: string): Promise<string[]> {
    const prefix = `${name}@`;
    const rows = await this.guarded(async () => (await this.pool.query<{ collection: string }>(this.sql.replicaScopes, [`${prefix}%`])).rows);
    return rows.map((r) => r.collection).filter((c) => c.startsWith(prefix)).map((c) => c.slice(prefix.length));
  }

  async adoptReplicaEntries<V>(name: string, fromReplica: string): Promise<{ tenantId: string; id: string; value: V }[]> {
    if (fromReplica === this.o.replicaId) return [];
    const own = `${name}@${this.o.replicaId}`;
    const rows = await this.guarded(
      async () => (await this.pool.query<{ tenant: string; id: string; value: Buffer; version: string }>(this.sql.adoptScope, [`${name}@${fromReplica}`, own])).rows,
    );
    const mem = this.memory(own);
    return rows.map((r) => {
      const value = decodeValue(r.value) as V;
      mem.put(r.tenant, r.id, value, Number(r.version));
      return { tenantId: r.tenant, id: r.id, value };
    });
  }

  onRemoteChange<V>(collection: string, handler: RemoteChangeHandler<V>): void {
    const list = this.handlers.get(collection) ?? [];
    list.push(handler as RemoteChangeHandler<unknown>);
    this.handlers.set(collection, list);
  }

  // ── writes ───────────────────────────────────────────────────────────────────────────
  /**
   * Runs one write against PostgreSQL: a unique-key violation becomes StoreConflict, any
   * other failure STORAGE_UNAVAILABLE (and counts as the store failing), a success clears it.
   */
  private async guarded<T>(run: () => Promise<T>, conflict?: () => StoreConflict): Promise<T> {
    if (this.closed) throw this.health.failed(new Error('the store is closed'));
    let result: T;
    try {
      result = await run();
    } catch (e) {
      if (e instanceof StoreConflict) throw e;
      if (isUniqueViolation(e) && conflict) throw conflict();
      this.markUnreachable(e);
      throw this.health.failed(e);
    }
    this.markReachable();
    this.health.committed();
    return result;
  }

  /** Applies a committed write to memory. */
  private applyLocal(op: Op, version: number): void {
    if (op.kind === 'remove') op.c.mem.remove(op.tenantId, op.id, version);
    else op.c.mem.put(op.tenantId, op.id, op.value, version);
  }

  private uniqueConflict(op: Op): StoreConflict {
    const key = op.value === undefined ? null : op.c.uniqueKey(op.value);
    return new StoreConflict('unique', op.c.name, op.tenantId, op.id, op.c.holderOf(op.tenantId, key));
  }

  /** put / insert of one entry. */
  async write(c: PgCollection<unknown>, op: Op): Promise<void> {
    if (!c.announce && op.kind === 'put') return this.queueQuiet(op);
    const version = await this.guarded(async () => {
      const r = await this.pool.query<{ version: string }>(this.entryStatement(op), this.entryParams(op));
      if (r.rows.length === 0) throw new StoreConflict('id', c.name, op.tenantId, op.id);
      return Number(r.rows[0].version);
    }, () => this.uniqueConflict(op));
    this.applyLocal(op, version);
  }

  private entryStatement(op: Op): string {
    if (op.kind === 'remove') return op.c.announce ? this.sql.removeAnnounced : this.sql.removeQuiet;
    if (op.kind === 'insert') return op.c.announce ? this.sql.insertAnnounced : this.sql.insertQuiet;
    return op.c.announce ? this.sql.putAnnounced : this.sql.putQuiet;
  }

  private entryParams(op: Op): unknown[] {
    if (op.kind === 'remove') return op.c.announce ? [op.c.name, op.tenantId, op.id, this.o.replicaId] : [op.c.name, op.tenantId, op.id];
    const p: unknown[] = [op.c.name, op.tenantId, op.id, encodeValue(op.value), op.c.uniqueKeyBytes(op.value)];
    if (op.c.announce) p.push(this.o.replicaId);
    return p;
  }

  async removeEntry(c: PgCollection<unknown>, tenantId: string, id: string): Promise<boolean> {
    const op: Op = { kind: 'remove', c, tenantId, id };
    const r = await this.guarded(async () => (await this.pool.query<{ removed: number; seq: string | null }>(this.entryStatement(op), this.entryParams(op))).rows[0]);
    const current = c.mem.get(tenantId, id);
    this.applyLocal(op, r.seq !== null ? Number(r.seq) : (current?.version ?? 0));
    return r.removed > 0;
  }

  async clearCollection(c: PgCollection<unknown>): Promise<void> {
    if (!c.announce) {
      await this.guarded(() => this.pool.query(this.sql.clearQuiet, [c.name]));
      for (const e of [...c.mem.entries()]) c.mem.remove(e.tenantId, e.id, e.version);
      return;
    }
    const seq = await this.guarded(async () => Number((await this.pool.query<{ seq: string }>(this.sql.clear, [c.name, this.o.replicaId])).rows[0].seq));
    // What another replica wrote after the clear stays.
    for (const e of [...c.mem.entries()]) if (e.version < seq) c.mem.remove(e.tenantId, e.id, seq);
  }

  /**
   * Puts of announce: false collections (engine checkpoints: one per active rule each cycle)
   * issued in the same turn of the event loop are committed by one statement.
   */
  private queueQuiet(op: Op): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const key = `${op.c.name}\u0000${op.tenantId}\u0000${op.id}`;
      const queued = this.quietQueue.get(key);
      if (queued) {
        queued.value = op.value; // the newer value wins; both writes resolve with it
        queued.done.push({ resolve, reject });
      } else {
        this.quietQueue.set(key, { c: op.c, tenantId: op.tenantId, id: op.id, value: op.value, done: [{ resolve, reject }] });
      }
      if (!this.quietFlushScheduled) {
        this.quietFlushScheduled = true;
        setImmediate(() => void this.flushQuiet());
      }
    });
  }

  private async flushQuiet(): Promise<void> {
    this.quietFlushScheduled = false;
    const batch = [...this.quietQueue.values()];
    this.quietQueue = new Map();
    if (batch.length === 0) return;
    try {
      const rows = await this.guarded(
        async () =>
          (
            await this.pool.query<{ collection: string; tenant: string; id: string; version: string }>(this.sql.putQuietMany, [
              batch.map((b) => b.c.name),
              batch.map((b) => b.tenantId),
              batch.map((b) => b.id),
              batch.map((b) => encodeValue(b.value)),
              batch.map((b) => b.c.uniqueKeyBytes(b.value)),
            ])
          ).rows,
        () => new StoreConflict('unique', batch[0].c.name, batch[0].tenantId, batch[0].id),
      );
      const versions = new Map(rows.map((r) => [`${r.collection}\u0000${r.tenant}\u0000${r.id}`, Number(r.version)]));
      for (const b of batch) {
        b.c.mem.put(b.tenantId, b.id, b.value, versions.get(`${b.c.name}\u0000${b.tenantId}\u0000${b.id}`) ?? 0);
        for (const d of b.done) d.resolve();
      }
    } catch (e) {
      for (const b of batch) for (const d of b.done) d.reject(e);
    }
  }

  async atomic(fn: (batch: WriteBatch) => void): Promise<void> {
    const ops: Op[] = [];
    const local: { kind: Op['kind']; c: Collection<unknown>; tenantId: string; id: string; value?: unknown }[] = [];
    const add = (kind: Op['kind'], c: Collection<unknown>, tenantId: string, id: string, value?: unknown) => {
      if (c instanceof PgCollection) ops.push({ kind, c, tenantId, id, value });
      else local.push({ kind, c, tenantId, id, value });
    };
    fn({
      put: (c, t, id, v) => add('put', c as Collection<unknown>, t, id, v),
      insert: (c, t, id, v) => add('insert', c as Collection<unknown>, t, id, v),
      remove: (c, t, id) => add('remove', c as Collection<unknown>, t, id),
    });
    if (ops.length > 0 && local.length > 0) throw new Error('one atomic batch may not mix local and shared collections');
    if (local.length > 0) {
      await this.o.local!.atomic((b) => {
        for (const l of local) {
          if (l.kind === 'remove') b.remove(l.c, l.tenantId, l.id);
          else b[l.kind](l.c, l.tenantId, l.id, l.value);
        }
      });
      return;
    }
    if (ops.length === 0) return;
    let failed: Op | undefined;
    const versions = await this.guarded(
      async () => {
        const client = await this.pool.connect();
        let ok = false;
        let broken = false;
        try {
          await client.query('BEGIN');
          const out: number[] = [];
          for (const op of ops) {
            failed = op;
            const r = await client.query<{ version?: string; seq?: string | null }>(this.entryStatement(op), this.entryParams(op));
            if (op.kind === 'insert' && r.rows.length === 0) throw new StoreConflict('id', op.c.name, op.tenantId, op.id);
            const row = r.rows[0];
            out.push(op.kind === 'remove' ? Number(row?.seq ?? op.c.mem.get(op.tenantId, op.id)?.version ?? 0) : Number(row.version));
          }
          await client.query('COMMIT');
          ok = true;
          return out;
        } finally {
          if (!ok) await client.query('ROLLBACK').catch(() => (broken = true));
          client.release(broken); // a connection that cannot roll back is not reused
        }
      },
      () => this.uniqueConflict(failed!),
    );
    ops.forEach((op, i) => this.applyLocal(op, versions[i]));
  }

  async appendLog(l: PgLog<unknown>, tenantId: string, atMs: number, value: unknown): Promise<string> {
    const seq = await this.guarded(async () => {
      const r = await this.pool.query<{ seq: string }>(this.sql.append, [l.name, tenantId, atMs, encodeValue(value), this.o.replicaId]);
      return Number(r.rows[0].seq);
    });
    l.mem.add(tenantId, { atMs, seq, value });
    return encodeLogKey(atMs, seq);
  }

  async pruneLog(l: PgLog<unknown>, tenantId: string, how: 'prune' | 'pruneBeyond', arg: number): Promise<number> {
    const key = how === 'prune' ? `before:${arg}` : `keep:${arg}`;
    const removed = await this.guarded(async () => {
      const r = await this.pool.query<{ removed: number }>(how === 'prune' ? this.sql.prune : this.sql.pruneBeyond, [l.name, tenantId, arg, key, this.o.replicaId]);
      return r.rows[0].removed;
    });
    if (how === 'prune') l.mem.prune(tenantId, arg);
    else l.mem.pruneBeyond(tenantId, arg);
    return removed;
  }

  // ── change feed ──────────────────────────────────────────────────────────────────────
  /** Polls now, or once more after the poll under way (notifications coalesce). */
  requestPoll(): void {
    if (this.closed) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = this.poll().finally(() => {
      this.polling = null;
      if (this.pollAgain) {
        this.pollAgain = false;
        this.requestPoll();
      }
    });
  }

  /** Resolves once every change committed before the call has been applied (tests, benchmarks). */
  async syncNow(): Promise<void> {
    while (this.polling) await this.polling;
    this.requestPoll();
    while (this.polling) await this.polling;
  }

  private async poll(): Promise<void> {
    try {
      if (this.needsReload) {
        await this.reload(true);
        this.needsReload = false;
        log.warn('store reachable again: reloaded from PostgreSQL', { replica: this.o.replicaId });
      }
      for (;;) {
        const r = await this.pool.query<ChangeRow>(this.sql.changesSince, [this.cursor.from(), POLL_BATCH]);
        this.markReachable();
        for (const row of r.rows) if (this.cursor.take(Number(row.seq))) this.applyRemote(row);
        this.cursor.advance(Date.now());
        if (r.rows.length < POLL_BATCH) break;
      }
      this.housekeeping();
    } catch (e) {
      this.markUnreachable(e);
      if (!this.closed) log.debug('store poll failed', { err: String((e as Error)?.message ?? e) });
    }
  }

  private housekeeping(): void {
    const now = Date.now();
    for (const m of this.memories.values()) m.sweep(now);
    if (now - this.lastChangesPruneMs < PRUNE_CHANGES_EVERY_MS) return;
    this.lastChangesPruneMs = now;
    this.pool.query(this.sql.pruneChanges).catch((e) => log.warn('old store changes not pruned', { err: String(e?.message ?? e) }));
  }

  /** One change of another replica: memory first, then the handlers (the live views). */
  private applyRemote(row: ChangeRow): void {
    // This replica's own writes are in memory since they committed.
    if (row.replica === this.o.replicaId) return;
    this.remoteChangesApplied++;
    if (row.kind === 'entry' && row.key !== null) {
      const mem = this.memory(row.collection);
      const seq = Number(row.seq);
      if (row.value === null) {
        if (mem.remove(row.tenant, row.key, seq)) this.notify(row.collection, row.tenant, row.key, undefined);
      } else {
        const value = decodeValue(row.value);
        if (mem.put(row.tenant, row.key, value, Number(row.version))) this.notify(row.collection, row.tenant, row.key, value);
      }
    } else if (row.kind === 'clear') {
      // Only what was written before the clear: a clear read again (after a reload) keeps later writes.
      const mem = this.memory(row.collection);
      const seq = Number(row.seq);
      for (const e of [...mem.entries()]) {
        if (e.version < seq && mem.remove(e.tenantId, e.id, seq)) this.notify(row.collection, e.tenantId, e.id, undefined);
      }
    } else if (row.kind === 'log' && row.log_value !== null && row.key !== null) {
      this.logMemory(row.collection).add(row.tenant, { atMs: Number(row.at_ms), seq: Number(row.key), value: decodeValue(row.log_value) });
    } else if (row.kind === 'prune' && row.key !== null) {
      const [how, arg] = row.key.split(':');
      const m = this.logMemory(row.collection);
      if (how === 'before') m.prune(row.tenant, Number(arg));
      else if (how === 'keep') m.pruneBeyond(row.tenant, Number(arg));
    }
  }

  private notify(collection: string, tenantId: string, id: string, value: unknown): void {
    for (const h of this.handlers.get(collection) ?? []) {
      try {
        h(tenantId, id, value);
      } catch (e) {
        log.error('applying a change from another replica failed', { collection, tenant: tenantId, id, err: String((e as Error)?.stack ?? e) });
      }
    }
  }

  /**
   * Loads every entry and log from one snapshot. At start memory is empty; after an outage
   * (`diff`) the differences with memory go to the handlers, as if they were changes.
   */
  private async reload(diff: boolean): Promise<void> {
    const client = await this.pool.connect();
    let entries: pg.QueryResult<{ collection: string; tenant: string; id: string; value: Buffer; version: string }>;
    let logRows: pg.QueryResult<{ log: string; tenant: string; seq: string; at_ms: string; value: Buffer }>;
    let max: number;
    let recent: number[];
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      entries = await client.query(this.sql.allEntries);
      logRows = await client.query(this.sql.allLogEntries);
      max = Number((await client.query<{ max: string }>(this.sql.maxChange)).rows[0].max);
      recent = (await client.query<{ seq: string }>(this.sql.changeNumbersSince, [Math.max(0, max - REREAD_WINDOW)])).rows.map((r) => Number(r.seq));
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    // The changes visible in the snapshot are in it; those missing below its newest are still
    // in flight (or rolled back): the cursor waits for them like for any gap.
    const cursor = new ChangeCursor(Math.max(0, max - REREAD_WINDOW));
    for (const s of recent) cursor.take(s);
    cursor.advance(Date.now());
    this.cursor = cursor;

    const seen = new Map<string, Set<string>>();
    for (const r of entries.rows) {
      const mem = this.memory(r.collection);
      const value = decodeValue(r.value);
      const changed = mem.put(r.tenant, r.id, value, Number(r.version));
      let keys = seen.get(r.collection);
      if (!keys) seen.set(r.collection, (keys = new Set()));
      keys.add(`${r.tenant}\u0000${r.id}`);
      if (diff && changed) this.notify(r.collection, r.tenant, r.id, value);
    }
    for (const [name, mem] of this.memories) {
      const keys = seen.get(name);
      for (const e of [...mem.entries()]) {
        if (keys?.has(`${e.tenantId}\u0000${e.id}`)) continue;
        if (mem.remove(e.tenantId, e.id, e.version) && diff) this.notify(name, e.tenantId, e.id, undefined);
      }
    }
    const logs = new Map<string, Map<string, LogItem<unknown>[]>>();
    for (const r of logRows.rows) {
      let byTenant = logs.get(r.log);
      if (!byTenant) logs.set(r.log, (byTenant = new Map()));
      let items = byTenant.get(r.tenant);
      if (!items) byTenant.set(r.tenant, (items = []));
      items.push({ atMs: Number(r.at_ms), seq: Number(r.seq), value: decodeValue(r.value) });
    }
    for (const name of new Set([...logs.keys(), ...this.logMemories.keys()])) {
      const mem = this.logMemory(name);
      const byTenant = logs.get(name) ?? new Map<string, LogItem<unknown>[]>();
      for (const t of new Set([...byTenant.keys(), ...mem.tenantIds()])) mem.replace(t, byTenant.get(t) ?? []);
    }
  }

  // ── health ───────────────────────────────────────────────────────────────────────────
  private markUnreachable(e: unknown): void {
    // A statement that failed on its own (bad data, a timeout) does not mean the server is gone;
    // losing the connection or failing to get one does.
    const msg = String((e as Error)?.message ?? e);
    const code = (e as { code?: string })?.code;
    const connectionError =
      code === undefined ||
      code === 'ECONNREFUSED' ||
      code === 'ECONNRESET' ||
      code === 'ETIMEDOUT' ||
      code === '57P01' || // admin_shutdown (server stopping, pg_terminate_backend)
      code === '57P03' || // cannot_connect_now (starting up)
      /Connection terminated|connect|timeout/i.test(msg);
    if (!connectionError) return;
    if (this.reachable) log.error('PostgreSQL unreachable: writes answer 503, routing continues from memory', { err: msg, replica: this.o.replicaId });
    this.reachable = false;
    this.needsReload = true;
  }

  private markReachable(): void {
    this.reachable = true;
  }

  connected(): boolean {
    return !this.closed && this.reachable && (this.o.local?.connected() ?? true);
  }

  status(): StoreStatus {
    const feed = { listening: this.listening(), remoteChangesApplied: this.remoteChangesApplied };
    const p = { ...this.health.status(), feed };
    const l = this.o.local?.status();
    if (!l) return p;
    return {
      feed,
      connected: this.connected(),
      writable: p.writable && l.writable,
      full: l.full,
      failedWrites: { full: p.failedWrites.full + l.failedWrites.full, error: p.failedWrites.error + l.failedWrites.error },
      failingSinceMs: p.failingSinceMs ?? l.failingSinceMs,
      quarantined: l.quarantined,
    };
  }

  async checkWritable(): Promise<void> {
    await this.guarded(() => this.pool.query(this.sql.replicaSeen, [this.o.replicaId]));
    await this.o.local?.checkWritable();
  }

  /** Whether the change listener's connection is up (tests, GET /). */
  listening(): boolean {
    return this.listener.connected();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.quietQueue.size > 0) await this.flushQuiet();
    this.closed = true;
    clearInterval(this.pollTimer);
    while (this.polling) await this.polling.catch(() => undefined);
    await this.listener.close();
    await this.pool.end().catch(() => undefined);
    await this.o.local?.close();
  }
}
