/** EngineScheduler's logic with a fake pool and fake timers: no threads, no sleeping. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RI_GENERATION, RULE_I32_STRIDE } from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { resolveTier1Config } from '../../src/tiers/tier1/config.js';
import { DEFAULT_LATER_TIERS } from '../../src/tiers/config.js';
import { EngineScheduler, type ShardSpec, type TaskRunner } from '../../src/engine/scheduler.js';
import type { Transition } from '../../src/engine/transitions.js';
import { YIELD_ASKED, YIELD_NONE, YIELD_STARTED, type EvaluateResult, type EvaluateTask } from '../../src/engine/protocol.js';

interface Pending {
  task: EvaluateTask;
  resolve: (r: EvaluateResult) => void;
  reject: (e: unknown) => void;
}

class FakeRunner implements TaskRunner {
  readonly pending: Pending[] = [];
  readonly started: EvaluateTask[] = [];
  destroyed = false;
  /** Unset: the scheduler hands a cycle's tasks over all at once. */
  routineThreads?: number;
  run(task: EvaluateTask): Promise<EvaluateResult> {
    this.started.push(task);
    return new Promise((resolve, reject) => this.pending.push({ task, resolve, reject }));
  }
  async destroy(): Promise<void> {
    this.destroyed = true;
  }
  /** Completes the oldest running task of `shardSlot` (tasks are told apart by their first slot). */
  finish(firstSlot: number, transitions: Transition[] = [], followUpAtMs?: number, yielded = false): void {
    const i = this.pending.findIndex((p) => p.task.slots[0] === firstSlot);
    const [p] = this.pending.splice(i, 1);
    p.resolve({ transitions, evaluatedSlots: p.task.slots.length, durationMs: 1, ...(followUpAtMs !== undefined && { followUpAtMs }), ...(yielded && { yielded }) });
  }
  /** A pool thread begins the routine task: it claims the shard through the task's yield cell, as worker/entry.ts does. */
  begin(task: EvaluateTask): void {
    Atomics.compareExchange(task.yieldCell!, 0, YIELD_NONE, YIELD_STARTED);
  }
  tasksFor(firstSlot: number): EvaluateTask[] {
    return this.started.filter((t) => t.slots[0] === firstSlot);
  }
}

const flush = () => vi.advanceTimersByTimeAsync(0);
const config = { tier1: resolveTier1Config(), predictionEnabled: false, banditEnabled: false, ...DEFAULT_LATER_TIERS };

describe('EngineScheduler', () => {
  let tables: SharedTables;
  let runner: FakeRunner;
  let shards: ShardSpec[];
  let delivered: [string, Transition[]][];
  let evaluated: string[];
  let errors: unknown[];
  let sched: EngineScheduler;
  let slotA: number;
  let slotB: number;

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    tables = new SharedTables();
    slotA = tables.allocRule(0.9, false);
    slotB = tables.allocRule(0.9, false);
    runner = new FakeRunner();
    shards = [
      { shardId: 'a', slots: [slotA], config },
      { shardId: 'b', slots: [slotB], config },
    ];
    delivered = [];
    evaluated = [];
    errors = [];
    sched = new EngineScheduler({
      tables,
      getShards: () => shards,
      onTransitions: (id, ts) => delivered.push([id, ts]),
      onEvaluated: (id) => evaluated.push(id),
      onError: (_id, err) => errors.push(err),
      runner,
      now: () => Date.now(),
    });
  });

  afterEach(async () => {
    await vi.runOnlyPendingTimersAsync();
    vi.useRealTimers();
  });

  const transition = (slot: number, generation: number): Transition => ({
    slot,
    generation,
    processor: 0,
    event: 'failover.triggered',
    from: 'healthy',
    to: 'failed_over',
    reason: 'r',
    triggerValue: 1,
    threshold: 0.3,
    atMs: Date.now(),
  });
  const generation = (slot: number) => tables.ruleSegs[0].ruleI32[slot * RULE_I32_STRIDE + RI_GENERATION];

  it('runs one task per shard every interval, with the shard, tables and clock', async () => {
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    expect(runner.started).toHaveLength(2);
    const t = runner.tasksFor(slotA)[0];
    expect(t.slots).toEqual(Int32Array.of(slotA));
    expect(t.nowMs).toBe(Date.now());
    expect(t.segments.rules).toBe(tables.segments().rules);
    expect(t.segments.windows).toBe(tables.segments().windows);
    expect(t.config).toBe(config);
    runner.finish(slotA);
    runner.finish(slotB);
    await flush();
    expect(evaluated.sort()).toEqual(['a', 'b']);
    expect(sched.stats()).toMatchObject({ cyclesRun: 1, overrunsSkipped: 0, lastCycleMs: 0 });
  });

  it('skips and counts a shard whose task overruns the cycle, without queueing it', async () => {
    sched.start();
    await vi.advanceTimersByTimeAsync(5000); // tick 1: a1, b1
    runner.finish(slotB);
    await vi.advanceTimersByTimeAsync(5000); // tick 2: a busy (skipped), b2
    await vi.advanceTimersByTimeAsync(5000); // tick 3: both busy (skipped)
    expect(runner.tasksFor(slotA)).toHaveLength(1);
    expect(runner.tasksFor(slotB)).toHaveLength(2);
    expect(sched.stats().overrunsSkipped).toBe(3);
    runner.finish(slotB);
    runner.finish(slotA);
    await flush();
    expect(runner.started).toHaveLength(3); // nothing was queued behind the busy shards
    expect(sched.stats().lastCycleMs).toBe(10_000); // tick 1's cycle ended with a1, at 15 s
    await vi.advanceTimersByTimeAsync(5000); // tick 4: both idle again
    expect(runner.started).toHaveLength(5);
  });

  it('runs an early evaluation at once, at most one per 250 ms, coalescing requests', async () => {
    sched.requestEvaluation('a');
    expect(runner.tasksFor(slotA)).toHaveLength(1);
    runner.finish(slotA);
    await flush();
    await vi.advanceTimersByTimeAsync(100);
    sched.requestEvaluation('a');
    sched.requestEvaluation('a');
    expect(runner.tasksFor(slotA)).toHaveLength(1); // deferred, not dropped
    await vi.advanceTimersByTimeAsync(149);
    expect(runner.tasksFor(slotA)).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runner.tasksFor(slotA)).toHaveLength(2);
    expect(sched.stats().earlyEvaluations).toBe(2);
  });

  it('never runs two tasks on a shard: an early request during a task runs right after it', async () => {
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    runner.begin(runner.tasksFor(slotA)[0]); // the cycle task runs
    sched.requestEvaluation('a');
    expect(runner.tasksFor(slotA)).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    runner.finish(slotA);
    await flush();
    expect(runner.tasksFor(slotA)).toHaveLength(2);
  });

  it('whenIdle resolves when the running task ends', async () => {
    await expect(sched.whenIdle('a')).resolves.toBeUndefined();
    sched.requestEvaluation('a');
    let idle = false;
    void sched.whenIdle('a').then(() => (idle = true));
    await flush();
    expect(idle).toBe(false);
    runner.finish(slotA);
    await flush();
    expect(idle).toBe(true);
  });

  it('delivers current transitions and drops those of a reused slot', async () => {
    sched.requestEvaluation('a');
    const gen = generation(slotA);
    const current = transition(slotA, gen);
    const stale = transition(slotA, gen - 1);
    runner.finish(slotA, [current, stale]);
    await flush();
    expect(delivered).toEqual([['a', [current]]]);
    expect(sched.stats().staleTransitionsDropped).toBe(1);

    // Freed (and not yet reused) while the task ran: dropped too.
    sched.requestEvaluation('b');
    tables.freeRule(slotB);
    runner.finish(slotB, [transition(slotB, generation(slotB))]);
    await flush();
    expect(delivered).toHaveLength(1);
  });

  it('counts a failed task, reports it, and frees the shard', async () => {
    sched.requestEvaluation('a');
    runner.pending[0].reject(new Error('boom'));
    await flush();
    expect(sched.stats().tasksFailed).toBe(1);
    expect(errors).toEqual([new Error('boom')]);
    await vi.advanceTimersByTimeAsync(250);
    sched.requestEvaluation('a');
    expect(runner.tasksFor(slotA)).toHaveLength(2);
  });

  it('forgets a shard that is gone, and ignores early requests for it', async () => {
    shards = [shards[1]];
    sched.requestEvaluation('a');
    expect(runner.tasksFor(slotA)).toHaveLength(0);
  });

  it('stop waits for running tasks, destroys the pool, and runs nothing after', async () => {
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    let stopped = false;
    void sched.stop().then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false);
    runner.finish(slotA);
    runner.finish(slotB);
    await flush();
    expect(stopped).toBe(true);
    expect(runner.destroyed).toBe(true);
    sched.requestEvaluation('a');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(runner.started).toHaveLength(2);
  });

  it('runs the follow-up evaluation a task asks for (slow-start recovery) at its time, through the early path', async () => {
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    expect(runner.tasksFor(slotA)).toHaveLength(1);
    const t0 = Date.now();
    runner.finish(slotA, [], t0 + 1050);
    runner.finish(slotB);
    await flush();
    await vi.advanceTimersByTimeAsync(1000);
    expect(runner.tasksFor(slotA)).toHaveLength(1); // not yet
    await vi.advanceTimersByTimeAsync(60);
    expect(runner.tasksFor(slotA)).toHaveLength(2); // at the asked time, before the next cycle
    expect(runner.tasksFor(slotB)).toHaveLength(1); // only the shard that asked
    expect(runner.tasksFor(slotA)[1].nowMs - t0).toBeGreaterThanOrEqual(1050);
    // No follow-up asked: back to the cycle.
    runner.finish(slotA);
    await flush();
    await vi.advanceTimersByTimeAsync(3000);
    expect(runner.tasksFor(slotA)).toHaveLength(2);
    expect(sched.stats().earlyEvaluations).toBe(1);
  });
  it('runs the cycle as routine tasks, each with a yield cell of its own, and early evaluations as neither', async () => {
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    const [cycleA] = runner.tasksFor(slotA);
    const [cycleB] = runner.tasksFor(slotB);
    expect(Atomics.load(cycleA.yieldCell!, 0)).toBe(YIELD_NONE);
    expect(cycleA.yieldCell!.buffer).toBeInstanceOf(SharedArrayBuffer); // the worker must see the scheduler's store
    expect(cycleB.yieldCell!.buffer).not.toBe(cycleA.yieldCell!.buffer);
    runner.finish(slotA);
    runner.finish(slotB);
    await flush();
    sched.requestEvaluation('a');
    const early = runner.tasksFor(slotA)[1];
    expect(early.yieldCell).toBeUndefined(); // not a cycle task: the early evaluations' threads
  });

  it('asks the cycle task running on a shard to yield when an early evaluation of that shard is asked for, and runs the early one as soon as it returns', async () => {
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    const [cycleA] = runner.tasksFor(slotA);
    const [cycleB] = runner.tasksFor(slotB);
    runner.begin(cycleA);
    runner.begin(cycleB);
    sched.requestRuleEvaluation('a', slotA);
    expect(Atomics.load(cycleA.yieldCell!, 0)).toBe(YIELD_ASKED);
    expect(Atomics.load(cycleB.yieldCell!, 0)).toBe(YIELD_STARTED); // another shard's task goes on
    expect(runner.tasksFor(slotA)).toHaveLength(1); // still never two tasks on a shard
    runner.finish(slotA, [], undefined, true);
    await flush();
    const [, early] = runner.tasksFor(slotA);
    expect(early.yieldCell).toBeUndefined();
    expect(early.slots).toEqual(Int32Array.of(slotA));
    expect(sched.stats().earlyEvaluations).toBe(1);
    // Once the task has returned, a later request has no cell to set.
    runner.finish(slotA);
    runner.finish(slotB);
    await flush();
    sched.requestEvaluation('b');
    expect(Atomics.load(cycleB.yieldCell!, 0)).toBe(YIELD_STARTED);
  });

  it('lets a cycle task that has not begun go at once when an early evaluation of its shard is asked for, and ignores what it returns', async () => {
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    const [cycleA] = runner.tasksFor(slotA); // handed to the pool, not begun (its thread still loading, say)
    sched.requestRuleEvaluation('a', slotA);
    expect(Atomics.load(cycleA.yieldCell!, 0)).toBe(YIELD_ASKED); // it will touch nothing when it begins
    const [, early] = runner.tasksFor(slotA);
    expect(early.yieldCell).toBeUndefined(); // an early task, at once, without waiting for the cycle task
    expect(sched.busy('a')).toBe(true);
    // The cycle task returns later, having judged nothing: the shard stays the early task's.
    const i = runner.pending.findIndex((p) => p.task === cycleA);
    runner.pending.splice(i, 1)[0].resolve({ transitions: [], evaluatedSlots: 0, durationMs: 0, yielded: true });
    await flush();
    expect(sched.busy('a')).toBe(true);
    expect(evaluated).toEqual([]);
    sched.requestEvaluation('a'); // another ask waits for the early task, as ever
    expect(runner.tasksFor(slotA)).toHaveLength(2);
    runner.finish(slotA);
    await flush();
    expect(evaluated).toEqual(['a']);
    expect(sched.busy('a')).toBe(false);
    runner.finish(slotB);
    await flush();
    expect(sched.stats()).toMatchObject({ cyclesRun: 1, tasksFailed: 0 });
  });

  it('hands a cycle over no faster than the routine threads take it: a shard still waiting for its turn is evaluated early at once, and the cycle leaves it to that evaluation', async () => {
    runner.routineThreads = 1;
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    expect(runner.started).toHaveLength(1); // a's task; b waits with the scheduler, not in the pool
    sched.requestEvaluation('b');
    const [earlyB] = runner.tasksFor(slotB);
    expect(earlyB.yieldCell).toBeUndefined(); // an early task, at once, not behind a's cycle task
    runner.finish(slotA);
    await flush();
    expect(runner.tasksFor(slotB)).toHaveLength(1); // the early evaluation held b: the cycle skipped it
    runner.finish(slotB);
    await flush();
    expect(sched.stats()).toMatchObject({ cyclesRun: 1, overrunsSkipped: 0, lastCycleMs: 0 });
    await vi.advanceTimersByTimeAsync(5000); // the next cycle: one at a time again
    expect(runner.started.slice(2).map((t) => [t.slots[0], t.yieldCell !== undefined])).toEqual([[slotA, true]]);
    runner.finish(slotA);
    await flush();
    expect(runner.started.slice(2).map((t) => [t.slots[0], t.yieldCell !== undefined])).toEqual([
      [slotA, true],
      [slotB, true],
    ]);
    runner.finish(slotB);
    await flush();
    expect(sched.stats().cyclesRun).toBe(2);
  });

  it('counts a shard still waiting for its turn at the next tick as an overrun, and queues it once', async () => {
    runner.routineThreads = 1;
    sched.start();
    await vi.advanceTimersByTimeAsync(5000); // a runs, b waits
    await vi.advanceTimersByTimeAsync(5000); // a busy, b still waiting: both skipped
    expect(sched.stats().overrunsSkipped).toBe(2);
    runner.finish(slotA);
    await flush();
    runner.finish(slotB);
    await flush();
    expect(runner.started.map((t) => t.slots[0])).toEqual([slotA, slotB]);
  });

  it('stop ends a cycle whose tasks wait for their turn, without running them', async () => {
    runner.routineThreads = 1;
    sched.start();
    await vi.advanceTimersByTimeAsync(5000);
    let stopped = false;
    void sched.stop().then(() => (stopped = true));
    runner.finish(slotA);
    await flush();
    expect(stopped).toBe(true);
    expect(runner.started).toHaveLength(1); // b never ran
  });
});
