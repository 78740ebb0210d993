/**
 * Tables of the scenario benchmark: the per-scenario summary, issue 3's Tier 1 numbers, and
 * the issue 5 targets with hit/miss. Pure functions of the run metrics, so the CLI stays a loop.
 */
import { DEFAULT_TIER1_CONFIG } from '../../src/engine/tier1/config.js';
import { delays, median, percentile, summarise, type RunMetrics, type Summary } from './scenario-metrics.js';

export type Row = Record<string, string | number>;

/** Seconds with two decimals; null = not applicable, Infinity = never happened. */
export function sec(ms: number | null): string {
  if (ms === null) return '-';
  if (!Number.isFinite(ms)) return 'never';
  return (ms / 1000).toFixed(2);
}

const perHour = (x: number): string => (x === 0 ? '0' : x.toFixed(2));

export function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = m.get(k);
    if (list) list.push(it);
    else m.set(k, [it]);
  }
  return m;
}

export function summaries(runs: readonly RunMetrics[]): Summary[] {
  return [...groupBy(runs, (r) => `${r.scenario}|${r.rate}|${r.tier}`).values()].map(summarise);
}

export function summaryRow(s: Summary): Row {
  return {
    scenario: s.scenario,
    'tx/s': s.rate,
    tier: s.tier,
    'detect p50 s': sec(s.detectP50),
    'detect p95 s': sec(s.detectP95),
    'failover p50 s': sec(s.failoverP50),
    'failed in incident': s.incident ? s.failedInIncident.toFixed(1) : '-',
    'false FO/h': perHour(s.falseFailoversPerHour),
    'false trips/h': perHour(s.falseTripsPerHour),
    'regret %': (s.regret * 100).toFixed(3),
    'back p50 s': sec(s.backP50),
    'recovered p50 s': sec(s.recoveredP50),
  };
}

const select = (runs: readonly RunMetrics[], scenario: string, rate?: number): RunMetrics[] =>
  runs.filter((r) => r.tier === 1 && r.scenario === scenario && (rate === undefined || r.rate === rate));
const ratesOf = (runs: readonly RunMetrics[]): number[] => [...new Set(runs.map((r) => r.rate))].sort((a, b) => a - b);

/** Issue 3: total outage detection by rate (Tier 1, median over seeds). */
export function outageRows(runs: readonly RunMetrics[]): Row[] {
  const all = select(runs, 'sudden-outage');
  return ratesOf(all).map((rate) => {
    const rs = select(runs, 'sudden-outage', rate);
    return {
      'tx/s': rate,
      seeds: rs.length,
      'failover p50 s': sec(median(rs.map((r) => r.failoverMs))),
      'failover p95 s': sec(percentile(rs.map((r) => r.failoverMs), 95)),
      'traffic away p50 s': sec(median(rs.map((r) => r.detectionMs))),
      'traffic away p95 s': sec(percentile(rs.map((r) => r.detectionMs), 95)),
    };
  });
}

/** Issue 3: the 120 s ramp, timed from the threshold crossings of the primary's error rate. */
export function rampRows(runs: readonly RunMetrics[]): Row[] {
  const all = select(runs, 'ramp-120');
  return ratesOf(all).map((rate) => {
    const rs = select(runs, 'ramp-120', rate);
    const toDegraded = delays(rs, (r) => r.degradeCrossMs, (r) => r.degradedAtMs);
    const toFailover = delays(rs, (r) => r.degradeCrossMs, (r) => r.failedOverAtMs);
    const fromFoCross = delays(rs, (r) => r.failoverCrossMs, (r) => r.failedOverAtMs);
    return {
      'tx/s': rate,
      seeds: rs.length,
      [`degraded after ${pct(DEFAULT_TIER1_CONFIG.degradeThreshold)} crossing p50 s`]: sec(median(toDegraded)),
      'p95 s': sec(percentile(toDegraded, 95)),
      [`failover after ${pct(DEFAULT_TIER1_CONFIG.degradeThreshold)} crossing p50 s`]: sec(median(toFailover)),
      [`failover after ${pct(DEFAULT_TIER1_CONFIG.failoverThreshold)} crossing p50 s`]: sec(median(fromFoCross)),
      'traffic away after incident start (25%) p50 s': sec(median(rs.map((r) => r.detectionMs))),
    };
  });
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

export const STEADY_NOISE: ReadonlyArray<readonly [string, string]> = [
  ['steady', '2%'],
  ['steady-noise-10', '10%'],
  ['steady-noise-15', '15%'],
];

/** Issue 3: false trips per simulated hour at steady technical error rates. */
export function noiseRows(runs: readonly RunMetrics[]): Row[] {
  const rows: Row[] = [];
  for (const [name, level] of STEADY_NOISE) {
    for (const rate of ratesOf(select(runs, name))) {
      const rs = select(runs, name, rate);
      const hours = rs.reduce((a, r) => a + r.hours, 0);
      const sum = (f: (r: RunMetrics) => number): number => rs.reduce((a, r) => a + f(r), 0);
      rows.push({
        errors: level,
        'tx/s': rate,
        'simulated h': hours.toFixed(1),
        'failovers/h': perHour(sum((r) => r.falseTrips) / hours),
        'degraded/h': perHour(sum((r) => r.falseDegraded) / hours),
        'traffic-away episodes/h': perHour(sum((r) => r.falseFailovers) / hours),
      });
    }
  }
  return rows;
}

/** Issue 5's targets that the scenario benchmark can judge (Tier 1 runs only). */
export function targetRows(runs: readonly RunMetrics[]): Row[] {
  const rows: Row[] = [];
  const p95 = (scenario: string, rate: number, f: (r: RunMetrics) => number | null): number | null => {
    const rs = select(runs, scenario, rate);
    return rs.length === 0 ? null : percentile(rs.map(f), 95);
  };
  const judge = (target: string, measured: number | null, limitMs: number, extra = ''): void => {
    rows.push({
      target,
      measured: measured === null ? 'not run' : `${sec(measured)} s${extra}`,
      result: measured === null ? '-' : measured <= limitMs ? 'hit' : `MISS by ${sec(measured - limitMs)} s`,
    });
  };
  const away = (scenario: string, rate: number): string => ` (traffic away p95 ${sec(p95(scenario, rate, (r) => r.detectionMs))} s)`;
  judge('total outage @20 tx/s failed over within 1 s (p95)', p95('sudden-outage', 20, (r) => r.failoverMs), 1000, away('sudden-outage', 20));
  judge('total outage @2 tx/s failed over within 10 s (p95)', p95('sudden-outage', 2, (r) => r.failoverMs), 10_000, away('sudden-outage', 2));
  judge('60% partial outage @20 tx/s failed over within 5 s (p95)', p95('partial-outage', 20, (r) => r.failoverMs), 5000, away('partial-outage', 20));
  for (const rate of ratesOf(select(runs, 'ramp-120'))) {
    const d = percentile(delays(select(runs, 'ramp-120', rate), (r) => r.degradeCrossMs, (r) => r.degradedAtMs), 95);
    judge(`ramp 2%→60%/120 s @${rate} tx/s degraded within 30 s of crossing 15% (p95)`, d, 30_000);
  }
  for (const [name, level] of STEADY_NOISE.slice(0, 2)) {
    const rs = select(runs, name);
    if (rs.length === 0) continue;
    const trips = rs.reduce((a, r) => a + r.falseTrips, 0);
    const away = rs.reduce((a, r) => a + r.falseFailovers, 0);
    const hours = rs.reduce((a, r) => a + r.hours, 0);
    rows.push({
      target: `zero false failovers at steady ${level} errors (all rates, ${hours.toFixed(1)} simulated h)`,
      measured: `${trips} engine failovers, ${away} traffic-away episodes`,
      result: trips === 0 && away === 0 ? 'hit' : 'MISS',
    });
  }
  return rows;
}
