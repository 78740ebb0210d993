/**
 * The real engine, in-process and in virtual time, behind the simulator's EngineAdapter.
 *
 * It plays the front thread with the service's own code: a Tenant holding one rule (the
 * scenario's primary and secondary), `matchRoute` + `decide` for routes, and
 * `recordReportedOutcome` for outcomes (classification of the error code, window buckets,
 * run counters). It plays the scheduler with the real worker task (`evaluate` from
 * src/engine/worker/entry.ts, i.e. Tier 1 plus every stage registered in src/engine/worker/stages.ts),
 * following EngineScheduler's rules in virtual time:
 *   - a cycle every `evalIntervalMs`, skipped (not queued) while the shard's task runs;
 *   - an early evaluation when `wantsEarlyEvaluation` says so (a hard run or an error burst), at most one per
 *     `earlyGapMs`, deferred until a running task finishes;
 *   - a follow-up evaluation when a task asks for one (slow-start recovery), through the
 *     early path;
 *   - a task publishes its decision `poolDelayMs` after dispatch (the pool round trip; the
 *     real pool takes well under that, so this errs on the slow side).
 * Pending engine work is caught up at the start of every driver call, each item at its own
 * due time, so results do not depend on the driver's tick: nothing routes in between.
 */
import { readDecision, type DecisionFields } from '../../src/shm/decision.js';
import { DECISION_SOURCE_NAMES, DecisionSource, PF_STATUS, STATUS_NAMES, type StatusName } from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { decide, matchRoute } from '../../src/routing/decide.js';
import { recordReportedOutcome } from '../../src/routing/outcome.js';
import { toRecord } from '../../src/rules/rule-service.js';
import { settingsForTier, Tenant, type LiveRule } from '../../src/tenants/tenant.js';
import type { Tier1Config } from '../../src/tiers/tier1/config.js';
import { engineConfigFor } from '../../src/engine/tenant-engine-config.js';
import { wantsEarlyEvaluation } from '../../src/engine/early-evaluation.js';
import type { Transition } from '../../src/engine/transitions.js';
import evaluate, { evaluateWith } from '../../src/engine/worker/entry.js';
import { tablesIdOf, type EvaluateResult, type EvaluateTask, type TenantEngineConfig } from '../../src/engine/protocol.js';
import type { RuleStage } from '../../src/tiers/stage.js';
import { VirtualClock } from './clock.js';
import { runScenario, type EngineAdapter, type RouteDecision, type TxEvent } from './driver.js';
import type { Outcome } from './processor.js';
import { Rng } from './rng.js';
import type { Scenario } from './scenarios.js';
import { processorRowOffset, ruleIndex, ruleSegment } from '../../src/shm/slots.js';

/** Epoch ms of scenario time 0: far from 0 so window epochs look like real ones. */
export const RUN_START_MS = 1_700_000_000_000;
/** EngineScheduler's defaults (SERVICE_EVAL_INTERVAL_MS and earlyGapMs). */
export const EVAL_INTERVAL_MS = 5000;
export const EARLY_GAP_MS = 250;
export const POOL_DELAY_MS = 50;
/** The transaction the adapter routes; the rule is created to match it. */
const ROUTE_REQUEST = { country: 'US', currency: 'USD', payment_method: 'card' as const, amount: 42 };

export type Tier = 1 | 2 | 3;

export interface InProcessEngineOptions {
  scenario: Scenario;
  /** Seeds the route draws (the driver's seed drives arrivals and outcomes). */
  seed: number;
  /** 1: health only; 2: + prediction; 3: + bandit (via the tenant's settings). Default 1. */
  tier?: Tier;
  /** The rule's configured primary weight. Default 1 (see scenarios-bench for why). */
  primaryWeight?: number;
  tier1?: Partial<Tier1Config>;
  /** Extra tenant engine config fields read by later stages (e.g. `foresight`). */
  configExtras?: Record<string, unknown>;
  /** Replaces the registered stages (e.g. a Tier 2 stage with an observer); default: the real `evaluate`. */
  stages?: readonly RuleStage[];
  evalIntervalMs?: number;
  /**
   * Scenario time of the first cycle; the rest follow every evalIntervalMs. Default one
   * interval (setInterval). The service's timer has no relation to when an incident starts,
   * so runInProcess draws it from the seed: a fixed phase would put every incident at the
   * same point of the cycle (with the default scenarios, exactly on a cycle boundary).
   */
  firstCycleMs?: number;
  earlyGapMs?: number;
  poolDelayMs?: number;
  /** false: no early evaluations (cycle only). */
  fastPath?: boolean;
  /** Epoch ms of scenario time 0; must equal the driver clock's start. Default RUN_START_MS. */
  startMs?: number;
  /** After every evaluation, with the decision it published. */
  onEvaluated?: (e: EvaluationRecord) => void;
}

export interface EvaluationRecord {
  /** Scenario time (ms) the task ran. */
  t: number;
  early: boolean;
  result: EvaluateResult;
  primaryShare: number;
  source: (typeof DECISION_SOURCE_NAMES)[number];
  /** Published failure probabilities (NaN when Tier 2 is off). */
  pPrimary: number;
  pSecondary: number;
}

export interface EngineCounters {
  cycles: number;
  earlyEvaluations: number;
  overrunsSkipped: number;
}

export class InProcessEngine implements EngineAdapter {
  readonly tables = new SharedTables();
  readonly tenant: Tenant;
  readonly rule: LiveRule;
  readonly config: TenantEngineConfig;
  readonly startMs: number;
  /** Every transition, in order; `atMs` is epoch ms (use `scenarioTime`). */
  readonly transitions: Transition[] = [];
  readonly counters: EngineCounters = { cycles: 0, earlyEvaluations: 0, overrunsSkipped: 0 };
  private readonly router: Rng;
  private readonly run: (task: EvaluateTask) => EvaluateResult;
  private readonly intervalMs: number;
  private readonly gapMs: number;
  private readonly delayMs: number;
  private readonly fastPath: boolean;
  private readonly onEvaluated?: (e: EvaluationRecord) => void;
  private readonly decision: DecisionFields = { primaryShare: 1, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };
  // Scheduler state, epoch ms. A task "runs" from dispatch until `runningUntil`.
  private nextCycle: number;
  private runningUntil = Infinity;
  private runningEarly = false;
  private earlyPending = false;
  private earlyTimer = Infinity;
  /** A follow-up evaluation a task asked for (epoch ms), Infinity if none. */
  private followUpAt = Infinity;
  /** The published primary share over time: [scenario ms, share] at each change (benchmark measures). */
  readonly shareSeries: Array<[number, number]> = [];
  private lastEarly = -Infinity;

  constructor(o: InProcessEngineOptions) {
    const { scenario } = o;
    this.startMs = o.startMs ?? RUN_START_MS;
    this.tenant = new Tenant('bench', settingsForTier(o.tier ?? 1, false));
    if (o.tier1) this.tenant.tier1Overrides = o.tier1;
    const record = toRecord(
      {
        rule_id: `sim-${scenario.name}`,
        attributes: [ROUTE_REQUEST.country, ROUTE_REQUEST.currency, ROUTE_REQUEST.payment_method],
        primary_id: scenario.primary.id,
        secondary_id: scenario.secondary.id,
        primary_weight: o.primaryWeight ?? 1,
      },
      new Date(this.startMs),
    );
    const slot = this.tables.allocRule(record.primary_weight, record.primary_id === record.secondary_id);
    this.rule = { record, slot, runStartedAt: [0, 0], override: null, cache: null };
    this.tenant.addRule(this.rule);
    this.config = { ...engineConfigFor(this.tenant), ...o.configExtras };
    const stages = o.stages;
    this.run = stages ? (task) => evaluateWith(task, stages) : evaluate;
    this.router = new Rng(o.seed).fork('router');
    this.intervalMs = o.evalIntervalMs ?? EVAL_INTERVAL_MS;
    this.gapMs = o.earlyGapMs ?? EARLY_GAP_MS;
    this.delayMs = o.poolDelayMs ?? POOL_DELAY_MS;
    this.fastPath = o.fastPath ?? true;
    this.onEvaluated = o.onEvaluated;
    this.nextCycle = this.startMs + (o.firstCycleMs ?? this.intervalMs);
  }

  route(nowMs: number): RouteDecision {
    this.catchUp(nowMs);
    const route = matchRoute(this.tenant, ROUTE_REQUEST);
    if (route === undefined) throw new Error('in-process engine: the rule does not match its own transaction');
    const d = decide(this.tables, route, this.router.next(), this.tenant.settings.predictionEnabled);
    this.tenant.counters.routed++;
    return { processorId: d.processor_id, weight: d.weight, decisionSource: d.decision_source, failureProbability: d.failure_probability };
  }

  outcome(nowMs: number, processorId: string, o: Outcome): void {
    this.catchUp(nowMs);
    const report = { rule_id: this.rule.record.rule_id, processor_id: processorId, success: o.success, latency_ms: o.latency_ms, error_code: o.error_code };
    const rec = recordReportedOutcome(this.tables, this.tenant, report, nowMs);
    this.tenant.counters.reported++;
    // As EngineService.outcomeRecorded.
    if (this.fastPath && wantsEarlyEvaluation(this.tables, rec, this.config.tier1, nowMs)) {
      this.earlyPending = true;
      this.tryEarly(nowMs);
    }
  }

  tick(nowMs: number): void {
    this.catchUp(nowMs);
  }

  /** Scenario time (ms) of an epoch-ms instant such as `Transition.atMs`. */
  scenarioTime(epochMs: number): number {
    return epochMs - this.startMs;
  }

  /** Current published primary share. */
  primaryShare(): number {
    return readDecision(ruleSegment(this.tables.ruleSegs, this.rule.slot), ruleIndex(this.rule.slot), this.decision).primaryShare;
  }

  /** Current status of the primary (0) or secondary (1). */
  status(k: 0 | 1): StatusName {
    const seg = ruleSegment(this.tables.ruleSegs, this.rule.slot);
    return STATUS_NAMES[seg.procF64[processorRowOffset(this.rule.slot, k) + PF_STATUS]];
  }

  /** Runs every scheduler step due at or before `nowMs`, each at its own time. */
  private catchUp(nowMs: number): void {
    for (;;) {
      const t = Math.min(this.runningUntil, this.earlyTimer, this.followUpAt, this.nextCycle);
      if (t > nowMs) return;
      if (t === this.runningUntil) this.finish(t);
      else if (t === this.followUpAt) {
        // EngineScheduler.scheduleFollowUp: an early evaluation request at the asked time.
        this.followUpAt = Infinity;
        this.earlyPending = true;
        this.tryEarly(t);
      } else if (t === this.earlyTimer) {
        this.earlyTimer = Infinity;
        this.tryEarly(t);
      } else {
        this.nextCycle += this.intervalMs;
        this.counters.cycles++;
        if (this.runningUntil !== Infinity) this.counters.overrunsSkipped++;
        else this.dispatch(t, false);
      }
    }
  }

  /** EngineScheduler.tryEarly. */
  private tryEarly(t: number): void {
    if (!this.earlyPending || this.runningUntil !== Infinity || this.earlyTimer !== Infinity) return;
    const wait = this.lastEarly + this.gapMs - t;
    if (wait > 0) {
      this.earlyTimer = t + wait;
      return;
    }
    this.earlyPending = false;
    this.lastEarly = t;
    this.counters.earlyEvaluations++;
    this.dispatch(t, true);
  }

  private dispatch(t: number, early: boolean): void {
    this.runningUntil = t + this.delayMs;
    this.runningEarly = early;
  }

  /** The task runs (reads windows, publishes) at the end of the round trip. */
  private finish(t: number): void {
    this.runningUntil = Infinity;
    const result = this.run({
      tablesId: tablesIdOf(this.tables),
      segments: this.tables.segments(),
      slots: this.tenant.slots(),
      nowMs: t,
      config: this.config,
    });
    for (const tr of result.transitions) this.transitions.push(tr);
    if (result.followUpAtMs !== undefined) this.followUpAt = Math.min(this.followUpAt, Math.max(t, result.followUpAtMs));
    const share = this.primaryShare();
    const last = this.shareSeries[this.shareSeries.length - 1];
    if (last === undefined || last[1] !== share) this.shareSeries.push([t - this.startMs, share]);
    if (this.onEvaluated) {
      const d = readDecision(ruleSegment(this.tables.ruleSegs, this.rule.slot), ruleIndex(this.rule.slot), this.decision);
      this.onEvaluated({
        t: t - this.startMs,
        early: this.runningEarly,
        result,
        primaryShare: d.primaryShare,
        source: DECISION_SOURCE_NAMES[d.source],
        pPrimary: d.failProbPrimary,
        pSecondary: d.failProbSecondary,
      });
    }
    this.tryEarly(t);
  }
}

export interface InProcessRunOptions extends Omit<InProcessEngineOptions, 'startMs'> {
  ratePerSec: number;
  /** Driver tick; the engine does not depend on it (see catchUp). Default 1000. */
  tickMs?: number;
}

export interface InProcessRun {
  scenario: Scenario;
  events: TxEvent[];
  engine: InProcessEngine;
}

/** Runs `o.scenario` against a fresh in-process engine; arrivals and outcomes use `o.seed`. */
export async function runInProcess(o: InProcessRunOptions): Promise<InProcessRun> {
  const interval = o.evalIntervalMs ?? EVAL_INTERVAL_MS;
  // In (0, interval]: uniform phase of the cycle timer, from its own stream of the seed.
  const firstCycleMs = o.firstCycleMs ?? interval * (1 - new Rng(o.seed).fork('cycle-phase').next());
  const engine = new InProcessEngine({ ...o, firstCycleMs, startMs: RUN_START_MS });
  const events = await runScenario({
    scenario: o.scenario,
    ratePerSec: o.ratePerSec,
    seed: o.seed,
    adapter: engine,
    clock: new VirtualClock(RUN_START_MS),
    tickMs: o.tickMs ?? 1000,
  });
  return { scenario: o.scenario, events, engine };
}
