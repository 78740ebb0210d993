/**
 * Early evaluations asked for by the outcome path evaluate the rules that asked first, then
 * the whole tenant (EngineScheduler.requestRuleEvaluation): fake pool, fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SharedTables } from '../../src/shm/tables.js';
import { resolveTier1Config } from '../../src/tiers/tier1/config.js';
import { DEFAULT_LATER_TIERS } from '../../src/tiers/config.js';
import { EngineScheduler, type ShardSpec, type TaskRunner } from '../../src/engine/scheduler.js';
import type { EvaluateResult, EvaluateTask } from '../../src/engine/protocol.js';

const config = { tier1: resolveTier1Config(), predictionEnabled: false, banditEnabled: false, ...DEFAULT_LATER_TIERS };

class FakeRunner implements TaskRunner {
  readonly started: EvaluateTask[] = [];
  private readonly resolvers: ((r: EvaluateResult) => void)[] = [];
  run(task: EvaluateTask): Promise<EvaluateResult> {
    this.started.push(task);
    return new Promise((resolve) => this.resolvers.push(resolve));
  }
  finishAll(): void {
    for (const r of this.resolvers.splice(0)) r({ transitions: [], evaluatedSlots: 0, durationMs: 1 });
  }
  async destroy(): Promise<void> {}
}

describe('EngineScheduler rule-level early evaluations', () => {
  let runner: FakeRunner;
  let sched: EngineScheduler;
  let shard: ShardSpec;
  let slots: number[];

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    const tables = new SharedTables();
    slots = Array.from({ length: 100 }, () => tables.allocRule(0.9, false));
    shard = { shardId: 'a', slots, config };
    runner = new FakeRunner();
    sched = new EngineScheduler({ tables, runner, getShards: () => [shard], onTransitions: () => {}, onError: () => {} });
  });
  afterEach(async () => {
    runner.finishAll();
    await sched.stop();
    vi.useRealTimers();
  });

  it('evaluates the rule that asked at once, alone', () => {
    sched.requestRuleEvaluation('a', slots[42]);
    expect(runner.started).toHaveLength(1);
    expect(Array.from(runner.started[0].slots)).toEqual([slots[42]]);
    expect(sched.stats().earlyEvaluations).toBe(1);
  });

  it('then evaluates the whole tenant after the 250 ms gap; rules asking meanwhile are in it', async () => {
    sched.requestRuleEvaluation('a', slots[1]);
    sched.requestRuleEvaluation('a', slots[2]); // the shard is busy: covered by the tenant's task
    runner.finishAll();
    await vi.advanceTimersByTimeAsync(249);
    expect(runner.started).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runner.started).toHaveLength(2);
    expect(runner.started[1].slots).toHaveLength(100);
    runner.finishAll();
    // Nothing more is pending: the whole-tenant task asks for no follow-up of its own.
    await vi.advanceTimersByTimeAsync(1000);
    expect(runner.started).toHaveLength(2);
    // Rules asking together within the gap are evaluated together first.
    sched.requestRuleEvaluation('a', slots[5]);
    sched.requestRuleEvaluation('a', slots[6]);
    sched.requestRuleEvaluation('a', slots[5]);
    expect(runner.started).toHaveLength(3);
    expect(Array.from(runner.started[2].slots)).toEqual([slots[5]]);
  });

  it('drops a slot the shard no longer holds (freed, maybe another shard\'s now)', async () => {
    sched.requestRuleEvaluation('a', 9999);
    expect(runner.started).toHaveLength(0);
    shard.slots = slots.slice(1);
    sched.requestRuleEvaluation('a', slots[0]);
    sched.requestRuleEvaluation('a', slots[7]);
    expect(runner.started).toHaveLength(1);
    expect(Array.from(runner.started[0].slots)).toEqual([slots[7]]);
  });
});
