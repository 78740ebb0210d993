/**
 * The evaluation threads' JIT warm-up (src/engine/worker/warm-up.ts): its simulated traffic
 * drives the rules through failover and recovery (the paths it exists to compile), it drops its
 * private tables' views when done, and it leaves nothing behind that changes a real evaluation:
 * the same tables evaluated before and after a warm-up give the same transitions and rows.
 */
import { describe, expect, it } from 'vitest';
import evaluate, { evaluateWith } from '../../src/engine/worker/entry.js';
import { createAutopilotStage, type AutopilotObservation } from '../../src/tiers/autopilot/stage.js';
import { foresightStage } from '../../src/tiers/foresight/stage.js';
import { forgetViews, viewsFor } from '../../src/engine/worker/views.js';
import { WARM_UP_CYCLES, WARM_UP_QUIET_CYCLES, WARM_UP_RULES, WARM_UP_TABLES_ID, warmUp } from '../../src/engine/worker/warm-up.js';
import type { EvaluateResult, EvaluateTask, TenantEngineConfig } from '../../src/engine/protocol.js';
import { RI_RUN_PRIMARY, RI_WINDOW_PRIMARY, RI_WINDOW_SECONDARY } from '../../src/shm/layout.js';
import { ruleI32Base, ruleSegment, windowIndex, windowSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';
import { engineConfigFor } from '../../src/engine/tenant-engine-config.js';

const config: TenantEngineConfig = engineConfigFor({ tier1Overrides: {}, banditOverrides: {}, foresightOverrides: {}, settings: { predictionEnabled: true, banditEnabled: true } });
const NOW = 1_760_000_000_000;

/** 30 rules with a minute of outcomes; rules 0-9 have a primary failing for its last 20 s. */
function tablesWithTraffic(): { tables: SharedTables; slots: Int32Array } {
  const tables = new SharedTables();
  const slots = new Int32Array(30);
  for (let r = 0; r < slots.length; r++) {
    const slot = (slots[r] = tables.allocRule(0.8, false));
    const seg = ruleSegment(tables.ruleSegs, slot);
    const ib = ruleI32Base(slot);
    seg.ruleI32[ib + RI_WINDOW_PRIMARY] = tables.allocWindow();
    seg.ruleI32[ib + RI_WINDOW_SECONDARY] = tables.allocWindow();
    for (let i = 0; i < 120; i++) {
      const at = NOW - 60_000 + i * 500;
      const failing = r < 10 && at > NOW - 20_000;
      const k = i % 10 === 9 ? 1 : 0;
      const w = seg.ruleI32[ib + (k === 0 ? RI_WINDOW_PRIMARY : RI_WINDOW_SECONDARY)];
      const kind = failing && k === 0 ? OutcomeKind.TechError : i % 17 === 0 ? OutcomeKind.Decline : OutcomeKind.Success;
      recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), at, kind, 100 + (i % 7) * 30);
      if (failing && k === 0) Atomics.add(seg.ruleI32, ib + RI_RUN_PRIMARY, 1);
    }
  }
  return { tables, slots };
}

function evaluateAll(tablesId: number, tables: SharedTables, slots: Int32Array): { result: EvaluateResult; rows: number[] } {
  const task: EvaluateTask = { tablesId, segments: tables.segments(), slots, nowMs: NOW, config };
  const result = evaluate(task);
  // Every processor row and rule row the evaluation wrote, NaN as a value (toEqual treats NaN = NaN).
  const rows = [...tables.ruleSegs[0].procF64, ...tables.ruleSegs[0].ruleI32].concat([...tables.ruleSegs[0].ruleF64]);
  return { result, rows };
}

describe('evaluation thread JIT warm-up', () => {
  it('drives its simulated rules through failover and recovery, then drops its tables', async () => {
    const seen: EvaluateTask[] = [];
    const transitions: EvaluateResult['transitions'] = [];
    const forgotten: number[] = [];
    const report = await warmUp(
      (task) => {
        seen.push(task);
        const r = evaluate(task);
        transitions.push(...r.transitions);
        return r;
      },
      (id) => {
        forgotten.push(id);
        forgetViews(id);
      },
    );
    // The cycles with traffic, then the quiet ones, each evaluating every simulated rule.
    expect(seen).toHaveLength(WARM_UP_CYCLES + WARM_UP_QUIET_CYCLES);
    expect(seen.every((t) => t.tablesId === WARM_UP_TABLES_ID && t.config.banditEnabled && t.config.predictionEnabled)).toBe(true);
    expect(report.evaluations).toBe(WARM_UP_RULES * (WARM_UP_CYCLES + WARM_UP_QUIET_CYCLES));
    // Outages fail processors over and they come back; latency rises degrade them.
    expect(report.transitions).toBe(transitions.length);
    expect(transitions.some((t) => t.to === 'failed_over')).toBe(true);
    expect(transitions.some((t) => t.from === 'failed_over')).toBe(true);
    expect(transitions.some((t) => t.to === 'degraded')).toBe(true);
    // Latency too, once a baseline is ready (the path a busy real rule takes).
    expect(transitions.some((t) => t.to === 'degraded' && t.reason.startsWith('p95 latency'))).toBe(true);
    // Its views are dropped once before the quiet cycles (made again, as for real tables) and at the end.
    expect(forgotten).toEqual([WARM_UP_TABLES_ID, WARM_UP_TABLES_ID]);
    // Its views are gone: the cache starts empty for that id again.
    expect(viewsFor(WARM_UP_TABLES_ID, { rules: [], windows: [] }).rules).toHaveLength(0);
    forgetViews(WARM_UP_TABLES_ID);
  });

  it("runs Tier 3's paths for fresh outcomes and for a quiet cycle (the last allocation reused)", async () => {
    // Tier 3 as the pool runs it, watched: a path the warm-up never takes is compiled under load
    // at the first real cycle that does (a quiet cycle did that before the warm-up had them).
    const seen = { fresh: 0, quiet: 0, reused: 0 };
    const onCycle = (o: Readonly<AutopilotObservation>) => {
      if (o.reused) seen.reused++;
      if (o.successes[0] + o.failures[0] + o.successes[1] + o.failures[1] > 0) seen.fresh++;
      else seen.quiet++;
    };
    await warmUp((task) => evaluateWith(task, [foresightStage, createAutopilotStage({ onCycle })]), forgetViews);
    expect(seen.fresh).toBeGreaterThan(WARM_UP_RULES * 4);
    expect(seen.quiet).toBeGreaterThan(WARM_UP_RULES * 2);
    expect(seen.reused).toBeGreaterThan(WARM_UP_RULES);
  });

  it('changes nothing a real evaluation computes: the same tables give the same result before and after it', async () => {
    const before = tablesWithTraffic();
    const cold = evaluateAll(101, before.tables, before.slots);
    expect(cold.result.transitions.length).toBeGreaterThan(0); // the failing primaries fail over
    await warmUp(evaluate, forgetViews);
    const after = tablesWithTraffic();
    const warm = evaluateAll(102, after.tables, after.slots);
    expect(warm.result.transitions).toEqual(cold.result.transitions);
    expect(warm.result.evaluatedSlots).toBe(cold.result.evaluatedSlots);
    expect(warm.result.followUpAtMs).toBe(cold.result.followUpAtMs);
    expect(warm.rows).toEqual(cold.rows);
  });
});
