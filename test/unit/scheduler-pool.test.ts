/**
 * EngineScheduler on a real piscina pool running the compiled worker (dist/src/engine/worker/entry.js,
 * built by `npm test`'s pretest, or `npx tsc -p tsconfig.json`).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  PF_STATUS,
  PROC_F64_STRIDE,
  PROCS_PER_RULE,
  ProcessorStatus,
  RI_RUN_PRIMARY,
  RI_WINDOW_PRIMARY,
  RI_WINDOW_SECONDARY,
  RULE_I32_STRIDE,
} from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';
import { FAST_PATH_RUN, resolveTier1Config } from '../../src/tiers/tier1/config.js';
import { DEFAULT_LATER_TIERS } from '../../src/tiers/config.js';
import { EngineScheduler, type TaskRunner } from '../../src/engine/scheduler.js';
import { createPool } from '../../src/engine/worker-pool.js';
import { judgedRules } from '../helpers/judged-rules.js';
import { BURST_MS } from '../../src/engine/worker/bursts.js';
import { YIELD_STARTED, type EvaluateResult, type EvaluateTask } from '../../src/engine/protocol.js';
import type { Transition } from '../../src/engine/transitions.js';

const WORKER = fileURLToPath(new URL('../../dist/src/engine/worker/entry.js', import.meta.url));
const LOADED_JS = new URL('../../dist/src/engine/worker/loaded.js', import.meta.url).href;

const dir = mkdtempSync(join(tmpdir(), 'pool-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A pool entry whose load takes `loadMs` (a thread loading on a saturated machine), that
 * writes `marker` when its load is complete and then, if `announce`, says so as entry.ts does.
 */
function slowEntry(name: string, loadMs: number, announce: boolean): { entry: string; marker: string } {
  const entry = join(dir, `${name}.mjs`);
  const marker = join(dir, `${name}.loaded`);
  writeFileSync(
    entry,
    [
      `import { writeFileSync } from 'node:fs';`,
      `import { announceThreadLoaded } from ${JSON.stringify(LOADED_JS)};`,
      `const end = Date.now() + ${loadMs};`,
      `while (Date.now() < end);`,
      `writeFileSync(${JSON.stringify(marker)}, 'loaded');`,
      announce ? 'announceThreadLoaded();' : '',
      `export default () => ({ transitions: [], evaluatedSlots: 0, durationMs: 0 });`,
    ].join('\n'),
  );
  return { entry, marker };
}

/** A tenant 'big' of `rules` rules, each with outcomes to judge, on a real pool of one thread a set; the results its tasks return. */
function bigShard(rules = 3000, opts: { earlyGapMs?: number; runner?: TaskRunner } = {}): { slots: number[]; results: EvaluateResult[]; sched: EngineScheduler } {
  const tables = new SharedTables();
  const slots = judgedRules(tables, rules, Date.now());
  const results: EvaluateResult[] = [];
  const config = { tier1: resolveTier1Config(), predictionEnabled: false, banditEnabled: false, ...DEFAULT_LATER_TIERS };
  const sched = new EngineScheduler({
    tables,
    getShards: () => [{ shardId: 'big', slots, config }],
    onTransitions: () => {},
    onEvaluated: (_id, r) => results.push(r),
    workerFile: WORKER,
    maxThreads: 1,
    ...opts,
  });
  return { slots, results, sched };
}

describe('EngineScheduler with the piscina pool', () => {
  it('evaluates a shard on a worker thread and returns the failover', async () => {
    expect(existsSync(WORKER), `${WORKER} missing: run npx tsc -p tsconfig.json`).toBe(true);
    const tables = new SharedTables();
    const now = Date.now();
    const slot = tables.allocRule(0.9, false);
    const wp = tables.allocWindow();
    const ws = tables.allocWindow();
    const ruleI32 = tables.ruleSegs[0].ruleI32;
    ruleI32[slot * RULE_I32_STRIDE + RI_WINDOW_PRIMARY] = wp;
    ruleI32[slot * RULE_I32_STRIDE + RI_WINDOW_SECONDARY] = ws;
    // The front thread's view of a hard outage: a run of technical failures.
    for (let i = 0; i < FAST_PATH_RUN; i++) {
      recordOutcome(tables.windowSegs[0], wp, now, OutcomeKind.Timeout, 30_000);
      Atomics.add(ruleI32, slot * RULE_I32_STRIDE + RI_RUN_PRIMARY, 1);
    }

    let resolveTransitions!: (t: Transition[]) => void;
    const got = new Promise<Transition[]>((r) => (resolveTransitions = r));
    const results: EvaluateResult[] = [];
    const config = { tier1: resolveTier1Config(), predictionEnabled: false, banditEnabled: false, ...DEFAULT_LATER_TIERS };
    const sched = new EngineScheduler({
      tables,
      getShards: () => [{ shardId: 'tenant-a', slots: [slot], config }],
      onTransitions: (_id, ts) => resolveTransitions(ts),
      onEvaluated: (_id, r) => results.push(r),
      workerFile: WORKER,
      maxThreads: 1,
    });
    try {
      sched.requestEvaluation('tenant-a');
      const ts = await got;
      expect(ts).toMatchObject([{ slot, processor: 0, event: 'failover.triggered', from: 'healthy', to: 'failed_over' }]);
      await sched.whenIdle('tenant-a');
      expect(results).toMatchObject([{ evaluatedSlots: 1 }]);
      // The worker wrote the status into shared memory.
      expect(tables.ruleSegs[0].procF64[slot * PROCS_PER_RULE * PROC_F64_STRIDE + PF_STATUS]).toBe(ProcessorStatus.FailedOver);
      expect(sched.stats()).toMatchObject({ earlyEvaluations: 1, tasksFailed: 0 });
    } finally {
      await sched.stop();
    }
  });

  it('runs a long task in short bursts with sleeps between them', async () => {
    const { results, sched } = bigShard();
    try {
      await sched.runCycle();
      expect(results).toHaveLength(1);
      expect(results[0].evaluatedSlots).toBe(3000);
      // Well over 1 ms of work (~2-20 µs a rule), at most BURST_MS of it between two sleeps
      // (the bound itself: bursts.test.ts).
      expect(results[0].pauses).toBeGreaterThanOrEqual(Math.floor(3000 * 0.002 / BURST_MS / 2));
    } finally {
      await sched.stop();
    }
  });
  it('gives a shard whose cycle task has not begun to an early evaluation at once, on its own threads', async () => {
    const { slots, results, sched } = bigShard(3000, { earlyGapMs: 50 });
    try {
      const cycle = sched.runCycle();
      // Asked while the cycle's task holds the shard, handed to the pool but not begun.
      sched.requestRuleEvaluation('big', slots[0]);
      await cycle;
      for (let i = 0; i < 500 && results.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(results[0]).toMatchObject({ evaluatedSlots: 1 }); // the asking rule, at once
      expect(results[1]).toMatchObject({ evaluatedSlots: 3000 }); // then the whole tenant, after the gap
      expect(results.some((r) => r.yielded === true)).toBe(false); // the cycle task's empty return is not delivered
      expect(sched.stats()).toMatchObject({ cyclesRun: 1, earlyEvaluations: 2, tasksFailed: 0 });
    } finally {
      await sched.stop();
    }
  });

  it('stops a running cycle task at its next pause point when an early evaluation of its shard is asked for', async () => {
    const pool = createPool({ workerFile: WORKER, maxThreads: 1 });
    const handed: EvaluateTask[] = [];
    const runner: TaskRunner = { run: (t) => (handed.push(t), pool.run(t)), destroy: () => pool.destroy(), routineThreads: pool.routineThreads };
    const { slots, results, sched } = bigShard(30_000, { earlyGapMs: 50, runner });
    try {
      const cycle = sched.runCycle();
      const cell = handed[0].yieldCell!;
      for (let i = 0; i < 5000 && Atomics.load(cell, 0) !== YIELD_STARTED; i++) await new Promise((r) => setTimeout(r, 1));
      expect(Atomics.load(cell, 0)).toBe(YIELD_STARTED); // 30,000 rules take far longer than this wait's steps
      sched.requestRuleEvaluation('big', slots[0]);
      await cycle;
      for (let i = 0; i < 500 && results.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(results[0].yielded).toBe(true);
      expect(results[0].evaluatedSlots).toBeGreaterThan(0);
      expect(results[0].evaluatedSlots).toBeLessThan(30_000);
      expect(results[1]).toMatchObject({ evaluatedSlots: 1 });
      expect(results[1].yielded).toBeUndefined();
    } finally {
      await sched.stop();
    }
  });
});

describe('stopping the pool', () => {
  it('waits for a thread still loading its entry before ending it (ending it mid-load can abort the process)', async () => {
    expect(existsSync(fileURLToPath(LOADED_JS)), 'build first: npx tsc -p tsconfig.json').toBe(true);
    const { entry, marker } = slowEntry('slow', 400, true);
    const sched = new EngineScheduler({ tables: new SharedTables(), getShards: () => [], onTransitions: () => {}, workerFile: entry, maxThreads: 1 });
    await sched.stop(); // at once: the thread has just begun loading
    expect(existsSync(marker)).toBe(true);
  });

  it('still ends, after threadLoadWaitMs, a pool whose thread never says it has loaded', async () => {
    const { entry, marker } = slowEntry('silent', 0, false);
    const sched = new EngineScheduler({ tables: new SharedTables(), getShards: () => [], onTransitions: () => {}, workerFile: entry, maxThreads: 1, threadLoadWaitMs: 300 });
    const t0 = Date.now();
    await sched.stop();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(existsSync(marker)).toBe(true);
  });
});
