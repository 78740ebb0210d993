/**
 * The picture of one simulated run (simulator or scenario benchmark): per second, the share
 * of payments routed to the primary, the technical error rate of the payments routed then,
 * and the failure probability the engine reported for the primary; the incident shaded; the
 * moments the engine failed over and recovered (or, without engine events, when traffic
 * left the primary and came back) marked.
 */
import type { TxEvent } from '../sim/driver.js';
import type { Scenario } from '../sim/scenarios.js';
import { awayEpisodes } from '../sim/score.js';
import { renderTimeChart, type ChartMark } from './svg-chart.js';

export interface EngineMoment {
  /** Scenario time, ms. */
  t: number;
  kind: 'failover' | 'recovery';
}

export interface RunChartInput {
  title: string;
  subtitle?: string;
  scenario: Scenario;
  events: readonly TxEvent[];
  /**
   * The engine's own failovers and recoveries of the primary, when known. Without failovers,
   * the chart marks when traffic left the primary; without recoveries, when it came back.
   */
  moments?: readonly EngineMoment[];
  /** Scenario time actually run, ms (default the scenario's duration). */
  durationMs?: number;
  bucketMs?: number;
}

export function runChart(o: RunChartInput): string {
  const bucketMs = o.bucketMs ?? 1000;
  const durationMs = o.durationMs ?? o.scenario.durationMs;
  const n = Math.max(1, Math.ceil(durationMs / bucketMs));
  const routed = new Float64Array(n);
  const toPrimary = new Float64Array(n);
  const techErrors = new Float64Array(n);
  const pSum = new Float64Array(n);
  const pCount = new Float64Array(n);
  const primaryId = o.scenario.primary.id;
  for (const e of o.events) {
    const i = Math.min(n - 1, Math.floor(e.t / bucketMs));
    routed[i]++;
    const onPrimary = e.decision.processorId === primaryId;
    if (onPrimary) toPrimary[i]++;
    if (e.outcome.kind === 'technical_error') techErrors[i]++;
    const p = e.decision.failureProbability;
    if (onPrimary && p !== null && p !== undefined) {
      pSum[i] += p;
      pCount[i]++;
    }
  }
  const at = (i: number) => ((i + 0.5) * bucketMs) / 1000;
  const series = (f: (i: number) => number) => Array.from({ length: n }, (_, i) => [at(i), f(i)] as const);
  const marks: ChartMark[] = [];
  const moments = o.moments ?? [];
  const failovers = moments.filter((m) => m.kind === 'failover');
  const recoveries = moments.filter((m) => m.kind === 'recovery');
  for (const m of failovers) marks.push({ atS: m.t / 1000, label: 'failover', color: '#c62828' });
  for (const m of recoveries) marks.push({ atS: m.t / 1000, label: 'recovered', color: '#2e7d32' });
  // Without engine events: the away episode of the incident (or the first one), not every
  // flicker of the share (a bandit's allocation moves all the time).
  const from = o.scenario.incident?.startMs ?? 0;
  const episodes = awayEpisodes(o.events, primaryId);
  const episode = episodes.find((ep) => ep.endMs === null || ep.endMs > from);
  for (const ep of failovers.length > 0 && recoveries.length > 0 ? [] : episode ? [episode] : []) {
    if (failovers.length === 0) marks.push({ atS: ep.startMs / 1000, label: 'traffic left primary', color: '#c62828' });
    if (recoveries.length === 0 && ep.endMs !== null) marks.push({ atS: ep.endMs / 1000, label: 'back on primary', color: '#2e7d32' });
  }
  marks.sort((a, b) => a.atS - b.atS);
  const incident = o.scenario.incident;
  return renderTimeChart({
    title: o.title,
    subtitle: o.subtitle,
    durationS: durationMs / 1000,
    series: [
      { name: 'traffic share of the primary', color: '#1565c0', points: series((i) => (routed[i] > 0 ? toPrimary[i] / routed[i] : NaN)) },
      { name: 'technical error rate', color: '#ef6c00', points: series((i) => (routed[i] > 0 ? techErrors[i] / routed[i] : NaN)) },
      { name: 'failure probability of the primary (Tier 2)', color: '#6a1b9a', dashed: true, points: series((i) => (pCount[i] > 0 ? pSum[i] / pCount[i] : NaN)) },
    ],
    bands: incident ? [{ fromS: incident.startMs / 1000, toS: (incident.endMs ?? durationMs) / 1000, label: 'incident', color: '#c62828' }] : [],
    marks,
  });
}
