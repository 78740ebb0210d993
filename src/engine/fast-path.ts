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
import { PF_STATUS, ProcessorStatus, WINDOW_MASK, WINDOW_SHIFT } from '../shared/layout.js';
import { processorRowOffset, processorRows } from './health-view.js';
import type { SharedTables } from '../shared/tables.js';
import { OutcomeKind, readCounts, emptyCounts } from '../shared/window.js';
import type { RecordedOutcome } from '../routing/outcome.js';
import { FAST_PATH_RUN, type Tier1Config } from './tier1/config.js';

const BURST_HORIZON_MS = 5000;
const counts = emptyCounts();

export function wantsEarlyEvaluation(tables: SharedTables, o: RecordedOutcome, cfg: Tier1Config, nowMs: number): boolean {
  if (o.kind !== OutcomeKind.TechError && o.kind !== OutcomeKind.Timeout) return false;
  if (o.run === FAST_PATH_RUN) return true;
  if (o.run > FAST_PATH_RUN) return false;
  const row = processorRowOffset(o.rule.slot, o.processor);
  if (processorRows(tables, o.rule.slot)[row + PF_STATUS] === ProcessorStatus.FailedOver) return false;
  readCounts(tables.windowSegs[o.window >> WINDOW_SHIFT], o.window & WINDOW_MASK, nowMs, BURST_HORIZON_MS, counts);
  const total = counts.success + counts.decline + counts.tech;
  return total >= cfg.minSamples && counts.tech >= cfg.failoverThreshold * total;
}
