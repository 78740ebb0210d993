/**
 * The front thread's engine clock: every `intervalMs` it runs one evaluation task per shard
 * (a tenant's rule slots) on the piscina pool, and early evaluations when the outcome path
 * asks for them (early-evaluation.ts). Never two tasks on one shard at once: a shard still busy at a tick is
 * skipped for that cycle and counted, not queued, so a slow pool degrades to longer cycles
 * instead of a growing backlog. An early evaluation asked for by the outcome path first
 * evaluates only the rules that asked (requestRuleEvaluation), then the whole tenant after
 * the usual gap: a hard outage of one rule is judged in well under a millisecond of pool time
 * however many rules its tenant has, which keeps failover fast while the pool threads run at
 * a low priority (worker/priority.ts).
 *
 * The cycle's tasks are routine: they run on the pool's lower-priority threads, handed over no
 * faster than those threads take them (a shard waiting for its turn is still the scheduler's),
 * and one that holds a shard when an early evaluation asks for it gives the shard up: at once
 * if it has not begun (its thread still loading or busy: it will touch nothing), else at its
 * next pause point, returning what it has judged (its yield cell, protocol.ts). The early
 * evaluation runs on its own threads and covers the whole shard.
 */
import { RI_ACTIVE, RI_GENERATION } from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import type { Transition } from './transitions.js';
import {
  tablesIdOf,
  YIELD_ASKED,
  YIELD_NONE,
  YIELD_STARTED,
  type EvaluateResult,
  type EvaluateTask,
  type TenantEngineConfig,
} from './protocol.js';
import { ruleI32Base, ruleSegment } from '../shm/slots.js';
import { createPool, type TaskRunner, type WorkerPoolOptions } from './worker-pool.js';

export type { TaskRunner } from './worker-pool.js';

export interface ShardSpec {
  shardId: string;
  slots: ArrayLike<number>;
  config: TenantEngineConfig;
  /** Cluster follower: refresh health only. */
  healthOnly?: boolean;
}

export interface EngineSchedulerOptions extends WorkerPoolOptions {
  tables: SharedTables;
  /** The shards to evaluate, asked afresh at each cycle and each early evaluation. */
  getShards: () => Iterable<ShardSpec>;
  /** Transitions of a finished task, stale ones (slot reused or freed since) removed; only called when some remain. */
  onTransitions: (shardId: string, transitions: Transition[]) => void;
  /** After every successful task, with no task running on the shard: the moment to checkpoint it. */
  onEvaluated?: (shardId: string, result: EvaluateResult) => void;
  /** A failed task (or a throwing callback). Default: console.error. */
  onError?: (shardId: string, err: unknown) => void;
  /** After each cycle, with its duration in ms (metrics). */
  onCycle?: (durationMs: number) => void;
  /** Evaluation cycle (SERVICE_EVAL_INTERVAL_MS). Default 5000. */
  intervalMs?: number;
  /** Minimum time between two early evaluations of one shard. Default 250. */
  earlyGapMs?: number;
  /** Clock for task times and durations. Default Date.now. */
  now?: () => number;
  /** Replaces the piscina pool (tests). */
  runner?: TaskRunner;
}

export interface SchedulerStats {
  cyclesRun: number;
  /** Shard evaluations skipped because the shard's previous task was still running. */
  overrunsSkipped: number;
  earlyEvaluations: number;
  tasksFailed: number;
  staleTransitionsDropped: number;
  /** From a cycle's tick until its last task finished, ms; NaN before the first. */
  lastCycleMs: number;
  /** When the last cycle finished (all its tasks done), epoch ms; NaN before the first. */
  lastCycleEndMs: number;
}

interface ShardState {
  /** The running task (from dispatch until its result is delivered), if any. */
  running: Promise<void> | null;
  earlyPending: boolean;
  /** While earlyPending: the rule slots asked for, or null for the whole shard. */
  earlySlots: Set<number> | null;
  lastEarlyMs: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** A follow-up the last task asked for (a processor in slow-start recovery), and when. */
  followUp: ReturnType<typeof setTimeout> | undefined;
  followUpAtMs: number;
  /** While a routine (cycle) task holds the shard: the cell that asks it to stop early. */
  yieldCell: Int32Array | null;
}

export class EngineScheduler {
  private readonly tables: SharedTables;
  private readonly tablesId: number;
  private readonly runner: TaskRunner;
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly earlyGapMs: number;
  private readonly shards = new Map<string, ShardState>();
  /** The cycle's tasks not yet handed to the pool, in order, and their shards. */
  private readonly routineQueue: { spec: ShardSpec; done: () => void }[] = [];
  private readonly queued = new Set<string>();
  /** Lanes handing the routine queue to the pool (at most runner.routineThreads). */
  private lanes = 0;
  private interval: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private readonly counters: SchedulerStats = {
    cyclesRun: 0,
    overrunsSkipped: 0,
    earlyEvaluations: 0,
    tasksFailed: 0,
    staleTransitionsDropped: 0,
    lastCycleMs: NaN,
    lastCycleEndMs: NaN,
  };

  constructor(private readonly opts: EngineSchedulerOptions) {
    this.tables = opts.tables;
    this.tablesId = tablesIdOf(opts.tables);
    this.now = opts.now ?? Date.now;
    this.intervalMs = opts.intervalMs ?? 5000;
    this.earlyGapMs = opts.earlyGapMs ?? 250;
    this.runner = opts.runner ?? createPool(opts);
  }

  /** Starts the cycle timer. */
  start(): void {
    if (this.interval !== undefined || this.stopped) return;
    // A throwing shard provider must not become an unhandled rejection (fatal in Node 20).
    this.interval = setInterval(() => this.runCycle().catch((err) => this.report('*', err)), this.intervalMs);
    this.interval.unref();
  }

  /** One cycle: a task for each shard that is not busy. Resolves when those tasks are done. */
  async runCycle(): Promise<void> {
    if (this.stopped) return;
    const t0 = this.now();
    this.counters.cyclesRun++;
    // Routes and outcomes counted since the last cycle go to the rows, so that counts wait at most a cycle
    // even when nothing scrapes (and deleted rules' tallies are let go).
    this.tables.ruleCounts.flush();
    const tasks: Promise<void>[] = [];
    const seen = new Set<string>();
    for (const spec of this.opts.getShards()) {
      seen.add(spec.shardId);
      const st = this.state(spec.shardId);
      if (st.running !== null || this.queued.has(spec.shardId)) {
        this.counters.overrunsSkipped++;
        continue;
      }
      this.queued.add(spec.shardId);
      tasks.push(new Promise<void>((done) => this.routineQueue.push({ spec, done })));
    }
    for (const [id, st] of this.shards) {
      if (!seen.has(id) && !this.queued.has(id) && st.running === null && st.timer === undefined && st.followUp === undefined) this.shards.delete(id);
    }
    this.startLanes();
    await Promise.all(tasks);
    const end = this.now();
    this.counters.lastCycleMs = end - t0;
    this.counters.lastCycleEndMs = end;
    this.opts.onCycle?.(end - t0);
  }

  /** Starts lanes up to the routine threads' number while tasks wait (runCycle). */
  private startLanes(): void {
    const limit = this.runner.routineThreads ?? Infinity;
    // Counted before the loop: a lane takes its first task as it starts.
    for (let waiting = this.routineQueue.length; this.lanes < limit && waiting > 0; waiting--) {
      this.lanes++;
      void this.lane().finally(() => this.lanes--);
    }
  }

  /** Hands the routine queue's tasks to the pool one at a time, each once the one before is done. */
  private async lane(): Promise<void> {
    for (let item = this.routineQueue.shift(); item !== undefined; item = this.routineQueue.shift()) {
      this.queued.delete(item.spec.shardId);
      const st = this.state(item.spec.shardId);
      // An early evaluation took the shard while it waited: it covers the whole shard.
      if (st.running === null && !this.stopped) await this.dispatch(st, item.spec, true);
      item.done();
    }
  }

  /**
   * Resolves once the pool has run an empty task (no slots: it touches nothing) within
   * `timeoutMs`; rejects when the pool is stopped, broken or too busy to answer in time.
   * Readiness uses it. On the early evaluations' threads, the ones failover needs: the cycle's
   * show in readiness through the cycle's own age (readiness.ts).
   */
  ping(config: TenantEngineConfig, timeoutMs: number): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('the worker pool is stopped'));
    const task: EvaluateTask = { tablesId: this.tablesId, segments: this.tables.segments(), slots: new Int32Array(0), nowMs: this.now(), config };
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the worker pool did not answer within ${timeoutMs} ms`)), timeoutMs);
      this.runner.run(task).then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  /**
   * Early evaluation: evaluate `shardId` soon, outside the cycle. Cheap enough for the outcome path.
   * At most one early task per shard per earlyGapMs; if a task is running, the early one runs
   * right after it, so it sees the outcomes that prompted the request.
   */
  requestEvaluation(shardId: string): void {
    if (this.stopped) return;
    const st = this.state(shardId);
    st.earlyPending = true;
    st.earlySlots = null;
    this.askToYield(st);
    this.tryEarly(shardId, st);
  }

  /**
   * Early evaluation of one rule slot of the shard (the outcome path, for the rule whose
   * outcomes asked for it): the same rate limit and ordering as requestEvaluation, and the
   * requests that gather before the task starts are evaluated together; a pending request
   * for the whole shard covers them.
   */
  requestRuleEvaluation(shardId: string, slot: number): void {
    if (this.stopped) return;
    const st = this.state(shardId);
    if (!st.earlyPending) {
      st.earlyPending = true;
      st.earlySlots = new Set([slot]);
    } else st.earlySlots?.add(slot);
    this.askToYield(st);
    this.tryEarly(shardId, st);
  }

  /** True while a task is running on the shard. */
  busy(shardId: string): boolean {
    return (this.shards.get(shardId)?.running ?? null) !== null;
  }

  /** Resolves once no task is running on the shard (e.g. before freeing a deleted rule's slot). */
  whenIdle(shardId: string): Promise<void> {
    return this.shards.get(shardId)?.running ?? Promise.resolve();
  }

  /** Stops the timer, waits for running tasks, destroys the pool. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.interval);
    // Tasks not handed over yet are not run; their cycles end.
    for (const item of this.routineQueue.splice(0)) item.done();
    this.queued.clear();
    const running: Promise<void>[] = [];
    for (const st of this.shards.values()) {
      clearTimeout(st.timer);
      clearTimeout(st.followUp);
      st.timer = undefined;
      st.followUp = undefined;
      if (st.running !== null) running.push(st.running);
    }
    await Promise.all(running);
    await this.runner.destroy();
  }

  stats(): SchedulerStats {
    return { ...this.counters };
  }

  /**
   * A routine task holding the shard gives it up: one not begun yet is let go at once (it will
   * touch nothing, and its result is ignored: execute), one running stops at its next pause
   * point (worker/entry.ts) and the early evaluation follows it.
   */
  private askToYield(st: ShardState): void {
    const cell = st.yieldCell;
    if (cell === null) return;
    if (Atomics.compareExchange(cell, 0, YIELD_NONE, YIELD_ASKED) === YIELD_NONE) {
      st.running = null;
      st.yieldCell = null;
    } else Atomics.compareExchange(cell, 0, YIELD_STARTED, YIELD_ASKED);
  }

  private state(shardId: string): ShardState {
    let st = this.shards.get(shardId);
    if (st === undefined) {
      st = { running: null, earlyPending: false, earlySlots: null, lastEarlyMs: -Infinity, timer: undefined, followUp: undefined, followUpAtMs: Infinity, yieldCell: null };
      this.shards.set(shardId, st);
    }
    return st;
  }

  private tryEarly(shardId: string, st: ShardState): void {
    if (!st.earlyPending || st.running !== null || st.timer !== undefined || this.stopped) return;
    const waitMs = st.lastEarlyMs + this.earlyGapMs - this.now();
    if (waitMs > 0) {
      st.timer = setTimeout(() => {
        st.timer = undefined;
        this.tryEarly(shardId, st);
      }, waitMs);
      st.timer.unref();
      return;
    }
    st.earlyPending = false;
    const asked = st.earlySlots;
    st.earlySlots = null;
    const spec = this.findShard(shardId);
    if (spec === undefined) return; // the tenant is gone
    // Only slots the shard still holds: a slot freed since may belong to another shard now.
    const slots = asked === null ? spec.slots : Array.prototype.filter.call(spec.slots, (s: number) => asked.has(s));
    if (slots.length === 0) return;
    st.lastEarlyMs = this.now();
    this.counters.earlyEvaluations++;
    void this.dispatch(st, slots === spec.slots ? spec : { ...spec, slots });
    if (asked !== null) {
      // The rest of the tenant follows, as an early evaluation always covered it (probabilities
      // and bandit weights move with the outage too), once the gap has passed; rules that ask
      // meanwhile are in it.
      st.earlyPending = true;
    }
  }

  private findShard(shardId: string): ShardSpec | undefined {
    for (const spec of this.opts.getShards()) if (spec.shardId === shardId) return spec;
    return undefined;
  }

  /** Runs a task on the shard: an early one, or a routine (cycle) one that may be asked to yield. */
  private dispatch(st: ShardState, spec: ShardSpec, routine = false): Promise<void> {
    const yieldCell = routine ? new Int32Array(new SharedArrayBuffer(4)) : null;
    st.yieldCell = yieldCell;
    const task: EvaluateTask = {
      tablesId: this.tablesId,
      segments: this.tables.segments(),
      slots: Int32Array.from(spec.slots),
      nowMs: this.now(),
      config: spec.config,
      ...(spec.healthOnly === true && { healthOnly: true }),
      ...(yieldCell !== null && { yieldCell }),
    };
    const p = this.execute(st, spec.shardId, task);
    st.running = p;
    return p;
  }

  private async execute(st: ShardState, shardId: string, task: EvaluateTask): Promise<void> {
    let result: EvaluateResult | undefined;
    let error: unknown;
    try {
      result = await this.runner.run(task);
    } catch (err) {
      error = err;
    }
    // Let go before it began (askToYield): it judged nothing, and the shard is another task's now.
    if (task.yieldCell !== undefined && st.yieldCell !== task.yieldCell) return;
    st.running = null;
    st.yieldCell = null;
    try {
      if (result !== undefined) {
        this.deliver(shardId, result);
        if (result.followUpAtMs !== undefined) this.scheduleFollowUp(shardId, st, result.followUpAtMs);
      } else {
        this.counters.tasksFailed++;
        this.report(shardId, error);
      }
    } catch (err) {
      this.report(shardId, err);
    }
    this.tryEarly(shardId, st);
  }

  /**
   * An evaluation at `atMs` through the early path (same rate limit, never two tasks at once),
   * for a shard whose last task asked for it. One timer per shard, kept at the earliest time.
   */
  private scheduleFollowUp(shardId: string, st: ShardState, atMs: number): void {
    if (this.stopped) return;
    if (st.followUp !== undefined) {
      if (st.followUpAtMs <= atMs) return;
      clearTimeout(st.followUp);
    }
    st.followUpAtMs = atMs;
    st.followUp = setTimeout(() => {
      st.followUp = undefined;
      st.followUpAtMs = Infinity;
      this.requestEvaluation(shardId);
    }, Math.max(0, atMs - this.now()));
    st.followUp.unref();
  }

  private deliver(shardId: string, result: EvaluateResult): void {
    const fresh = result.transitions.filter((t) => this.isCurrent(t));
    this.counters.staleTransitionsDropped += result.transitions.length - fresh.length;
    if (fresh.length > 0) this.opts.onTransitions(shardId, fresh);
    this.opts.onEvaluated?.(shardId, result);
  }

  /** The slot still holds the rule the task evaluated. */
  private isCurrent(t: Transition): boolean {
    const seg = ruleSegment(this.tables.ruleSegs, t.slot);
    if (seg === undefined) return false;
    const ib = ruleI32Base(t.slot);
    return (
      Atomics.load(seg.ruleI32, ib + RI_GENERATION) === t.generation &&
      Atomics.load(seg.ruleI32, ib + RI_ACTIVE) === 1
    );
  }

  private report(shardId: string, err: unknown): void {
    if (this.opts.onError !== undefined) this.opts.onError(shardId, err);
    else console.error(`engine evaluation of shard ${shardId} failed`, err);
  }
}
