/**
 * Issue 20's targets, judged from one `npm run bench` run's own figures: whether each was met,
 * and by which figures. A run's tables hold every number, but which of them a target reads
 * (and against what bound) was left to whoever read them; the last lines of the output and
 * the results file's `targets` now say it, so that a run on any host can be read at a glance.
 *
 * A figure the run refused (a disturbed round, a size not measured) counts as neither met nor
 * missed: such a target is "not judged", and says why.
 */

/** A same-run ratio as the summary holds it: a number, or the reason it was refused. */
type Figure = number | string;

export interface SizeFigures {
  rules: number;
  'route / bare': Figure;
  'outcome / bare': Figure;
  'route p99 / bare p99': Figure;
  /** The size's route throughput against the smallest size's, in the same rounds ('' for the smallest). */
  sizeRatio: Figure;
}

export interface CycleFigure {
  phase: string;
  'p99 / quiet median'?: Figure;
}

export interface MemoryFigure {
  rules: number;
  'rss after load MB': number;
}

export interface TargetVerdict {
  target: string;
  /** The figures it was judged by, as the run's tables show them. */
  figures: string;
  verdict: 'met' | 'missed' | 'not judged';
}

export const ROUTE_MIN = 0.7;
export const OUTCOME_MIN = 0.7;
export const P99_MAX = 1.5;
/** Throughput at the largest rule set within this share of the smallest's. */
export const SIZE_TOLERANCE = 0.1;
export const LARGE_RULES = 100_000;
export const RSS_MAX_MB = 300;
export const SCRAPE_CYCLE_MAX = 2;

/** One verdict from figures and a test each must pass: met when all pass, missed when one fails, not judged without a number. */
function judge(target: string, figures: readonly { label: string; value: Figure }[], ok: (v: number) => boolean): TargetVerdict {
  if (figures.length === 0) return { target, figures: 'not measured in this run', verdict: 'not judged' };
  const shown = figures.map((f) => `${f.label}: ${f.value}`).join(', ');
  const numbers = figures.map((f) => f.value).filter((v): v is number => typeof v === 'number');
  if (numbers.some((v) => !ok(v))) return { target, figures: shown, verdict: 'missed' };
  return { target, figures: shown, verdict: numbers.length === figures.length ? 'met' : 'not judged' };
}

export function judgeTargets(sizes: readonly SizeFigures[], cycle: readonly CycleFigure[], memory: readonly MemoryFigure[]): TargetVerdict[] {
  const perSize = (f: keyof SizeFigures) => sizes.map((s) => ({ label: `${s.rules.toLocaleString('en-US')} rules`, value: s[f] }));
  const large = sizes.find((s) => s.rules === LARGE_RULES);
  const smallest = sizes[0];
  const largeRss = memory.find((m) => m.rules === LARGE_RULES);
  const underLoad = cycle.filter((c): c is Required<CycleFigure> => c['p99 / quiet median'] !== undefined);
  let warm = 0;
  return [
    judge(`route ≥ ${ROUTE_MIN} of bare uWS req/s`, perSize('route / bare'), (v) => v >= ROUTE_MIN),
    judge(`outcome ≥ ${OUTCOME_MIN} of bare uWS req/s`, perSize('outcome / bare'), (v) => v >= OUTCOME_MIN),
    judge(`route p99 ≤ ${P99_MAX}× bare uWS's`, perSize('route p99 / bare p99'), (v) => v <= P99_MAX),
    judge(
      `route req/s at ${LARGE_RULES.toLocaleString('en-US')} rules within ${SIZE_TOLERANCE * 100}% of ${smallest?.rules.toLocaleString('en-US') ?? 'the smallest set'}`,
      large === undefined || large === smallest ? [] : [{ label: 'same-round ratio', value: large.sizeRatio }],
      (v) => Math.abs(1 - v) <= SIZE_TOLERANCE + 1e-9,
    ),
    judge(
      `service RSS ≤ ${RSS_MAX_MB} MB at ${LARGE_RULES.toLocaleString('en-US')} rules after the full-speed runs`,
      largeRss === undefined ? [] : [{ label: 'MB', value: largeRss['rss after load MB'] }],
      (v) => v <= RSS_MAX_MB,
    ),
    judge(
      `route p99 with a scrape and evaluation cycles ≤ ${SCRAPE_CYCLE_MAX}× its quiet value`,
      underLoad.map((c) => ({ label: c.phase.includes('cold') ? 'cold' : `warm ${++warm}`, value: c['p99 / quiet median'] })),
      (v) => v <= SCRAPE_CYCLE_MAX,
    ),
  ];
}

/** How a run was set up, as far as the issue's targets name it. */
export interface RunSetup {
  keysMode: boolean;
  rounds: number;
  connections: number;
}

/** The issue's set-up: an API key sent, at least 5 interleaved rounds, 64 connections. */
export const ISSUE_MIN_ROUNDS = 5;
export const ISSUE_CONNECTIONS = 64;

/** Where a run's set-up is not the one the targets are for: one line each, none when it is. */
export function setupCaveats(s: RunSetup): string[] {
  const out: string[] = [];
  if (!s.keysMode) out.push('run without API keys (--no-keys): the targets are for the service with an API key sent');
  if (s.rounds < ISSUE_MIN_ROUNDS) out.push(`${s.rounds} round(s): the targets' ratios are medians over at least ${ISSUE_MIN_ROUNDS} interleaved rounds`);
  if (s.connections !== ISSUE_CONNECTIONS) out.push(`${s.connections} connections: the targets were set with ${ISSUE_CONNECTIONS}`);
  return out;
}
