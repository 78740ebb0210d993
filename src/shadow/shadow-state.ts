/**
 * One tenant's shadow-mode counters for one observation period, and their stored form.
 * Plain numbers mutated in place on the route and outcome paths; serialized only by the
 * periodic checkpoint.
 */

export interface RuleShadow {
  outcomes: number;
  failures: number;
  overrides: number;
  failuresOnDegraded: number;
  /** The engine's recommendation at this rule's latest outcome (used once the rule is gone). */
  recommended: string;
}

export class ShadowPeriod {
  active = false;
  startedAtMs = NaN;
  /** When shadow mode was switched off; NaN while active. */
  endedAtMs = NaN;
  earliestMs = NaN;
  latestMs = NaN;
  transactions = 0;
  outcomes = 0;
  overrides = 0;
  failures = 0;
  onDegraded = 0;
  failuresOnDegraded = 0;
  saved = 0;
  /** Failover events counted so far; plus the tenant counter's growth since `failoverBase`. */
  failoversFolded = 0;
  failoverBase = 0;
  readonly rules = new Map<string, RuleShadow>();
  /** Changed since the last checkpoint. */
  dirty = false;

  static begin(nowMs: number, failoverBase: number): ShadowPeriod {
    const s = new ShadowPeriod();
    s.active = true;
    s.startedAtMs = nowMs;
    s.failoverBase = failoverBase;
    s.dirty = true;
    return s;
  }

  /** Adds the failovers the tenant counted since the last fold (the counter only grows while running). */
  foldFailovers(currentFailovers: number): void {
    if (currentFailovers > this.failoverBase) {
      this.failoversFolded += currentFailovers - this.failoverBase;
      this.dirty = true;
    }
    this.failoverBase = currentFailovers;
  }

  failoverEvents(currentFailovers: number): number {
    return this.failoversFolded + (this.active ? Math.max(0, currentFailovers - this.failoverBase) : 0);
  }

  end(nowMs: number, currentFailovers: number): void {
    this.foldFailovers(currentFailovers);
    this.active = false;
    this.endedAtMs = nowMs;
    this.dirty = true;
  }
}

/** Stored form (collection `shadow_report`, key [tenant, 'report']). */
export interface StoredShadow {
  v: 1;
  active: boolean;
  started_at_ms: number;
  ended_at_ms: number | null;
  earliest_ms: number | null;
  latest_ms: number | null;
  transactions: number;
  outcomes: number;
  overrides: number;
  failures: number;
  on_degraded: number;
  failures_on_degraded: number;
  saved: number;
  failover_events: number;
  /**
   * [rule id, outcomes, failures, overrides, failures_on_degraded, recommended] per rule. An
   * array, not an object keyed by rule id: the store's encoder renames a `__proto__` key (a
   * valid rule id). Records written before hold an object keyed by rule id; both are read.
   */
  rules: [string, number, number, number, number, string][] | Record<string, [number, number, number, number, string]>;
  saved_at_ms: number;
}

const orNull = (x: number) => (Number.isNaN(x) ? null : x);
const orNaN = (x: number | null | undefined) => (typeof x === 'number' ? x : NaN);
const count = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? Math.floor(x) : 0);

export function serialize(s: ShadowPeriod, nowMs: number): StoredShadow {
  const rules: [string, number, number, number, number, string][] = [];
  for (const [id, r] of s.rules) rules.push([id, r.outcomes, r.failures, r.overrides, r.failuresOnDegraded, r.recommended]);
  return {
    v: 1,
    active: s.active,
    started_at_ms: s.startedAtMs,
    ended_at_ms: orNull(s.endedAtMs),
    earliest_ms: orNull(s.earliestMs),
    latest_ms: orNull(s.latestMs),
    transactions: s.transactions,
    outcomes: s.outcomes,
    overrides: s.overrides,
    failures: s.failures,
    on_degraded: s.onDegraded,
    failures_on_degraded: s.failuresOnDegraded,
    saved: s.saved,
    failover_events: s.failoversFolded,
    rules,
    saved_at_ms: nowMs,
  };
}

/** Restores a stored period; `failoverBase` is the tenant's failover counter now. */
export function deserialize(v: StoredShadow, failoverBase: number): ShadowPeriod {
  const s = new ShadowPeriod();
  s.active = v.active === true;
  s.startedAtMs = orNaN(v.started_at_ms);
  s.endedAtMs = orNaN(v.ended_at_ms);
  s.earliestMs = orNaN(v.earliest_ms);
  s.latestMs = orNaN(v.latest_ms);
  s.transactions = count(v.transactions);
  s.outcomes = count(v.outcomes);
  s.overrides = count(v.overrides);
  s.failures = count(v.failures);
  s.onDegraded = count(v.on_degraded);
  s.failuresOnDegraded = count(v.failures_on_degraded);
  s.saved = count(v.saved);
  s.failoversFolded = count(v.failover_events);
  s.failoverBase = failoverBase;
  const entries: [unknown, unknown][] = Array.isArray(v.rules)
    ? v.rules.map((e) => (Array.isArray(e) ? [e[0], e.slice(1)] : [undefined, undefined]))
    : Object.entries(v.rules ?? {});
  for (const [id, r] of entries) {
    if (typeof id !== 'string' || !Array.isArray(r)) continue;
    s.rules.set(id, { outcomes: count(r[0]), failures: count(r[1]), overrides: count(r[2]), failuresOnDegraded: count(r[3]), recommended: String(r[4] ?? '') });
  }
  return s;
}
