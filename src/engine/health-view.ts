/**
 * Health as the API shows it (spec 2.5, 2.6), read from the shared tables the workers
 * publish to. Reads only memory: "health reads come from cached state".
 */
import {
  DECISION_SOURCE_NAMES,
  PF_AVG_LATENCY,
  PF_BANDIT_WEIGHT,
  PF_DECLINE_RATE,
  PF_ERROR_RATE,
  PF_FAILURE_PROB,
  PF_LAST_EVAL_MS,
  PF_P95_LATENCY,
  PF_P99_LATENCY,
  PF_SAMPLE_COUNT,
  PF_STATUS,
  PF_SUCCESS_RATE,
  STATUS_NAMES,
  type StatusName,
} from '../shm/layout.js';
import { readDecision, type DecisionFields } from '../shm/decision.js';
import { readHealthConsistently } from '../shm/health-seqlock.js';
import { processorStatus, readableRowOffset, readableRows } from '../shm/processor-rows.js';
import type { SharedTables } from '../shm/tables.js';
import { ruleIndex, ruleSegment } from '../shm/slots.js';
import type { LiveRule } from '../tenants/tenant.js';
import type { ProcessorHealth, RuleHealth } from '../schemas/health.js';
import { DecisionSource } from '../shm/layout.js';
import { shownFailureProbability } from '../tiers/foresight/prior.js';

const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
const nullable = (x: number, d = 4) => (Number.isNaN(x) ? null : round(x, d));

export function statusOf(tables: SharedTables, slot: number, k: 0 | 1): StatusName {
  return STATUS_NAMES[processorStatus(tables.ruleSegs, slot, k)] ?? 'healthy';
}

/**
 * With no samples yet, a processor shows success_rate 1 and error_rate 0 (nothing has
 * failed), sample_count 0, and latency 0 (avg, p95, p99; the spec types them as numbers, and
 * sample_count says how far to trust them). A row never evaluated (PF_LAST_EVAL_MS 0: the
 * rule has had no traffic) has no bandit output yet (null); its failure probability is the
 * model's no-evidence prior while prediction is on, null only when it is off.
 */
export function processorHealth(tables: SharedTables, rule: LiveRule, k: 0 | 1, predictionEnabled: boolean): ProcessorHealth {
  // Rows never written are read as the zeros they hold, from a stand-in (processor-rows.ts).
  const procF64 = readableRows(ruleSegment(tables.ruleSegs, rule.slot), rule.slot);
  const o = readableRowOffset(procF64, rule.slot, k);
  const n = procF64[o + PF_SAMPLE_COUNT];
  const has = n > 0;
  const evaluated = procF64[o + PF_LAST_EVAL_MS] > 0;
  const r = rule.record;
  return {
    processor_id: k === 0 ? r.primary_id : r.secondary_id,
    name: k === 0 ? r.primary_name : r.secondary_name,
    status: STATUS_NAMES[procF64[o + PF_STATUS]] ?? 'healthy',
    success_rate: has && !Number.isNaN(procF64[o + PF_SUCCESS_RATE]) ? round(procF64[o + PF_SUCCESS_RATE]) : 1,
    error_rate: has && !Number.isNaN(procF64[o + PF_ERROR_RATE]) ? round(procF64[o + PF_ERROR_RATE]) : 0,
    decline_rate: has && !Number.isNaN(procF64[o + PF_DECLINE_RATE]) ? round(procF64[o + PF_DECLINE_RATE]) : 0,
    avg_latency_ms: has && !Number.isNaN(procF64[o + PF_AVG_LATENCY]) ? round(procF64[o + PF_AVG_LATENCY], 2) : 0,
    p95_latency_ms: has && !Number.isNaN(procF64[o + PF_P95_LATENCY]) ? round(procF64[o + PF_P95_LATENCY], 2) : 0,
    p99_latency_ms: has && !Number.isNaN(procF64[o + PF_P99_LATENCY]) ? round(procF64[o + PF_P99_LATENCY], 2) : 0,
    sample_count: has ? Math.round(n) : 0,
    failure_probability: shownFailureProbability(evaluated ? procF64[o + PF_FAILURE_PROB] : NaN, predictionEnabled),
    bandit_weight: evaluated ? nullable(procF64[o + PF_BANDIT_WEIGHT]) : null,
  };
}

const scratch: DecisionFields = { primaryShare: 1, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };

/** The rule's health as one consistent reading (see shm/health-seqlock.ts). */
export function ruleHealth(tables: SharedTables, rule: LiveRule, predictionEnabled: boolean): RuleHealth {
  return readHealthConsistently(ruleSegment(tables.ruleSegs, rule.slot), ruleIndex(rule.slot), () => readRuleHealth(tables, rule, predictionEnabled));
}

function readRuleHealth(tables: SharedTables, rule: LiveRule, predictionEnabled: boolean): RuleHealth {
  const d = readDecision(ruleSegment(tables.ruleSegs, rule.slot), ruleIndex(rule.slot), scratch);
  const override = rule.override ?? null;
  if (override !== null) {
    d.primaryShare = override.primaryShare;
    d.source = DecisionSource.Rules;
  }
  const primaryLeads = d.primaryShare >= 0.5;
  const fp = primaryLeads ? d.failProbPrimary : d.failProbSecondary;
  return {
    rule_id: rule.record.rule_id,
    primary: processorHealth(tables, rule, 0, predictionEnabled),
    secondary: processorHealth(tables, rule, 1, predictionEnabled),
    decision: {
      processor_id: primaryLeads ? rule.record.primary_id : rule.record.secondary_id,
      weight: round(primaryLeads ? d.primaryShare : 1 - d.primaryShare),
      decision_source: DECISION_SOURCE_NAMES[d.source] ?? 'rules',
      failure_probability: shownFailureProbability(fp, predictionEnabled),
      ...(override !== null ? { override: override.record } : {}),
    },
  };
}
