/**
 * Shadow mode (spec 1 fact 6, 2.9): the engine observes and decides exactly as usual, the
 * client keeps its own routing and reports the processor it actually used. This service
 * compares the two, per tenant, while the tenant's shadow mode is on.
 *
 *   route (shadow on)   → routed():  total_transactions++
 *   outcome (shadow on) → outcome(): the engine's current choice for the rule (the processor
 *                         with the larger share, as /v1/health shows it) and the used
 *                         processor's status, read from the shared tables; counter increments
 *   shadow switched on  → a new observation period (counters start from zero)
 *   shadow switched off → the period ends; its report stays readable
 *   every 5 s and at stop → changed periods are checkpointed to the store
 *
 * The hot-path hooks are synchronous, never touch the store, and allocate only the first
 * time a rule is seen in a period.
 */
import { log } from '../log.js';
import type { RecordedOutcome } from '../routing/outcome.js';
import { readDecision, type DecisionFields } from '../shm/decision.js';
import { DecisionSource, ProcessorStatus } from '../shm/layout.js';
import { processorStatus } from '../shm/processor-rows.js';
import type { SharedTables } from '../shm/tables.js';
import { OutcomeKind } from '../shm/window.js';
import type { Collection, Store } from '../store/store.js';
import type { TenantRegistry } from '../tenants/registry.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { deserialize, serialize, ShadowPeriod, type StoredShadow } from './shadow-state.js';
import { ruleIndex, ruleSegment } from '../shm/slots.js';

export const SHADOW_CHECKPOINT_MS = 5_000;
export const DEFAULT_AVERAGE_ORDER_VALUE = 50.0;
const KEY = 'report';

/** What the route and outcome handlers call (only while the tenant's shadow mode is on). */
export interface ShadowObserver {
  routed(tenant: Tenant, nowMs: number): void;
  outcome(tenant: Tenant, recorded: RecordedOutcome, processorId: string, nowMs: number): void;
}

export interface ShadowRuleReport {
  total_outcomes: number;
  failures: number;
  overrides: number;
  failures_on_degraded: number;
  recommended_processor: string;
}

export interface ShadowReport {
  shadow_mode_active: boolean;
  observation_period_seconds: number;
  total_transactions: number;
  total_outcomes: number;
  routing_overrides: number;
  failover_events_detected: number;
  transactions_on_degraded_processor: number;
  total_failures: number;
  failures_on_degraded: number;
  estimated_saved_transactions: number;
  average_order_value: number;
  estimated_revenue_impact: number;
  rules: Record<string, ShadowRuleReport>;
  earliest_observation: string;
  latest_observation: string;
  period_started_at: string | null;
  period_ended_at: string | null;
}

// Reused: the front thread is single-threaded and the read is synchronous.
const scratch: DecisionFields = { primaryShare: 1, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };

/** The processor the engine would choose for this rule now: the one with the larger share. */
export function recommendedProcessor(tables: SharedTables, rule: LiveRule): string {
  const d = readDecision(ruleSegment(tables.ruleSegs, rule.slot), ruleIndex(rule.slot), scratch);
  return d.primaryShare >= 0.5 ? rule.record.primary_id : rule.record.secondary_id;
}

/** True when the engine has flagged the rule's processor `k` degraded or failed over (no allocation). */
export function flagged(tables: SharedTables, rule: LiveRule, k: 0 | 1): boolean {
  return processorStatus(tables.ruleSegs, rule.slot, k) !== ProcessorStatus.Healthy;
}

/** ISO 8601 with an explicit UTC offset: 2024-05-01T12:00:00.000+00:00. */
export function isoWithOffset(ms: number): string | null {
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/Z$/, '+00:00') : null;
}

/** The first finite of an observation time, the period start and now, with a UTC offset. */
function observationTime(observedMs: number | undefined, periodStartMs: number | undefined, nowMs: number): string {
  return isoWithOffset(observedMs ?? NaN) ?? isoWithOffset(periodStartMs ?? NaN) ?? (isoWithOffset(nowMs) as string);
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

export interface ShadowServiceOptions {
  store: Store;
  tables: SharedTables;
  tenants: TenantRegistry;
  checkpointMs?: number;
  now?: () => number;
}

export class ShadowService implements ShadowObserver {
  private readonly periods = new Map<string, ShadowPeriod>();
  private readonly records: Collection<StoredShadow>;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private readonly pendingWrites = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private readonly o: ShadowServiceOptions) {
    // Checkpointed every 5 s by each replica, read back at start: stored, not announced.
    this.records = o.store.collection<StoredShadow>('shadow_report', { announce: false });
    this.now = o.now ?? Date.now;
  }

  // ── lifecycle ────────────────────────────────────────────────────────────────────────
  /**
   * Call after tenant configurations are loaded and the engine has restored its counters.
   * Stored periods continue; a tenant whose shadow mode is now on without an active stored
   * period starts a new one; an active stored period of a tenant whose shadow mode is now
   * off ends at its last checkpoint.
   */
  start(): void {
    for (const { tenantId, id, value } of this.records.listAll()) {
      if (id !== KEY) continue;
      const tenant = this.o.tenants.find(tenantId);
      const p = deserialize(value, tenant?.counters.failovers ?? 0);
      if (p.active && tenant && !tenant.settings.shadowMode) {
        p.active = false;
        p.endedAtMs = value.saved_at_ms;
        p.dirty = true;
      }
      this.periods.set(tenantId, p);
    }
    for (const t of this.o.tenants.all()) this.settingsChanged(t);
    const ms = this.o.checkpointMs ?? SHADOW_CHECKPOINT_MS;
    this.timer = setInterval(() => this.checkpoint(), ms);
    this.timer.unref();
    this.checkpoint();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.checkpoint();
    await Promise.allSettled([...this.pendingWrites]);
  }

  /** Call whenever a tenant's configuration was applied: detects shadow mode switching. */
  settingsChanged(t: Tenant): void {
    const p = this.periods.get(t.id);
    const on = t.settings.shadowMode;
    if (on && (!p || !p.active)) {
      this.periods.set(t.id, ShadowPeriod.begin(this.now(), t.counters.failovers));
      this.persist(t.id);
    } else if (!on && p?.active) {
      p.end(this.now(), t.counters.failovers);
      this.persist(t.id);
    }
  }

  // ── hot path ─────────────────────────────────────────────────────────────────────────
  private activePeriod(t: Tenant, nowMs: number): ShadowPeriod {
    let p = this.periods.get(t.id);
    if (p === undefined || !p.active) {
      // Only if a settings change bypassed settingsChanged(): start the period here.
      p = ShadowPeriod.begin(nowMs, t.counters.failovers);
      this.periods.set(t.id, p);
    }
    if (!(p.earliestMs <= nowMs)) p.earliestMs = nowMs;
    if (!(p.latestMs >= nowMs)) p.latestMs = nowMs;
    p.dirty = true;
    return p;
  }

  routed(t: Tenant, nowMs: number): void {
    this.activePeriod(t, nowMs).transactions++;
  }

  outcome(t: Tenant, recorded: RecordedOutcome, processorId: string, nowMs: number): void {
    const p = this.activePeriod(t, nowMs);
    const rule = recorded.rule;
    const rec = rule.record;
    const recommended = recommendedProcessor(this.o.tables, rule);
    const onFlagged = flagged(this.o.tables, rule, processorId === rec.primary_id ? 0 : 1);
    const kind = recorded.kind;
    const technical = kind === OutcomeKind.TechError || kind === OutcomeKind.Timeout;
    const override = processorId !== recommended;

    let r = p.rules.get(rec.rule_id);
    if (r === undefined) {
      r = { outcomes: 0, failures: 0, overrides: 0, failuresOnDegraded: 0, recommended };
      p.rules.set(rec.rule_id, r);
    }
    r.recommended = recommended;
    p.outcomes++;
    r.outcomes++;
    if (override) {
      p.overrides++;
      r.overrides++;
    }
    if (kind !== OutcomeKind.Success) {
      p.failures++;
      r.failures++;
    }
    if (onFlagged) {
      p.onDegraded++;
      if (technical) {
        p.failuresOnDegraded++;
        r.failuresOnDegraded++;
        if (override) p.saved++;
      }
    }
  }

  // ── report ───────────────────────────────────────────────────────────────────────────
  report(t: Tenant, averageOrderValue: number = DEFAULT_AVERAGE_ORDER_VALUE): ShadowReport {
    const p = this.periods.get(t.id);
    const now = this.now();
    const rules: Record<string, ShadowRuleReport> = Object.create(null); // rule ids may be `__proto__`
    if (p) {
      for (const id of [...p.rules.keys()].sort()) {
        const r = p.rules.get(id)!;
        const live = t.rules.get(id);
        rules[id] = {
          total_outcomes: r.outcomes,
          failures: r.failures,
          overrides: r.overrides,
          failures_on_degraded: r.failuresOnDegraded,
          recommended_processor: live ? recommendedProcessor(this.o.tables, live) : r.recommended,
        };
      }
    }
    const end = p ? (p.active ? now : p.endedAtMs) : NaN;
    const saved = p?.saved ?? 0;
    return {
      shadow_mode_active: t.settings.shadowMode,
      observation_period_seconds: p && Number.isFinite(end - p.startedAtMs) ? round(Math.max(0, end - p.startedAtMs) / 1000, 3) : 0,
      total_transactions: p?.transactions ?? 0,
      total_outcomes: p?.outcomes ?? 0,
      routing_overrides: p?.overrides ?? 0,
      failover_events_detected: p ? p.failoverEvents(t.counters.failovers) : 0,
      transactions_on_degraded_processor: p?.onDegraded ?? 0,
      total_failures: p?.failures ?? 0,
      failures_on_degraded: p?.failuresOnDegraded ?? 0,
      estimated_saved_transactions: saved,
      average_order_value: averageOrderValue,
      // Rounded to 6 decimals: 3 × 49.99 is 149.97, not 149.97000000000003.
      estimated_revenue_impact: round(saved * averageOrderValue, 6),
      rules,
      // Spec 2.9 types both as date-time strings: before the first observation of a period
      // both are its start; with no period at all (shadow mode never on, or reset while off)
      // both are the time of this report, an empty period of 0 seconds.
      earliest_observation: observationTime(p?.earliestMs, p?.startedAtMs, now),
      latest_observation: observationTime(p?.latestMs, p?.startedAtMs, now),
      period_started_at: p ? isoWithOffset(p.startedAtMs) : null,
      period_ended_at: p && !p.active ? isoWithOffset(p.endedAtMs) : null,
    };
  }

  /**
   * Clears the tenant's report. With shadow mode on, a new period starts now; with it off,
   * the report is empty (zeros, no period) until shadow mode is switched on again.
   * Resolves once the store has the reset.
   */
  async reset(t: Tenant): Promise<void> {
    let w: Promise<unknown>;
    if (t.settings.shadowMode) {
      const p = ShadowPeriod.begin(this.now(), t.counters.failovers);
      p.dirty = false;
      this.periods.set(t.id, p);
      w = this.records.put(t.id, KEY, serialize(p, this.now()));
    } else {
      this.periods.delete(t.id);
      w = this.records.remove(t.id, KEY);
    }
    this.track(w);
    await w; // a failed reset is reported to the caller (500), not only logged
  }

  // ── persistence ──────────────────────────────────────────────────────────────────────
  /** Writes every period that changed (and folds the failovers counted meanwhile). */
  checkpoint(): void {
    for (const [tenantId, p] of this.periods) {
      if (p.active) {
        const t = this.o.tenants.find(tenantId);
        if (t) p.foldFailovers(t.counters.failovers);
      }
      if (p.dirty) this.persist(tenantId);
    }
  }

  private persist(tenantId: string): void {
    const p = this.periods.get(tenantId);
    if (!p) return;
    p.dirty = false;
    this.track(this.records.put(tenantId, KEY, serialize(p, this.now())), p);
  }

  /** Keeps the write for stop(); a failed checkpoint is logged and retried at the next one. */
  private track(w: Promise<unknown>, p?: ShadowPeriod): void {
    this.pendingWrites.add(w);
    w.then(
      () => this.pendingWrites.delete(w),
      (e) => {
        this.pendingWrites.delete(w);
        if (p) p.dirty = true;
        log.error('shadow report write failed', { err: String(e) });
      },
    );
  }
}
