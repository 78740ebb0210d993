/**
 * Scores what an engine did to payments during a scenario, from the driver's events.
 *
 * Whether traffic has left the primary is measured from the routing decisions, not read
 * from engine state, so every tier and transport is judged the same way. At each payment's
 * routing time t the primary's share is
 *     (payments routed to the primary in (t − SHARE_WINDOW_MS, t]) / (all payments in that window).
 * An "away episode" starts at the first evaluation where the share is below AWAY_SHARE and
 * ends at the first later evaluation where it is at or above it. The window holds ~50
 * payments at the default 50 tx/s; below ~20 tx/s a single routing choice swings the share.
 */
import { successProbability } from './processor.js';
import type { TxEvent } from './driver.js';
import type { Scenario } from './scenarios.js';

/** Long enough to hold a sample of payments, short enough to resolve detection to ~1 s. */
export const SHARE_WINDOW_MS = 1_000;
/** Traffic has left the primary when less than half of it goes there. */
export const AWAY_SHARE = 0.5;
/**
 * Leaving at most this long before an incident starts counts as anticipating it (Tier 2 is
 * specified to act 30-60 s ahead), not as a false failover; detection time is then negative.
 */
export const ANTICIPATION_WINDOW_MS = 60_000;

export interface AwayEpisode {
  readonly startMs: number;
  /** null: traffic had not returned by the end of the events. */
  readonly endMs: number | null;
}

export interface ScoreResult {
  readonly transactions: number;
  /** Successful payments / payments. */
  readonly approvalRate: number;
  /** Share of all payments routed to the primary. */
  readonly primaryShare: number;
  readonly awayEpisodes: readonly AwayEpisode[];
  /**
   * Start of the first away episode that is ongoing at, or starts during, the incident,
   * minus the incident start; negative when anticipated (below −ANTICIPATION_WINDOW_MS the
   * engine had already left for no reason, and that episode is also a false failover).
   * null: no incident, or never left.
   */
  readonly detectionMs: number | null;
  /** Payments (declines included) routed in [incident start, incident end) that failed. */
  readonly failedDuringIncident: number;
  /**
   * Expected number of payments lost to sticking with the primary during the incident: each
   * technical failure on the primary counts the secondary's success probability at that time.
   * Declines are left out: the same card would most likely be declined on the secondary too.
   */
  readonly oracleSavedPayments: number;
  /** Away episodes that start outside [incident start − ANTICIPATION_WINDOW_MS, incident end). */
  readonly falseFailovers: number;
  /**
   * Time from the incident end until the away episode ongoing then ends (0 if traffic was
   * on the primary). null: no incident end, or traffic never came back.
   */
  readonly returnToPrimaryMs: number | null;
  /**
   * Mean over payments of P(success on the better processor at t) − P(success on the chosen
   * one at t): the oracle always picks the higher success probability of the moment.
   */
  readonly regret: number;
}

/** Away episodes from the primary's trailing-window share of routed payments (events in any order). */
export function awayEpisodes(events: readonly TxEvent[], primaryId: string): AwayEpisode[] {
  const sorted = [...events].sort((a, b) => a.t - b.t);
  const episodes: Array<{ startMs: number; endMs: number | null }> = [];
  let lo = 0;
  let hi = 0;
  let onPrimary = 0;
  while (hi < sorted.length) {
    const t = sorted[hi].t;
    // Payments at the same instant are evaluated together.
    while (hi < sorted.length && sorted[hi].t === t) {
      if (sorted[hi].decision.processorId === primaryId) onPrimary++;
      hi++;
    }
    while (sorted[lo].t <= t - SHARE_WINDOW_MS) {
      if (sorted[lo].decision.processorId === primaryId) onPrimary--;
      lo++;
    }
    const away = onPrimary / (hi - lo) < AWAY_SHARE;
    const open = episodes.length > 0 && episodes[episodes.length - 1].endMs === null;
    if (away && !open) episodes.push({ startMs: t, endMs: null });
    else if (!away && open) episodes[episodes.length - 1].endMs = t;
  }
  return episodes;
}

const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);

export function score(events: readonly TxEvent[], scenario: Scenario): ScoreResult {
  const { primary, secondary, incident } = scenario;
  const incidentStart = incident?.startMs ?? Infinity;
  const incidentEnd = incident?.endMs ?? Infinity;
  const inIncident = (t: number): boolean => t >= incidentStart && t < incidentEnd;

  let successes = 0;
  let onPrimary = 0;
  let failedDuringIncident = 0;
  let oracleSavedPayments = 0;
  let regretSum = 0;
  for (const { t, decision, outcome } of events) {
    const pPrimary = successProbability(primary, t);
    const pSecondary = successProbability(secondary, t);
    const isPrimary = decision.processorId === primary.id;
    if (!isPrimary && decision.processorId !== secondary.id) {
      throw new Error(`score: payment routed to unknown processor "${decision.processorId}"`);
    }
    if (outcome.success) successes++;
    if (isPrimary) onPrimary++;
    regretSum += Math.max(pPrimary, pSecondary) - (isPrimary ? pPrimary : pSecondary);
    if (inIncident(t)) {
      if (!outcome.success) failedDuringIncident++;
      if (isPrimary && outcome.kind === 'technical_error') oracleSavedPayments += pSecondary;
    }
  }

  const episodes = awayEpisodes(events, primary.id);
  const detected = episodes.find((e) => (e.endMs === null || e.endMs > incidentStart) && e.startMs < incidentEnd);
  const awayAtEnd = episodes.find((e) => e.startMs <= incidentEnd && (e.endMs === null || e.endMs > incidentEnd));
  const falseFailovers = episodes.filter((e) => e.startMs < incidentStart - ANTICIPATION_WINDOW_MS || e.startMs >= incidentEnd).length;

  return {
    transactions: events.length,
    approvalRate: ratio(successes, events.length),
    primaryShare: ratio(onPrimary, events.length),
    awayEpisodes: episodes,
    detectionMs: incident && detected ? detected.startMs - incidentStart : null,
    failedDuringIncident,
    oracleSavedPayments,
    falseFailovers,
    returnToPrimaryMs:
      incident?.endMs === undefined ? null : awayAtEnd === undefined ? 0 : awayAtEnd.endMs === null ? null : awayAtEnd.endMs - incidentEnd,
    regret: ratio(regretSum, events.length),
  };
}
