/**
 * The checkpoint warm-up (src/engine/checkpoint-warm-up.ts) must leave the checkpoint writer's
 * code compiled for the service's own writer too. The writer calls the `track` it was given;
 * with the warm-up's one alone behind that call, V8 compiled writeFrom for it and deoptimised
 * writeFrom at the first real checkpoint under load, whose `track` is the engine's ("wrong call
 * target"), then compiled it again during a cycle (docs/performance-log.md, *Eleventh pass*).
 *
 * V8 only tells through its natives syntax, switched on in a child process; the probe loads
 * the built modules (npm test builds first). Concurrent recompilation is off, as in the body
 * warm-up's probe: with it on, a compile job of the warm-up's writeFrom could still be in
 * flight on a loaded machine and be installed after the probe's own request (1 failure in 8
 * runs with both cores busy; none in 12 with it off).
 */
import { describe, expect, it } from 'vitest';
import { builtModule as mod, runV8ProbeInDir } from '../helpers/v8-probe.js';

const PROBE = (dir: string) => `
import v8 from 'node:v8';
v8.setFlagsFromString('--allow-natives-syntax');
const { warmUpCheckpoints } = await import(${mod('engine', 'checkpoint-warm-up.js')});
const { CheckpointWriter } = await import(${mod('engine', 'checkpoint-writer.js')});
const { SharedTables } = await import(${mod('shm', 'tables.js')});
const { LmdbStore } = await import(${mod('store', 'lmdb-store.js')});
const { Tenant, settingsForTier } = await import(${mod('tenants', 'tenant.js')});
const { compactRecord } = await import(${mod('rules', 'compact-record.js')});
const { toRecord } = await import(${mod('rules', 'rule-service.js')});
const { recordOutcome } = await import(${mod('shm', 'window.js')});
const { windowIndex, windowSegment } = await import(${mod('shm', 'slots.js')});
const optimizeNext = new Function('f', '%OptimizeFunctionOnNextCall(f)');
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const OPTIMIZED = 1 << 4;
const writeFrom = CheckpointWriter.prototype.writeFrom;
const store = new LmdbStore(${JSON.stringify(dir)});
const tables = new SharedTables();
const settings = settingsForTier(3, false);
await warmUpCheckpoints(store, tables, settings);
// The engine's writer: its own track, a real tenant's rules with outcomes.
const tenant = new Tenant('acme', settings);
for (let i = 0; i < 8; i++) {
  const record = compactRecord(toRecord({ rule_id: 'r' + i, attributes: ['C' + i], primary_id: 'p', secondary_id: 'q', primary_weight: 0.9 }, new Date()));
  const slot = tables.allocRule(0.9, false);
  tenant.addRule({ record, slot, runStartedAt: [0, 0], override: null, cache: null });
  const w = tables.windowOf(slot, 0, false);
  recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), Date.now(), 0, 100);
}
const tracked = [];
const engineWriter = new CheckpointWriter({ tables, checkpoints: store.collection('engine_state', { announce: false, bytes: true }), track: (p) => tracked.push(p), minGapMs: 0 });
optimizeNext(writeFrom); // compiled with what the warm-up taught it, as V8 does once it is hot
engineWriter.writeNow(tenant);
const optimized = (status(writeFrom) & OPTIMIZED) !== 0;
await Promise.all(tracked);
console.log(JSON.stringify({ optimized, tracked: tracked.length }));
await store.close();
`;

describe('checkpoint warm-up and the engine\'s own writer', () => {
  it('writeFrom stays optimised at the first checkpoint of the engine\'s writer', () => {
    const out = runV8ProbeInDir<{ optimized: boolean; tracked: number }>(PROBE, ['--no-concurrent-recompilation']);
    expect(out.tracked).toBe(1); // the premise: the engine's writer wrote, through its own track
    expect(out.optimized).toBe(true);
  });
});
