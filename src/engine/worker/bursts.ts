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
 */
import { performance } from 'node:perf_hooks';

/** Work between two sleeps, ms. */
export const BURST_MS = 0.25;
/** The sleep, ms (the kernel rounds it up by its timer slack, 0.05 ms by default). */
export const PAUSE_MS = 0.01;
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
    private readonly pauseMs = PAUSE_MS,
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
