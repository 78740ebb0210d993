/**
 * What an evaluation cycle costs for a rule with nothing to judge (src/engine/worker/rule.ts,
 * entry.ts, bursts.ts). At 100,000 rules with traffic on a few hundred, idle rules are nearly
 * all of a cycle's work, done on a pool thread that shares the front thread's core: the rule is
 * told idle from its Int32 fields alone (its Float64 fields are not read), and the pool thread
 * reads the clock after every 64th idle rule instead of after each (the reads were half of the
 * cycle's CPU; docs/performance-log.md, thirty-eighth pass). A cluster follower's health refresh
 * leaves a rule without a window as it is too, its seqlock included.
 */
import { describe, expect, it } from 'vitest';
import { tablesIdOf, type TenantEngineConfig } from '../../src/engine/protocol.js';
import { engineConfigFor } from '../../src/engine/tenant-engine-config.js';
import { Bursts, TRIVIAL_PIECES_PER_CHECK } from '../../src/engine/worker/bursts.js';
import { evaluateRule, refreshHealth, RuleVisit } from '../../src/engine/worker/rule.js';
import { STAGES } from '../../src/engine/worker/stages.js';
import { viewsFor } from '../../src/engine/worker/views.js';
import { ManualCommand, RI_COMMAND, RI_HEALTH_SEQ, RULE_F64_STRIDE, RULE_I32_STRIDE, type RuleSegmentViews } from '../../src/shm/layout.js';
import { ruleF64Base, ruleI32Base, ruleIndex, ruleSegment, windowIndex, windowSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import { OutcomeKind, recordOutcome } from '../../src/shm/window.js';
import type { Transition } from '../../src/engine/transitions.js';

const NOW = 1_750_000_000_000;
const config: TenantEngineConfig = engineConfigFor({ tier1Overrides: {}, banditOverrides: {}, foresightOverrides: {}, settings: { predictionEnabled: true, banditEnabled: true } });

/** Segment views whose rule Float64 fields record every read of rule `slot`'s part of them. */
function watchedF64(seg: RuleSegmentViews, slot: number, reads: number[]): RuleSegmentViews {
  const lo = ruleF64Base(slot);
  const hi = lo + RULE_F64_STRIDE;
  const ruleF64 = new Proxy(seg.ruleF64, {
    get(t, k) {
      if (typeof k === 'string' && /^\d+$/.test(k) && Number(k) >= lo && Number(k) < hi) reads.push(Number(k) - lo);
      const v = Reflect.get(t, k, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
  return { ...seg, ruleF64 };
}

function tables3() {
  const tables = new SharedTables();
  const idle = tables.allocRule(0.9, false);
  const busy = tables.allocRule(0.9, false);
  const commanded = tables.allocRule(0.9, false);
  const freed = tables.allocRule(0.9, false);
  const w = tables.windowOf(busy, 0, false);
  recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), NOW - 1000, OutcomeKind.Success, 120);
  ruleSegment(tables.ruleSegs, commanded).ruleI32[ruleI32Base(commanded) + RI_COMMAND] = ManualCommand.Failover;
  tables.freeRule(freed);
  return { tables, idle, busy, commanded, freed };
}

describe('a cycle over a rule with nothing to judge', () => {
  it('tells it idle without reading its Float64 fields, and judges a rule with outcomes or an operator command', () => {
    const { tables, idle, busy, commanded, freed } = tables3();
    const views = viewsFor(tablesIdOf(tables), tables.segments());
    const idleReads: number[] = [];
    const busyReads: number[] = [];
    views.rules[0] = watchedF64(watchedF64(views.rules[0], idle, idleReads), busy, busyReads);
    const transitions: Transition[] = [];
    expect(evaluateRule(views, idle, NOW, config, STAGES, transitions)).toBe(RuleVisit.Idle);
    expect(idleReads).toEqual([]);
    expect(evaluateRule(views, busy, NOW, config, STAGES, transitions)).toBe(RuleVisit.Judged);
    expect(busyReads.length).toBeGreaterThan(0);
    expect(evaluateRule(views, commanded, NOW, config, STAGES, transitions)).toBe(RuleVisit.Judged);
    expect(transitions.some((t) => t.slot === commanded && t.to === 'failed_over')).toBe(true);
    expect(evaluateRule(views, freed, NOW, config, STAGES, transitions)).toBe(RuleVisit.Empty);
  });
});

describe('a cluster follower’s health refresh of a rule without a window', () => {
  it('leaves it as it is, its health seqlock too, and refreshes a rule with one', () => {
    const { tables, idle, busy, freed } = tables3();
    const views = viewsFor(tablesIdOf(tables), tables.segments());
    const seq = (slot: number) => ruleSegment(tables.ruleSegs, slot).ruleI32[ruleIndex(slot) * RULE_I32_STRIDE + RI_HEALTH_SEQ];
    const idleSeq = seq(idle);
    const busySeq = seq(busy);
    expect(refreshHealth(views, idle, NOW)).toBe(RuleVisit.Idle);
    expect(seq(idle)).toBe(idleSeq);
    expect(refreshHealth(views, busy, NOW)).toBe(RuleVisit.Judged);
    expect(seq(busy)).toBe(busySeq + 2);
    expect(refreshHealth(views, freed, NOW)).toBe(RuleVisit.Empty);
  });
});

describe('Bursts.pauseAfterTrivial', () => {
  it('looks at the clock only at every TRIVIAL_PIECES_PER_CHECK-th trivial piece in a row', () => {
    const b = new Bursts(0, 0.001); // every look at the clock finds the budget spent, and sleeps
    for (let i = 1; i < TRIVIAL_PIECES_PER_CHECK; i++) expect(b.pauseAfterTrivial()).toBe(false);
    expect(b.pauseAfterTrivial()).toBe(true);
    expect(b.pauses).toBe(1);
    // A piece of real work (pause()) starts the count again.
    for (let i = 1; i < TRIVIAL_PIECES_PER_CHECK / 2; i++) b.pauseAfterTrivial();
    expect(b.pause()).toBe(true);
    for (let i = 1; i < TRIVIAL_PIECES_PER_CHECK; i++) expect(b.pauseAfterTrivial()).toBe(false);
    expect(b.pauseAfterTrivial()).toBe(true);
    expect(b.pauses).toBe(3);
  });
});
