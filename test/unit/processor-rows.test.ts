/**
 * A rule that never had an outcome keeps its processor rows unread as well as unwritten
 * (src/shm/processor-rows.ts): on kernels that back a read of an untouched page with memory,
 * one read per rule by the cycle or a scrape made ~100 MB resident at 100,000 rules. Each
 * reader that goes over every rule is run here with the idle rule's rows behind a proxy that
 * records every access, and must not touch them; the same readers do read a rule whose rows
 * were written (the proxy would see it, so these tests can fail).
 */
import { describe, expect, it } from 'vitest';
import { snapshotRule } from '../../src/engine/checkpoint.js';
import { ruleHealth } from '../../src/engine/health-view.js';
import type { TenantEngineConfig } from '../../src/engine/protocol.js';
import { tablesIdOf } from '../../src/engine/protocol.js';
import { engineConfigFor } from '../../src/engine/tenant-engine-config.js';
import { evaluateWith } from '../../src/engine/worker/entry.js';
import { STAGES } from '../../src/engine/worker/stages.js';
import { viewsFor } from '../../src/engine/worker/views.js';
import { readRuleEntry, applyRuleEntry } from '../../src/cluster/table-rows.js';
import { newRuleEntry } from '../../src/cluster/table-codec.js';
import { ruleFamilyChunks, type RenderTenant } from '../../src/metrics/rule-families.js';
import { carryEngineState } from '../../src/rules/carry-state.js';
import { toRecord } from '../../src/rules/rule-service.js';
import { ManualCommand, PF_LAST_EVAL_MS, PF_STATUS, PROC_F64_STRIDE, PROCS_PER_RULE, ProcessorStatus, RI_COMMAND, RI_GENERATION, RI_WINDOW_PRIMARY, type RuleSegmentViews } from '../../src/shm/layout.js';
import { markRowsInUse, processorStatus, rowsInUse } from '../../src/shm/processor-rows.js';
import { processorRowOffset, ruleI32Base, ruleSegment, windowIndex, windowSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';
import type { LiveRule } from '../../src/tenants/tenant.js';

const NOW = 1_750_000_000_000;
const config: TenantEngineConfig = engineConfigFor({ tier1Overrides: {}, banditOverrides: {}, foresightOverrides: {}, settings: { predictionEnabled: true, banditEnabled: true } });

/** Segment views whose processor rows record every access to rule `slot`'s part of them. */
function watched(seg: RuleSegmentViews, slot: number, touched: string[]): RuleSegmentViews {
  const lo = processorRowOffset(slot, 0);
  const hi = lo + PROCS_PER_RULE * PROC_F64_STRIDE;
  const inside = (k: string | symbol) => typeof k === 'string' && /^\d+$/.test(k) && Number(k) >= lo && Number(k) < hi;
  const overlaps = (from: number, to: number) => from < hi && to > lo;
  const target = seg.procF64;
  const procF64 = new Proxy(target, {
    get(t, k) {
      if (inside(k)) touched.push(`read ${Number(k) - lo}`);
      if (k === 'subarray' || k === 'fill' || k === 'set') {
        return (...args: number[]) => {
          const [from, to] = k === 'set' ? [args[1] ?? 0, (args[1] ?? 0) + (args[0] as unknown as ArrayLike<number>).length] : k === 'fill' ? [args[1] ?? 0, args[2] ?? t.length] : [args[0] ?? 0, args[1] ?? t.length];
          if (overlaps(from, to)) touched.push(`${String(k)} ${from - lo}..${to - lo}`);
          return (t[k] as (...a: unknown[]) => unknown).apply(t, args);
        };
      }
      const v = Reflect.get(t, k, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
    set(t, k, v) {
      if (inside(k)) touched.push(`write ${Number(k) - lo}`);
      return Reflect.set(t, k, v, t);
    },
  });
  return { ...seg, procF64 };
}

function live(slot: number, id: string): LiveRule {
  const record = toRecord({ rule_id: id, attributes: ['US', 'USD', 'card'], primary_id: 'a', secondary_id: 'b' }, new Date(NOW));
  return { record, slot, runStartedAt: [0, 0], override: null, cache: null };
}

/** One idle rule and one that has had an outcome on its primary (a window, as the outcome path takes it). */
function tablesWithIdleAndBusy() {
  const tables = new SharedTables();
  const idle = tables.allocRule(0.9, false);
  const busy = tables.allocRule(0.9, false);
  const w = tables.windowOf(busy, 0, false);
  recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), NOW - 1000, OutcomeKind.Success, 120);
  return { tables, idle, busy };
}

function renderTenant(slots: number[]): RenderTenant {
  return {
    predictionEnabled: true,
    rules: {
      tenantId: 'default',
      slots: Int32Array.from(slots),
      generations: new Int32Array(slots.length),
      ruleIds: slots.map((s) => `r${s}`),
      processorIds: ['a', 'b'],
      primary: Int32Array.from(slots, () => 0),
      secondary: Int32Array.from(slots, () => 1),
    },
  };
}

describe('an idle rule’s processor rows', () => {
  it('are neither read nor written by an evaluation cycle, which does read and write a rule with outcomes', () => {
    const { tables, idle, busy } = tablesWithIdleAndBusy();
    const tablesId = tablesIdOf(tables);
    const views = viewsFor(tablesId, tables.segments());
    const idleTouched: string[] = [];
    views.rules[0] = watched(views.rules[0], idle, idleTouched);
    const busyTouched: string[] = [];
    views.rules[0] = watched(views.rules[0], busy, busyTouched);
    const r = evaluateWith({ tablesId, segments: tables.segments(), slots: Int32Array.of(idle, busy), nowMs: NOW, config }, STAGES);
    expect(r.evaluatedSlots).toBe(2);
    expect(idleTouched).toEqual([]);
    expect(busyTouched.length).toBeGreaterThan(0);
    expect(rowsInUse(ruleSegment(tables.ruleSegs, idle), idle)).toBe(false);
    expect(rowsInUse(ruleSegment(tables.ruleSegs, busy), busy)).toBe(true);
  });

  it('are written once an operator command reaches the rule, and marked in use', () => {
    const { tables, idle } = tablesWithIdleAndBusy();
    const seg = ruleSegment(tables.ruleSegs, idle);
    seg.ruleI32[ruleI32Base(idle) + RI_COMMAND] = ManualCommand.Failover;
    const tablesId = tablesIdOf(tables);
    evaluateWith({ tablesId, segments: tables.segments(), slots: Int32Array.of(idle), nowMs: NOW, config }, STAGES);
    expect(rowsInUse(seg, idle)).toBe(true);
    expect(processorStatus(tables.ruleSegs, idle, 0)).toBe(ProcessorStatus.FailedOver);
  });

  it('are not read by a /metrics/ rendering, which still shows the prior for them and reads a rule with state', () => {
    const { tables, idle, busy } = tablesWithIdleAndBusy();
    const busySeg = ruleSegment(tables.ruleSegs, busy);
    markRowsInUse(busySeg, busy);
    busySeg.procF64[processorRowOffset(busy, 0) + PF_STATUS] = ProcessorStatus.Degraded;
    const idleTouched: string[] = [];
    const busyTouched: string[] = [];
    const segs = [watched(watched(tables.ruleSegs[0], idle, idleTouched), busy, busyTouched)];
    const tenant = renderTenant([idle, busy]);
    tenant.rules.generations = Int32Array.from([idle, busy], (s) => segs[0].ruleI32[ruleI32Base(s) + RI_GENERATION]);
    const text = [...ruleFamilyChunks(segs, [tenant])].join('');
    expect(idleTouched).toEqual([]);
    expect(busyTouched.length).toBeGreaterThan(0);
    expect(text).toContain(`service_processor_failure_probability{rule_id="r${idle}",processor_id="a"}`);
    expect(text).toContain(`service_processor_health_status{rule_id="r${busy}",processor_id="a"} 0.5`);
    expect(text).not.toContain(`service_processor_health_status{rule_id="r${idle}"`);
  });

  it('are not read by the health view, the status helpers, a checkpoint or the cluster table, which answer what zero rows hold', () => {
    const { tables, idle } = tablesWithIdleAndBusy();
    const touched: string[] = [];
    tables.ruleSegs[0] = watched(tables.ruleSegs[0], idle, touched);
    const health = ruleHealth(tables, live(idle, 'idle'), true);
    expect(health.primary.status).toBe('healthy');
    expect(health.primary.sample_count).toBe(0);
    expect(health.primary.bandit_weight).toBeNull();
    expect(processorStatus(tables.ruleSegs, idle, 1)).toBe(ProcessorStatus.Healthy);
    const snap = snapshotRule(tables, idle);
    expect(Array.from(snap.subarray(5)).every((v) => v === 0)).toBe(true);
    const entry = readRuleEntry(tables, idle, 1, newRuleEntry());
    expect(entry.procs.map((p) => [p.status, p.lastEvalMs, p.t1, p.bandit])).toEqual([
      [0, 0, null, null],
      [0, 0, null, null],
    ]);
    expect(touched).toEqual([]);
  });

  it('stay unwritten on a cluster follower while the leader never evaluated the rule, and are written once it has', () => {
    const leader = tablesWithIdleAndBusy();
    const follower = new SharedTables();
    const slot = follower.allocRule(0.9, false);
    const fseg = ruleSegment(follower.ruleSegs, slot);
    const touched: string[] = [];
    follower.ruleSegs[0] = watched(fseg, slot, touched);
    applyRuleEntry(follower, slot, readRuleEntry(leader.tables, leader.idle, 1, newRuleEntry()));
    expect(touched).toEqual([]);
    expect(rowsInUse(fseg, slot)).toBe(false);

    const lseg = ruleSegment(leader.tables.ruleSegs, leader.idle);
    markRowsInUse(lseg, leader.idle);
    lseg.procF64[processorRowOffset(leader.idle, 0) + PF_STATUS] = ProcessorStatus.Degraded;
    lseg.procF64[processorRowOffset(leader.idle, 0) + PF_LAST_EVAL_MS] = NOW;
    applyRuleEntry(follower, slot, readRuleEntry(leader.tables, leader.idle, 1, newRuleEntry()));
    expect(rowsInUse(fseg, slot)).toBe(true);
    expect(processorStatus(follower.ruleSegs, slot, 0)).toBe(ProcessorStatus.Degraded);
  });

  it('are not copied by a PATCH (the new slot stays unused), while written rows are carried and marked', () => {
    const tables = new SharedTables();
    const a = tables.allocRule(0.9, false);
    const b = tables.allocRule(0.9, false);
    const touched: string[] = [];
    tables.ruleSegs[0] = watched(tables.ruleSegs[0], b, touched);
    carryEngineState(tables, live(a, 'r'), live(b, 'r'));
    expect(touched).toEqual([]);
    expect(rowsInUse(ruleSegment(tables.ruleSegs, b), b)).toBe(false);

    const c = tables.allocRule(0.9, false);
    const seg = ruleSegment(tables.ruleSegs, a);
    markRowsInUse(seg, a);
    seg.procF64[processorRowOffset(a, 0) + PF_STATUS] = ProcessorStatus.FailedOver;
    carryEngineState(tables, live(a, 'r'), live(c, 'r'));
    expect(rowsInUse(seg, c)).toBe(true);
    expect(processorStatus(tables.ruleSegs, c, 0)).toBe(ProcessorStatus.FailedOver);
  });

  it('are wiped and marked unused when a slot whose rows were written is reused, and left alone when they were not', () => {
    const tables = new SharedTables();
    const a = tables.allocRule(0.9, false);
    const seg = ruleSegment(tables.ruleSegs, a);
    markRowsInUse(seg, a);
    seg.procF64[processorRowOffset(a, 1) + PF_STATUS] = ProcessorStatus.Degraded;
    seg.ruleI32[ruleI32Base(a) + RI_WINDOW_PRIMARY] = -1;
    tables.freeRule(a);
    expect(tables.allocRule(0.9, false)).toBe(a);
    expect(rowsInUse(seg, a)).toBe(false);
    expect(seg.procF64[processorRowOffset(a, 1) + PF_STATUS]).toBe(0);

    const b = tables.allocRule(0.9, false);
    tables.freeRule(b);
    const touched: string[] = [];
    tables.ruleSegs[0] = watched(tables.ruleSegs[0], b, touched);
    expect(tables.allocRule(0.9, false)).toBe(b);
    expect(touched).toEqual([]);
  });
});
