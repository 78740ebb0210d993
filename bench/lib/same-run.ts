/**
 * Same-run ratios of the HTTP benchmark: per round, the service's throughput over the bare uWS
 * ceiling measured beside it. A round whose ceiling run was disturbed (other processes took
 * CPU meanwhile) has no trustworthy denominator: it gets no ratio and is counted as refused.
 * Beside it the same ratio by server CPU per request (the ceiling's µs over the route's): when
 * the generator nears its own core's limit in the ceiling run, the bare server idles between
 * requests and its req/s is wrk's as much as its own, while CPU per request is still the
 * server's. Such rounds are counted (generatorBound) so the report can say so.
 *
 * A slowed machine: on a virtual machine the host can take speed from the guest without any
 * steal time showing (seen here: in three of five rounds of one rule set the bare server took
 * 2× and the route 2.3× the CPU per request of the other rounds, other processes and steal
 * both at 0.02-0.03 of a core). The bare server's CPU per request is the machine's speed in
 * these runs (it does the same work every time), so a round whose ceiling took more than
 * SLOW_CEILING_FACTOR × the median ceiling of the same rule set is refused too (`slowed`).
 * The median, not the fastest: one round on a host that had sped up (7.5 µs per bare answer
 * against 9.8-11.3 in the four others of one rule set here) refused all the others, and the
 * ratios kept were that one round's.
 */
import { median } from './scenario-metrics.js';

export interface RunFigures {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  disturbed: boolean;
  /** Server CPU per request, µs (all the server's threads). */
  serverUsPerReq: number;
  /** The generator's share of its core during the run. */
  generatorCore: number;
}

/** A ceiling run whose generator used this much of its core or more was paced by the generator. */
export const GENERATOR_BOUND_CORE = 0.95;

/** A ceiling run that took more than this times the median ceiling's CPU per request ran on a slowed machine. */
export const SLOW_CEILING_FACTOR = 1.25;

export interface Round {
  ceiling: RunFigures;
  route: RunFigures;
  outcome: RunFigures;
}

export interface SameRunRatios {
  route: number[];
  outcome: number[];
  /** Route p99 over the ceiling's p99. */
  p99: number[];
  /**
   * Route p50 over the ceiling's p50, and each run's own p99 over its p50: whether the route's
   * p99 ratio is a tail of its own or its median's (a server slower than wrk holds the 64
   * requests in its queue; a ceiling at wrk's pace answers as they come).
   */
  p50: number[];
  routeTail: number[];
  ceilingTail: number[];
  /**
   * Each run's p50 over its connections' loop (loopShare): how much of the loop wrk's latency
   * clock sees. A ceiling at wrk's pace keeps part of the loop inside wrk, outside the clock.
   */
  ceilingLoopShare: number[];
  routeLoopShare: number[];
  /** The ceiling's server CPU per request over the route's (1 = as cheap as bare uWS). */
  routeByCpu: number[];
  /** Counted rounds whose ceiling run was paced by the generator (GENERATOR_BOUND_CORE). */
  generatorBound: number;
  /** Rounds refused: the ceiling run was disturbed (other processes, steal) or ran on a slowed machine. */
  refused: number;
  /** Of the refused, those whose ceiling ran on a slowed machine (SLOW_CEILING_FACTOR). */
  slowed: number;
}

/**
 * A run's p50 over its connections' loop: in a closed loop of `connections` connections each
 * turn of a connection (request written, answered, answer read, next request written) lasts
 * connections / req/s on average. wrk's latency clock starts when it writes a request and stops
 * when it has parsed the answer; the next request on that connection is written on a later pass
 * of its event loop (response_complete arms the socket for writing), so the rest of that pass
 * is not on the clock. A server slower than wrk holds the connections' requests in its own
 * queue, on the clock (a share near 1); a server at wrk's pace leaves them waiting inside wrk,
 * off it (measured: bare ~0.55 against the route's ~0.92 on a host where wrk set bare's pace).
 */
export function loopShare(run: Pick<RunFigures, 'p50Ms' | 'rps'>, connections: number): number {
  return ((run.p50Ms / 1000) * run.rps) / connections;
}

/** `connections`: the runs' wrk connections, for each run's loopShare. */
export function sameRunRatios(rounds: readonly Round[], connections: number): SameRunRatios {
  const out: SameRunRatios = {
    route: [],
    outcome: [],
    p99: [],
    p50: [],
    routeTail: [],
    ceilingTail: [],
    ceilingLoopShare: [],
    routeLoopShare: [],
    routeByCpu: [],
    generatorBound: 0,
    refused: 0,
    slowed: 0,
  };
  const typical = median(rounds.filter((r) => !r.ceiling.disturbed).map((r) => r.ceiling.serverUsPerReq)) ?? Infinity;
  for (const r of rounds) {
    if (r.ceiling.disturbed) {
      out.refused++;
      continue;
    }
    if (r.ceiling.serverUsPerReq > SLOW_CEILING_FACTOR * typical) {
      out.refused++;
      out.slowed++;
      continue;
    }
    out.route.push(r.route.rps / r.ceiling.rps);
    out.outcome.push(r.outcome.rps / r.ceiling.rps);
    out.p99.push(r.route.p99Ms / r.ceiling.p99Ms);
    out.p50.push(r.route.p50Ms / r.ceiling.p50Ms);
    out.routeTail.push(r.route.p99Ms / r.route.p50Ms);
    out.ceilingTail.push(r.ceiling.p99Ms / r.ceiling.p50Ms);
    out.ceilingLoopShare.push(loopShare(r.ceiling, connections));
    out.routeLoopShare.push(loopShare(r.route, connections));
    out.routeByCpu.push(r.ceiling.serverUsPerReq / r.route.serverUsPerReq);
    if (r.ceiling.generatorCore >= GENERATOR_BOUND_CORE) out.generatorBound++;
  }
  return out;
}

/**
 * Route throughput at a larger rule set over the smallest one, per round: both services run
 * beside each other, and each round measures one right after the other, so the machine's drift
 * between the sizes' sections (seen here: the same service 134,000 req/s in one section and
 * 108,000 in a later one) cancels. A round in which either run was disturbed gets no ratio.
 */
export function sizeRatios(rounds: readonly { route: RunFigures; reference: RunFigures }[]): number[] {
  return rounds.filter((r) => !r.route.disturbed && !r.reference.disturbed).map((r) => r.route.rps / r.reference.rps);
}

/**
 * How much slower the machine was around a scrape + cycle run than around the quiet runs it is
 * divided by: the larger of the bare server's CPU per request just before and just after the
 * run, over the median of those measured beside the quiet runs. Those runs are minutes apart
 * (the rounds lie between them), and this host's speed moves in phases of minutes: a route
 * p99 taken in a slow phase and divided by one taken in a fast phase measured the host, not
 * the scrapes and cycles. Above SLOW_CEILING_FACTOR the figure is refused, as a round whose
 * ceiling ran slowed is. NaN when either side has no reading.
 */
export function slowdownBeside(aroundRun: readonly number[], aroundQuiet: readonly number[]): number {
  const quiet = median(aroundQuiet.filter((us) => us > 0));
  const around = aroundRun.filter((us) => us > 0);
  if (quiet === null || around.length === 0) return Number.NaN;
  return Math.max(...around) / quiet;
}
