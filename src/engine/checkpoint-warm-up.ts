/**
 * The front thread's JIT warm-up of the checkpoint path, run once at start (SERVICE_JIT_WARM_UP)
 * on the embedded store: a few dozen simulated rules checkpointed again and again, through the
 * same CheckpointWriter, LmdbStore and lmdb-js code as real checkpoints, into two scratch
 * collections of the service's own store (WARM_UP_COLLECTIONS, emptied before and after:
 * nothing reads them, and their pages are reused by later writes). Why: the checkpoint path
 * (the snapshot copy, the counters' msgpack encoding, lmdb-js's key and write code) runs once a cycle per
 * tenant, so V8 found it hot only after several cycles under load, and compiled it then:
 * 60-100 ms of compile jobs on V8's helper threads, which on a one-core server took that time
 * from routes in runs of up to 5 ms (issue 20; docs/performance-log.md, *Seventh pass*). A scratch
 * LMDB environment of its own was tried first: each one left ~15 MB of the process's memory
 * behind after it was closed. The simulated rules take slots of the service's shared tables,
 * freed after: no tenant owns them, so nothing evaluates, renders or routes to them. The pool
 * threads' warm-up (worker/warm-up.ts) does the same for the evaluation.
 */
import { performance } from 'node:perf_hooks';
import { yieldTurn } from '../front-turns.js';
import { compactRecord } from '../rules/compact-record.js';
import { toRecord } from '../rules/rule-service.js';
import { OutcomeKind, recordOutcome } from '../shm/window.js';
import { PF_SAMPLE_COUNT, PF_STATUS, RING_EVENTS } from '../shm/layout.js';
import { processorRowOffset, ruleSegment, windowIndex, windowSegment } from '../shm/slots.js';
import { markRowsInUse } from '../shm/processor-rows.js';
import { SharedTables } from '../shm/tables.js';
import type { Store } from '../store/store.js';
import { Tenant, type LiveRule, type TierSettings } from '../tenants/tenant.js';
import { CheckpointWriter } from './checkpoint-writer.js';
import type { StoredCheckpoint } from './checkpoint.js';
import type { CounterCheckpoint } from './engine-service.js';

/** The scratch collections (named databases of the store): checkpoints, and counters beside them. */
export const WARM_UP_COLLECTIONS = ['jit_warm_up_checkpoints', 'jit_warm_up_counters'] as const;

/** Rules checkpointed per round: a few slots of the service's tables (each round rewrites them). */
export const WARM_UP_RULES = 64;
/** Rounds: each rule with outcomes is checkpointed this many times, written when it changed (~1,000 puts in all). */
export const WARM_UP_ROUNDS = 80;

export interface CheckpointWarmUpReport {
  /** Wall time from start to end, ms (the event loop's other work included). */
  ms: number;
  /** Checkpoints written, and rules passed over (unchanged; changed in their model state only). */
  writes: number;
  unchanged: number;
  deferred: number;
}

/**
 * A tenant of `n` rules in the mix a real one has: most with outcomes on both processors, some
 * on the primary only, and every fourth without any (skipped: nothing to keep). Each kind takes
 * its own branch of the writer's code; one left out was compiled again at the first real cycle.
 */
function simulatedTenant(tables: SharedTables, settings: TierSettings, n: number): Tenant {
  const tenant = new Tenant('warm-up', settings);
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const record = compactRecord(
      toRecord({ rule_id: `warm-up-${i}`, attributes: [`C${i}`], primary_id: `p${i % 7}`, secondary_id: `p${(i + 1) % 7}`, primary_weight: 0.9 }, new Date(now)),
    );
    const slot = tables.allocRule(record.primary_weight, false);
    const rule: LiveRule = { record, slot, runStartedAt: null, override: null, cache: null };
    tenant.addRule(rule);
    if (i % 4 === 3) continue;
    for (const k of i % 4 === 2 ? ([0] as const) : ([0, 1] as const)) {
      const w = tables.windowOf(slot, k, false);
      // The first rule's primary is busy: its window is promoted to dense buckets, so the
      // outcome path (which shares recordOutcome's type feedback) is compiled with both forms.
      const outcomes = i === 0 && k === 0 ? 2 * RING_EVENTS : 1;
      for (let j = 0; j < outcomes; j++) {
        recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), now, k === 0 ? OutcomeKind.Success : OutcomeKind.Decline, 120 + j);
      }
    }
  }
  return tenant;
}

/**
 * Checkpoints a simulated tenant WARM_UP_ROUNDS times, as the engine does after a cycle (in
 * slices, yielding to the event loop), into the store's scratch collections. Throws when the
 * store refuses the writes (the caller logs it: the first cycles then compile this path).
 */
export async function warmUpCheckpoints(store: Store, tables: SharedTables, settings: TierSettings): Promise<CheckpointWarmUpReport> {
  const t0 = performance.now();
  const checkpoints = store.collection<StoredCheckpoint>(WARM_UP_COLLECTIONS[0], { announce: false, bytes: true });
  // The engine stores each tenant's counters beside its checkpoints; those go through the
  // database's msgpack encoder (the checkpoints, byte strings, do not: store.ts, `bytes`).
  const counters = store.collection<CounterCheckpoint>(WARM_UP_COLLECTIONS[1], { announce: false });
  const tenant = simulatedTenant(tables, settings, WARM_UP_RULES);
  let writes = 0;
  let unchanged = 0;
  let deferred = 0;
  try {
    await Promise.all([checkpoints.clear(), counters.clear()]); // left by a start that was killed during it
    const pending: Promise<unknown>[] = [];
    // Two writers, each with its own `track`, taking turns: the writer's call of `track` then
    // has seen more than one function, as it will in service (the engine's is another again).
    // Compiled for the warm-up's one, it was deoptimised at the first real checkpoint ("wrong
    // call target") and compiled again. Two function literals: closures of one literal count as one target.
    const tracks = [(p: Promise<unknown>) => void pending.push(p), (p: Promise<unknown>) => void pending.push(p)];
    // No gap between slices: nothing routes yet.
    const writers = tracks.map((track) => new CheckpointWriter({ tables, checkpoints, track, minGapMs: 0, sliceGapMs: 0 }));
    const rules = [...tenant.rules.values()];
    for (let round = 0; round < WARM_UP_ROUNDS; round++) {
      const writer = writers[round % 2];
      // A quarter of the rules change each round, so half of them have changed since this
      // writer's last round, as an evaluation changes some: half of those in a status (written
      // at once), half in their model state only (written later), so the writer's three
      // branches (unchanged, deferred, written) all get hot.
      for (let i = round & 3; i < rules.length; i += 4) {
        const slot = rules[i].slot;
        const row = processorRowOffset(slot, 0);
        const seg = ruleSegment(tables.ruleSegs, slot);
        markRowsInUse(seg, slot); // as an evaluation does before it writes them
        const f = seg.procF64;
        if (i & 4) f[row + PF_SAMPLE_COUNT] = round;
        else f[row + PF_STATUS] = round % 3;
      }
      writer.request(tenant);
      pending.push(counters.put(tenant.id, 'counters', { routed: round * 1000, reported: round * 900, failovers: round }));
      while (writer.writing(tenant.id)) await yieldTurn();
      // Stored before the round after next: this writer then skips what did not change.
      await Promise.all(pending.splice(0));
    }
    for (const w of writers) {
      writes += w.stats.written;
      unchanged += w.stats.unchanged;
      deferred += w.stats.deferred;
    }
  } finally {
    for (const rule of tenant.rules.values()) tables.freeRule(rule.slot);
    await Promise.all([checkpoints.clear(), counters.clear()]);
  }
  return { ms: performance.now() - t0, writes, unchanged, deferred };
}
