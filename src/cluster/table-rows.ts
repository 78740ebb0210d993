/**
 * Between a rule's rows in shared memory and its decision-table entry: the leader reads
 * entries out of its tables after an evaluation, a follower writes them into its own (front
 * thread; no evaluation task runs on a follower's full engine state, so it is the writer).
 */
import { publishDecision, readDecision, type DecisionFields } from '../shm/decision.js';
import {
  DecisionSource,
  PF_BANDIT_BASE,
  PF_BANDIT_LEN,
  PF_BANDIT_WEIGHT,
  PF_FAILURE_PROB,
  PF_T1_BASE,
  PF_T1_LEN,
  PROCS_PER_RULE,
  ProcessorStatus,
  RF_FAILPROB_PRIMARY,
  RF_FAILPROB_SECONDARY,
  RF_PRIMARY_SHARE,
  RI_DECISION_SOURCE,
  RULE_F64_STRIDE,
  RULE_I32_STRIDE,
  RULE_MASK,
  RULE_SHIFT,
  type RuleSegmentViews,
} from '../shm/layout.js';
import { markRowsInUse, readableRowOffset, readableRows, rowsInUse } from '../shm/processor-rows.js';
import { processorRowOffset } from '../shm/slots.js';
import type { SharedTables } from '../shm/tables.js';
import { newProcState, readProcState, writeProcState } from '../tiers/tier1/state.js';
import type { RuleEntry } from './table-codec.js';

const decision: DecisionFields = { primaryShare: 1, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };
const st = newProcState();
const t1Out = [new Float64Array(PF_T1_LEN), new Float64Array(PF_T1_LEN)];
const banditOut = [new Float64Array(PF_BANDIT_LEN), new Float64Array(PF_BANDIT_LEN)];

/** Leader: the entry of the rule in `slot` (into `out`, reused). */
export function readRuleEntry(tables: SharedTables, slot: number, key: number, out: RuleEntry): RuleEntry {
  const seg = tables.ruleSegs[slot >> RULE_SHIFT];
  const i = slot & RULE_MASK;
  readDecision(seg, i, decision);
  out.key = key;
  out.primaryShare = decision.primaryShare;
  out.source = decision.source;
  out.failProbPrimary = decision.failProbPrimary;
  out.failProbSecondary = decision.failProbSecondary;
  // Rows the rule never wrote are read from the stand-in (processor-rows.ts): building a
  // table of 100,000 rules reads no page of an idle rule's rows.
  const rows = readableRows(seg, slot);
  for (let k = 0; k < PROCS_PER_RULE; k++) {
    const row = readableRowOffset(rows, slot, k);
    readProcState(rows, row, st);
    const p = out.procs[k];
    p.status = st.status;
    p.statusSinceMs = st.statusSinceMs;
    p.lastEvalMs = st.lastEvalMs;
    p.failureProb = rows[row + PF_FAILURE_PROB];
    p.banditWeight = rows[row + PF_BANDIT_WEIGHT];
    p.recoveredAtMs = st.recoveredAtMs;
    if (st.status === ProcessorStatus.Healthy) p.t1 = null;
    else {
      t1Out[k].set(rows.subarray(row + PF_T1_BASE, row + PF_T1_BASE + PF_T1_LEN));
      p.t1 = t1Out[k];
    }
    const b = banditOut[k];
    b.set(rows.subarray(row + PF_BANDIT_BASE, row + PF_BANDIT_BASE + PF_BANDIT_LEN));
    p.bandit = b.some((x) => x !== 0) ? b : null;
  }
  return out;
}

/** Follower: writes the entry into the rule in `slot`. Returns true when the routed decision changed. */
export function applyRuleEntry(tables: SharedTables, slot: number, e: RuleEntry): boolean {
  const seg = tables.ruleSegs[slot >> RULE_SHIFT];
  const i = slot & RULE_MASK;
  // A rule the leader never evaluated leaves a follower's unwritten rows as they are (zeros).
  if (rowsInUse(seg, slot) || !neverEvaluated(e)) writeRows(seg, slot, e);
  const fb = i * RULE_F64_STRIDE;
  const same =
    Object.is(seg.ruleF64[fb + RF_PRIMARY_SHARE], e.primaryShare) &&
    Object.is(seg.ruleF64[fb + RF_FAILPROB_PRIMARY], e.failProbPrimary) &&
    Object.is(seg.ruleF64[fb + RF_FAILPROB_SECONDARY], e.failProbSecondary) &&
    seg.ruleI32[i * RULE_I32_STRIDE + RI_DECISION_SOURCE] === e.source;
  if (same) return false;
  decision.primaryShare = e.primaryShare;
  decision.source = e.source;
  decision.failProbPrimary = e.failProbPrimary;
  decision.failProbSecondary = e.failProbSecondary;
  publishDecision(seg, i, decision);
  return true;
}

/** True when no processor of the entry was ever evaluated: the leader's rows for it were the zeros of a fresh slot. */
function neverEvaluated(e: RuleEntry): boolean {
  for (const p of e.procs) if (p.lastEvalMs !== 0 || p.status !== ProcessorStatus.Healthy || p.t1 !== null || p.bandit !== null) return false;
  return true;
}

/** The entry's processor state into the rule's rows (marked in use first). */
function writeRows(seg: RuleSegmentViews, slot: number, e: RuleEntry): void {
  markRowsInUse(seg, slot);
  for (let k = 0; k < PROCS_PER_RULE; k++) {
    const row = processorRowOffset(slot, k);
    const p = e.procs[k];
    if (p.t1 !== null) seg.procF64.set(p.t1, row + PF_T1_BASE);
    if (p.bandit !== null) seg.procF64.set(p.bandit, row + PF_BANDIT_BASE);
    else seg.procF64.fill(0, row + PF_BANDIT_BASE, row + PF_BANDIT_BASE + PF_BANDIT_LEN);
    readProcState(seg.procF64, row, st);
    st.status = p.status as ProcessorStatus;
    st.statusSinceMs = p.statusSinceMs;
    st.lastEvalMs = p.lastEvalMs;
    if (p.t1 === null) {
      // Healthy: no probe phase, no suspension; the last recovery still fences off outage outcomes.
      st.recoveredAtMs = p.recoveredAtMs;
      st.probeResumeMs = 0;
      st.probeOk = st.probeTech = st.probeStep = st.stepOkBase = st.stepTechBase = 0;
    }
    writeProcState(seg.procF64, row, st);
    seg.procF64[row + PF_FAILURE_PROB] = p.failureProb;
    seg.procF64[row + PF_BANDIT_WEIGHT] = p.banditWeight;
  }
}
