/**
 * src/tiers/foresight/features.ts's computeFeatures, optimised on a pool thread during the JIT
 * warm-up, must stay optimised at the first real evaluation. Real traffic fills the window's
 * current second, which the warm-up's evaluations may not: there the slope's abscissa was
 * `-age`, minus zero for the current second, and the accumulators' fields, until then small
 * integers, turned into doubles. V8 answered with six deoptimisations on the pool thread at the
 * first evaluation under load (computeFeatures "minus zero", add "not a Smi", errMean, errSd,
 * slopePerMin and resetAcc "wrong map") and recompiled them cycles later on its own threads, at
 * the front thread's priority (docs/performance-log.md, *Tenth pass*).
 *
 * V8 only tells through its natives syntax, switched on in a child process before the probe
 * is compiled; the probe loads the built modules (npm test builds first).
 */
import { describe, expect, it } from 'vitest';
import { builtModule as mod, runV8Probe } from '../helpers/v8-probe.js';

const PROBE = `
import v8 from 'node:v8';
v8.setFlagsFromString('--allow-natives-syntax');
const { computeFeatures, N_FEATURES } = await import(${mod('tiers', 'foresight', 'features.js')});
const { SharedTables } = await import(${mod('shm', 'tables.js')});
const { WINDOW_MASK, WINDOW_SHIFT, PROC_F64_STRIDE } = await import(${mod('shm', 'layout.js')});
const { recordOutcome } = await import(${mod('shm', 'window.js')});
const SUCCESS = 0, TECH_ERROR = 2; // OutcomeKind (a const enum: not in the built module)
const prepare = new Function('f', '%PrepareFunctionForOptimization(f)');
const optimizeNext = new Function('f', '%OptimizeFunctionOnNextCall(f)');
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const OPTIMIZED = 1 << 4;
const T0 = 1_700_000_000_000;
const tables = new SharedTables();
const w = tables.allocWindow();
const seg = tables.windowSegs[w >> WINDOW_SHIFT];
const row = new Float64Array(PROC_F64_STRIDE);
const out = new Float64Array(N_FEATURES);
const features = (t) => computeFeatures(seg, w & WINDOW_MASK, T0 + t, row, 0, out);
prepare(computeFeatures);
// Warm-up-like traffic: outcomes in every second but the current one, a few errors.
for (let s = 1; s <= 60; s++) for (let i = 0; i < 5; i++) recordOutcome(seg, w & WINDOW_MASK, T0 + 60_000 - s * 1000 + i, i === 0 ? TECH_ERROR : SUCCESS, 200);
for (let i = 0; i < 20; i++) features(60_500 - (i % 2));
optimizeNext(computeFeatures);
features(60_500);
const before = (status(computeFeatures) & OPTIMIZED) !== 0;
// Under load: outcomes in the current second too.
recordOutcome(seg, w & WINDOW_MASK, T0 + 60_400, SUCCESS, 180);
recordOutcome(seg, w & WINDOW_MASK, T0 + 60_450, TECH_ERROR, 900);
const f = Array.from(features(60_500));
console.log(JSON.stringify({ before, after: (status(computeFeatures) & OPTIMIZED) !== 0, finite: f.every(Number.isFinite) }));
`;

describe('Foresight features under the first real traffic', () => {
  it('computeFeatures stays optimised when the current second has outcomes', () => {
    const out = runV8Probe<{ before: boolean; after: boolean; finite: boolean }>(PROBE);
    expect(out.before).toBe(true); // the premise: optimised before the change of traffic
    expect(out.after).toBe(true);
    expect(out.finite).toBe(true);
  });
});
