/**
 * What the scenario benchmark measures for one run, and how runs are summarised over seeds.
 *
 * Two views of "leaving the primary", on purpose:
 * - the simulator's score (bench/sim/score.ts): from routed traffic, tier-neutral (a Tier 2
 *   share cut or a Tier 3 allocation counts the same as a failover), but its 1 s trailing
 *   share window adds about half a second of measurement lag, and with no hysteresis a share
 *   hovering near 0.5 reads as many short episodes;
 * - the engine's own transitions (failover.triggered, processor.degraded), exact to the
 *   evaluation that made the decision, and what issue 3's Tier 1 numbers are about.
 */
import { DEFAULT_TIER1_CONFIG } from '../../src/tiers/tier1/config.js';
import type { Transition } from '../../src/engine/transitions.js';
import type { InProcessRun } from '../sim/engine-adapter.js';
import { ANTICIPATION_WINDOW_MS, score } from '../sim/score.js';
import { measureShifts, type ShiftMetrics } from './shift-metrics.js';

export interface RunMetrics {
  scenario: string;
  rate: number;
  seed: number;
  tier: number;
  hours: number;
  /** The scenario has an incident window, and it ends before the run does. */
  incident: boolean;
  incidentEnds: boolean;
  transactions: number;
  approvalRate: number;
  /** Traffic away from the primary (score.ts), ms after incident start; null: never, or no incident. */
  detectionMs: number | null;
  /** First failover.triggered of the primary in the incident window, ms after incident start. */
  failoverMs: number | null;
  failedDuringIncident: number;
  oracleSavedPayments: number;
  /** score.ts away episodes outside the incident window. */
  falseFailovers: number;
  /** Engine failovers of the primary outside the incident window. */
  falseTrips: number;
  /** Engine processor.degraded events (either processor) outside the incident window. */
  falseDegraded: number;
  returnToPrimaryMs: number | null;
  /**
   * Engine view of the same: 0 if the primary was not failed_over at the incident end, else
   * the time from the end to its failover.recovered; null: not recovered (or no end).
   */
  recoveredMs: number | null;
  /** Mean per payment, as a fraction (score.ts). */
  regret: number;
  /** Scenario times (ms) the primary's error rate first exceeds the default degrade/failover thresholds. */
  degradeCrossMs: number | null;
  failoverCrossMs: number | null;
  /** Scenario times (ms) of the primary's first degraded / failed_over after the degrade crossing. */
  degradedAtMs: number | null;
  failedOverAtMs: number | null;
  /** Issue 17's share-based measures (shift-metrics.ts). */
  shift: ShiftMetrics;
}

/** First ms in [0, durationMs) where `f` exceeds `thr` (100 ms scan, refined to 1 ms). */
export function crossing(f: (t: number) => number, thr: number, durationMs: number): number | null {
  let prev = 0;
  if (f(0) > thr) return 0;
  for (let t = 100; t <= durationMs; t += 100) {
    if (f(t) > thr) {
      let lo = prev;
      let hi = t;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (f(mid) > thr) hi = mid;
        else lo = mid;
      }
      return hi;
    }
    prev = t;
  }
  return null;
}

export function measureRun(run: InProcessRun, rate: number, seed: number, tier: number, configuredWeight = 1): RunMetrics {
  const { scenario, events, engine } = run;
  const s = score(events, scenario);
  const inc = scenario.incident;
  const from = inc ? inc.startMs - ANTICIPATION_WINDOW_MS : Infinity;
  const to = inc?.endMs ?? (inc ? Infinity : -Infinity);
  const inWindow = (t: number): boolean => t >= from && t < to;
  const at = (tr: Transition): number => engine.scenarioTime(tr.atMs);
  const primaryFailovers = engine.transitions.filter((tr) => tr.event === 'failover.triggered' && tr.processor === 0);
  const firstFailover = inc ? primaryFailovers.find((tr) => inWindow(at(tr))) : undefined;
  const degradeCrossMs = crossing(scenario.primary.errorRate, DEFAULT_TIER1_CONFIG.degradeThreshold, scenario.durationMs);
  const after = degradeCrossMs ?? Infinity;
  const firstAfter = (to: string): Transition | undefined =>
    engine.transitions.find((tr) => tr.processor === 0 && tr.to === to && at(tr) >= after);
  const degraded = firstAfter('degraded');
  const failedOver = firstAfter('failed_over');
  return {
    scenario: scenario.name,
    rate,
    seed,
    tier,
    hours: scenario.durationMs / 3_600_000,
    incident: inc !== undefined,
    incidentEnds: inc?.endMs !== undefined,
    transactions: s.transactions,
    approvalRate: s.approvalRate,
    detectionMs: s.detectionMs,
    failoverMs: firstFailover && inc ? at(firstFailover) - inc.startMs : null,
    failedDuringIncident: s.failedDuringIncident,
    oracleSavedPayments: s.oracleSavedPayments,
    falseFailovers: s.falseFailovers,
    falseTrips: primaryFailovers.filter((tr) => !inWindow(at(tr))).length,
    falseDegraded: engine.transitions.filter((tr) => tr.event === 'processor.degraded' && !inWindow(at(tr))).length,
    returnToPrimaryMs: s.returnToPrimaryMs,
    recoveredMs: inc?.endMs === undefined ? null : recoveredAfter(engine.transitions.map((tr) => ({ t: at(tr), tr })), inc.endMs),
    regret: s.regret,
    degradeCrossMs,
    failoverCrossMs: crossing(scenario.primary.errorRate, DEFAULT_TIER1_CONFIG.failoverThreshold, scenario.durationMs),
    // A processor that fails over straight from healthy was degraded at that moment too.
    degradedAtMs: degraded || failedOver ? Math.min(degraded ? at(degraded) : Infinity, failedOver ? at(failedOver) : Infinity) : null,
    failedOverAtMs: failedOver ? at(failedOver) : null,
    shift: measureShifts(run, configuredWeight),
  };
}

function recoveredAfter(ts: ReadonlyArray<{ t: number; tr: Transition }>, endMs: number): number | null {
  let failedOver = false;
  for (const { t, tr } of ts) {
    if (tr.processor !== 0) continue;
    if (t > endMs) {
      if (failedOver && tr.event === 'failover.recovered') return t - endMs;
      continue;
    }
    failedOver = tr.to === 'failed_over';
  }
  return failedOver ? null : 0;
}

/**
 * Nearest-rank percentile; null (never happened) counts as +Infinity, so a seed that never
 * detected makes the p95 "never" instead of being left out. Empty input: null.
 */
export function percentile(values: readonly (number | null)[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = ascendingNeverLast(values);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The values in ascending order, null ("never") as +Infinity. */
function ascendingNeverLast(values: readonly (number | null)[]): number[] {
  return values.map((v) => v ?? Infinity).sort((a, b) => a - b);
}

/**
 * The median: the middle value, or the mean of the two middle values of an even count (null
 * counting as +Infinity, as in percentile). Not the nearest-rank p50, which takes the lower of
 * the two: a benchmark whose rounds were partly refused has an even count now and then (2 or 4
 * of 5), and the lower of two p99 ratios flattered the service where the lower of two
 * throughput ratios was against it.
 */
export function median(values: readonly (number | null)[]): number | null {
  if (values.length === 0) return null;
  const sorted = ascendingNeverLast(values);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Differences b − a over runs where a is known; a run with a known a and no b gives null (never). */
export function delays(runs: readonly RunMetrics[], a: (r: RunMetrics) => number | null, b: (r: RunMetrics) => number | null): (number | null)[] {
  const out: (number | null)[] = [];
  for (const r of runs) {
    const x = a(r);
    if (x === null) continue;
    const y = b(r);
    out.push(y === null ? null : y - x);
  }
  return out;
}

export interface Summary {
  scenario: string;
  rate: number;
  tier: number;
  seeds: number;
  hours: number;
  incident: boolean;
  detectP50: number | null;
  detectP95: number | null;
  failoverP50: number | null;
  failoverP95: number | null;
  failedInIncident: number;
  falseFailoversPerHour: number;
  falseTripsPerHour: number;
  regret: number;
  backP50: number | null;
  recoveredP50: number | null;
}

export function summarise(runs: readonly RunMetrics[]): Summary {
  const r0 = runs[0];
  const hours = runs.reduce((a, r) => a + r.hours, 0);
  const incidentOnly = <T>(v: T): T | null => (r0.incident ? v : null);
  return {
    scenario: r0.scenario,
    rate: r0.rate,
    tier: r0.tier,
    seeds: runs.length,
    hours,
    incident: r0.incident,
    detectP50: incidentOnly(median(runs.map((r) => r.detectionMs))),
    detectP95: incidentOnly(percentile(runs.map((r) => r.detectionMs), 95)),
    failoverP50: incidentOnly(median(runs.map((r) => r.failoverMs))),
    failoverP95: incidentOnly(percentile(runs.map((r) => r.failoverMs), 95)),
    failedInIncident: mean(runs.map((r) => r.failedDuringIncident)),
    falseFailoversPerHour: runs.reduce((a, r) => a + r.falseFailovers, 0) / hours,
    falseTripsPerHour: runs.reduce((a, r) => a + r.falseTrips, 0) / hours,
    regret: mean(runs.map((r) => r.regret)),
    backP50: r0.incidentEnds ? median(runs.map((r) => r.returnToPrimaryMs)) : null,
    recoveredP50: r0.incidentEnds ? median(runs.map((r) => r.recoveredMs)) : null,
  };
}
