/**
 * The decision table of one tenant, as the leader publishes it: per rule the decision the
 * route path reads (primary share, source, failure probabilities) and per processor its
 * status and the Tier 1 state a follower needs to take over without repeating a transition
 * (status since, last evaluation, last recovery; the whole Tier 1 bookkeeping of processors
 * that are not healthy: back-off, probe ladder). Published health (rates, latency) is not in
 * it: every replica computes that from its own merged windows, which hold the same outcomes.
 *
 * Wire format (version 1): u8 version, varint epoch, varint version, f64 published-at ms,
 * varint tenant id length + UTF-8, varint rules, then per rule:
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

export const TABLE_FORMAT = 1;

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
  epoch: number;
  version: number;
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
  private readonly w = new ByteWriter(16 * 1024);
  private count = 0;
  private countAt = 0;
  private base = 0;

  begin(h: TableHeader, rules: number): void {
    const w = this.w;
    w.reset();
    w.u8(TABLE_FORMAT);
    w.varint(h.epoch);
    w.varint(h.version);
    w.f64(h.publishedAtMs);
    const id = Buffer.from(h.tenantId, 'utf8');
    w.varint(id.length);
    w.bytes(id);
    this.countAt = w.length;
    w.varint(rules);
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

  /** The encoded table; `rules` given to begin() must equal the rules written. */
  finish(): Buffer {
    const b = this.w.finish();
    if (this.count !== this.expected(b)) throw new Error('table writer: rule count mismatch');
    return b;
  }

  private expected(b: Buffer): number {
    return new ByteReader(b.subarray(this.countAt)).varint();
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
  const epoch = r.varint();
  const version = r.varint();
  const publishedAtMs = r.f64();
  const n = r.varint();
  if (n > 256) throw new FormatError('tenant id too long');
  const idStart = r.pos;
  for (let i = 0; i < n; i++) r.u8();
  const tenantId = buf.toString('utf8', idStart, idStart + n);
  const rules = r.varint();
  return { epoch, version, publishedAtMs, tenantId, reader: r, rules };
}

const t1Scratch = [new Float64Array(PF_T1_LEN), new Float64Array(PF_T1_LEN)];
const banditScratch = [new Float64Array(PF_BANDIT_LEN), new Float64Array(PF_BANDIT_LEN)];

/** Calls `visit` with each rule of a table (the entry object is reused: copy what you keep). */
export function readTableRules(h: ReturnType<typeof readTableHeader>, visit: (e: RuleEntry) => void): void {
  const r = h.reader;
  const base = Math.floor(h.publishedAtMs);
  const e = newRuleEntry();
  for (let i = 0; i < h.rules; i++) {
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
    visit(e);
  }
  if (!r.done()) throw new FormatError('trailing bytes after the table');
}
