/**
 * The in-memory copy of the PostgreSQL store that every read is served from (reads are
 * synchronous, and routing never waits on a database). Each entry carries its version (the
 * change sequence number of the write that made it), so a change applied late never
 * overwrites a newer one: the replica's own write resolving after another replica's newer
 * write to the same key has been applied, or a change read twice (poll and notification).
 */

export interface Versioned<V> {
  value: V;
  version: number;
}

/** How long a removal is remembered, so a late, older write of the key is not brought back. */
const TOMBSTONE_MS = 120_000;

class TenantEntries<V> {
  readonly map = new Map<string, Versioned<V>>();
  /** Ids in key order, rebuilt lazily after an id was added or removed. */
  private sorted: string[] | null = null;

  ids(): string[] {
    if (this.sorted === null) this.sorted = [...this.map.keys()].sort(compareKeys);
    return this.sorted;
  }

  set(id: string, v: Versioned<V>): void {
    if (!this.map.has(id)) this.sorted = null;
    this.map.set(id, v);
  }

  delete(id: string): boolean {
    const had = this.map.delete(id);
    if (had) this.sorted = null;
    return had;
  }
}

/** Key order: the order of the UTF-16 code units (the order of `<` on strings). */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class MemoryCollection<V> {
  private readonly tenants = new Map<string, TenantEntries<V>>();
  /** tenant NUL id → version and time of a removal. */
  private readonly tombstones = new Map<string, { version: number; atMs: number }>();

  get(tenantId: string, id: string): Versioned<V> | undefined {
    return this.tenants.get(tenantId)?.map.get(id);
  }

  *list(tenantId: string): Iterable<{ id: string; value: V }> {
    const t = this.tenants.get(tenantId);
    if (!t) return;
    for (const id of t.ids()) {
      const e = t.map.get(id);
      if (e) yield { id, value: e.value };
    }
  }

  ids(tenantId: string, limit: number, after?: string): string[] {
    const t = this.tenants.get(tenantId);
    if (!t || limit <= 0) return [];
    const all = t.ids();
    let i = 0;
    if (after !== undefined) {
      // First id strictly after `after`.
      let lo = 0;
      let hi = all.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareKeys(all[mid], after) <= 0) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
    }
    return all.slice(i, i + limit);
  }

  *listAll(): Iterable<{ tenantId: string; id: string; value: V }> {
    for (const tenantId of [...this.tenants.keys()].sort(compareKeys)) {
      for (const { id, value } of this.list(tenantId)) yield { tenantId, id, value };
    }
  }

  *entries(): Iterable<{ tenantId: string; id: string; version: number }> {
    for (const [tenantId, t] of this.tenants) for (const [id, e] of t.map) yield { tenantId, id, version: e.version };
  }

  /** Sets the value if `version` is newer than what is known of the key; true when it was. */
  put(tenantId: string, id: string, value: V, version: number): boolean {
    const current = this.get(tenantId, id);
    if (current && current.version >= version) return false;
    const gone = this.tombstones.get(`${tenantId}\u0000${id}`);
    if (gone && gone.version >= version) return false;
    let t = this.tenants.get(tenantId);
    if (!t) {
      t = new TenantEntries<V>();
      this.tenants.set(tenantId, t);
    }
    t.set(id, { value, version });
    return true;
  }

  /** Removes the key unless a newer write of it is known; true when an entry went. */
  remove(tenantId: string, id: string, version: number): boolean {
    const current = this.get(tenantId, id);
    if (current && current.version > version) return false;
    const key = `${tenantId}\u0000${id}`;
    const gone = this.tombstones.get(key);
    if (!gone || gone.version < version) this.tombstones.set(key, { version, atMs: Date.now() });
    if (!current) return false;
    const t = this.tenants.get(tenantId)!;
    t.delete(id);
    if (t.map.size === 0) this.tenants.delete(tenantId);
    return true;
  }

  /** Forgets removals older than the tombstone time (called now and then by the store). */
  sweep(nowMs: number): void {
    for (const [k, g] of this.tombstones) if (nowMs - g.atMs > TOMBSTONE_MS) this.tombstones.delete(k);
  }
}

export interface LogItem<V> {
  atMs: number;
  seq: number;
  value: V;
}

/** Log cursor keys: "<atMs>-<seq>", opaque to clients. */
export function logKey(atMs: number, seq: number): string {
  return `${atMs}-${seq}`;
}

function before(a: { atMs: number; seq: number }, b: { atMs: number; seq: number }): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}

/** A per-tenant log in (atMs, seq) order. */
export class MemoryLog<V> {
  private readonly tenants = new Map<string, LogItem<V>[]>();

  private items(tenantId: string): LogItem<V>[] {
    let a = this.tenants.get(tenantId);
    if (!a) {
      a = [];
      this.tenants.set(tenantId, a);
    }
    return a;
  }

  /** Index of the first item not before `k`. */
  private lowerBound(a: LogItem<V>[], k: { atMs: number; seq: number }): number {
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(a[mid], k)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Adds an item (a no-op when its seq is there already). */
  add(tenantId: string, item: LogItem<V>): void {
    const a = this.items(tenantId);
    // Appends are nearly always the newest: check the end before searching.
    if (a.length === 0 || before(a[a.length - 1], item)) {
      a.push(item);
      return;
    }
    const i = this.lowerBound(a, item);
    if (i < a.length && a[i].seq === item.seq) return;
    a.splice(i, 0, item);
  }

  has(tenantId: string, atMs: number, seq: number): boolean {
    const a = this.tenants.get(tenantId);
    if (!a) return false;
    const i = this.lowerBound(a, { atMs, seq });
    return i < a.length && a[i].seq === seq;
  }

  newest(tenantId: string, limit: number, beforeKey?: { atMs: number; seq: number }): { key: string; value: V }[] {
    const a = this.tenants.get(tenantId);
    if (!a) return [];
    let i = beforeKey ? this.lowerBound(a, beforeKey) - 1 : a.length - 1;
    const out: { key: string; value: V }[] = [];
    for (; i >= 0 && out.length < limit; i--) out.push({ key: logKey(a[i].atMs, a[i].seq), value: a[i].value });
    return out;
  }

  count(tenantId: string): number {
    return this.tenants.get(tenantId)?.length ?? 0;
  }

  /** Drops the items older than `cutoffMs`; returns how many. */
  prune(tenantId: string, cutoffMs: number): number {
    const a = this.tenants.get(tenantId);
    if (!a) return 0;
    const n = this.lowerBound(a, { atMs: cutoffMs, seq: -Infinity });
    a.splice(0, n);
    return n;
  }

  /** Keeps the newest `keep` items; returns how many went. */
  pruneBeyond(tenantId: string, keep: number): number {
    const a = this.tenants.get(tenantId);
    if (!a || a.length <= keep) return 0;
    const n = a.length - keep;
    a.splice(0, n);
    return n;
  }

  /** Replaces a tenant's items (a reload after an outage). */
  replace(tenantId: string, items: LogItem<V>[]): void {
    items.sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : 0));
    if (items.length === 0) this.tenants.delete(tenantId);
    else this.tenants.set(tenantId, items);
  }

  tenantIds(): string[] {
    return [...this.tenants.keys()];
  }
}
