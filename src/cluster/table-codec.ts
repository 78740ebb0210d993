/**
 * The decision table of one tenant, as the leader publishes it: per rule the decision the
 * route path reads (primary share, source, failure probabilities) and per processor its
 * status and the Tier 1 state a follower needs to take over without repeating a transition
 * (status since, last evaluation, last recovery; the whole Tier 1 bookkeeping of processors
 * that are not healthy: back-off, probe ladder). Published health (rates, latency) is not in
 * it: every replica computes that from its own merged windows, which hold the same outcomes.
 *
 * A table is either a snapshot (every rule of the tenant) or a delta (only the rules whose
 * decision fields changed since the table of version `base`, same epoch): see table-builder.ts.
 *
 * Wire format (version 2): u8 format, u8 kind (0 snapshot, 1 delta), varint epoch, varint
 * version, varint base version (0 for a snapshot), f64 published-at ms, varint tenant id
 * length + UTF-8, u32 rules (fixed width: a delta's count is known only at the end), then per rule:
 *   f64 rule key (hash of tenant, rule id, primary id, secondary id: a follower that has not
 *   yet seen a PATCH of the rule skips it), f64 primary share, u8 source, f32 failure
 *   probabilities (primary, secondary), and per processor: u8 status, times as varint
 *   (published-at - t + 1, 0 = none) for status-since / last-evaluation, f32 failure
 *   probability, f32 bandit weight, then either varint last-recovery time (healthy) or the
 *   PF_T1_LEN bookkeeping fields as f64; then u8 0, or u8 1 and the PF_BANDIT_LEN Tier 3 fields
 *   as f64 (the bandit's posterior and cursor, so a new leader allocates as the old one did).
 * ~51 bytes per rule with healthy processors at Tier 1, ~147 with Tier 3 on.
 */
import { PF_BANDIT_LEN, PF_T1_LEN, PROCS_PER_RULE, type DecisionSource } from '../shm/layout.js';
import { ByteReader, ByteWriter, FormatError } from './bytes.js';

export const TABLE_FORMAT = 2;

export const TableKind = { Snapshot: 0, Delta: 1 } as const;
export type TableKind = (typeof TableKind)[keyof typeof TableKind];

export interface ProcessorEntry {
  status: number;
  statusSinceMs: number;
  lastEvalMs: number;
  failureProb: number;
  banditWeight: number;
  recoveredAtMs: number;
  /** The PF_T1_* fields, only for a processor that is not healthy (length PF_T1_LEN), else null. */
  t1: Float64Array | null;
  /** Tier 3's state of the arm (PF_BANDIT_LEN fields: posterior, cursor, allocation), null when all zero (bandit never ran). */
  bandit: Float64Array | null;
}

export interface RuleEntry {
  key: number;
  primaryShare: number;
  source: DecisionSource;
  failProbPrimary: number;
  failProbSecondary: number;
  procs: [ProcessorEntry, ProcessorEntry];
}

export interface TableHeader {
  kind: TableKind;
  epoch: number;
  version: number;
  /** The version a delta applies on top of (0 for a snapshot). */
  baseVersion: number;
  publishedAtMs: number;
  tenantId: string;
}

function time(w: ByteWriter, base: number, t: number): void {
  w.varint(t > 0 && t <= base ? base - t + 1 : 0);
}

function readTime(r: ByteReader, base: number): number {
  const v = r.varint();
  return v === 0 ? 0 : base - v + 1;
}

export class TableWriter {
  private readonly w: ByteWriter;
  private count = 0;
  private countAt = 0;
  private base = 0;

  constructor(initialBytes = 16 * 1024) {
    this.w = new ByteWriter(initialBytes);
  }

  /** Starts a table; the rule count is filled in by finish(). */
  begin(h: TableHeader): void {
    const w = this.w;
    w.reset();
    w.u8(TABLE_FORMAT);
    w.u8(h.kind);
    w.varint(h.epoch);
    w.varint(h.version);
    w.varint(h.kind === TableKind.Delta ? h.baseVersion : 0);
    w.f64(h.publishedAtMs);
    const id = Buffer.from(h.tenantId, 'utf8');
    w.varint(id.length);
    w.bytes(id);
    this.countAt = w.length;
    w.u32(0);
    this.count = 0;
    this.base = Math.floor(h.publishedAtMs);
  }

  rule(e: RuleEntry): void {
    const w = this.w;
    w.f64(e.key);
    w.f64(e.primaryShare);
    w.u8(e.source);
    w.f32(e.failProbPrimary);
    w.f32(e.failProbSecondary);
    for (let k = 0; k < PROCS_PER_RULE; k++) {
      const p = e.procs[k];
      w.u8(p.status);
      time(w, this.base, p.statusSinceMs);
      time(w, this.base, p.lastEvalMs);
      w.f32(p.failureProb);
      w.f32(p.banditWeight);
      if (p.t1 === null) {
        w.u8(0);
        time(w, this.base, p.recoveredAtMs);
      } else {
        w.u8(1);
        for (let j = 0; j < PF_T1_LEN; j++) w.f64(p.t1[j]);
      }
      if (p.bandit === null) w.u8(0);
      else {
        w.u8(1);
        for (let j = 0; j < PF_BANDIT_LEN; j++) w.f64(p.bandit[j]);
      }
    }
    this.count++;
  }

  /** Rules written since begin(). */
  get rules(): number {
    return this.count;
  }

  get length(): number {
    return this.w.length;
  }

  /** The encoded table (a copy: the writer can be reused). */
  finish(): Buffer {
    const b = this.w.finish();
    b.writeUInt32LE(this.count, this.countAt);
    return b;
  }
}

export function newProcessorEntry(): ProcessorEntry {
  return { status: 0, statusSinceMs: 0, lastEvalMs: 0, failureProb: NaN, banditWeight: NaN, recoveredAtMs: 0, t1: null, bandit: null };
}

export function newRuleEntry(): RuleEntry {
  return { key: 0, primaryShare: 1, source: 0 as DecisionSource, failProbPrimary: NaN, failProbSecondary: NaN, procs: [newProcessorEntry(), newProcessorEntry()] };
}

export function readTableHeader(buf: Buffer): TableHeader & { reader: ByteReader; rules: number } {
  const r = new ByteReader(buf);
  const v = r.u8();
  if (v !== TABLE_FORMAT) throw new FormatError(`unknown table format ${v}`);
  const kind = r.u8() as TableKind;
  if (kind !== TableKind.Snapshot && kind !== TableKind.Delta) throw new FormatError(`unknown table kind ${kind}`);
  const epoch = r.varint();
  const version = r.varint();
  const baseVersion = r.varint();
  const publishedAtMs = r.f64();
  const n = r.varint();
  if (n > 256) throw new FormatError('tenant id too long');
  const idStart = r.pos;
  for (let i = 0; i < n; i++) r.u8();
  const tenantId = buf.toString('utf8', idStart, idStart + n);
  const rules = r.u32();
  return { kind, epoch, version, baseVersion, publishedAtMs, tenantId, reader: r, rules };
}

const t1Scratch = [new Float64Array(PF_T1_LEN), new Float64Array(PF_T1_LEN)];
const banditScratch = [new Float64Array(PF_BANDIT_LEN), new Float64Array(PF_BANDIT_LEN)];

/** Calls `visit` with each rule of a table (the entry object is reused: copy what you keep). */
export function readTableRules(h: ReturnType<typeof readTableHeader>, visit: (e: RuleEntry) => void): void {
  const it = new TableRuleIterator(h);
  const e = newRuleEntry();
  while (it.next(e)) visit(e);
}

/** Reads a table's rules one at a time, so a large table can be applied across event-loop turns. */
export class TableRuleIterator {
  private i = 0;
  private readonly base: number;
  constructor(private readonly h: ReturnType<typeof readTableHeader>) {
    this.base = Math.floor(h.publishedAtMs);
  }

  /** Fills `e` with the next rule; false (and the table checked for trailing bytes) at the end. */
  next(e: RuleEntry): boolean {
    const r = this.h.reader;
    if (this.i >= this.h.rules) {
      if (this.i++ === this.h.rules && !r.done()) throw new FormatError('trailing bytes after the table');
      return false;
    }
    this.i++;
    const base = this.base;
    e.key = r.f64();
    e.primaryShare = r.f64();
    e.source = r.u8() as DecisionSource;
    e.failProbPrimary = r.f32();
    e.failProbSecondary = r.f32();
    for (let k = 0; k < PROCS_PER_RULE; k++) {
      const p = e.procs[k];
      p.status = r.u8();
      p.statusSinceMs = readTime(r, base);
      p.lastEvalMs = readTime(r, base);
      p.failureProb = r.f32();
      p.banditWeight = r.f32();
      if (r.u8() === 0) {
        p.t1 = null;
        p.recoveredAtMs = readTime(r, base);
      } else {
        const t1 = t1Scratch[k];
        for (let j = 0; j < PF_T1_LEN; j++) t1[j] = r.f64();
        p.t1 = t1;
        p.recoveredAtMs = NaN; // inside t1
      }
      if (r.u8() === 0) p.bandit = null;
      else {
        const b = banditScratch[k];
        for (let j = 0; j < PF_BANDIT_LEN; j++) b[j] = r.f64();
        p.bandit = b;
      }
    }
    return true;
  }
}
