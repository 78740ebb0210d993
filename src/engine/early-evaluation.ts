/**
 * When the front thread asks for an evaluation before the next cycle (called per recorded
 * outcome; cheap, no allocation):
 *   - a run of FAST_PATH_RUN consecutive technical failures (a hard outage), exactly once
 *     per run;
 *   - an error burst: a technical failure while the processor's last 5 s hold at least
 *     `minSamples` outcomes of which at least the failover threshold are technical errors (a
 *     partial outage the 5 s test can already judge), unless the processor is failed over
 *     already. The scheduler rate-limits early evaluations per tenant (250 ms), so a burst
 *     costs a few evaluations, not one per failure.
 */
import { ProcessorStatus } from '../shm/layout.js';
import { processorStatus } from '../shm/processor-rows.js';
import type { SharedTables } from '../shm/tables.js';
import { OutcomeKind, readCounts, emptyCounts } from '../shm/window.js';
import type { RecordedOutcome } from '../routing/outcome.js';
import { FAST_PATH_RUN, type Tier1Config } from '../tiers/tier1/config.js';
import { windowIndex, windowSegment } from '../shm/slots.js';

const BURST_HORIZON_MS = 5000;
const counts = emptyCounts();

export function wantsEarlyEvaluation(tables: SharedTables, o: RecordedOutcome, cfg: Tier1Config, nowMs: number): boolean {
  if (o.kind !== OutcomeKind.TechError && o.kind !== OutcomeKind.Timeout) return false;
  if (o.run === FAST_PATH_RUN) return true;
  if (o.run > FAST_PATH_RUN) return false;
  if (processorStatus(tables.ruleSegs, o.rule.slot, o.processor) === ProcessorStatus.FailedOver) return false;
  readCounts(windowSegment(tables.windowSegs, o.window), windowIndex(o.window), nowMs, BURST_HORIZON_MS, counts);
  const total = counts.success + counts.decline + counts.tech;
  return total >= cfg.minSamples && counts.tech >= cfg.failoverThreshold * total;
}
