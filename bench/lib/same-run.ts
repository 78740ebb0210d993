/**
 * Same-run ratios of the HTTP benchmark: per round, the service's throughput over the bare uWS
 * ceiling measured beside it. A round whose ceiling run was disturbed (other processes took
 * CPU meanwhile) has no trustworthy denominator: it gets no ratio and is counted as refused.
 */
export interface RunFigures {
  rps: number;
  p99Ms: number;
  disturbed: boolean;
}

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
  refused: number;
}

export function sameRunRatios(rounds: readonly Round[]): SameRunRatios {
  const out: SameRunRatios = { route: [], outcome: [], p99: [], refused: 0 };
  for (const r of rounds) {
    if (r.ceiling.disturbed) {
      out.refused++;
      continue;
    }
    out.route.push(r.route.rps / r.ceiling.rps);
    out.outcome.push(r.outcome.rps / r.ceiling.rps);
    out.p99.push(r.route.p99Ms / r.ceiling.p99Ms);
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
