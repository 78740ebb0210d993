/**
 * A pool thread's JIT warm-up, run once when the thread starts: a few simulated minutes of
 * traffic on private tables (never the service's), evaluated cycle by cycle through the same
 * entry as real tasks, with every tier on. Why: until a function has run often enough, V8 runs
 * it unoptimised and then compiles it on its helper threads. Without this, the first real
 * cycles after traffic begins did that work under load: with the service on one core, the
 * first cycle's run took the pool 70 ms more CPU than later ones and V8's helper threads
 * 130 ms more, in runs up to a scheduler tick (4 ms) each, and route p99 over that run
 * doubled (issue 20; docs/performance-log.md). Failures, recoveries, declines and latency swings
 * are all in the traffic, so that the state machine's paths are compiled with the types real
 * rules give them (a decayed posterior is a double, not a small integer).
 * It runs while the thread loads its entry module (entry.ts), before piscina hands the thread
 * a task: ~300 ms of the thread's CPU, in the short bursts every evaluation runs in. Not in
 * steps between tasks: that needs an idle thread's event loop to run (piscina's
 * `atomics: 'async'`), a change to how every task, early evaluations included, reaches the
 * thread, for a warm-up that is over before the service has outcomes to evaluate.
 */
import { performance } from 'node:perf_hooks';
import { OutcomeKind, recordOutcome } from '../../shm/window.js';
import { RI_RUN_PRIMARY, RI_RUN_SECONDARY } from '../../shm/layout.js';
import { ruleI32Base, ruleSegment, windowIndex, windowSegment } from '../../shm/slots.js';
import { SharedTables } from '../../shm/tables.js';
import { mulberry32 } from '../../tiers/autopilot/sampling.js';
import { engineConfigFor } from '../tenant-engine-config.js';
import type { EvaluateResult, EvaluateTask, TenantEngineConfig } from '../protocol.js';

/** Rules simulated: enough that one cycle runs the hot loops long enough to be optimised. */
export const WARM_UP_RULES = 64;
/**
 * Simulated cycles, 5 s apart: long enough for outages to fail over and recover, and for
 * Tier 3's allocation (allocate, evidenceStrength, waterFill) to be optimised: after 16 it was
 * not yet, and V8 compiled it, with Tier 1's judgement beside it (~100 ms of compile jobs),
 * during the first real cycles under load (test/unit/pool-warm-up-jit.test.ts).
 */
export const WARM_UP_CYCLES = 48;
/**
 * Cycles with no traffic at all after those, as after a burst of traffic in service. They also
 * finish what the traffic began: after the simulated traffic the shard loop itself (the
 * entry's evaluateWith) was not yet hot, so V8 compiled it (~25 ms of compile jobs on its
 * helper threads, at the front thread's priority) in the first real cycle under load. By a
 * probe, 16 quiet cycles were not enough and 32 were; they add no measurable start-up time.
 */
export const WARM_UP_QUIET_CYCLES = 32;
const CYCLE_MS = 5000;
/** Outcomes per rule per simulated cycle (the primary's; one of them the secondary's). */
const OUTCOMES_PER_CYCLE = 10;
/**
 * The same for every tenth rule (the busy ones, whose latency rises): enough that the
 * primary's p95 is measurable (Tier 1's latencyMinSamples, 50, within its 15 s
 * latencyHorizonMs, with one cycle in three quiet; 30 were not). With 10 for every rule, no
 * simulated rule ever had a latency baseline, and the first real rule that did deoptimised
 * Tier 1's judgement (the baseline's age was a property it had never read) under load.
 */
const BUSY_OUTCOMES_PER_CYCLE = 60;
/** Cycles of the latency rise: after a baseline is ready (Tier 1's baselineWarmupMs, 60 s of measurable p95). */
const SLOW_FROM_CYCLE = 24;
const SLOW_UNTIL_CYCLE = 28;
/** A tables id no real SharedTables gets (those count up from 1): the worker's view cache keys on it. */
export const WARM_UP_TABLES_ID = -1;

/** Every tier on, nothing overridden: built as a tenant's is (engineConfigFor), so it has the same shape. */
const warmUpConfig = (): TenantEngineConfig =>
  engineConfigFor({ tier1Overrides: {}, banditOverrides: {}, foresightOverrides: {}, settings: { predictionEnabled: true, banditEnabled: true } });

/** One outcome of rule `slot`'s processor `k`, recorded as the outcome path does (routing/outcome.ts). */
function record(tables: SharedTables, slot: number, k: 0 | 1, self: boolean, nowMs: number, kind: OutcomeKind, latencyMs: number): void {
  const seg = ruleSegment(tables.ruleSegs, slot);
  const ib = ruleI32Base(slot);
  const w = tables.windowOf(slot, k, self);
  recordOutcome(windowSegment(tables.windowSegs, w), windowIndex(w), nowMs, kind, latencyMs);
  const run = ib + (k === 0 ? RI_RUN_PRIMARY : RI_RUN_SECONDARY);
  if (kind >= OutcomeKind.TechError) Atomics.add(seg.ruleI32, run, 1);
  else Atomics.store(seg.ruleI32, run, 0);
}

/** Every sixteenth rule falls back to its own processor (primary = secondary). */
const isSelfFallback = (r: number) => r % 16 === 15;

/**
 * Rule r's traffic in simulated cycle c, in the mix a real deployment has: none for every
 * eighth rule; none on the secondary for every third (its secondary has no window); else
 * mostly approvals with some declines. Every fourth rule's primary has an outage (cycles 2-5:
 * most requests fail or time out) and every tenth a latency rise (cycles 24-27, once its
 * latency baseline is ready), after which both recover.
 */
function simulateCycle(tables: SharedTables, slots: Int32Array, c: number, startMs: number, rand: () => number): void {
  for (let r = 0; r < slots.length; r++) {
    if (r % 8 === 7) continue; // a rule without traffic, as most rules of a large deployment are
    // A quiet cycle for a rule that has traffic: Tier 3 sees no fresh outcomes, the path every
    // cycle takes once traffic pauses. Left out, the first real quiet cycle threw the optimised
    // stage away and V8 compiled it again under load.
    if ((r + c) % 3 === 2) continue;
    const secondaryTraffic = r % 3 !== 1;
    const outage = r % 4 === 0 && c >= 2 && c < 6;
    const busy = r % 10 === 0;
    const slow = busy && c >= SLOW_FROM_CYCLE && c < SLOW_UNTIL_CYCLE;
    const outcomes = busy ? BUSY_OUTCOMES_PER_CYCLE : OUTCOMES_PER_CYCLE;
    for (let j = 0; j < outcomes; j++) {
      const k: 0 | 1 = j === outcomes - 1 && secondaryTraffic ? 1 : 0;
      const atMs = startMs + c * CYCLE_MS + Math.floor((j / outcomes) * CYCLE_MS);
      const x = rand();
      const failing = outage && k === 0;
      const kind = failing ? (x < 0.5 ? OutcomeKind.TechError : x < 0.8 ? OutcomeKind.Timeout : OutcomeKind.Success) : x < 0.06 ? OutcomeKind.Decline : x < 0.08 ? OutcomeKind.TechError : OutcomeKind.Success;
      const latencyMs = (slow && k === 0 ? 1500 : 80) + rand() * 400.5;
      record(tables, slots[r], k, isSelfFallback(r), atMs, kind, latencyMs);
    }
  }
}

export interface WarmUpReport {
  /** Wall time from start to end, ms (the event loop's other work included). */
  ms: number;
  /** Rule evaluations run. */
  evaluations: number;
  /** Status transitions the simulated traffic caused (and that went nowhere). */
  transitions: number;
}

/**
 * Runs the warm-up through `evaluate` (the worker's entry), synchronously. Nothing outside its
 * private tables is touched, and its transitions go nowhere.
 */
export function warmUp(evaluate: (task: EvaluateTask) => EvaluateResult, forget: (tablesId: number) => void): WarmUpReport {
  const t0 = performance.now();
  const report: WarmUpReport = { ms: 0, evaluations: 0, transitions: 0 };
  const tables = new SharedTables();
  const slots = new Int32Array(WARM_UP_RULES);
  for (let r = 0; r < WARM_UP_RULES; r++) slots[r] = tables.allocRule(0.9, isSelfFallback(r));
  const config = warmUpConfig();
  const rand = mulberry32(20);
  // On a cycle boundary (a multiple of the windows' buckets): the last outcomes of a cycle then
  // fall in buckets that cycle's evaluation counts, and a quiet cycle after it sees none.
  const startMs = Math.floor(Date.now() / CYCLE_MS) * CYCLE_MS - (WARM_UP_CYCLES + WARM_UP_QUIET_CYCLES) * CYCLE_MS;
  try {
    for (let c = 0; c < WARM_UP_CYCLES + WARM_UP_QUIET_CYCLES; c++) {
      if (c < WARM_UP_CYCLES) simulateCycle(tables, slots, c, startMs, rand);
      // Views made again, as for the first task of real tables: the first time they were made
      // (the first task) the entry had no type feedback yet, and the first real task then
      // deoptimised the shard loop.
      else if (c === WARM_UP_CYCLES) forget(WARM_UP_TABLES_ID);
      // Cloned as a posted task is, so the objects the entry sees have the shapes real ones have.
      const r = evaluate(structuredClone({ tablesId: WARM_UP_TABLES_ID, segments: tables.segments(), slots, nowMs: startMs + (c + 1) * CYCLE_MS, config }));
      report.evaluations += r.evaluatedSlots;
      report.transitions += r.transitions.length;
    }
  } finally {
    forget(WARM_UP_TABLES_ID);
  }
  report.ms = performance.now() - t0;
  return report;
}
