/**
 * One rule's evaluation: read its slot, let Tier 1 judge both processors
 * (src/tiers/tier1/stage.ts), run the later-tier stages (src/tiers/stage.ts runStages),
 * publish the decision under the seqlock, and report status changes as transitions.
 */
import { publishDecision, type DecisionFields } from '../../shm/decision.js';
import { beginHealthWrite, endHealthWrite } from '../../shm/health-seqlock.js';
import { markRowsInUse, rowsInUse } from '../../shm/processor-rows.js';
import {
  DecisionSource,
  ManualCommand,
  PROCS_PER_RULE,
  RF_CONFIG_PRIMARY_WEIGHT,
  RF_FAILPROB_PRIMARY,
  RF_FAILPROB_SECONDARY,
  RF_PRIMARY_SHARE,
  RF_SAME_PROCESSOR,
  RI_ACTIVE,
  RI_COMMAND,
  RI_DECISION_SOURCE,
  RI_GENERATION,
  RI_RUN_PRIMARY,
  RI_RUN_SECONDARY,
  RI_REMOTE_RUN_PRIMARY,
  RI_REMOTE_RUN_SECONDARY,
  RI_WINDOW_PRIMARY,
  RI_WINDOW_SECONDARY,
  STATUS_NAMES,
  type RuleSegmentViews,
} from '../../shm/layout.js';
import { processorRowOffset, ruleF64Base, ruleI32Base, ruleIndex, ruleSegment, windowIndex, windowSegment } from '../../shm/slots.js';
import { runStages, type ProcessorContext, type RuleStage, type RuleStageContext } from '../../tiers/stage.js';
import { createTier1Stage, type StatusChangeSink } from '../../tiers/tier1/stage.js';
import type { StatusChange } from '../../tiers/tier1/state-machine.js';
import type { TenantEngineConfig } from '../protocol.js';
import type { Transition } from '../transitions.js';
import type { TableViews } from './views.js';
import { newProcHealth, readHealth, writeHealth } from '../../tiers/tier1/health.js';

// Scratch reused rule after rule: a worker runs one task, and a task one rule, at a time.
const tier1 = createTier1Stage();
const decision: DecisionFields = { primaryShare: 0, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };
const proc = (k: 0 | 1): ProcessorContext => ({ row: 0, window: undefined, windowIndex: -1, tier1: tier1.states[k] });
const ctx: RuleStageContext = {
  slot: 0,
  rules: undefined as unknown as RuleSegmentViews,
  index: 0,
  nowMs: 0,
  config: undefined as unknown as TenantEngineConfig,
  configWeight: 0,
  sameProcessor: false,
  primary: proc(0),
  secondary: proc(1),
  tier1Share: 0,
  tier1Override: false,
  foresightCap: NaN,
};
const procs = [ctx.primary, ctx.secondary];

/** Where the current rule's status changes go: its transitions, stamped with slot and generation. */
let out: Transition[] = [];
let generation = 0;
const toTransition: StatusChangeSink = (k: 0 | 1, c: StatusChange) => {
  out.push({
    slot: ctx.slot,
    generation,
    processor: k,
    event: c.event,
    from: STATUS_NAMES[c.from],
    to: STATUS_NAMES[c.to],
    reason: c.reason,
    triggerValue: c.triggerValue,
    threshold: c.threshold,
    atMs: ctx.nowMs,
  });
};

/**
 * The earliest time (epoch ms) a rule evaluated since the last `takeFollowUp` wants to be
 * evaluated again ahead of the cycle (a processor in slow-start recovery), Infinity if none.
 */
let followUpMs = Infinity;

export function takeFollowUp(): number {
  const t = followUpMs;
  followUpMs = Infinity;
  return t;
}

/** What `evaluateRule` found in a slot. */
export const enum RuleVisit {
  /** No active rule in the slot. */
  Empty,
  /**
   * A rule with nothing to judge (never an outcome, no restored state, no operator command):
   * only its Int32 fields were read. Most rules of a large rule set, every cycle.
   */
  Idle,
  /** A rule judged by every tier, its decision published. */
  Judged,
}

/** Evaluates `slot` and says what it found there. */
export function evaluateRule(
  views: TableViews,
  slot: number,
  nowMs: number,
  config: TenantEngineConfig,
  stages: readonly RuleStage[],
  transitions: Transition[],
): RuleVisit {
  const seg = ruleSegment(views.rules, slot);
  if (seg === undefined) return RuleVisit.Empty;
  const ib = ruleI32Base(slot);
  if (Atomics.load(seg.ruleI32, ib + RI_ACTIVE) !== 1) return RuleVisit.Empty;
  const windowP = Atomics.load(seg.ruleI32, ib + RI_WINDOW_PRIMARY);
  const windowS = Atomics.load(seg.ruleI32, ib + RI_WINDOW_SECONDARY);
  // An operator command (POST /v1/rules/{id}/failover or /recover) is taken exactly once.
  const command = Atomics.load(seg.ruleI32, ib + RI_COMMAND) === ManualCommand.None ? ManualCommand.None : (Atomics.exchange(seg.ruleI32, ib + RI_COMMAND, 0) as ManualCommand);

  // A rule that has never seen an outcome (and holds no restored state) has nothing to judge:
  // leave its rows untouched, not even read, so their memory pages are never made resident.
  // Decided from its Int32 fields alone, before anything else of the rule is read: at 100,000
  // rules with traffic on a few hundred, this is the whole of a cycle's work for the rest, done
  // on a core the front thread shares when the service has one (docs/performance-log.md,
  // thirty-eighth pass).
  if (command === ManualCommand.None && windowP < 0 && windowS < 0 && !rowsInUse(seg, slot)) return RuleVisit.Idle;

  generation = Atomics.load(seg.ruleI32, ib + RI_GENERATION);
  // Local run plus the other replicas' (cluster mode; 0 in a single process).
  const runP = Atomics.load(seg.ruleI32, ib + RI_RUN_PRIMARY) + Atomics.load(seg.ruleI32, ib + RI_REMOTE_RUN_PRIMARY);
  const runS = Atomics.load(seg.ruleI32, ib + RI_RUN_SECONDARY) + Atomics.load(seg.ruleI32, ib + RI_REMOTE_RUN_SECONDARY);
  const i = ruleIndex(slot);
  const fb = ruleF64Base(slot);

  ctx.slot = slot;
  ctx.rules = seg;
  ctx.index = i;
  ctx.nowMs = nowMs;
  ctx.config = config;
  ctx.configWeight = seg.ruleF64[fb + RF_CONFIG_PRIMARY_WEIGHT];
  ctx.sameProcessor = seg.ruleF64[fb + RF_SAME_PROCESSOR] === 1;
  for (let k = 0; k < PROCS_PER_RULE; k++) {
    const p = procs[k];
    p.row = processorRowOffset(slot, k);
    p.windowIndex = k === 0 ? windowP : windowS;
    // A window allocated after this task was dispatched may lie in a segment the task lacks.
    p.window = p.windowIndex >= 0 ? windowSegment(views.windows, p.windowIndex) : undefined;
  }

  out = transitions;
  // Both processor rows and the decision change together: a health read sees all or none.
  beginHealthWrite(seg, i);
  try {
    markRowsInUse(seg, slot);
    followUpMs = Math.min(followUpMs, tier1.judge(ctx, runP, runS, command, toTransition));
    runStages(ctx, stages, decision);
    if (decisionChanged(seg, i, decision)) publishDecision(seg, i, decision);
  } finally {
    endHealthWrite(seg, i);
  }
  return RuleVisit.Judged;
}

/**
 * Cluster follower: only the published health of the rule's processors, from the (merged,
 * cluster-wide) windows. Statuses and decisions come from the leader's table; this writes
 * none of the fields the table does, so the two never race. A rule without a window has no
 * health to publish: it is left as it is, seqlock and all, like an idle rule in evaluateRule.
 */
export function refreshHealth(views: TableViews, slot: number, nowMs: number): RuleVisit {
  const seg = ruleSegment(views.rules, slot);
  if (seg === undefined) return RuleVisit.Empty;
  const ib = ruleI32Base(slot);
  if (Atomics.load(seg.ruleI32, ib + RI_ACTIVE) !== 1) return RuleVisit.Empty;
  const windowP = Atomics.load(seg.ruleI32, ib + RI_WINDOW_PRIMARY);
  const windowS = Atomics.load(seg.ruleI32, ib + RI_WINDOW_SECONDARY);
  if (windowP < 0 && windowS < 0) return RuleVisit.Idle;
  const i = ruleIndex(slot);
  beginHealthWrite(seg, i);
  try {
    markRowsInUse(seg, slot);
    for (let k = 0 as 0 | 1; k < PROCS_PER_RULE; k++) {
      const wi = k === 0 ? windowP : windowS;
      if (wi < 0) continue;
      readHealth(windowSegment(views.windows, wi), windowIndex(wi), nowMs, scratchHealth);
      writeHealth(seg.procF64, processorRowOffset(slot, k), scratchHealth);
    }
  } finally {
    endHealthWrite(seg, i);
  }
  return RuleVisit.Judged;
}
const scratchHealth = newProcHealth();

/** The worker is the fields' only writer, so plain reads are current; skip a no-op seqlock cycle. */
function decisionChanged(seg: RuleSegmentViews, i: number, d: DecisionFields): boolean {
  const fb = ruleF64Base(i);
  return !(
    Object.is(seg.ruleF64[fb + RF_PRIMARY_SHARE], d.primaryShare) &&
    Object.is(seg.ruleF64[fb + RF_FAILPROB_PRIMARY], d.failProbPrimary) &&
    Object.is(seg.ruleF64[fb + RF_FAILPROB_SECONDARY], d.failProbSecondary) &&
    seg.ruleI32[ruleI32Base(i) + RI_DECISION_SOURCE] === d.source
  );
}
