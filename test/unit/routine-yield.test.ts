/**
 * A routine (cycle) task stops at its next pause point once the scheduler asks it to yield
 * (protocol.ts, yieldCell; worker/entry.ts), and returns what it has judged: the worker's loop,
 * run in-process through evaluateWith with a stage that asks mid-walk.
 */
import { describe, expect, it } from 'vitest';
import { SharedTables } from '../../src/shm/tables.js';
import { resolveTier1Config } from '../../src/tiers/tier1/config.js';
import { DEFAULT_LATER_TIERS } from '../../src/tiers/config.js';
import { evaluateWith } from '../../src/engine/worker/entry.js';
import { tablesIdOf, YIELD_ASKED, type EvaluateTask } from '../../src/engine/protocol.js';
import type { RuleStage } from '../../src/tiers/stage.js';
import { judgedRules } from '../helpers/judged-rules.js';

const config = { tier1: resolveTier1Config(), predictionEnabled: false, banditEnabled: false, ...DEFAULT_LATER_TIERS };

/** `judged` rules with outcomes (each judged by a task), then `idle` rules without any. */
function shard(judged: number, idle = 0): { tables: SharedTables; slots: number[]; now: number } {
  const tables = new SharedTables();
  const now = Date.now();
  const slots = judgedRules(tables, judged, now);
  for (let r = 0; r < idle; r++) slots.push(tables.allocRule(0.9, false));
  return { tables, slots, now };
}

const task = (s: ReturnType<typeof shard>, extra: Partial<EvaluateTask> = {}): EvaluateTask => ({
  tablesId: tablesIdOf(s.tables),
  segments: s.tables.segments(),
  slots: s.slots,
  nowMs: s.now,
  config,
  ...extra,
});

const cell = () => new Int32Array(new SharedArrayBuffer(4));

/** A stage that asks `yieldCell` to yield as it judges its `at`-th rule. */
function askingAt(at: number, yieldCell: Int32Array): RuleStage {
  let seen = 0;
  return {
    name: 'asks-to-yield',
    apply() {
      if (++seen === at) Atomics.store(yieldCell, 0, YIELD_ASKED);
    },
  };
}

describe('a routine task asked to yield', () => {
  it('stops after the rule it was judging when asked, and says so', () => {
    const s = shard(200);
    const yieldCell = cell();
    const r = evaluateWith(task(s, { yieldCell }), [askingAt(10, yieldCell)]);
    expect(r.yielded).toBe(true);
    expect(r.evaluatedSlots).toBe(10);
  });

  it('judges nothing when asked before it starts (it waited in the queue)', () => {
    const s = shard(50);
    const yieldCell = cell();
    Atomics.store(yieldCell, 0, YIELD_ASKED);
    const r = evaluateWith(task(s, { yieldCell }), []);
    expect(r).toMatchObject({ yielded: true, evaluatedSlots: 0, transitions: [] });
    const h = evaluateWith(task(s, { yieldCell, healthOnly: true }), []);
    expect(h).toMatchObject({ yielded: true, evaluatedSlots: 0, healthOnly: true });
  });

  it('runs to the end when not asked, or when asked after its last rule', () => {
    const s = shard(200);
    const r = evaluateWith(task(s, { yieldCell: cell() }), []);
    expect(r.yielded).toBeUndefined();
    expect(r.evaluatedSlots).toBe(200);
    const lastCell = cell();
    const last = evaluateWith(task(s, { yieldCell: lastCell }), [askingAt(200, lastCell)]);
    expect(last.yielded).toBeUndefined();
    expect(last.evaluatedSlots).toBe(200);
    const early = evaluateWith(task(s), []); // an early task has no cell
    expect(early.evaluatedSlots).toBe(200);
  });

  it('does not walk on through the rules without traffic after the ask', () => {
    const s = shard(1, 10_000);
    const yieldCell = cell();
    const r = evaluateWith(task(s, { yieldCell }), [askingAt(1, yieldCell)]);
    expect(r).toMatchObject({ yielded: true, evaluatedSlots: 1 });
  });
});
