/**
 * PATCH of a rule goes live in a fresh slot (so routing switches from the old rule to the new
 * one in a single step of the front thread); the engine state of every processor that stays
 * in the rule is carried over from the old slot: its row (status, Tier 1 bookkeeping, health,
 * GRU hidden state, bandit posterior), its outcome window and its technical-failure run. A
 * processor new to the rule starts fresh, as in a new rule.
 *
 * MUST run while no worker task reads either slot (EngineService.whenShardIdle), and before
 * the old slot is freed.
 */
import { publishDecision } from '../shm/decision.js';
import {
  DecisionSource,
  PF_LAST_EVAL_MS,
  PROC_F64_STRIDE,
  PROCS_PER_RULE,
  RI_RUN_PRIMARY,
  RI_RUN_SECONDARY,
  RI_WINDOW_PRIMARY,
  RI_WINDOW_SECONDARY,
  RF_CONFIG_PRIMARY_WEIGHT,
  RF_PRIMARY_SHARE,
} from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import type { LiveRule, RuleRecord } from '../tenants/tenant.js';
import { markRowsInUse, rowsInUse } from '../shm/processor-rows.js';
import { processorRowOffset, ruleF64Base, ruleI32Base, ruleIndex, ruleSegment } from '../shm/slots.js';

const WINDOW_FIELD = [RI_WINDOW_PRIMARY, RI_WINDOW_SECONDARY] as const;
const RUN_FIELD = [RI_RUN_PRIMARY, RI_RUN_SECONDARY] as const;

/** Index (0 primary, 1 secondary) of `processorId` in `rec`, or -1. */
function roleOf(rec: RuleRecord, processorId: string): number {
  return rec.primary_id === processorId ? 0 : rec.secondary_id === processorId ? 1 : -1;
}

export function carryEngineState(tables: SharedTables, from: LiveRule, to: LiveRule): void {
  const oldSeg = ruleSegment(tables.ruleSegs, from.slot);
  const newSeg = ruleSegment(tables.ruleSegs, to.slot);
  const ni = ruleIndex(to.slot);
  const oib = ruleI32Base(from.slot);
  const nib = ruleI32Base(to.slot);
  const newIds = [to.record.primary_id, to.record.secondary_id];
  let evaluated = false;
  for (let k = 0; k < PROCS_PER_RULE; k++) {
    const o = roleOf(from.record, newIds[k]);
    if (o < 0) continue;
    // Rows the old rule never wrote are zeros, as the new slot's are: nothing to copy.
    if (rowsInUse(oldSeg, from.slot)) {
      const src = processorRowOffset(from.slot, o);
      const dst = processorRowOffset(to.slot, k);
      markRowsInUse(newSeg, to.slot);
      newSeg.procF64.set(oldSeg.procF64.subarray(src, src + PROC_F64_STRIDE), dst);
      if (newSeg.procF64[dst + PF_LAST_EVAL_MS] > 0) evaluated = true;
    }
    newSeg.ruleI32[nib + WINDOW_FIELD[k]] = oldSeg.ruleI32[oib + WINDOW_FIELD[o]];
    Atomics.store(newSeg.ruleI32, nib + RUN_FIELD[k], Atomics.load(oldSeg.ruleI32, oib + RUN_FIELD[o]));
    if (from.runStartedAt !== null) (to.runStartedAt ??= [0, 0])[k] = from.runStartedAt[o];
  }
  // The windows now belong to the new slot: freeing the old one must not recycle them.
  const kept = new Set([newSeg.ruleI32[nib + RI_WINDOW_PRIMARY], newSeg.ruleI32[nib + RI_WINDOW_SECONDARY]]);
  for (const f of WINDOW_FIELD) if (kept.has(oldSeg.ruleI32[oib + f])) oldSeg.ruleI32[oib + f] = -1;

  // Until the next evaluation (requested right after the swap) the new slot routes with the
  // share its new primary had, so a processor the engine had taken traffic away from does not
  // get it back for a moment. A rule never evaluated keeps allocRule's configured weight.
  if (!evaluated || to.record.primary_id === to.record.secondary_id) return;
  const oldShare = oldSeg.ruleF64[ruleF64Base(from.slot) + RF_PRIMARY_SHARE];
  const o = roleOf(from.record, to.record.primary_id);
  const share = o === 0 ? oldShare : o === 1 ? 1 - oldShare : newSeg.ruleF64[ruleF64Base(to.slot) + RF_CONFIG_PRIMARY_WEIGHT];
  publishDecision(newSeg, ni, { primaryShare: share, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN });
}
