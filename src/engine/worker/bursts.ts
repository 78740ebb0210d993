/**
 * Long work of a background thread (an evaluation task on a pool thread, a rendering on the
 * metrics render thread) done in short bursts, each followed by a brief sleep. Why: a lower
 * nice value (priority.ts) gives such a thread a smaller share of a contended core, but not
 * shorter turns. Linux's scheduler (EEVDF) still lets it run a full time slice (~1.4 ms here)
 * whenever its turn comes, and every route the front thread has in hand waits that long: with
 * the service on one core, a 1,000-rule evaluation or one /metrics/ rendering was a string of
 * 1.4 ms stalls of the front thread. A thread that sleeps after BURST_MS of work gives the core
 * back after at most that long; its share stays what its nice value says. On an idle core the
 * cost is one short sleep per burst (~0.06 ms with the kernel's timer slack).
 * The sleep is Atomics.wait on a private cell nobody notifies (a thread may block; node's
 * front thread could too, but is never asked to: it must not sleep).
 *
 * How long it sleeps depends on whether the thread shares the front thread's core. With more
 * than one CPU it has a core of its own most of the time: a token sleep (PAUSE_MS), so a cycle
 * runs at full speed. On one CPU (a one-CPU machine, or a process pinned to one core, as
 * `npm run bench` pins the service) a token sleep gave the core back for ~0.06 ms only: the
 * pool thread, having waited, was let preempt the front thread again as soon as it woke, so
 * its bursts came three in a row, ~0.9 ms with the front thread held, once every scheduler
 * tick (4 ms) for the 100-180 ms of a cycle at 100,000 rules (`perf sched timehist`, 2026-12-01).
 * Sleeping SHARED_CORE_PAUSE_MS (three bursts' length) instead, the front thread runs ~0.8 ms
 * between two bursts and no request waits for more than one: the thread's share of the core
 * stays the quarter its nice value gives it anyway (priority.ts), so a cycle on a busy core
 * takes as long as before, and on an idle one-CPU machine up to four times as long (a cycle
 * of 100,000 rules: tens of ms of work, in an interval of seconds).
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';

/** Work between two sleeps, ms. */
export const BURST_MS = 0.25;
/** The sleep on a machine with more than one CPU, ms (the kernel rounds it up by its timer slack, 0.05 ms by default). */
export const PAUSE_MS = 0.01;
/** The sleep when the thread shares one CPU with the front thread, ms: three bursts' length, about the quarter of the core nice +5 gives the thread. */
export const SHARED_CORE_PAUSE_MS = 3 * BURST_MS;

/** The sleep after a burst for a process that may run on `cpus` CPUs. */
export function pauseMsFor(cpus: number): number {
  return cpus <= 1 ? SHARED_CORE_PAUSE_MS : PAUSE_MS;
}
/**
 * Pieces of trivial work (tens of ns each: a rule with nothing to judge) between two reads of
 * the clock. A read costs more than such a piece (performance.now() ~50 ns here), and at
 * 100,000 rules the reads after each of them were half of a cycle's CPU on the pool thread,
 * which shares the front thread's core. 64 of them add well under a microsecond to a burst.
 */
export const TRIVIAL_PIECES_PER_CHECK = 64;

export class Bursts {
  private readonly cell = new Int32Array(new SharedArrayBuffer(4));
  private started = performance.now();
  /** Sleeps taken so far (tests, benches). */
  pauses = 0;
  /** Trivial pieces since the clock was last read (pauseAfterTrivial). */
  private trivial = 0;

  constructor(
    private readonly burstMs = BURST_MS,
    // os.availableParallelism() follows the affinity mask (taskset), as gc-helpers.ts's choice does.
    readonly pauseMs = pauseMsFor(availableParallelism()),
  ) {}

  /** Begins a burst (at the start of a task: the thread was idle before it). */
  begin(): void {
    this.started = performance.now();
  }

  /**
   * Call between two small pieces of work (each well under burstMs): sleeps once the current
   * burst has run burstMs, then begins the next. Returns whether it slept.
   */
  pause(): boolean {
    this.trivial = 0;
    if (performance.now() - this.started < this.burstMs) return false;
    Atomics.wait(this.cell, 0, 0, this.pauseMs);
    this.pauses++;
    this.started = performance.now();
    return true;
  }

  /**
   * pause() for a piece of trivial work (far under a microsecond): the clock is read, and the
   * thread may sleep, only at every TRIVIAL_PIECES_PER_CHECK-th such call in a row.
   */
  pauseAfterTrivial(): boolean {
    if (++this.trivial < TRIVIAL_PIECES_PER_CHECK) return false;
    return this.pause();
  }
}
