/**
 * Leader: builds each tenant's next decision table, a delta when it can, a snapshot when it must.
 *
 * A delta holds only the rules whose decision fields changed since the tenant's previous
 * published table (its base). Change is detected by a 53-bit fingerprint per rule of the fields
 * the table carries, except the time of the last evaluation (it moves on every evaluation of
 * every rule; a follower gets it with each snapshot, and a new leader only uses it to weigh
 * its first baseline update). A snapshot holds every rule; one is built when there is no base
 * (first publish, new epoch, a failed or refused publish), when `snapshotMs` passed since the
 * last one, or when the deltas since it add up to half its size (so healing from the snapshot
 * plus its deltas never costs more than ~1.5 snapshots).
 *
 * Rules are read from shared memory in slices of at most `sliceMs` of the front thread, with
 * a yield to the event loop between slices, so routes are served while a table of 100,000
 * rules is built.
 */
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { PF_BANDIT_LEN, PF_T1_LEN, PROCS_PER_RULE } from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import { newRuleEntry, TableKind, TableWriter, type RuleEntry } from './table-codec.js';
import { readRuleEntry } from './table-rows.js';
import { yieldTurn } from '../front-turns.js';

export interface BuiltTable {
  table: Buffer;
  kind: TableKind;
  /** The version a delta is based on (0 for a snapshot). */
  baseVersion: number;
  /** Rules in the table. */
  rules: number;
}

/**
 * Rule keys and fingerprints by position in the tenant's rule map (insertion order): typed
 * arrays, not a Map, so a build of 100,000 rules does not pause for a hash table's growth. A
 * rule added or removed shifts the positions after it: those rules are sent once more.
 */
interface Prints {
  keys: Float64Array;
  prints: Float64Array;
  count: number;
}

interface TenantState {
  epoch: number;
  version: number;
  /** Fingerprints of what the followers hold (as of `version`). */
  prints: Prints;
  snapshotAtMs: number;
  snapshotBytes: number;
  deltaBytes: number;
  /** Fingerprints of the build in flight, committed when its publish succeeds. */
  pending: Prints | null;
  /** The arrays of the fingerprints before `prints`, reused by the next build (no large allocation per publish). */
  spare: Prints | null;
  pendingKind: TableKind;
  pendingBytes: number;
}

export interface TableBuilderOptions {
  /** A snapshot at least this often (ms). Default 30,000. */
  snapshotMs?: number;
  /** Longest front-thread slice while reading rules (ms). Default 2. */
  sliceMs?: number;
  now?: () => number;
}

export class TableBuilder {
  private readonly state = new Map<string, TenantState>();
  private readonly entry = newRuleEntry();
  private readonly snapshotMs: number;
  private readonly sliceMs: number;
  private readonly now: () => number;
  /** Longest single front-thread slice of the last build (ms), for the benchmark and tests. */
  lastLongestSliceMs = 0;

  constructor(
    private readonly tables: SharedTables,
    private readonly ruleKeyOf: (rule: LiveRule) => number | undefined,
    o: TableBuilderOptions = {},
  ) {
    this.snapshotMs = o.snapshotMs ?? 30_000;
    this.sliceMs = o.sliceMs ?? 2;
    this.now = o.now ?? Date.now;
  }

  /**
   * The next table of the tenant at (epoch, version). Null when `stillLeading` turned false
   * while building (the build is dropped).
   */
  async build(tenant: Tenant, epoch: number, version: number, stillLeading: () => boolean): Promise<BuiltTable | null> {
    const nowMs = this.now();
    let s = this.state.get(tenant.id);
    const snapshot = s === undefined || s.epoch !== epoch || nowMs - s.snapshotAtMs >= this.snapshotMs || s.deltaBytes * 2 >= s.snapshotBytes;
    const kind = snapshot ? TableKind.Snapshot : TableKind.Delta;
    const baseVersion = snapshot ? 0 : s!.version;
    const prev = snapshot ? null : s!.prints;
    let next: Prints;
    const spare = s?.spare ?? null;
    if (spare !== null && spare.keys.length >= tenant.rules.size) {
      next = spare;
      next.count = 0;
      s!.spare = null;
    } else next = { keys: new Float64Array(tenant.rules.size + 64), prints: new Float64Array(tenant.rules.size + 64), count: 0 };
    // A snapshot is sized up front (~60 bytes a rule) rather than grown by doubling copies.
    const w = new TableWriter(snapshot ? tenant.rules.size * 60 + 256 : 16 * 1024);
    w.begin({ kind, epoch, version, baseVersion, publishedAtMs: nowMs, tenantId: tenant.id });
    let sliceStart = performance.now();
    let longest = 0;
    let i = 0;
    // A Map's iterator stays valid across yields: rules removed meanwhile are skipped, added ones visited.
    for (const rule of tenant.rules.values()) {
      if ((++i & 63) === 0) {
        const t = performance.now();
        if (t - sliceStart >= this.sliceMs) {
          longest = Math.max(longest, t - sliceStart);
          await yieldTurn();
          if (!stillLeading()) return null;
          sliceStart = performance.now();
        }
      }
      const key = this.ruleKeyOf(rule) ?? 0;
      const e = readRuleEntry(this.tables, rule.slot, key, this.entry);
      const fp = fingerprint(e);
      const n = next.count;
      if (n === next.keys.length) next = grow(next);
      next.keys[n] = key;
      next.prints[n] = fp;
      next.count++;
      if (prev === null || n >= prev.count || prev.keys[n] !== key || prev.prints[n] !== fp) w.rule(e);
    }
    this.lastLongestSliceMs = Math.max(longest, performance.now() - sliceStart);
    const table = w.finish();
    if (s === undefined) {
      s = { epoch, version: 0, prints: next, snapshotAtMs: 0, snapshotBytes: 0, deltaBytes: 0, pending: null, pendingKind: kind, pendingBytes: 0, spare: null };
      this.state.set(tenant.id, s);
    }
    s.pending = next;
    s.pendingKind = kind;
    s.pendingBytes = table.length;
    return { table, kind, baseVersion, rules: w.rules };
  }

  /** The table built last for the tenant was stored and published: it is the next base. */
  published(tenantId: string, epoch: number, version: number): void {
    const s = this.state.get(tenantId);
    if (!s || s.pending === null) return;
    s.epoch = epoch;
    s.version = version;
    if (s.prints !== s.pending) s.spare = s.prints;
    s.prints = s.pending;
    s.pending = null;
    if (s.pendingKind === TableKind.Snapshot) {
      s.snapshotAtMs = this.now();
      s.snapshotBytes = s.pendingBytes;
      s.deltaBytes = 0;
    } else s.deltaBytes += s.pendingBytes;
  }

  /** The publish failed or was refused: the next table of the tenant is a snapshot. */
  forget(tenantId: string): void {
    this.state.delete(tenantId);
  }

  /** Leadership ended or began: every tenant starts again with a snapshot. */
  reset(): void {
    this.state.clear();
  }
}

function grow(p: Prints): Prints {
  const keys = new Float64Array(p.keys.length * 2);
  const prints = new Float64Array(p.keys.length * 2);
  keys.set(p.keys);
  prints.set(p.prints);
  return { keys, prints, count: p.count };
}

// ── fingerprint ─────────────────────────────────────────────────────────────────────────
const FIELDS = 4 + PROCS_PER_RULE * (5 + PF_T1_LEN + PF_BANDIT_LEN);
const f64 = new Float64Array(FIELDS);
const u32 = new Uint32Array(f64.buffer);

/**
 * 53-bit hash of the rule's published fields (floats sent as f32 are rounded to f32 first,
 * so a change the wire would not carry is not a change). A collision (~1e-16 per change)
 * would hold back one rule's change until the next snapshot.
 */
export function fingerprint(e: RuleEntry): number {
  let n = 0;
  f64[n++] = e.primaryShare;
  f64[n++] = e.source;
  f64[n++] = Math.fround(e.failProbPrimary);
  f64[n++] = Math.fround(e.failProbSecondary);
  for (let k = 0; k < PROCS_PER_RULE; k++) {
    const p = e.procs[k];
    f64[n++] = p.status;
    f64[n++] = p.statusSinceMs;
    f64[n++] = Math.fround(p.failureProb);
    f64[n++] = Math.fround(p.banditWeight);
    if (p.t1 === null) {
      f64[n++] = p.recoveredAtMs;
      for (let j = 0; j < PF_T1_LEN; j++) f64[n++] = 0;
    } else {
      f64[n++] = -1;
      for (let j = 0; j < PF_T1_LEN; j++) f64[n++] = p.t1[j];
    }
    if (p.bandit === null) for (let j = 0; j < PF_BANDIT_LEN; j++) f64[n++] = 0;
    else for (let j = 0; j < PF_BANDIT_LEN; j++) f64[n++] = p.bandit[j];
  }
  // cyrb53 over the 32-bit words.
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < n * 2; i++) {
    const w = u32[i];
    h1 = Math.imul(h1 ^ w, 2654435761);
    h2 = Math.imul(h2 ^ w, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
