/**
 * `node dist/bench/incident-cost.js`: what a Tier 1 policy costs during an incident, over many
 * seeds, in the two counts that matter for flapping: failed payments (declines included, as
 * `bench:scenarios` reports them) and technical failures of payments routed to the primary
 * (the policy's own cost: declines hit 8% of payments on either processor, and which draw of a
 * processor's outcome stream lands on which payment changes with every routing decision, so the
 * failed-payment count of two policies differs by more than their own cost at 5 seeds).
 *
 *   node dist/bench/incident-cost.js [--scenarios flapping-10,flapping] [--rates 2,20,50] [--seeds 31]
 *
 * Same scenarios, seeds and in-process engine as bench:scenarios (incidents at 180 s, weight 1,
 * Tier 1); means per run over seeds 1..N, plus failovers of the primary per run.
 */
import { parseCli } from './lib/cli.js';
import { table } from './lib/load.js';
import { runInProcess } from './sim/engine-adapter.js';
import { getScenario } from './sim/scenarios.js';

const o = parseCli({
  usage: 'node dist/bench/incident-cost.js [options]',
  summary: 'Failed payments and technical failures on the primary during the incident, Tier 1, means over seeds 1..N.',
  options: {
    scenarios: { type: 'string', default: 'flapping-10,flapping,recovery,sudden-outage' },
    rates: { type: 'string', default: '2,20,50' },
    seeds: { type: 'string', default: '31' },
  },
  help: { scenarios: 'comma-separated scenario names', rates: 'comma-separated arrival rates, payments per second', seeds: 'seeds 1..N' },
});
const seeds = Number(o.seeds);
if (!Number.isInteger(seeds) || seeds < 1) {
  console.error(`--seeds: expected a positive integer, got "${o.seeds}"`);
  process.exit(2);
}

const rows: Record<string, unknown>[] = [];
for (const name of o.scenarios.split(',')) {
  for (const rate of o.rates.split(',').map(Number)) {
    const scenario = getScenario(name, { incidentAtMs: 180_000 });
    const start = scenario.incident?.startMs ?? 0;
    const end = scenario.incident?.endMs ?? Infinity;
    let failed = 0;
    let techPrimary = 0;
    let trips = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const run = await runInProcess({ scenario, ratePerSec: rate, seed, tier: 1, primaryWeight: 1 });
      for (const e of run.events) {
        if (e.t < start || e.t >= end) continue;
        if (!e.outcome.success) failed++;
        if (e.outcome.kind === 'technical_error' && e.decision.processorId === scenario.primary.id) techPrimary++;
      }
      trips += run.engine.transitions.filter((t) => t.processor === 0 && t.to === 'failed_over').length;
    }
    rows.push({
      scenario: name,
      'tx/s': rate,
      seeds,
      'failed payments': (failed / seeds).toFixed(1),
      'technical failures on the primary': (techPrimary / seeds).toFixed(1),
      'failovers of the primary': (trips / seeds).toFixed(2),
    });
  }
}
console.log(table(rows));
