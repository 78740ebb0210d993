/**
 * Where a scenario's incident lies, derived from the primary's error curve so that the
 * scoring window can never disagree with the scripted behaviour.
 */
import type { TimeFn } from './curves.js';

/**
 * The primary is "in an incident" while its technical error rate exceeds this. It sits
 * above what must be tolerated (steady noise up to 15 %, a benign bump to 20 %) and below
 * the mildest scripted incident (60 % errors), so a ramp's incident starts where it crosses 25 %.
 */
export const INCIDENT_ERROR_RATE = 0.25;

/** Coarse scan step; a crossing found by the scan is then refined to 1 ms by bisection. */
const SCAN_STEP_MS = 100;

export interface IncidentWindow {
  /** First instant the error rate exceeds INCIDENT_ERROR_RATE. */
  readonly startMs: number;
  /** First instant after which it stays at or below it; absent if it never recovers. */
  readonly endMs?: number;
}

/** First integer ms in (lo, hi] where `bad` differs from bad(lo), given that bad(hi) does. */
function bisect(bad: (t: number) => boolean, lo: number, hi: number): number {
  const atLo = bad(lo);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (bad(mid) === atLo) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The span from the first time `errorRate` exceeds INCIDENT_ERROR_RATE to the last time it
 * drops back (flapping counts as one incident). Excursions shorter than SCAN_STEP_MS are missed.
 */
export function findIncident(errorRate: TimeFn, durationMs: number): IncidentWindow | undefined {
  const bad = (t: number): boolean => errorRate(t) > INCIDENT_ERROR_RATE;
  let startMs: number | undefined;
  let endMs: number | undefined;
  let prevT = 0;
  let prevBad = bad(0);
  if (prevBad) startMs = 0;
  for (let t = SCAN_STEP_MS; t < durationMs + SCAN_STEP_MS; t += SCAN_STEP_MS) {
    const now = Math.min(t, durationMs);
    const isBad = bad(now);
    if (isBad !== prevBad) {
      const edge = bisect(bad, prevT, now);
      if (isBad) startMs ??= edge;
      endMs = isBad ? undefined : edge;
    }
    prevT = now;
    prevBad = isBad;
  }
  return startMs === undefined ? undefined : endMs === undefined ? { startMs } : { startMs, endMs };
}
