/**
 * Tables of the scenario benchmark: the per-scenario summary, issue 3's Tier 1 numbers, and
 * the issue 5 targets with hit/miss. Pure functions of the run metrics, so the CLI stays a loop.
 */
import { DEFAULT_TIER1_CONFIG } from '../../src/tiers/tier1/config.js';
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

// ── issue 17: lead before the threshold crossing, recovery, false shifts ──────────────────

const pctOf = (x: number | null): string => (x === null ? '-' : `${Math.round(x * 100)}%`);
const dist = (xs: readonly (number | null)[]): string =>
  xs.length === 0 ? '-' : `p50 ${sec(median(xs))} (min ${sec(percentile(xs, 0) ?? null)}, max ${sec(percentile(xs, 100))})`;
const selectTier = (runs: readonly RunMetrics[], tier: number, scenario: string, rate: number): RunMetrics[] =>
  runs.filter((r) => r.tier === tier && r.scenario === scenario && r.rate === rate);
const tiersOf = (runs: readonly RunMetrics[]): number[] => [...new Set(runs.map((r) => r.tier))].sort();
const ratesIn = (runs: readonly RunMetrics[], scenario: string): number[] => ratesOf(runs.filter((r) => r.scenario === scenario));

/** Ramps: lead of a ≥ 20% shift before the true error rate crosses the failover threshold, and the share moved at the crossing. */
export function leadRows(runs: readonly RunMetrics[]): Row[] {
  const rows: Row[] = [];
  for (const scenario of ['ramp-60', 'ramp-120', 'ramp-300', 'latency-degradation']) {
    for (const tier of tiersOf(runs)) {
      for (const rate of ratesIn(runs, scenario)) {
        const rs = selectTier(runs, tier, scenario, rate);
        if (rs.length === 0) continue;
        const moved = rs.map((r) => r.shift.movedAtCross ?? 0).sort((a, b) => a - b);
        rows.push({
          scenario,
          tier,
          'tx/s': rate,
          seeds: rs.length,
          'lead of ≥20% shift before crossing 30% s': dist(rs.map((r) => r.shift.leadMs)),
          'moved at crossing p50 (min-max)': `${pctOf(moved[Math.floor((moved.length - 1) / 2)])} (${pctOf(moved[0])}-${pctOf(moved[moved.length - 1])})`,
        });
      }
    }
  }
  return rows;
}

/** After the primary's outage ends: recovered, and ≥ 50% / ≥ 95% of the configured share back. */
export function recoveryRows(runs: readonly RunMetrics[]): Row[] {
  const rows: Row[] = [];
  for (const scenario of ['recovery', 'flapping', 'flapping-10']) {
    for (const tier of tiersOf(runs)) {
      for (const rate of ratesIn(runs, scenario)) {
        const rs = selectTier(runs, tier, scenario, rate);
        if (rs.length === 0) continue;
        rows.push({
          scenario,
          tier,
          'tx/s': rate,
          seeds: rs.length,
          'recovered s': dist(rs.map((r) => r.recoveredMs)),
          '≥50% share back s': dist(rs.map((r) => r.shift.share50Ms)),
          '≥95% share back s': dist(rs.map((r) => r.shift.share95Ms)),
          'failed in incident (mean)': (rs.reduce((a, r) => a + r.failedDuringIncident, 0) / rs.length).toFixed(1),
        });
      }
    }
  }
  return rows;
}

/** Steady noise and harmless bumps: shifts of ≥ 20% per simulated hour; what bumps moved and cost. */
export function shiftRows(runs: readonly RunMetrics[]): Row[] {
  const rows: Row[] = [];
  for (const scenario of ['steady-noise-3-jitter', 'steady-noise-10-jitter', 'steady-noise-10', 'steady-noise-15', 'benign-bump']) {
    for (const tier of tiersOf(runs)) {
      for (const rate of ratesIn(runs, scenario)) {
        const rs = selectTier(runs, tier, scenario, rate);
        if (rs.length === 0) continue;
        const hours = rs.reduce((a, r) => a + r.hours, 0);
        const shifts = rs.reduce((a, r) => a + r.shift.shifts, 0);
        const bump = rs[0].shift.bumpMoved !== null;
        rows.push({
          scenario,
          tier,
          'tx/s': rate,
          'simulated h': hours.toFixed(2),
          'shifts ≥20%': shifts,
          'bump: traffic moved (mean)': bump ? pctOf(rs.reduce((a, r) => a + (r.shift.bumpMoved ?? 0), 0) / rs.length) : '-',
          'bump: technical failures (mean)': bump ? (rs.reduce((a, r) => a + (r.shift.bumpFailed ?? 0), 0) / rs.length).toFixed(1) : '-',
        });
      }
    }
  }
  return rows;
}

/** Issue 17's targets with hit/miss (each needs its scenario, rate and tier in the run). */
export function issue17TargetRows(runs: readonly RunMetrics[]): Row[] {
  const rows: Row[] = [];
  const add = (target: string, rs: RunMetrics[], measured: () => string, ok: () => boolean): void => {
    rows.push(rs.length === 0 ? { target, measured: 'not run', result: '-' } : { target, measured: measured(), result: ok() ? 'hit' : 'MISS' });
  };
  const leadTier = (runs: readonly RunMetrics[]): number => Math.max(...tiersOf(runs));
  const t2 = leadTier(runs);
  for (const rate of [20, 50]) {
    const rs = selectTier(runs, t2, 'ramp-120', rate);
    const leads = rs.map((r) => r.shift.leadMs);
    add(`tier ${t2}, ramp-120 @${rate} tx/s: ≥20% left the primary ≥30 s before the 30% crossing (median)`, rs, () => dist(leads), () => (median(leads) ?? -Infinity) >= 30_000);
    const moved = rs.map((r) => -(r.shift.movedAtCross ?? 0));
    add(`tier ${t2}, ramp-120 @${rate} tx/s: ≥50% moved by the crossing (median)`, rs, () => pctOf(-(median(moved) ?? 0)), () => -(median(moved) ?? 0) >= 0.5);
  }
  for (const scenario of ['steady-noise-3-jitter', 'steady-noise-10-jitter']) {
    const rs = runs.filter((r) => r.tier === t2 && r.scenario === scenario);
    const shifts = rs.reduce((a, r) => a + r.shift.shifts, 0);
    const hours = rs.reduce((a, r) => a + r.hours, 0);
    add(`tier ${t2}, ${scenario}: 0 shifts of ≥20% (all rates)`, rs, () => `${shifts} in ${hours.toFixed(1)} simulated h`, () => shifts === 0);
  }
  const rec = (rate: number): RunMetrics[] => selectTier(runs, 1, 'recovery', rate);
  add('tier 1, recovery @50 tx/s: healthy within 15 s (median)', rec(50), () => dist(rec(50).map((r) => r.recoveredMs)), () => (median(rec(50).map((r) => r.recoveredMs)) ?? Infinity) <= 15_000);
  add('tier 1, recovery @50 tx/s: ≥50% of the configured share within 20 s (median)', rec(50), () => dist(rec(50).map((r) => r.shift.share50Ms)), () => (median(rec(50).map((r) => r.shift.share50Ms)) ?? Infinity) <= 20_000);
  add('tier 1, recovery @50 tx/s: ≥95% of the configured share within 40 s (median)', rec(50), () => dist(rec(50).map((r) => r.shift.share95Ms)), () => (median(rec(50).map((r) => r.shift.share95Ms)) ?? Infinity) <= 40_000);
  add('tier 1, recovery @2 tx/s: healthy within 120 s (median)', rec(2), () => dist(rec(2).map((r) => r.recoveredMs)), () => (median(rec(2).map((r) => r.recoveredMs)) ?? Infinity) <= 120_000);
  return rows;
}
