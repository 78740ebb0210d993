/**
 * Recording an outcome (front thread, per request): classify, add to the processor's window,
 * update its consecutive-technical-failure run. The 202 does not wait for any other thread.
 */
import { classifyOutcome } from './classify.js';
import { errors } from '../errors.js';
import {
  OUTCOME_RESULTS,
  RF_OUTCOMES,
  RI_RUN_PRIMARY,
  RI_RUN_SECONDARY,
} from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import { OutcomeKind, recordOutcome } from '../shm/window.js';
import type { OutcomeReport } from '../schemas/routing.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { ruleF64Base, ruleI32Base, ruleSegment, windowIndex, windowSegment } from '../shm/slots.js';

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

/** Records `report`; the returned object is valid until the next call (see `recorded`). */
export function recordReportedOutcome(tables: SharedTables, tenant: Tenant, report: OutcomeReport, nowMs: number): RecordedOutcome {
  const rule = tenant.rules.get(report.rule_id);
  if (!rule) throw errors.field('rule_id', `no rule "${report.rule_id}" in this tenant`);
  const rec = rule.record;
  let k: 0 | 1;
  if (report.processor_id === rec.primary_id) k = 0;
  else if (report.processor_id === rec.secondary_id) k = 1;
  else throw errors.field('processor_id', `processor "${report.processor_id}" is not part of rule "${rec.rule_id}"`);

  const kind = classifyOutcome(report.success, report.error_code, tenant.errorCodes);
  const seg = ruleSegment(tables.ruleSegs, rule.slot);
  const ib = ruleI32Base(rule.slot);
  const w = tables.windowOf(rule.slot, k, rec.primary_id === rec.secondary_id);
  recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), nowMs, kind, report.latency_ms);
  // Per-rule outcome counter for the metrics (front thread only): success, decline, technical.
  seg.ruleF64[ruleF64Base(rule.slot) + RF_OUTCOMES + k * OUTCOME_RESULTS + (kind < OutcomeKind.TechError ? kind : 2)]++;

  // The run of consecutive technical failures. Outcomes arrive after their latency, so a
  // success reported during an outage may be a payment that started before it: a success that
  // started before the run's first failure started says nothing about the processor now and
  // does not end the run (otherwise slow successes from before an outage delay its detection).
  const runField = ib + (k === 0 ? RI_RUN_PRIMARY : RI_RUN_SECONDARY);
  const startedAt = nowMs - report.latency_ms;
  let run: number;
  if (kind === OutcomeKind.TechError || kind === OutcomeKind.Timeout) {
    run = Atomics.add(seg.ruleI32, runField, 1) + 1;
    if (run === 1) (rule.runStartedAt ??= [0, 0])[k] = startedAt;
  } else {
    // The front thread is the run's only writer (layout.ts): a plain read sees its own last
    // write, and a run already at 0 needs no store. Both spare a successful outcome a builtin
    // call each: V8 11 does not inline Atomics.load or Atomics.store (~100 instructions each).
    run = seg.ruleI32[runField];
    if (run !== 0 && (rule.runStartedAt === null || startedAt >= rule.runStartedAt[k])) {
      run = 0;
      Atomics.store(seg.ruleI32, runField, 0); // the pool reads it with Atomics.load
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
