/** Human-readable rendering of a scenario score, shared by the CLIs. */
import type { Scenario } from './scenarios.js';
import type { ScoreResult } from './score.js';

const seconds = (ms: number | null): string => (ms === null ? 'n/a' : `${(ms / 1000).toFixed(1)} s`);
const pct = (x: number): string => `${(x * 100).toFixed(2)} %`;

export function formatScore(scenario: Scenario, r: ScoreResult): string {
  const incident = scenario.incident
    ? `${seconds(scenario.incident.startMs)} .. ${scenario.incident.endMs === undefined ? 'end' : seconds(scenario.incident.endMs)}`
    : 'none';
  return [
    `scenario            ${scenario.name} (incident ${incident}, failover expected: ${scenario.expectFailover ? 'yes' : 'no'})`,
    `transactions        ${r.transactions}`,
    `approval rate       ${pct(r.approvalRate)}`,
    `primary share       ${pct(r.primaryShare)}`,
    `detection time      ${scenario.incident ? seconds(r.detectionMs) : 'n/a'}${scenario.incident && r.detectionMs === null ? ' (never left the primary)' : ''}`,
    `failed in incident  ${r.failedDuringIncident}`,
    `oracle-saved        ${r.oracleSavedPayments.toFixed(1)} payments`,
    `false failovers     ${r.falseFailovers}`,
    `back to primary     ${scenario.incident?.endMs === undefined ? 'n/a' : r.returnToPrimaryMs === null ? 'never' : seconds(r.returnToPrimaryMs)}`,
    `regret vs oracle    ${pct(r.regret)} of transactions`,
  ].join('\n');
}
