/**
 * Test harness: one rule on real SharedTables, traffic at virtual times. It plays the front
 * thread (routes by the published primary share, records outcomes into the windows, keeps
 * the run counters, requests a fast-path evaluation at FAST_PATH_RUN, rate-limited like the
 * scheduler) and the cycle timer, and calls the worker's evaluate function directly.
 */
import { readDecision, type DecisionFields } from '../../src/shm/decision.js';
import {
  DecisionSource,
  PF_STATUS,
  PROC_F64_STRIDE,
  PROCS_PER_RULE,
  RI_RUN_PRIMARY,
  RI_RUN_SECONDARY,
  RI_WINDOW_PRIMARY,
  RI_WINDOW_SECONDARY,
  RULE_I32_STRIDE,
  RULE_MASK,
  RULE_SHIFT,
  STATUS_NAMES,
  WINDOW_MASK,
  WINDOW_SHIFT,
  type StatusName,
} from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { mulberry32 } from '../../src/tiers/autopilot/sampling.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';
import { FAST_PATH_RUN, resolveTier1Config, type Tier1Config } from '../../src/tiers/tier1/config.js';
import { DEFAULT_LATER_TIERS } from '../../src/tiers/config.js';
import { newProcState, readProcState, type ProcState } from '../../src/tiers/tier1/state.js';
import type { Transition } from '../../src/engine/transitions.js';
import { evaluateWith } from '../../src/engine/worker/entry.js';
import { tablesIdOf, type TenantEngineConfig } from '../../src/engine/protocol.js';
import type { RuleStage } from '../../src/tiers/stage.js';

/** Seeded PRNG (mulberry32, the generator Tier 3 samples with). */
export const rng = mulberry32;

/** Per-processor behaviour at virtual time t (ms since the simulation start). */
export interface Behaviour {
  /** Probability of a technical error. */
  err: number;
  /** Probability of an issuer decline. */
  decline?: number;
  /** Latency in ms; `u` is uniform in [0, 1). Default 80 + 40u. */
  latency?: (u: number) => number;
  /** Technical errors are timeouts. */
  timeout?: boolean;
}
export type Model = (processor: 0 | 1, t: number) => Behaviour;

export interface SimOptions {
  primaryWeight?: number;
  sameProcessor?: boolean;
  seed?: number;
  tier1?: Partial<Tier1Config>;
  stages?: RuleStage[];
  /** Wall-clock time of t = 0 (epoch ms). */
  startMs?: number;
}

export interface RunOptions {
  /** Total transactions per second on the rule. */
  rate: number;
  model: Model;
  evalIntervalMs?: number;
  fastPath?: boolean;
  /** Honour the evaluations a task asks for (slow-start recovery), as the scheduler does. Default true. */
  followUps?: boolean;
  /** Called after each evaluation. */
  onEval?: (t: number) => void;
}

export class Sim {
  readonly tables = new SharedTables();
  readonly slot: number;
  readonly config: TenantEngineConfig;
  readonly startMs: number;
  readonly transitions: Transition[] = [];
  /** Transactions routed to each processor. */
  readonly routed = [0, 0];
  readonly evalTimes: number[] = [];
  private readonly stages: RuleStage[];
  private readonly random: () => number;
  private readonly windows: [number, number];
  /** Virtual time, ms since start. */
  t = 0;
  private nextEval: number;
  private followUps = true;
  private earlyAt = Infinity;
  private lastEarly = -Infinity;
  /** A follow-up evaluation the last task asked for (slow-start recovery), virtual ms. */
  private followUpAt = Infinity;
  private readonly decision: DecisionFields = {
    primaryShare: 0,
    source: DecisionSource.Rules,
    failProbPrimary: NaN,
    failProbSecondary: NaN,
  };

  constructor(opts: SimOptions = {}) {
    this.startMs = opts.startMs ?? 1_700_000_000_000;
    this.random = rng(opts.seed ?? 1);
    this.stages = opts.stages ?? [];
    const same = opts.sameProcessor ?? false;
    this.slot = this.tables.allocRule(opts.primaryWeight ?? 0.9, same);
    const wp = this.tables.allocWindow();
    const ws = same ? wp : this.tables.allocWindow();
    this.windows = [wp, ws];
    const ib = this.ib();
    this.seg().ruleI32[ib + RI_WINDOW_PRIMARY] = wp;
    this.seg().ruleI32[ib + RI_WINDOW_SECONDARY] = ws;
    this.config = { tier1: resolveTier1Config(opts.tier1), predictionEnabled: false, banditEnabled: false, ...DEFAULT_LATER_TIERS };
    this.nextEval = 0;
  }

  seg() {
    return this.tables.ruleSegs[this.slot >> RULE_SHIFT];
  }
  private ib(): number {
    return (this.slot & RULE_MASK) * RULE_I32_STRIDE;
  }
  row(k: 0 | 1): number {
    return ((this.slot & RULE_MASK) * PROCS_PER_RULE + k) * PROC_F64_STRIDE;
  }
  share(): number {
    return readDecision(this.seg(), this.slot & RULE_MASK, this.decision).primaryShare;
  }
  source(): DecisionSource {
    return readDecision(this.seg(), this.slot & RULE_MASK, this.decision).source;
  }
  status(k: 0 | 1): StatusName {
    return STATUS_NAMES[this.seg().procF64[this.row(k) + PF_STATUS]];
  }
  field(k: 0 | 1, pf: number): number {
    return this.seg().procF64[this.row(k) + pf];
  }
  state(k: 0 | 1): ProcState {
    return readProcState(this.seg().procF64, this.row(k), newProcState());
  }
  /** Wall-clock ms of virtual time t. */
  at(t: number): number {
    return this.startMs + t;
  }
  /** Virtual time of a transition. */
  when(tr: Transition): number {
    return tr.atMs - this.startMs;
  }
  first(event: Transition['event'], processor: 0 | 1 = 0, after = -Infinity): Transition | undefined {
    return this.transitions.find((x) => x.event === event && x.processor === processor && this.when(x) >= after);
  }

  /** Runs the evaluate task now. */
  evaluate(): void {
    const res = evaluateWith(
      {
        tablesId: tablesIdOf(this.tables),
        segments: this.tables.segments(),
        slots: [this.slot],
        nowMs: this.at(this.t),
        config: this.config,
      },
      this.stages,
    );
    this.transitions.push(...res.transitions);
    this.evalTimes.push(this.t);
    if (res.followUpAtMs !== undefined && this.followUps) this.followUpAt = Math.max(this.t, res.followUpAtMs - this.startMs);
  }

  /** Simulates until virtual time `until`. */
  run(until: number, o: RunOptions): void {
    const gap = 1000 / o.rate;
    const interval = o.evalIntervalMs ?? 5000;
    const fast = o.fastPath ?? true;
    this.followUps = o.followUps ?? true;
    let nextTx = Math.ceil(this.t / gap) * gap;
    if (nextTx <= this.t) nextTx += gap;
    for (;;) {
      const next = Math.min(nextTx, this.nextEval, this.earlyAt, this.followUpAt);
      if (next > until) break;
      this.t = next;
      if (next === this.followUpAt) {
        // The scheduler turns a follow-up into an early evaluation request.
        this.followUpAt = Infinity;
        this.requestEarly();
        if (this.earlyAt > next) continue;
        this.earlyAt = Infinity;
        this.lastEarly = next;
        this.evaluate();
        o.onEval?.(next);
      } else if (next === this.earlyAt) {
        this.earlyAt = Infinity;
        this.lastEarly = next;
        this.evaluate();
        o.onEval?.(next);
      } else if (next === this.nextEval) {
        this.nextEval += interval;
        this.evaluate();
        o.onEval?.(next);
      } else {
        nextTx += gap;
        this.transaction(o.model, fast);
      }
    }
    this.t = until;
  }

  private transaction(model: Model, fast: boolean): void {
    const k: 0 | 1 = this.random() < this.share() ? 0 : 1;
    this.routed[k]++;
    const b = model(k, this.t);
    const u = this.random();
    const kind =
      u < b.err
        ? b.timeout
          ? OutcomeKind.Timeout
          : OutcomeKind.TechError
        : u < b.err + (b.decline ?? 0)
          ? OutcomeKind.Decline
          : OutcomeKind.Success;
    const lat = (b.latency ?? ((x: number) => 80 + 40 * x))(this.random());
    const w = this.windows[k];
    recordOutcome(this.tables.windowSegs[w >> WINDOW_SHIFT], w & WINDOW_MASK, this.at(this.t), kind, lat);
    const ruleI32 = this.seg().ruleI32;
    const runField = this.ib() + (k === 0 ? RI_RUN_PRIMARY : RI_RUN_SECONDARY);
    if (kind === OutcomeKind.TechError || kind === OutcomeKind.Timeout) {
      const run = Atomics.add(ruleI32, runField, 1) + 1;
      if (fast && run === FAST_PATH_RUN) this.requestEarly();
    } else {
      Atomics.store(ruleI32, runField, 0);
    }
  }

  /** The scheduler's rule: at most one early evaluation per 250 ms. */
  private requestEarly(): void {
    if (this.earlyAt !== Infinity) return;
    this.earlyAt = Math.max(this.t, this.lastEarly + 250);
  }
}

/** Formats a count summary for the test log. */
export function countEvents(ts: Transition[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of ts) {
    const key = `${t.event}[${t.processor}]`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}
