/**
 * Tier 3 (Autopilot) as a rule stage (the contract: src/tiers/stage.ts), run after Tier 1 and
 * after Tier 2 (Foresight) on every rule of every evaluation.
 *
 * Bandit on (the tenant's tier is 3: prediction AND bandit enabled), per rule, per cycle:
 * 1. each arm (processor) observes the approvals and failures (issuer declines included) of
 *    the complete 1 s count buckets since the last one it observed (bandit/rows.ts): nothing
 *    counted twice, nothing missed; a batch that does not fit the arm's posterior restarts it
 *    (bandit/change.ts); evidence decays by time (bandit/posterior.ts);
 * 2. the allocation: probability of being best by Monte Carlo (bandit/allocate.ts), with Tier 2's
 *    calibrated failure probability (PF_FAILURE_PROB, NaN → 0) folded into each sampled
 *    approval rate above its healthy base rate (bandit/risk.ts), Tier 1's statuses as hard constraints (a failed_over arm gets exactly the
 *    recovery probe share, every other arm at least the exploration floor), and the configured
 *    weights (primary_weight) kept as far as the evidence cannot tell the arms apart
 *    (allocate.ts preferOnTies). The RNG is seeded from (slot, nowMs), so a cycle is
 *    reproducible from its inputs;
 * 3. when Tier 2 has cut the primary's share (ctx.foresightCap), that cut is an upper bound
 *    on the primary's weight: the bandit never sends more traffic to a processor Tier 2 flagged
 *    than Tier 2 would;
 * 4. PF_BANDIT_WEIGHT of both processors is published, and the decision becomes the primary's
 *    weight with source `mab`. When Tier 1 overrides (a processor failed_over, including its
 *    slow-start recovery, a self-fallback rule) the pipeline (runStages) keeps Tier 1's share
 *    and source; the stage keeps learning and publishing its allocation.
 *
 * Bandit off, or prediction off (the spec: disabling prediction drops the engine to Tier 1, so
 * the tier is 1 even with bandit_enabled true, and the bandit does not act): PF_BANDIT_WEIGHT is
 * NaN (absent from metrics, null in health), the decision is left exactly as Tier 2 (or Tier 1)
 * made it, and the posteriors are kept untouched. Switching back on resumes from them: they
 * decay by elapsed time at the next observation, and the outcomes still in the window since the
 * last observed bucket (up to ~62 s) are counted.
 *
 * Idle rules are cheap: when neither arm saw an outcome since the last allocation and nothing
 * the allocation depends on changed (statuses, failure probabilities, settings), the previous
 * allocation is reused for up to REUSE_MS instead of re-running the Monte Carlo.
 *
 * The stage runs for every rule (it has no `enabled` hook) so that switching it off at runtime
 * also clears the published weights; when off it costs two comparisons per rule.
 */
import { allocate } from './allocate.js';
import type { ArmStatus } from './arms.js';
import { DEFAULT_CHANGE_THRESHOLD, observeBatch } from './change.js';
import type { BanditConfig } from './config.js';
import type { Posterior } from './posterior.js';
import { DEFAULT_RISK_FLOOR, effectiveRisk } from './risk.js';
import { countsSince, readArm, writeArm } from './rows.js';
import { mulberry32, seedFor } from './sampling.js';
import type { DecisionFields } from '../../shm/decision.js';
import {
  B_LAST_BUCKET,
  BP_ALLOC_KEY,
  BP_RAW_PRIMARY,
  BS_ALLOC_MS,
  BS_CHANGES,
  DecisionSource,
  PF_BANDIT_WEIGHT,
  PF_FAILURE_PROB,
  STATUS_NAMES,
} from '../../shm/layout.js';
import { windowIndex } from '../../shm/slots.js';
import { emptyCounts } from '../../shm/window.js';
import type { RuleStage, RuleStageContext } from '../stage.js';

/** Longest time an idle rule's allocation is reused before the Monte Carlo runs again. */
export const REUSE_MS = 60_000;

/** What one rule's cycle did (tests and evaluation). The object is reused; copy what you keep. */
export interface AutopilotObservation {
  slot: number;
  nowMs: number;
  /** Approvals and failures observed this cycle, per arm. */
  successes: [number, number];
  failures: [number, number];
  /** Change-detection statistic and whether the arm restarted, per arm. */
  statistic: [number, number];
  changed: [boolean, boolean];
  /** Probability-of-best allocation of the primary, before the Tier 2 cap. */
  rawPrimary: number;
  /** Published weight of the primary (PF_BANDIT_WEIGHT). */
  weight: number;
  /** True when the previous allocation was reused (idle rule). */
  reused: boolean;
  /** True when the decision was set (Tier 1 not overriding). */
  inControl: boolean;
}

export interface AutopilotStageOptions {
  /** Change-detection threshold (bandit/change.ts); Infinity disables detection. */
  changeThreshold?: number;
  /** Tier 2 probabilities at or below this are ignored (bandit/risk.ts); 0 uses them raw. */
  riskFloor?: number;
  /** Called after each rule's cycle while the bandit is on. */
  onCycle?: (o: Readonly<AutopilotObservation>) => void;
}

interface MutableArm {
  posterior: Posterior;
  status: ArmStatus;
  failureProbability: number;
}

export function createAutopilotStage(opts: AutopilotStageOptions = {}): RuleStage {
  const threshold = opts.changeThreshold ?? DEFAULT_CHANGE_THRESHOLD;
  const riskFloor = opts.riskFloor ?? DEFAULT_RISK_FLOOR;
  const counts = emptyCounts();
  const arms: MutableArm[] = [
    { posterior: { alpha: 1, beta: 1 }, status: 'healthy', failureProbability: 0 },
    { posterior: { alpha: 1, beta: 1 }, status: 'healthy', failureProbability: 0 },
  ];
  const out = new Float64Array(2);
  // The configured weights (primary, secondary): the allocation when the evidence is a tie.
  const preferred = new Float64Array(2);
  const obs: AutopilotObservation = {
    slot: 0,
    nowMs: 0,
    successes: [0, 0],
    failures: [0, 0],
    statistic: [0, 0],
    changed: [false, false],
    rawPrimary: NaN,
    weight: NaN,
    reused: false,
    inControl: false,
  };

  return {
    name: 'autopilot',
    apply(ctx: RuleStageContext, decision: DecisionFields): void {
      const procF64 = ctx.rules.procF64;
      const rowP = ctx.primary.row;
      const rowS = ctx.secondary.row;
      const c = ctx.config;
      if (!(c.banditEnabled && c.predictionEnabled)) {
        if (!Number.isNaN(procF64[rowP + PF_BANDIT_WEIGHT])) procF64[rowP + PF_BANDIT_WEIGHT] = NaN;
        if (!Number.isNaN(procF64[rowS + PF_BANDIT_WEIGHT])) procF64[rowS + PF_BANDIT_WEIGHT] = NaN;
        return;
      }
      const cfg = c.bandit;
      const now = ctx.nowMs;

      // 1. Observe. A self-fallback rule has one arm (both rows share one window).
      const n = ctx.sameProcessor ? 1 : 2;
      let fresh = 0;
      obs.successes[1] = obs.failures[1] = obs.statistic[1] = 0;
      obs.changed[1] = false;
      for (let k = 0; k < n; k++) {
        const p = k === 0 ? ctx.primary : ctx.secondary;
        const row = p.row;
        const next = countsSince(p.window, windowIndex(p.windowIndex), p.windowIndex, procF64[row + B_LAST_BUCKET], now, counts);
        const s = counts.success;
        const f = counts.decline + counts.tech;
        const r = observeBatch(readArm(procF64, row, now, cfg), s, f, now, cfg, threshold);
        writeArm(procF64, row, r.arm);
        procF64[row + B_LAST_BUCKET] = next;
        if (r.changed) procF64[rowS + BS_CHANGES] = (procF64[rowS + BS_CHANGES] || 0) + 1;
        fresh += s + f;
        const a = arms[k];
        a.posterior = r.arm;
        a.status = STATUS_NAMES[p.tier1.status] ?? 'healthy';
        a.failureProbability = effectiveRisk(procF64[row + PF_FAILURE_PROB], riskFloor); // NaN (Tier 2 absent) → 0
        obs.successes[k] = s;
        obs.failures[k] = f;
        obs.statistic[k] = r.statistic;
        obs.changed[k] = r.changed;
      }

      // 2. Allocate (or reuse the idle rule's last allocation).
      let raw: number;
      let reused = false;
      if (n === 1) {
        raw = 1;
      } else {
        const key = allocationKey(arms[0], arms[1], cfg, ctx.configWeight);
        const at = procF64[rowS + BS_ALLOC_MS];
        const prev = procF64[rowP + BP_RAW_PRIMARY];
        reused =
          fresh === 0 &&
          procF64[rowP + BP_ALLOC_KEY] === key &&
          now >= at &&
          now - at < REUSE_MS &&
          !Number.isNaN(procF64[rowP + PF_BANDIT_WEIGHT]) &&
          prev >= 0 &&
          prev <= 1;
        if (reused) {
          raw = prev;
        } else {
          preferred[0] = ctx.configWeight;
          preferred[1] = 1 - ctx.configWeight;
          allocate(arms, mulberry32(seedFor(ctx.slot, now)), cfg, { out, fallbackIndex: 1, preferred });
          raw = out[0];
          procF64[rowP + BP_RAW_PRIMARY] = raw;
          procF64[rowP + BP_ALLOC_KEY] = key;
          procF64[rowS + BS_ALLOC_MS] = now;
        }
      }

      // 3. Tier 2's cut bounds the primary's weight; while Tier 1 overrides (a failed_over
      // processor probing or in its slow-start recovery, or one in the hold after its
      // recovery) the primary gets exactly what Tier 1 gives it, so the published weights are
      // what routing does.
      let w = raw;
      if (ctx.foresightCap < w) w = ctx.foresightCap; // NaN (no cut): false
      if (n === 2 && ctx.tier1Override) w = ctx.tier1Share;

      // 4. Publish.
      procF64[rowP + PF_BANDIT_WEIGHT] = w;
      // Rounded to 1e-12 so that 1 − 0.98 reads 0.02, as the probe share it is.
      procF64[rowS + PF_BANDIT_WEIGHT] = n === 1 ? 1 : Math.round((1 - w) * 1e12) / 1e12;
      // Proposed as the decision; runStages discards it while Tier 1 overrides.
      decision.primaryShare = w;
      decision.source = DecisionSource.Mab;
      const inControl = !ctx.tier1Override;
      if (opts.onCycle !== undefined) {
        obs.slot = ctx.slot;
        obs.nowMs = now;
        obs.rawPrimary = raw;
        obs.weight = w;
        obs.reused = reused;
        obs.inControl = inControl;
        opts.onCycle(obs);
      }
    },
  };
}

/**
 * A 32-bit hash of everything the allocation depends on besides the posteriors: statuses,
 * failure probabilities (to 1e-4) and the settings. Equal keys and no new outcomes let an idle
 * rule reuse its allocation; a collision (p ≈ 2^-32) only delays a recomputation by REUSE_MS.
 */
function allocationKey(a: MutableArm, b: MutableArm, cfg: BanditConfig, configWeight: number): number {
  let h = 0x811c9dc5;
  const mix = (v: number): void => {
    h = Math.imul(h ^ (v | 0), 0x01000193);
    h = Math.imul(h ^ Math.floor(v / 4294967296), 0x01000193);
  };
  mix(STATUS_NAMES.indexOf(a.status));
  mix(STATUS_NAMES.indexOf(b.status));
  mix(Math.round(a.failureProbability * 1e4));
  mix(Math.round(b.failureProbability * 1e4));
  mix(Math.round(cfg.explorationFloor * 1e6));
  mix(Math.round(cfg.probeShare * 1e6));
  mix(Number.isFinite(cfg.halfLifeMs) ? cfg.halfLifeMs : -1);
  mix(cfg.samples);
  mix(Math.round(cfg.failingPrior * 1e6));
  mix(Math.round(cfg.priorAlpha * 1e6));
  mix(Math.round(cfg.priorBeta * 1e6));
  mix(Math.round(configWeight * 1e6));
  return h >>> 0;
}

/** The stage the worker pipeline registers. */
export const autopilotStage: RuleStage = createAutopilotStage();
