/**
 * Tier 1 (health failover) as the first step of every rule's evaluation: judge each
 * processor (an operator command first, then the state machine over its window's signals),
 * publish its health and state in its row, and set Tier 1's primary share and whether Tier 1
 * overrides the later stages (src/tiers/stage.ts). Unlike those stages it is not optional
 * and runs before them, so it has its own entry point rather than the RuleStage contract.
 */
import { ManualCommand, PF_ERROR_RATE, PROCS_PER_RULE } from '../../shm/layout.js';
import { windowIndex } from '../../shm/slots.js';
import type { RuleStageContext } from '../stage.js';
import { newProcHealth, readHealth, writeHealth } from './health.js';
import { applyManualCommand } from './manual.js';
import { followUpAt, ruleRateOf, tier1Overrides, tier1Share } from './share.js';
import { newSignals, readSignals } from './signals.js';
import { Role, stepProcessor, type StatusChange } from './state-machine.js';
import { newProcState, readProcState, writeProcState, type ProcState } from './state.js';

/** Receives each status change of processor `k` (0 primary, 1 secondary), in order. */
export type StatusChangeSink = (k: 0 | 1, change: StatusChange) => void;

export interface Tier1Stage {
  /** Tier 1 state per processor (primary, secondary), what ctx.primary.tier1 / ctx.secondary.tier1 point at. */
  readonly states: readonly [ProcState, ProcState];
  /**
   * Judges the rule in `ctx` (its rows, windows, config and time set by the pipeline) with the
   * processors' consecutive-failure runs and the operator command taken for this evaluation;
   * sets ctx.tier1Share and ctx.tier1Override. Returns the epoch ms at which the rule wants an
   * evaluation ahead of the cycle (a processor in slow-start recovery), Infinity if none.
   */
  judge(ctx: RuleStageContext, runPrimary: number, runSecondary: number, command: ManualCommand, onChange: StatusChangeSink): number;
}

export function createTier1Stage(): Tier1Stage {
  // Scratch reused rule after rule: a worker runs one task, and a task one rule, at a time.
  const health = [newProcHealth(), newProcHealth()];
  const signals = [newSignals(), newSignals()];
  const states: [ProcState, ProcState] = [newProcState(), newProcState()];
  const changes: StatusChange[] = [];

  return {
    states,
    judge(ctx, runP, runS, command, onChange): number {
      const procF64 = ctx.rules.procF64;
      const cfg = ctx.config.tier1;
      const nowMs = ctx.nowMs;
      const same = ctx.sameProcessor;
      let followUpMs = Infinity;
      // A self-fallback rule has one processor: judge it once (on both run counters, whichever
      // the front thread uses), and mirror it into the secondary row.
      const judged = same ? 1 : PROCS_PER_RULE;
      for (let k = 0; k < judged; k++) {
        const p = k === 0 ? ctx.primary : ctx.secondary;
        readHealth(p.window, windowIndex(p.windowIndex), nowMs, health[k]);
      }
      // The rule's traffic (what a failed probe round's cost is measured against).
      const ruleRate = ruleRateOf(health[0], health[1], same);
      for (let k = 0; k < judged; k++) {
        const p = k === 0 ? ctx.primary : ctx.secondary;
        const st = readProcState(procF64, p.row, states[k]);
        const role = same ? Role.Sole : k === 0 ? Role.Primary : Role.Secondary;
        changes.length = 0;
        if (command !== ManualCommand.None) applyManualCommand(command, st, role, procF64[p.row + PF_ERROR_RATE], cfg, nowMs, changes);
        const w = windowIndex(p.windowIndex);
        const run = same ? Math.max(runP, runS) : k === 0 ? runP : runS;
        readSignals(p.window, w, nowMs, st, run, cfg, signals[k]);
        signals[k].ruleRate = ruleRate;
        stepProcessor(st, signals[k], role, cfg, nowMs, changes);
        writeProcState(procF64, p.row, st);
        writeHealth(procF64, p.row, health[k]);
        followUpMs = Math.min(followUpMs, followUpAt(st, cfg, nowMs));
        for (const c of changes) onChange(k as 0 | 1, c);
      }
      if (same) {
        Object.assign(states[1], states[0]);
        Object.assign(health[1], health[0]);
        writeProcState(procF64, ctx.secondary.row, states[0]);
        writeHealth(procF64, ctx.secondary.row, health[0]);
      }
      const [p, s] = states;
      ctx.tier1Share = tier1Share(p, s, health[0], health[1], ctx.configWeight, same, cfg, nowMs);
      ctx.tier1Override = tier1Overrides(p, s, same, cfg, nowMs);
      return followUpMs;
    },
  };
}
