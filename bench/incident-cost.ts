/**
 * `node dist/bench/incident-cost.js`: what a Tier 1 policy costs during an incident, over many
 * seeds, in the two counts that matter for flapping: failed payments (declines included, as
 * `bench:scenarios` reports them) and technical failures of payments routed to the primary
 * (the policy's own cost: declines hit 8% of payments on either processor, and which draw of a
 * processor's outcome stream lands on which payment changes with every routing decision, so the
 * failed-payment count of two policies differs by more than their own cost at 5 seeds); and, for
 * incidents that end, how long after the end the primary is healthy again.
 *
 *   node dist/bench/incident-cost.js [--scenarios flapping-10,flapping] [--rates 2,20,50] [--seeds 31] [--per-seed]
 *
 * Same scenarios, seeds and in-process engine as bench:scenarios (incidents at 180 s, weight 1,
 * Tier 1); means per run over seeds 1..N, plus failovers of the primary per run. The file uses
 * only the simulator and the engine's transitions, so a copy of it builds against an older
 * engine too (how the issue-17 "before" figures were taken: that commit with this file and the
 * simulator's scenarios copied in).
 */
import { parseCli } from './lib/cli.js';
import { table } from './lib/load.js';
import { runInProcess, RUN_START_MS } from './sim/engine-adapter.js';
import { getScenario } from './sim/scenarios.js';

const o = parseCli({
  usage: 'node dist/bench/incident-cost.js [options]',
  summary: 'Failed payments and technical failures on the primary during the incident, Tier 1, means over seeds 1..N; time to healthy after incidents that end.',
  options: {
    scenarios: { type: 'string', default: 'flapping-10,flapping,recovery,partial-recovery,sudden-outage' },
    rates: { type: 'string', default: '2,20,50' },
    seeds: { type: 'string', default: '31' },
    'per-seed': { type: 'boolean', default: false },
  },
  help: {
    scenarios: 'comma-separated scenario names',
    rates: 'comma-separated arrival rates, payments per second',
    seeds: 'seeds 1..N',
    'per-seed': 'also print every seed: failed payments / technical failures on the primary / healthy after the end (s)',
  },
});
const seeds = Number(o.seeds);
if (!Number.isInteger(seeds) || seeds < 1) {
  console.error(`--seeds: expected a positive integer, got "${o.seeds}"`);
  process.exit(2);
}

/** Median of `xs`, Infinity (never) counting as the largest. */
function median(xs: number[]): number {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.floor((v.length - 1) / 2)];
}

const secs = (ms: number): string => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : 'never');

const rows: Record<string, unknown>[] = [];
const perSeed: string[] = [];
for (const name of o.scenarios.split(',')) {
  for (const rate of o.rates.split(',').map(Number)) {
    const scenario = getScenario(name, { incidentAtMs: 180_000 });
    const start = scenario.incident?.startMs ?? 0;
    const end = scenario.incident?.endMs ?? Infinity;
    let failed = 0;
    let techPrimary = 0;
    let trips = 0;
    const healthy: number[] = [];
    const lines: string[] = [];
    for (let seed = 1; seed <= seeds; seed++) {
      const run = await runInProcess({ scenario, ratePerSec: rate, seed, tier: 1, primaryWeight: 1 });
      let f = 0;
      let tp = 0;
      for (const e of run.events) {
        if (e.t < start || e.t >= end) continue;
        if (!e.outcome.success) f++;
        if (e.outcome.kind === 'technical_error' && e.decision.processorId === scenario.primary.id) tp++;
      }
      failed += f;
      techPrimary += tp;
      const primary = run.engine.transitions.filter((t) => t.processor === 0);
      trips += primary.filter((t) => t.to === 'failed_over').length;
      // Healthy after the end: 0 if not failed_over then, else the first failover.recovered after it.
      let h = NaN;
      if (Number.isFinite(end)) {
        const at = (t: { atMs: number }): number => t.atMs - RUN_START_MS;
        const before = primary.filter((t) => at(t) <= end);
        const down = before.length > 0 && before[before.length - 1].to === 'failed_over';
        const back = primary.find((t) => at(t) > end && t.event === 'failover.recovered');
        h = !down ? 0 : back === undefined ? Infinity : at(back) - end;
        healthy.push(h);
      }
      lines.push(`${f}/${tp}${Number.isNaN(h) ? '' : `/${secs(h)}`}`);
    }
    const notWithin = healthy.filter((h) => !Number.isFinite(h)).length;
    rows.push({
      scenario: name,
      'tx/s': rate,
      seeds,
      'failed payments': (failed / seeds).toFixed(1),
      'technical failures on the primary': (techPrimary / seeds).toFixed(1),
      'failovers of the primary': (trips / seeds).toFixed(2),
      'healthy after the end, s: median (max)':
        healthy.length === 0 ? '-' : `${secs(median(healthy))} (${secs(Math.max(...healthy))})${notWithin > 0 ? `, ${notWithin} not within the run` : ''}`,
    });
    perSeed.push(`${name} @${rate} tx/s, seeds 1-${seeds}: ${lines.join(' ')}`);
  }
}
console.log(table(rows));
if (o['per-seed']) console.log(`\nper seed (failed payments / technical failures on the primary / healthy after the end, s):\n${perSeed.join('\n')}`);
