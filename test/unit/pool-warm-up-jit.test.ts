/**
 * A pool thread's JIT warm-up (src/engine/worker/warm-up.ts) must leave Tier 3's allocation
 * optimised: with 16 simulated cycles it was not, and V8 compiled allocate, evidenceStrength
 * and waterFill, with Tier 1's judgement beside them (~100 ms of compile jobs on V8's threads,
 * at the front thread's priority), in the first real cycles under load (docs/performance-log.md,
 * *Eleventh pass*). Likewise the shard loop (the entry's evaluateWith): without the quiet
 * cycles at the end of the warm-up it was compiled in the first real cycle, and without its
 * views made a second time, deoptimised by the first task of real tables (*Twelfth pass*).
 *
 * V8 only tells through its natives syntax, in a child process; concurrent recompilation is
 * off there, so a function marked hot is compiled at once and the answer does not depend on
 * how fast V8's helper threads are. The probe loads the built modules (npm test builds first).
 */
import { describe, expect, it } from 'vitest';
import { builtModule as mod, runV8Probe } from '../helpers/v8-probe.js';

const PROBE = `
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const OPTIMIZED = 1 << 4;
const { warmUp } = await import(${mod('engine', 'worker', 'warm-up.js')});
const entry = await import(${mod('engine', 'worker', 'entry.js')});
const { forgetViews } = await import(${mod('engine', 'worker', 'views.js')});
const { allocate, evidenceStrength } = await import(${mod('tiers', 'autopilot', 'allocate.js')});
const { waterFill } = await import(${mod('tiers', 'autopilot', 'waterfill.js')});
const { SharedTables } = await import(${mod('shm', 'tables.js')});
const { engineConfigFor } = await import(${mod('engine', 'tenant-engine-config.js')});
warmUp(entry.default, forgetViews);
// The first task of real tables (their views made then) must not throw the shard loop away.
const tables = new SharedTables();
const slots = Int32Array.from({ length: 100 }, () => tables.allocRule(0.9, false));
const config = engineConfigFor({ tier1Overrides: {}, banditOverrides: {}, foresightOverrides: {}, settings: { predictionEnabled: true, banditEnabled: true } });
entry.default(structuredClone({ tablesId: 1, segments: tables.segments(), slots, nowMs: Date.now(), config }));
const fns = { allocate, evidenceStrength, waterFill, evaluateWith: entry.evaluateWith };
console.log(JSON.stringify(Object.fromEntries(Object.entries(fns).map(([k, f]) => [k, (status(f) & OPTIMIZED) !== 0]))));
`;

describe('pool thread warm-up', () => {
  it("leaves Tier 3's allocation and the shard loop optimised", () => {
    const out = runV8Probe<Record<string, boolean>>(PROBE, ['--allow-natives-syntax', '--no-concurrent-recompilation']);
    expect(out).toEqual({ allocate: true, evidenceStrength: true, waterFill: true, evaluateWith: true });
  });
});
