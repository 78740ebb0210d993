/**
 * Issue 17's measures, from the engine's published primary share over time (exact to the
 * evaluation that changed it, unlike the score's 1 s routed-traffic window) and the scenario's
 * true error curve:
 *
 * - lead: how long before the true error rate crosses the failover threshold at least
 *   LEAD_CUT of the configured share had left the primary (negative: only after it);
 * - moved at crossing: the fraction of the configured share away from the primary at that
 *   crossing;
 * - after an incident ends: time to the failover.recovered, and to ≥ 50 % and ≥ 95 % of the
 *   configured share back on the primary;
 * - shifts: episodes with ≥ LEAD_CUT of the configured share away from the primary that start
 *   outside [incident start − 60 s, incident end) (for scenarios without an incident: all);
 * - moved during a bump: the mean fraction of the configured share away from the primary
 *   (payment-weighted) from the bump's start until 60 s after it recedes, and the payments
 *   that failed with a technical error in that window.
 */
import { DEFAULT_TIER1_CONFIG } from '../../src/tiers/tier1/config.js';
import type { InProcessRun } from '../sim/engine-adapter.js';
import { ANTICIPATION_WINDOW_MS } from '../sim/score.js';
import { crossing } from './scenario-metrics.js';

/** A "real" shift: at least this fraction of the configured share away from the primary. */
export const LEAD_CUT = 0.2;

export interface ShiftMetrics {
  /** Failover-threshold crossing minus the first ≥ LEAD_CUT shift (ms); null: no crossing, or never shifted. */
  leadMs: number | null;
  /** Fraction of the configured share away from the primary at the crossing; null: no crossing. */
  movedAtCross: number | null;
  /** Incident end to ≥ 50 % / ≥ 95 % of the configured share back on the primary; null: no end, or never. */
  share50Ms: number | null;
  share95Ms: number | null;
  /** Shift episodes (≥ LEAD_CUT away) outside the incident window. */
  shifts: number;
  /** Bump scenarios: mean fraction moved and failed payments from the bump start to 60 s after its end. */
  bumpMoved: number | null;
  bumpFailed: number | null;
}

/** The published share at scenario time t (the configured weight before the first evaluation). */
export function shareAt(series: ReadonlyArray<readonly [number, number]>, t: number, configured: number): number {
  let v = configured;
  for (const [at, share] of series) {
    if (at > t) break;
    v = share;
  }
  return v;
}

export function measureShifts(run: InProcessRun, configured: number): ShiftMetrics {
  const { scenario, engine, events } = run;
  const series = engine.shareSeries;
  const away = (share: number): number => (configured - share) / configured;
  const cross = crossing(scenario.primary.errorRate, DEFAULT_TIER1_CONFIG.failoverThreshold, scenario.durationMs);
  const inc = scenario.incident;

  let leadMs: number | null = null;
  let movedAtCross: number | null = null;
  if (cross !== null) {
    // Only shifts that can be about this incident: from 60 s before the error rate began to rise.
    const rise = crossing(scenario.primary.errorRate, scenario.primary.errorRate(0) + 0.005, scenario.durationMs) ?? cross;
    const first = series.find(([t, share]) => t >= rise - ANTICIPATION_WINDOW_MS && away(share) >= LEAD_CUT);
    leadMs = first === undefined ? null : cross - first[0];
    movedAtCross = away(shareAt(series, cross, configured));
  }

  let share50Ms: number | null = null;
  let share95Ms: number | null = null;
  if (inc?.endMs !== undefined) {
    const end = inc.endMs;
    const back = (frac: number): number | null => {
      if (shareAt(series, end, configured) >= frac * configured) return 0;
      const hit = series.find(([t, share]) => t > end && share >= frac * configured);
      return hit === undefined ? null : hit[0] - end;
    };
    share50Ms = back(0.5);
    share95Ms = back(0.95);
  }

  const from = inc ? inc.startMs - ANTICIPATION_WINDOW_MS : Infinity;
  const to = inc?.endMs ?? (inc ? Infinity : -Infinity);
  let shifts = 0;
  let inShift = false;
  for (const [t, share] of series) {
    const shifted = away(share) >= LEAD_CUT;
    if (shifted && !inShift && !(t >= from && t < to)) shifts++;
    inShift = shifted;
  }

  let bumpMoved: number | null = null;
  let bumpFailed: number | null = null;
  const bump = scenario.phases.find((p) => p.name === 'bump');
  if (bump !== undefined) {
    const next = scenario.phases.find((p) => p.startMs > bump.startMs);
    const endMs = (next?.startMs ?? scenario.durationMs) + 60_000;
    let n = 0;
    let movedSum = 0;
    let failed = 0;
    for (const e of events) {
      if (e.t < bump.startMs || e.t >= endMs) continue;
      n++;
      movedSum += away(shareAt(series, e.t, configured));
      if (e.outcome.kind === 'technical_error') failed++;
    }
    bumpMoved = n === 0 ? 0 : movedSum / n;
    bumpFailed = failed;
  }
  return { leadMs, movedAtCross, share50Ms, share95Ms, shifts, bumpMoved, bumpFailed };
}
