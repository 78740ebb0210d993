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
import { ruleI32Base, ruleSegment, windowIndex, windowSegment } from '../../src/shm/slots.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';
import { FAST_PATH_RUN, resolveTier1Config } from '../../src/tiers/tier1/config.js';
import { DEFAULT_LATER_TIERS } from '../../src/tiers/config.js';
import { EngineScheduler } from '../../src/engine/scheduler.js';
import { BURST_MS } from '../../src/engine/worker/bursts.js';
import type { EvaluateResult } from '../../src/engine/protocol.js';
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
    const tables = new SharedTables();
    const now = Date.now();
    const slots: number[] = [];
    for (let r = 0; r < 3000; r++) {
      const slot = tables.allocRule(0.9, false);
      const w = tables.allocWindow();
      ruleSegment(tables.ruleSegs, slot).ruleI32[ruleI32Base(slot) + RI_WINDOW_PRIMARY] = w;
      for (let i = 0; i < 5; i++) recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), now - i, OutcomeKind.Success, 100);
      slots.push(slot);
    }
    const results: EvaluateResult[] = [];
    const config = { tier1: resolveTier1Config(), predictionEnabled: false, banditEnabled: false, ...DEFAULT_LATER_TIERS };
    const sched = new EngineScheduler({
      tables,
      getShards: () => [{ shardId: 'big', slots, config }],
      onTransitions: () => {},
      onEvaluated: (_id, r) => results.push(r),
      workerFile: WORKER,
      maxThreads: 1,
    });
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
