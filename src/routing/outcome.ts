/**
 * Recording an outcome (front thread, per request): classify, add to the processor's window,
 * update its consecutive-technical-failure run. The 202 does not wait for any other thread.
 */
import { classifyOutcome } from './classify.js';
import { errors } from '../errors.js';
import { OUTCOME_RESULTS, RI_RUN_PRIMARY, RI_RUN_SECONDARY } from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import { OutcomeKind, recordOutcome } from '../shm/window.js';
import type { OutcomeReport } from '../schemas/routing.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { ruleI32Base, ruleSegment, windowIndex, windowSegment } from '../shm/slots.js';

export const CLASSIFICATION_NAMES = ['success', 'decline', 'technical_error', 'technical_error'] as const;

export interface RecordedOutcome {
  rule: LiveRule;
  kind: OutcomeKind;
  /** Length of the processor's current run of technical failures (0 after any other outcome). */
  run: number;
  /** 0 primary, 1 secondary. */
  processor: 0 | 1;
  /** The processor's outcome window. */
  window: number;
  latencyMs: number;
}

/**
 * What recordReportedOutcome returns: one object, overwritten by every call, so that an outcome
 * allocates nothing beyond its reply. The callers (the handler, shadow mode, the engine hook) read
 * it before the next outcome and keep none of it.
 */
const recorded: RecordedOutcome = { rule: undefined as unknown as LiveRule, kind: OutcomeKind.Success, run: 0, processor: 0, window: -1, latencyMs: 0 };

/** The Int32 field of rule `slot`'s processor k's run of technical failures. */
function runField(slot: number, k: 0 | 1): number {
  return ruleI32Base(slot) + (k === 0 ? RI_RUN_PRIMARY : RI_RUN_SECONDARY);
}

/** Records `report`; the returned object is valid until the next call (see `recorded`). */
export function recordReportedOutcome(tables: SharedTables, tenant: Tenant, report: OutcomeReport, nowMs: number): RecordedOutcome {
  // The rule's cache, not the rule (routing/rule-cache.ts): at 100,000 rules the rule's map
  // entry, object, record and id strings were first touches of pages of their own.
  const cache = tenant.outcomeCache(report.rule_id);
  if (cache === undefined) throw errors.field('rule_id', `no rule "${report.rule_id}" in this tenant`);
  const pid = report.processor_id;
  let k: 0 | 1;
  if (pid === cache.primaryId) {
    k = 0;
    cache.primaryId = pid; // the decoder's string from now on (see RuleCache.primaryId)
  } else if (pid === cache.secondaryId) {
    k = 1;
    cache.secondaryId = pid;
  } else throw errors.field('processor_id', `processor "${pid}" is not part of rule "${cache.rule.record.rule_id}"`);

  const kind = classifyOutcome(report.success, report.error_code, tenant.errorCodes);
  const rule = cache.rule;
  const slot = cache.slot;
  let w = k === 0 ? cache.windowPrimary : cache.windowSecondary;
  if (w < 0) {
    w = tables.windowOf(slot, k, cache.selfFallback);
    if (k === 0) cache.windowPrimary = w;
    else cache.windowSecondary = w;
  }
  recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), nowMs, kind, report.latency_ms);
  // Per-rule outcome counter for the metrics: success, decline, technical; in the cache, added
  // to the rule's row in a batch (shm/rule-counts.ts).
  cache.outcomes[k * OUTCOME_RESULTS + (kind < OutcomeKind.TechError ? kind : 2)]++;
  if (!cache.queued) tables.ruleCounts.queue(cache);

  // The run of consecutive technical failures. Outcomes arrive after their latency, so a
  // success reported during an outage may be a payment that started before it: a success that
  // started before the run's first failure started says nothing about the processor now and
  // does not end the run (otherwise slow successes from before an outage delay its detection).
  const startedAt = nowMs - report.latency_ms;
  let run = 0;
  if (kind === OutcomeKind.TechError || kind === OutcomeKind.Timeout) {
    run = Atomics.add(ruleSegment(tables.ruleSegs, slot).ruleI32, runField(slot, k), 1) + 1;
    if (run === 1) (rule.runStartedAt ??= [0, 0])[k] = startedAt;
    if (k === 0) cache.runPrimaryAtZero = false;
    else cache.runSecondaryAtZero = false;
  } else if (!(k === 0 ? cache.runPrimaryAtZero : cache.runSecondaryAtZero)) {
    // The front thread is the run's only writer (layout.ts): a plain read sees its own last
    // write, and a run already at 0 needs no store. Both spare a successful outcome a builtin
    // call each: V8 11 does not inline Atomics.load or Atomics.store (~100 instructions each).
    const ruleI32 = ruleSegment(tables.ruleSegs, slot).ruleI32;
    const field = runField(slot, k);
    run = ruleI32[field];
    if (run !== 0 && (rule.runStartedAt === null || startedAt >= rule.runStartedAt[k])) {
      run = 0;
      Atomics.store(ruleI32, field, 0); // the pool reads it with Atomics.load
    }
    if (run === 0) {
      if (k === 0) cache.runPrimaryAtZero = true;
      else cache.runSecondaryAtZero = true;
    }
  }
  recorded.rule = rule;
  recorded.kind = kind;
  recorded.run = run;
  recorded.processor = k;
  recorded.window = w;
  recorded.latencyMs = report.latency_ms;
  return recorded;
}
