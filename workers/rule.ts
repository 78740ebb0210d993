/**
 * One rule's evaluation: read both processors' windows and Tier 1 state, run the state
 * machine, publish health and status, let the later-tier stages adjust the decision, publish
 * the decision under the seqlock, and report status changes as transitions.
 */
import { publishDecision, type DecisionFields } from '../src/shared/decision.js';
import {
  DecisionSource,
  ManualCommand,
  PF_ERROR_RATE,
  PF_LAST_EVAL_MS,
  PROC_F64_STRIDE,
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
  RULE_F64_STRIDE,
  RULE_I32_STRIDE,
  RULE_MASK,
  RULE_SHIFT,
  STATUS_NAMES,
  WINDOW_MASK,
  WINDOW_SHIFT,
  type RuleSegmentViews,
} from '../src/shared/layout.js';
import { newProcHealth, readHealth, writeHealth } from '../src/engine/tier1/health.js';
import { followUpAt, tier1Overrides, tier1Share } from '../src/engine/tier1/share.js';
import { newSignals, readSignals } from '../src/engine/tier1/signals.js';
import { Role, stepProcessor, type StatusChange } from '../src/engine/tier1/state-machine.js';
import { newProcState, readProcState, writeProcState } from '../src/engine/tier1/state.js';
import { applyManualCommand } from '../src/engine/tier1/manual.js';
import type { Transition } from '../src/engine/transitions.js';
import type { TenantEngineConfig } from './protocol.js';
import type { ProcessorContext, RuleStage, RuleStageContext } from './stages.js';
import type { TableViews } from './views.js';

// Scratch reused rule after rule: a worker runs one task, and a task one rule, at a time.
const health = [newProcHealth(), newProcHealth()];
const signals = [newSignals(), newSignals()];
const states = [newProcState(), newProcState()];
const changes: StatusChange[] = [];
const decision: DecisionFields = { primaryShare: 0, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };
const proc = (k: number): ProcessorContext => ({ row: 0, window: undefined, windowIndex: -1, tier1: states[k] });
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
};
const procs = [ctx.primary, ctx.secondary];

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

/** Evaluates `slot`; returns false when the slot holds no active rule. */
export function evaluateRule(
  views: TableViews,
  slot: number,
  nowMs: number,
  config: TenantEngineConfig,
  stages: readonly RuleStage[],
  out: Transition[],
): boolean {
  const seg = views.rules[slot >> RULE_SHIFT];
  if (seg === undefined) return false;
  const i = slot & RULE_MASK;
  const ib = i * RULE_I32_STRIDE;
  const fb = i * RULE_F64_STRIDE;
  if (Atomics.load(seg.ruleI32, ib + RI_ACTIVE) !== 1) return false;
  const generation = Atomics.load(seg.ruleI32, ib + RI_GENERATION);
  const cfg = config.tier1;
  const same = seg.ruleF64[fb + RF_SAME_PROCESSOR] === 1;
  // Local run plus the other replicas' (cluster mode; 0 in a single process).
  const runP = Atomics.load(seg.ruleI32, ib + RI_RUN_PRIMARY) + Atomics.load(seg.ruleI32, ib + RI_REMOTE_RUN_PRIMARY);
  const runS = Atomics.load(seg.ruleI32, ib + RI_RUN_SECONDARY) + Atomics.load(seg.ruleI32, ib + RI_REMOTE_RUN_SECONDARY);

  ctx.slot = slot;
  ctx.rules = seg;
  ctx.index = i;
  ctx.nowMs = nowMs;
  ctx.config = config;
  ctx.configWeight = seg.ruleF64[fb + RF_CONFIG_PRIMARY_WEIGHT];
  ctx.sameProcessor = same;
  for (let k = 0; k < PROCS_PER_RULE; k++) {
    const p = procs[k];
    p.row = (i * PROCS_PER_RULE + k) * PROC_F64_STRIDE;
    p.windowIndex = Atomics.load(seg.ruleI32, ib + (k === 0 ? RI_WINDOW_PRIMARY : RI_WINDOW_SECONDARY));
    // A window allocated after this task was dispatched may lie in a segment the task lacks.
    p.window = p.windowIndex >= 0 ? views.windows[p.windowIndex >> WINDOW_SHIFT] : undefined;
  }

  // An operator command (POST /v1/rules/{id}/failover or /recover) is taken exactly once.
  const command = Atomics.load(seg.ruleI32, ib + RI_COMMAND) === ManualCommand.None ? ManualCommand.None : (Atomics.exchange(seg.ruleI32, ib + RI_COMMAND, 0) as ManualCommand);

  // A rule that has never seen an outcome (and holds no restored state) has nothing to judge:
  // leave its rows untouched, so their memory pages are never made resident.
  if (command === ManualCommand.None && ctx.primary.windowIndex < 0 && ctx.secondary.windowIndex < 0) {
    const pr = ctx.primary.row;
    const sr = ctx.secondary.row;
    if (seg.procF64[pr + PF_LAST_EVAL_MS] === 0 && seg.procF64[sr + PF_LAST_EVAL_MS] === 0) return true;
  }

  // A self-fallback rule has one processor: judge it once (on both run counters, whichever
  // the front thread uses), and mirror it into the secondary row.
  const judged = same ? 1 : PROCS_PER_RULE;
  for (let k = 0; k < judged; k++) {
    const p = procs[k];
    const st = readProcState(seg.procF64, p.row, states[k]);
    const role = same ? Role.Sole : k === 0 ? Role.Primary : Role.Secondary;
    changes.length = 0;
    if (command !== ManualCommand.None) applyManualCommand(command, st, role, seg.procF64[p.row + PF_ERROR_RATE], cfg, nowMs, changes);
    const w = p.windowIndex & WINDOW_MASK;
    readHealth(p.window, w, nowMs, health[k]);
    const run = same ? Math.max(runP, runS) : k === 0 ? runP : runS;
    readSignals(p.window, w, nowMs, st, run, cfg, signals[k]);
    stepProcessor(st, signals[k], role, cfg, nowMs, changes);
    writeProcState(seg.procF64, p.row, st);
    writeHealth(seg.procF64, p.row, health[k]);
    followUpMs = Math.min(followUpMs, followUpAt(st, cfg, nowMs));
    for (const c of changes) {
      out.push({
        slot,
        generation,
        processor: k as 0 | 1,
        event: c.event,
        from: STATUS_NAMES[c.from],
        to: STATUS_NAMES[c.to],
        reason: c.reason,
        triggerValue: c.triggerValue,
        threshold: c.threshold,
        atMs: nowMs,
      });
    }
  }
  if (same) {
    Object.assign(states[1], states[0]);
    Object.assign(health[1], health[0]);
    writeProcState(seg.procF64, ctx.secondary.row, states[0]);
    writeHealth(seg.procF64, ctx.secondary.row, health[0]);
  }

  const [p, s] = states;
  ctx.tier1Share = tier1Share(p, s, health[0], health[1], ctx.configWeight, same, cfg, nowMs);
  ctx.tier1Override = tier1Overrides(p, s, same);
  decision.primaryShare = ctx.tier1Share;
  decision.source = DecisionSource.Rules;
  decision.failProbPrimary = NaN;
  decision.failProbSecondary = NaN;
  for (const stage of stages) if (stage.enabled(config)) stage.apply(ctx, decision);
  if (ctx.tier1Override || !(decision.primaryShare >= 0 && decision.primaryShare <= 1)) {
    decision.primaryShare = ctx.tier1Share;
    decision.source = DecisionSource.Rules;
  }
  if (decisionChanged(seg, i, decision)) publishDecision(seg, i, decision);
  return true;
}

/**
 * Cluster follower: only the published health of the rule's processors, from the (merged,
 * cluster-wide) windows. Statuses and decisions come from the leader's table; this writes
 * none of the fields the table does, so the two never race.
 */
export function refreshHealth(views: TableViews, slot: number, nowMs: number): boolean {
  const seg = views.rules[slot >> RULE_SHIFT];
  if (seg === undefined) return false;
  const i = slot & RULE_MASK;
  const ib = i * RULE_I32_STRIDE;
  if (Atomics.load(seg.ruleI32, ib + RI_ACTIVE) !== 1) return false;
  for (let k = 0; k < PROCS_PER_RULE; k++) {
    const wi = Atomics.load(seg.ruleI32, ib + (k === 0 ? RI_WINDOW_PRIMARY : RI_WINDOW_SECONDARY));
    if (wi < 0) continue;
    const win = views.windows[wi >> WINDOW_SHIFT];
    readHealth(win, wi & WINDOW_MASK, nowMs, health[k]);
    writeHealth(seg.procF64, (i * PROCS_PER_RULE + k) * PROC_F64_STRIDE, health[k]);
  }
  return true;
}

/** The worker is the fields' only writer, so plain reads are current; skip a no-op seqlock cycle. */
function decisionChanged(seg: RuleSegmentViews, i: number, d: DecisionFields): boolean {
  const fb = i * RULE_F64_STRIDE;
  return !(
    Object.is(seg.ruleF64[fb + RF_PRIMARY_SHARE], d.primaryShare) &&
    Object.is(seg.ruleF64[fb + RF_FAILPROB_PRIMARY], d.failProbPrimary) &&
    Object.is(seg.ruleF64[fb + RF_FAILPROB_SECONDARY], d.failProbSecondary) &&
    seg.ruleI32[i * RULE_I32_STRIDE + RI_DECISION_SOURCE] === d.source
  );
}
