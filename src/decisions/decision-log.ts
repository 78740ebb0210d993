/**
 * Per-payment decision lookup (`GET /v1/decisions/{transaction_id}`).
 *
 *   route / outcome with transaction_id ──► RouteRing / OutcomeRing (preallocated, front thread)
 *   every FLUSH_EVERY_MS ──► store transactions of at most FLUSH_SLICE_RECORDS records each,
 *                            one write per record (LMDB), the event loop running between them
 *
 * Retention without a per-record time index (which would double the writes): records go to
 * one of GENERATIONS collections by period (PERIOD_MS); when a new period starts, the
 * generation it reuses — holding the period GENERATIONS before — is cleared in one step. So a
 * record is kept at least (GENERATIONS − 1) × PERIOD_MS = 24 h and at most 36 h.
 *
 * The request paths only store references into the rings (plus, for outcomes, one Set lookup
 * and insert for duplicate detection). A lookup flushes first, so a decision is visible as
 * soon as its route has been answered.
 */
import { log } from '../log.js';
import { CLASSIFICATION_NAMES } from '../routing/outcome.js';
import type { RouteDecision } from '../schemas/routing.js';
import type { OutcomeReport } from '../schemas/routing.js';
import { DECISION_SOURCE_NAMES, STATUS_NAMES, type StatusName } from '../shm/layout.js';
import { processorStatus } from '../shm/processor-rows.js';
import type { SharedTables } from '../shm/tables.js';
import type { Collection, Store } from '../store/store.js';
import type { TenantRegistry } from '../tenants/registry.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { OutcomeDedup } from './outcome-dedup.js';
import { OutcomeRing, RouteRing } from './decision-ring.js';

export const PERIOD_MS = 12 * 3600 * 1000;
export const GENERATIONS = 3;
/** The guaranteed retention; records may stay up to one period longer. */
export const DECISION_RETENTION_MS = (GENERATIONS - 1) * PERIOD_MS;
export const RING_CAPACITY = 65_536;
export const DEDUP_CAPACITY = 262_144;
export const FLUSH_EVERY_MS = 200;
/**
 * Records per store transaction when the rings are written out. A transaction's writes run on
 * the front thread in one piece (lmdb-js calls its callback there), ~1.2-3.3 µs a record: in
 * one transaction, the ~20,000 records of 200 ms at 100,000 routes a second held every request
 * for 23-66 ms, and route p99 with a transaction_id in every body was 19-38 ms against ~1.5
 * without one. In pieces of 1,024 the longest stall was 1.6-3.7 ms and that p99 2.5-7.2 ms, at
 * the same CPU per route (0.97-1.02×); pieces of 256 cost 1.15× (a commit each).
 * docs/performance-log.md, thirty-seventh pass.
 */
export const FLUSH_SLICE_RECORDS = 1024;

/**
 * Stored compactly (an array packs and unpacks much faster than an object with named fields,
 * and dates are formatted only when read): [rule_id, primary_id, secondary_id, picked
 * (0 primary, 1 secondary), weight, source code, failure probability (null), primary status,
 * secondary status, at_ms].
 */
export type StoredDecision = [string, string, string, number, number, number, number | null, number, number, number];
/** [rule_id, processor_id, success (0/1), latency_ms, error_code, classification code, at_ms]. */
export type StoredOutcome = [string, string, number, number, string | null, number, number];

export interface DecisionView {
  rule_id: string;
  processor_id: string;
  fallback_processor_id: string;
  weight: number;
  decision_source: string;
  failure_probability: number | null;
  processors: { processor_id: string; status: StatusName }[];
  decided_at: string;
}

export interface OutcomeView {
  rule_id: string;
  processor_id: string;
  success: boolean;
  latency_ms: number;
  error_code: string | null;
  classification: string;
  reported_at: string;
}

export interface DecisionLogOptions {
  store: Store;
  tables: SharedTables;
  tenants: TenantRegistry;
  now?: () => number;
  ringCapacity?: number;
  dedupCapacity?: number;
}

export class DecisionLog {
  /** Generation g holds the records of a period p with p % GENERATIONS === g. */
  private readonly decisions: Collection<StoredDecision>[] = [];
  private readonly outcomes: Collection<StoredOutcome>[] = [];
  /** Which period each generation holds (tenant `_`, id `g<k>`), so a restart knows. */
  private readonly periods: Collection<number>;
  private readonly periodOf: number[] = [];
  /** The rings the request paths write into, and the pair being written out (swapped at each flush). */
  private routes: RouteRing;
  private reports: OutcomeRing;
  private flushingRoutes: RouteRing;
  private flushingReports: OutcomeRing;
  private readonly dedup: OutcomeDedup;
  private readonly now: () => number;
  private flushing: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private writeFailing = false;
  /** Entries that could not be kept (ring full, or the store refused the batch). */
  lost = 0;

  constructor(private readonly o: DecisionLogOptions) {
    // The records of the requests this replica answered, many per second: on the replica's own disk (LMDB).
    for (let g = 0; g < GENERATIONS; g++) {
      this.decisions.push(o.store.collection<StoredDecision>(`decisions_${g}`, { scope: 'local' }));
      this.outcomes.push(o.store.collection<StoredOutcome>(`decision_outcomes_${g}`, { scope: 'local' }));
    }
    this.periods = o.store.collection<number>('decision_periods', { scope: 'local' });
    for (let g = 0; g < GENERATIONS; g++) this.periodOf.push(this.periods.get('_', `g${g}`) ?? -1);
    this.routes = new RouteRing(o.ringCapacity ?? RING_CAPACITY);
    this.reports = new OutcomeRing(o.ringCapacity ?? RING_CAPACITY);
    this.flushingRoutes = new RouteRing(o.ringCapacity ?? RING_CAPACITY);
    this.flushingReports = new OutcomeRing(o.ringCapacity ?? RING_CAPACITY);
    this.dedup = new OutcomeDedup(o.dedupCapacity ?? DEDUP_CAPACITY);
    this.now = o.now ?? Date.now;
  }

  /** Starts the flush timer. */
  start(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  // ── request paths (front thread, synchronous, no allocation beyond the Set entry) ────
  routed(tenant: Tenant, rule: LiveRule, txId: string, d: RouteDecision, nowMs: number): void {
    const segs = this.o.tables.ruleSegs;
    if (!this.routes.push(tenant, rule, txId, d, processorStatus(segs, rule.slot, 0), processorStatus(segs, rule.slot, 1), nowMs)) this.lost++;
  }

  /** True when an outcome with this transaction id was already reported (it is not counted again). */
  isDuplicateOutcome(tenant: Tenant, txId: string): boolean {
    return this.dedup.has(tenant, txId);
  }

  reported(tenant: Tenant, report: OutcomeReport, kind: number, nowMs: number): void {
    this.dedup.add(tenant, report.transaction_id!);
    if (!this.reports.push(tenant, report, kind, nowMs)) this.lost++;
  }

  // ── off the request path ─────────────────────────────────────────────────────────────
  /** The decision and outcome of a transaction, after writing out what is still in the rings. */
  async lookup(tenant: Tenant, txId: string): Promise<{ decision: DecisionView | undefined; outcome: OutcomeView | undefined }> {
    await this.flush();
    // Newest period first for the decision (a repeated route replaces it), oldest first for the outcome (the first report counts).
    const live = this.liveGenerations();
    let d: StoredDecision | undefined;
    for (let i = live.length - 1; i >= 0 && d === undefined; i--) d = this.decisions[live[i]].get(tenant.id, txId);
    let o: StoredOutcome | undefined;
    for (let i = 0; i < live.length && o === undefined; i++) o = this.outcomes[live[i]].get(tenant.id, txId);
    return { decision: d === undefined ? undefined : decisionView(d), outcome: o === undefined ? undefined : outcomeView(o) };
  }

  /** Writes the rings out (FLUSH_SLICE_RECORDS records a transaction); concurrent callers share the write in progress, then write what came after. */
  async flush(): Promise<void> {
    while (this.flushing !== null) await this.flushing;
    if (this.routes.length === 0 && this.reports.length === 0) return;
    const p = this.writeOut().finally(() => (this.flushing = null));
    this.flushing = p;
    await p;
  }

  private async writeOut(): Promise<void> {
    // Swap: requests keep writing into the emptied pair while this one is written out.
    const r = this.routes;
    const q = this.reports;
    this.routes = this.flushingRoutes;
    this.reports = this.flushingReports;
    this.flushingRoutes = r;
    this.flushingReports = q;
    try {
      // A flush covers 200 ms: its records fall in the current period (a boundary crossed
      // within it puts the few earlier ones in the new period too, which only keeps them longer).
      const g = await this.generationFor(this.now());
      await this.writeInSlices(r.length, (from, to) => this.writeDecisions(r, g, from, to));
      await this.writeInSlices(q.length, (from, to) => this.writeOutcomes(q, g, from, to));
    } catch (e) {
      // The period's generation could not be prepared (its clear refused): nothing was written.
      this.refused(e, r.length + q.length);
    } finally {
      r.clear();
      q.clear();
    }
  }

  /**
   * Records [0, length) in store transactions of at most FLUSH_SLICE_RECORDS, one at a time:
   * the event loop answers requests between them. A refused one loses its own records; the
   * others are still written.
   */
  private async writeInSlices(length: number, write: (from: number, to: number) => Promise<void>): Promise<void> {
    for (let from = 0; from < length; from += FLUSH_SLICE_RECORDS) {
      const to = Math.min(from + FLUSH_SLICE_RECORDS, length);
      try {
        await write(from, to);
        this.writeFailing = false;
      } catch (e) {
        this.refused(e, to - from);
      }
    }
  }

  private refused(e: unknown, records: number): void {
    this.lost += records;
    if (!this.writeFailing) log.error('decision records not stored', { err: String(e), records });
    this.writeFailing = true;
  }

  private writeDecisions(r: RouteRing, g: number, from: number, to: number): Promise<void> {
    const decisions = this.decisions[g];
    return this.o.store.atomic((b) => {
      for (let i = from; i < to; i++) {
        const rec = r.rules[i]!.record;
        const fp = r.failProb[i];
        const stored: StoredDecision = [
          rec.rule_id, rec.primary_id, rec.secondary_id, r.pickedSecondary[i], r.weight[i], r.source[i],
          Number.isNaN(fp) ? null : fp, r.statusPrimary[i], r.statusSecondary[i], r.atMs[i],
        ];
        b.put(decisions, r.tenants[i]!.id, r.txIds[i]!, stored);
      }
    });
  }

  private writeOutcomes(q: OutcomeRing, g: number, from: number, to: number): Promise<void> {
    const outcomes = this.outcomes[g];
    return this.o.store.atomic((b) => {
      for (let i = from; i < to; i++) {
        const tenantId = q.tenants[i]!.id;
        const txId = q.txIds[i]!;
        // The first report is the outcome (a repeat from before a restart is not in memory).
        if (outcomes.get(tenantId, txId) !== undefined) continue;
        b.put(outcomes, tenantId, txId, [q.ruleIds[i]!, q.processorIds[i]!, q.success[i], q.latencyMs[i], q.errorCodes[i] ?? null, q.kinds[i], q.atMs[i]]);
      }
    });
  }

  /** The generation of the period of `nowMs`, cleared first when it still holds an older period. */
  private async generationFor(nowMs: number): Promise<number> {
    const p = Math.floor(nowMs / PERIOD_MS);
    const g = p % GENERATIONS;
    if (this.periodOf[g] !== p) {
      await this.decisions[g].clear();
      await this.outcomes[g].clear();
      await this.periods.put('_', `g${g}`, p);
      this.periodOf[g] = p;
    }
    return g;
  }

  /** Generations holding a period within retention, oldest first. */
  private liveGenerations(): number[] {
    const p = Math.floor(this.now() / PERIOD_MS);
    const out: number[] = [];
    for (let k = GENERATIONS - 1; k >= 0; k--) {
      const g = (p - k) % GENERATIONS;
      if (this.periodOf[g] === p - k) out.push(g);
    }
    return out;
  }
}

function decisionView(d: StoredDecision): DecisionView {
  const [ruleId, primaryId, secondaryId, picked, weight, source, fp, statusP, statusS, atMs] = d;
  const processors = [{ processor_id: primaryId, status: STATUS_NAMES[statusP] ?? 'healthy' }];
  if (secondaryId !== primaryId) processors.push({ processor_id: secondaryId, status: STATUS_NAMES[statusS] ?? 'healthy' });
  return {
    rule_id: ruleId,
    processor_id: picked === 0 ? primaryId : secondaryId,
    fallback_processor_id: picked === 0 ? secondaryId : primaryId,
    weight,
    decision_source: DECISION_SOURCE_NAMES[source] ?? 'rules',
    failure_probability: fp,
    processors,
    decided_at: new Date(atMs).toISOString(),
  };
}

function outcomeView(o: StoredOutcome): OutcomeView {
  const [ruleId, processorId, success, latencyMs, errorCode, kind, atMs] = o;
  return {
    rule_id: ruleId,
    processor_id: processorId,
    success: success === 1,
    latency_ms: latencyMs,
    error_code: errorCode,
    classification: CLASSIFICATION_NAMES[kind] ?? 'technical_error',
    reported_at: new Date(atMs).toISOString(),
  };
}
